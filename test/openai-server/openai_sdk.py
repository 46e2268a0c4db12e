"""The official OpenAI Python SDK against `sleuth serve`: run by test/backend/openai-sdk.test.ts.

    python openai_sdk.py BASE_URL MODEL SPEC_JSON

Every response is also validated with the SDK's own pydantic types (model_validate on the raw JSON,
or on each streamed chunk): the SDK itself builds them without validation. Prints one JSON object.
"""

from __future__ import annotations

import json
import sys

import httpx
import openai
import pydantic
from openai.types import Completion, Model
from openai.types.chat import ChatCompletion, ChatCompletionChunk

BASE_URL, MODEL, SPEC = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
client = openai.OpenAI(base_url=BASE_URL, api_key="unused", max_retries=0)
messages = [{"role": "system", "content": SPEC["system"]}, {"role": "user", "content": SPEC["user"]}]
tools = [SPEC["tool"]]
out: dict = {"openai_version": openai.__version__}


def chat(**kw) -> ChatCompletion:
    raw = client.chat.completions.with_raw_response.create(model="local", messages=messages, **kw)
    return ChatCompletion.model_validate(json.loads(raw.text))


def complete(**kw) -> Completion:
    raw = client.completions.with_raw_response.create(model="local", **kw)
    return Completion.model_validate(json.loads(raw.text))


def calls_of(c: ChatCompletion) -> list:
    return [{"name": t.function.name, "arguments": json.loads(t.function.arguments)} for t in (c.choices[0].message.tool_calls or [])]


def error_of(fn) -> dict:
    try:
        fn()
        return {"status": None}
    except openai.APIStatusError as e:
        return {"status": e.status_code, "message": e.message, "param": e.param, "code": e.code}


# models.list / models.retrieve
out["models"] = [m.id for m in client.models.list().data]
out["retrieved"] = Model.model_validate(client.models.retrieve(MODEL).model_dump()).id
out["retrieve_missing"] = error_of(lambda: client.models.retrieve("no-such-model"))

# Chat with tools, plain and streamed (the stream's deltas add up to the plain answer).
plain = chat(tools=tools, temperature=0, max_tokens=60)
out["chat"] = {"calls": calls_of(plain), "finish": plain.choices[0].finish_reason}
chunks = [ChatCompletionChunk.model_validate(c.model_dump()) for c in client.chat.completions.create(model="local", messages=messages, tools=tools, temperature=0, max_tokens=60, stream=True, stream_options={"include_usage": True})]
streamed: dict[int, dict] = {}
finish = None
for c in chunks:
    for ch in c.choices:
        for t in ch.delta.tool_calls or []:
            entry = streamed.setdefault(t.index, {"name": "", "arguments": ""})
            if t.function and t.function.name:
                entry["name"] += t.function.name
            if t.function and t.function.arguments:
                entry["arguments"] += t.function.arguments
        finish = ch.finish_reason or finish
out["chat_stream"] = {
    "calls": [{"name": v["name"], "arguments": json.loads(v["arguments"])} for _, v in sorted(streamed.items())],
    "finish": finish,
    "chunks": len(chunks),
    "usage": chunks[-1].usage.model_dump() if chunks[-1].usage else None,
    "first_role": chunks[0].choices[0].delta.role,
}

# tool_choice
none = chat(tools=tools, tool_choice="none", temperature=0, max_tokens=30)
out["tool_choice_none"] = {"calls": calls_of(none), "finish": none.choices[0].finish_reason, "content_is_str": isinstance(none.choices[0].message.content, str)}
out["tool_choice_required"] = calls_of(chat(tools=tools, tool_choice="required", temperature=1, seed=5, max_tokens=60))
out["tool_choice_named"] = [c["name"] for c in calls_of(chat(tools=tools, tool_choice={"type": "function", "function": {"name": "bm25_search"}}, temperature=1, seed=5, max_tokens=60))]
out["tool_choice_unknown"] = error_of(lambda: client.chat.completions.create(model="local", messages=messages, tools=tools, tool_choice={"type": "function", "function": {"name": "nope"}}))

# top_logprobs (greedy: the chosen token is the most likely one)
lp = chat(tools=tools, temperature=0, max_tokens=20, logprobs=True, top_logprobs=3).choices[0].logprobs.content
out["top_logprobs"] = [{"token": t.token, "logprob": t.logprob, "top": [(x.token, x.logprob) for x in t.top_logprobs]} for t in lp]

# stop on completions: the same seed, cut before the stop string
prompt = SPEC["prompt"]
free = complete(prompt=prompt, max_tokens=20, temperature=1, seed=9)
text = free.choices[0].text
stop = text[len(text) // 2 : len(text) // 2 + 2]
cut = complete(prompt=prompt, max_tokens=20, temperature=1, seed=9, stop=[stop])
out["stop"] = {"free": text, "stop": stop, "text": cut.choices[0].text, "finish": cut.choices[0].finish_reason}
# chat accepts stop too
out["chat_stop_calls"] = calls_of(chat(tools=tools, temperature=0, max_tokens=60, stop=["\u00a7\u00a7"]))

# completions streamed token by token: the same text as unstreamed, for the same seed
def streamed_completion(chunk) -> Completion:
    """The SDK's Completion type wants a finish_reason, which a stream (OpenAI's own too) leaves null until the end."""
    try:
        return Completion.model_validate(chunk.model_dump())
    except pydantic.ValidationError as e:
        if all(err["loc"][-1] == "finish_reason" and err["input"] is None for err in e.errors()):
            return chunk
        raise


parts = [streamed_completion(c) for c in client.completions.create(model="local", prompt=prompt, max_tokens=20, temperature=1, seed=9, stream=True)]
out["completion_stream"] = {"text": "".join(p.choices[0].text for p in parts if p.choices), "chunks": len(parts), "finish": [p.choices[0].finish_reason for p in parts if p.choices and p.choices[0].finish_reason]}

# a batch of prompts, n per prompt
batch = complete(prompt=[prompt, SPEC["prompt2"]], max_tokens=4, n=2, temperature=1, seed=1, logprobs=2)
out["batch"] = {"indexes": [c.index for c in batch.choices], "top": [len(x) for x in batch.choices[0].logprobs.top_logprobs]}
out["batch_text"] = len(complete(prompt=["Paris is", "Berlin is"], max_tokens=3, temperature=1).choices)

# unsupported parameters, wrong method, wrong content type
out["response_format"] = error_of(lambda: client.chat.completions.create(model="local", messages=messages, response_format={"type": "json_object"}))
out["penalties"] = error_of(lambda: client.completions.create(model="local", prompt=prompt, frequency_penalty=0.5, presence_penalty=0.1))
out["echo"] = error_of(lambda: client.completions.create(model="local", prompt=prompt, echo=True))
get = httpx.get(f"{BASE_URL}/chat/completions")
out["get_chat"] = {"status": get.status_code, "allow": get.headers.get("allow")}
out["text_plain"] = httpx.post(f"{BASE_URL}/completions", content=b"prompt=hi", headers={"content-type": "text/plain"}).status_code

print(json.dumps(out))
