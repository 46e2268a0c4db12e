"""The official Tinker Python SDK driving `sleuth serve-tinker` through a whole training loop.

Run by test/tinker/sdk.test.ts with the venv it builds:
    python sdk_loop.py BASE_URL MODE BASE_MODEL SPEC_JSON
MODE is "proto" (SDK 0.25.0 exactly as published: protobuf forward_backward, zstd when the server's
client/config asks, protobuf results) or "json" (the same SDK with its two protobuf paths switched to
the JSON that SDK 0.24.x and older speak: forward_backward as JSON, forward on POST /api/v1/forward,
and JSON results). SPEC_JSON holds the token ids to train on and the stop-string case. Prints one
JSON object with what each step returned; the test checks it. Any exception fails the run.
"""

from __future__ import annotations

import json
import math
import sys
import time

import numpy as np

import tinker
from tinker import types

BASE_URL, MODE, BASE_MODEL, SPEC = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
# A hang guard: every future is awaited with this timeout, so a stalled seq_id fails the run.
WAIT = 90


def use_json_wire() -> None:
    """Make SDK 0.25.0 speak the JSON wire of SDK <= 0.24 (its own request/response types)."""
    from tinker._base_client import make_request_options
    from tinker._compat import model_dump
    from tinker.lib import api_future_impl
    from tinker.proto import response_conv
    from tinker.resources import training
    from tinker.types.shared.untyped_api_future import UntypedAPIFuture

    response_conv.PROTO_SUPPORTED_TYPES.clear()  # no Accept: application/x-protobuf

    def tensor_json(t: types.TensorData) -> dict:
        return {"data": t.tolist(), "dtype": t.dtype, "shape": t.shape}

    async def forward_backward(self, *, request, forward_only=False, **_):
        fb = request.forward_backward_input
        data = [{"model_input": model_dump(d.model_input, mode="json"), "loss_fn_inputs": {k: tensor_json(v) for k, v in d.loss_fn_inputs.items()}} for d in fb.data]
        payload = {"data": data, "loss_fn": fb.loss_fn, **({"loss_fn_config": fb.loss_fn_config} if fb.loss_fn_config else {})}
        body = {"model_id": request.model_id, "seq_id": request.seq_id}
        if forward_only:
            body["forward_input"], path = payload, "/api/v1/forward"
        else:
            body["forward_backward_input"], path = payload, "/api/v1/forward_backward"
        return await self._post(path, body=body, options=make_request_options(), cast_to=UntypedAPIFuture)

    training.AsyncTrainingResource.forward_backward = forward_backward
    json_result = api_future_impl.deserialize_json_response

    def deserialize(result: dict, model_cls: type):
        if model_cls is types.SampleResponse:
            lp = result.get("prompt_logprobs")
            return types.SampleResponse(
                sequences=[
                    types.SampledSequence(
                        stop_reason=s["stop_reason"],
                        tokens_np=np.asarray(s["tokens"], dtype=np.int32),
                        logprobs_np=np.asarray(s["logprobs"], dtype=np.float32),
                    )
                    for s in result["sequences"]
                ],
                prompt_logprobs_np=None if lp is None else np.asarray([math.nan if v is None else v for v in lp], dtype=np.float32),
            )
        if model_cls is types.ForwardBackwardOutput:
            return types.ForwardBackwardOutput(
                loss_fn_output_type=result["loss_fn_output_type"],
                loss_fn_outputs=[{k: types.TensorData(data=v["data"], dtype=v["dtype"], shape=v["shape"]) for k, v in o.items()} for o in result["loss_fn_outputs"]],
                metrics=result["metrics"],
            )
        return json_result(result, model_cls)

    api_future_impl.deserialize_json_response = deserialize


if MODE == "json":
    use_json_wire()
elif MODE != "proto":
    raise SystemExit(f"MODE must be proto or json, got {MODE!r}")

out: dict = {"mode": MODE, "sdk_version": tinker.__version__}


def datum(tokens: list[int], loss: str, advantage: float = 0.5) -> types.Datum:
    n = len(tokens) - 1
    inputs: dict = {"target_tokens": tokens[1:], "weights": [0.0, *([1.0] * (n - 1))]}
    if loss != "cross_entropy":
        inputs["logprobs"] = [0.0, *([-5.0] * (n - 1))]
        inputs["advantages"] = [0.0, *([advantage] * (n - 1))]
    return types.Datum(model_input=types.ModelInput.from_ints(tokens[:-1]), loss_fn_inputs=inputs)


def logprobs_of(result: types.ForwardBackwardOutput) -> list[list[float]]:
    return [o["logprobs"].tolist() for o in result.loss_fn_outputs]


# The SDK reads client/config itself: with pyqwest not installed, a config asking for it would fail here.
service = tinker.ServiceClient(base_url=BASE_URL, api_key="tml-local")
config = service.holder.get_client_config()
out["client_config"] = {"use_pyqwest_transport": config.use_pyqwest_transport, "proto_compress_fwdbwd": config.proto_compress_fwdbwd}
out["capabilities"] = [m.model_name for m in service.get_server_capabilities().supported_models]

training = service.create_lora_training_client(base_model=BASE_MODEL, rank=8, user_metadata={"test": MODE})
out["model_id"] = training.model_id
seqs: list[list[int]] = SPEC["sequences"]

# forward: logprobs, no gradient.
forward = training.forward([datum(s, "cross_entropy") for s in seqs], "cross_entropy").result(timeout=WAIT)
out["forward"] = {"logprobs": logprobs_of(forward), "loss": forward.metrics["loss:sum"]}

# forward_backward with each loss, then one optimiser step over all of them.
out["forward_backward"] = {}
for loss, config in [("cross_entropy", None), ("importance_sampling", None), ("ppo", {"clip_low_threshold": 0.8, "clip_high_threshold": 1.2}), ("cispo", {"clip_low_threshold": 0.0, "clip_high_threshold": 4.0})]:
    r = training.forward_backward([datum(s, loss) for s in seqs], loss, config).result(timeout=WAIT)
    out["forward_backward"][loss] = {"metrics": r.metrics, "lengths": [len(x) for x in logprobs_of(r)], "type": r.loss_fn_output_type}
out["optim_step"] = training.optim_step(types.AdamParams(learning_rate=1e-2)).result(timeout=WAIT).metrics

# A request the server rejects (HTTP 400) spends a seq_id; the next requests must still run.
try:
    training.optim_step(types.AdamParams(learning_rate=1e308)).result(timeout=WAIT)
    out["rejected"] = None
except tinker.BadRequestError as e:
    out["rejected"] = {"status": e.status_code, "message": str(e)}
after = training.forward_backward([datum(s, "cross_entropy") for s in seqs], "cross_entropy").result(timeout=WAIT)
out["after_rejection"] = {"loss": after.metrics["loss:sum"], "step": training.optim_step(types.AdamParams(learning_rate=1e-2)).result(timeout=WAIT).metrics}

# The trained weights, sampled and scored.
learner = training.forward([datum(s, "cross_entropy") for s in seqs], "cross_entropy").result(timeout=WAIT)
out["learner_logprobs"] = logprobs_of(learner)
sampler_path = training.save_weights_for_sampler("sampler-1", ttl_seconds=None).result(timeout=WAIT).path
out["sampler_path"] = sampler_path
sampling = service.create_sampling_client(model_path=sampler_path)
sample = sampling.sample(types.ModelInput.from_ints(SPEC["prompt"]), num_samples=3, sampling_params=types.SamplingParams(max_tokens=8, temperature=1.0, seed=11)).result(timeout=WAIT)
out["sample"] = [{"tokens": s.tokens, "logprobs": s.logprobs, "stop_reason": s.stop_reason} for s in sample.sequences]
out["compute_logprobs"] = [sampling.compute_logprobs(types.ModelInput.from_ints(s)).result(timeout=WAIT) for s in seqs]

# String stop sequences, against the base model (the test knows what it writes for this seed).
base_sampling = service.create_sampling_client(base_model=BASE_MODEL)
stop = SPEC["stop"]
stopped = base_sampling.sample(types.ModelInput.from_ints(stop["prompt"]), num_samples=1, sampling_params=types.SamplingParams(max_tokens=stop["max_tokens"], temperature=1.0, seed=stop["seed"], stop=[stop["string"]])).result(timeout=WAIT)
out["stop"] = {"tokens": stopped.sequences[0].tokens, "stop_reason": stopped.sequences[0].stop_reason}

# save_state, then two new training clients from it (weights only, and with the optimiser).
state_path = training.save_state("state-1").result(timeout=WAIT).path
out["state_path"] = state_path
restored = service.create_training_client_from_state(state_path)
out["restored_logprobs"] = logprobs_of(restored.forward([datum(s, "cross_entropy") for s in seqs], "cross_entropy").result(timeout=WAIT))
# Weights only: the optimiser starts over, so the first step is step 1 (the state was saved at step 2).
restored.forward_backward([datum(s, "cross_entropy") for s in seqs], "cross_entropy").result(timeout=WAIT)
out["restored_step"] = restored.optim_step(types.AdamParams(learning_rate=1e-2)).result(timeout=WAIT).metrics
with_optimizer = service.create_training_client_from_state_with_optimizer(state_path)
for client in (training, with_optimizer):
    client.forward_backward([datum(s, "cross_entropy") for s in seqs], "cross_entropy").result(timeout=WAIT)
    out.setdefault("continued_steps", []).append(client.optim_step(types.AdamParams(learning_rate=1e-2)).result(timeout=WAIT).metrics)
out["continued_logprobs"] = [logprobs_of(c.forward([datum(s, "cross_entropy") for s in seqs], "cross_entropy").result(timeout=WAIT)) for c in (training, with_optimizer)]
fresh = service.create_lora_training_client(base_model=BASE_MODEL, rank=8)
fresh.load_state(state_path).result(timeout=WAIT)
out["load_state_logprobs"] = logprobs_of(fresh.forward([datum(s, "cross_entropy") for s in seqs], "cross_entropy").result(timeout=WAIT))

# Training runs and checkpoints: list, TTL, delete.
rest = service.create_rest_client()
runs = rest.list_training_runs().result(timeout=WAIT)
out["training_runs"] = {"ids": [r.training_run_id for r in runs.training_runs], "total": runs.cursor.total_count}
run = rest.get_training_run(training.model_id).result(timeout=WAIT)
out["training_run"] = {"id": run.training_run_id, "rank": run.lora_rank, "base": run.base_model, "metadata": run.user_metadata, "last_checkpoint": run.last_checkpoint.tinker_path if run.last_checkpoint else None}
out["checkpoints"] = sorted((c.checkpoint_type, c.tinker_path) for c in rest.list_checkpoints(training.model_id).result(timeout=WAIT).checkpoints)
rest.set_checkpoint_ttl_from_tinker_path(state_path, 3600).result(timeout=WAIT)
expiry = [c.expires_at for c in rest.list_checkpoints(training.model_id).result(timeout=WAIT).checkpoints if c.tinker_path == state_path][0]
out["ttl_seconds_left"] = None if expiry is None else expiry.timestamp() - time.time()
rest.delete_checkpoint_from_tinker_path(sampler_path).result(timeout=WAIT)
out["checkpoints_after_delete"] = sorted(c.tinker_path for c in rest.list_checkpoints(training.model_id).result(timeout=WAIT).checkpoints)
out["user_checkpoints"] = rest.list_user_checkpoints().result(timeout=WAIT).cursor.total_count

print(json.dumps(out))
sys.stdout.flush()
# The SDK's background threads (heartbeat, telemetry) need not be waited for.
import os

os._exit(0)
