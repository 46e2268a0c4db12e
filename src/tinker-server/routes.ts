import { HttpError, parseJson } from '../http/request.js';
import type { Flavor } from '../backend/tinker/wire.js';
import { ok, type Reply } from './futures.js';
import { checkpointJson, runJson, type RunRegistry } from './registry.js';
import type { Samplers } from './sampling.js';
import { intParam, TtlSchema } from './schemas.js';

/**
 * The endpoints that are not POSTs: health, capabilities, samplers, and the training runs and
 * checkpoints listing (with delete and TTL), as the SDK's RestClient reads and changes them.
 */

/** POST endpoints (a GET, PUT or DELETE on one is 405). */
export const POST_ENDPOINTS = new Set(['client/config', 'client/dynamic_config', 'telemetry', 'create_session', 'session_heartbeat', 'create_model', 'get_info', 'weights_info', 'forward', 'forward_backward', 'optim_step', 'save_weights', 'load_weights', 'save_weights_for_sampler', 'create_sampling_session', 'asample', 'unload_model', 'retrieve_future']);

export interface RestContext {
  flavor: Flavor;
  modelName: string;
  /** The base model's context length, in tokens. */
  contextLength: number;
  runs: RunRegistry;
  samplers: Samplers;
}

/** GET, PUT and DELETE on `endpoint` (the path after /api/v1/), with the request's raw body. */
export function restRoute(c: RestContext, method: string, endpoint: string, url: URL, raw: Buffer): Reply {
  const parts = endpoint.split('/').map((x) => decodeURIComponent(x));
  const page = <T>(items: T[]) => {
    const limit = intParam(url, 'limit', 20, 1, 1000), offset = intParam(url, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
    return { items: items.slice(offset, offset + limit), cursor: { offset, limit, total_count: items.length } };
  };
  if (method === 'GET') {
    if (endpoint === 'healthz') return ok({ status: 'ok' });
    if (endpoint === 'get_server_capabilities') return ok({ supported_models: [{ model_name: c.modelName, max_context_length: c.contextLength }], sleuth_flavor: c.flavor });
    if (parts[0] === 'samplers' && parts.length === 2) {
      const s = c.samplers.sessions.get(parts[1]!);
      if (!s) throw new HttpError(404, `sampler '${parts[1]}' not found`);
      return ok({ sampler_id: parts[1], base_model: c.modelName, model_path: s.path ?? null });
    }
    if (endpoint === 'training_runs') {
      const { items, cursor } = page(c.runs.list());
      return ok({ training_runs: items.map(runJson), cursor });
    }
    if (endpoint === 'checkpoints') {
      const all = c.runs.list().flatMap((r) => [...r.checkpoints.values()]).sort((a, b) => b.time.getTime() - a.time.getTime());
      const { items, cursor } = page(all);
      return ok({ checkpoints: items.map(checkpointJson), cursor });
    }
    if (parts[0] === 'training_runs' && (parts.length === 2 || (parts.length === 3 && parts[2] === 'checkpoints'))) {
      const run = c.runs.get(parts[1]!);
      if (!run) throw new HttpError(404, `training run '${parts[1]}' not found`);
      if (parts.length === 2) return ok(runJson(run));
      return ok({ checkpoints: [...run.checkpoints.values()].sort((a, b) => b.time.getTime() - a.time.getTime()).map(checkpointJson), cursor: null });
    }
  }
  // training_runs/RUN/checkpoints/(weights|sampler_weights)/NAME[/ttl]
  if (parts[0] === 'training_runs' && parts[2] === 'checkpoints' && (parts.length === 5 || (parts.length === 6 && parts[5] === 'ttl'))) {
    const [runId, checkpointId] = [parts[1]!, `${parts[3]}/${parts[4]}`];
    if (method === 'DELETE' && parts.length === 5) {
      if (!c.runs.deleteCheckpoint(runId, checkpointId)) throw new HttpError(404, `checkpoint '${checkpointId}' of training run '${runId}' not found`);
      return { status: 204, body: '' };
    }
    if (method === 'PUT' && parts.length === 6) {
      const checkpoint = c.runs.checkpoint(runId, checkpointId);
      if (!checkpoint) throw new HttpError(404, `checkpoint '${checkpointId}' of training run '${runId}' not found`);
      const r = TtlSchema.safeParse(raw.length ? parseJson(raw) : {});
      if (!r.success) throw new HttpError(400, `ttl: ttl_seconds must be a whole number >= 1, or null to remove the expiry`);
      c.runs.setTtl(checkpoint, r.data.ttl_seconds);
      return { status: 204, body: '' };
    }
    throw new HttpError(405, `${method} ${url.pathname} is not supported`, { allow: parts.length === 5 ? 'DELETE' : 'PUT' });
  }
  throw new HttpError(404, `no such endpoint: ${method} ${url.pathname}`);
}

/** The SDK's feature flags, set to what this server really does (ClientConfigResponse). */
export function clientConfig(maxBodyBytes: number): Record<string, unknown> {
  return {
    pjwt_auth_enabled: false,
    credential_default_source: 'api_key',
    // HTTP/1.1 over node:http: the SDK's default httpx transport is the right one.
    use_pyqwest_transport: false,
    // A model's requests run in seq_id order however they arrive.
    parallel_fwdbwd_chunks: true,
    proto_compress_fwdbwd: true,
    fwdbwd_max_chunk_len: 1024,
    fwdbwd_max_chunk_bytes_count: Math.min(5_000_000, Math.floor(maxBodyBytes / 2)),
    sample_no_retries: false,
    create_model_via_load_weights: false,
  };
}
