import { randomUUID } from 'node:crypto';
import { InputError } from '../errors.js';
import { checkBody, HttpError } from '../http/request.js';
import { BpeTokenizer } from '../protocol/compact/bpe.js';
import { LocalBackend } from '../backend/local/backend.js';
import { readCheckpoint } from '../backend/local/checkpoint.js';
import type { LocalSampler } from '../backend/local/sampler.js';
import { inputTokens } from '../backend/tinker/wire.js';
import type { Dialect } from './dialect.js';
import { checkpointFile, parsePath } from './registry.js';
import { SampleSchema } from './schemas.js';

/**
 * The samplers `sleuth serve-tinker` samples from: the base model (built on first use), sampler
 * weights saved by a training model (kept in memory, or loaded from disk after a restart), and the
 * sampling sessions opened on either.
 */

export interface SamplersOptions {
  /** Where checkpoints are. */
  dir: string;
  /** The base model's name, and its checkpoint's header and weights. */
  modelName: string;
  header: ReturnType<typeof readCheckpoint>['header'];
  tokenizer: BpeTokenizer;
  baseParams: Float32Array;
  kernels?: 'auto' | 'wasm-simd' | 'js';
}

export class Samplers {
  private baseSampler: LocalSampler | undefined;
  /** Sampler weights by the paths they were saved (or asked for) under. */
  private readonly saved = new Map<string, LocalSampler>();
  /** Sampling sessions by id, with the path they sample (none: the base model, or weights in memory). */
  readonly sessions = new Map<string, { sampler: LocalSampler; path?: string }>();

  constructor(
    private readonly o: SamplersOptions,
    private readonly dialect: Dialect,
  ) {}

  /** A sampling session on the sampler `open` gives for the session's id; the id. */
  openSession(open: (id: string) => LocalSampler, path?: string): string {
    const id = `samp_${randomUUID().slice(0, 8)}`;
    this.sessions.set(id, { sampler: open(id), ...(path !== undefined ? { path } : {}) });
    return id;
  }

  /** create_sampling_session: on saved weights (model_path) or the base model. */
  createSession(body: Record<string, unknown>): string {
    const path = body['model_path'];
    const base = body['base_model'];
    const sampler = typeof path === 'string' ? this.at(path) : this.base(typeof base === 'string' ? base : this.o.modelName);
    return this.openSession(() => sampler, typeof path === 'string' ? path : undefined);
  }

  /** Sampler weights just saved under `path`. */
  remember(path: string, sampler: LocalSampler): void {
    this.saved.set(path, sampler);
  }

  /**
   * An asample request, checked now (4xx at once), as the work that samples it. The sampler yields
   * to the event loop as it goes: other requests are served meanwhile.
   */
  sample(raw: Record<string, unknown>): () => Promise<unknown> {
    const r = checkBody(SampleSchema, raw, 'asample');
    const p = r.sampling_params;
    this.dialect.checkSampling(p);
    const stop = typeof p.stop === 'string' ? [p.stop] : p.stop ?? [];
    const stopIds = stop.filter((x): x is number => typeof x === 'number');
    const stopStrings = stop.filter((x): x is string => typeof x === 'string');
    const maxTokens = p.max_tokens ?? 128;
    const bad = (msg: string) => new InputError(`asample: sampling_params.${msg}`);
    if (!(maxTokens >= 1)) throw bad(`max_tokens must be >= 1, got ${maxTokens}`);
    if (!(Number.isFinite(p.temperature) && p.temperature >= 0 && p.temperature <= 100)) throw bad(`temperature must be a finite number in [0, 100], got ${p.temperature}`);
    if (!(Number.isFinite(p.top_p) && p.top_p > 0 && p.top_p <= 1)) throw bad(`top_p must be in (0, 1], got ${p.top_p}`);
    if (!(p.top_k === -1 || p.top_k >= 1)) throw bad(`top_k must be -1 (off) or >= 1, got ${p.top_k}`);
    if (stopStrings.some((x) => x.length === 0)) throw bad('stop strings must not be empty');
    if (r.topk_prompt_logprobs) throw new InputError('asample: topk_prompt_logprobs is not supported by this server (send 0)');
    let sampler: LocalSampler;
    if (r.sampling_session_id) {
      const s = this.sessions.get(r.sampling_session_id);
      if (!s) throw new HttpError(404, `sampling session '${r.sampling_session_id}' not found`);
      sampler = s.sampler;
    } else if (r.model_path) sampler = this.at(r.model_path);
    else if (r.base_model) sampler = this.base(r.base_model);
    else throw new HttpError(422, 'asample: give sampling_session_id, model_path or base_model');
    const prompt = inputTokens(r.prompt);
    const params = { maxTokens, temperature: p.temperature, topP: p.top_p, topK: p.top_k, stop: stopIds, stopStrings, ...(p.seed !== null && p.seed !== undefined ? { seed: p.seed } : {}) };
    return async () => {
      const sequences = await sampler.sample(prompt, params, r.num_samples);
      const out: Record<string, unknown> = { type: 'sample', sequences: sequences.map((s) => ({ tokens: s.tokens, logprobs: s.logprobs, stop_reason: s.stopReason })) };
      if (r.prompt_logprobs) out['prompt_logprobs'] = this.dialect.promptLogprobs(await sampler.computeLogprobs(prompt));
      return out;
    };
  }

  /** The base model's sampler, by its name. */
  base(name: string): LocalSampler {
    if (name !== this.o.modelName) throw new HttpError(400, `base_model '${name}' is not served here; this server serves '${this.o.modelName}'`);
    if (!this.baseSampler) {
      const b = new LocalBackend(this.o.header.config, this.o.tokenizer, { dir: this.o.dir, baseModel: this.o.modelName, trainRows: 'all-rows', ...(this.o.kernels ? { kernels: this.o.kernels } : {}) });
      b.model.params.a.set(this.o.baseParams);
      this.baseSampler = b.samplerInMemory('base');
    }
    return this.baseSampler;
  }

  /** A sampler on saved sampler weights, by either path form (§11); loaded from disk after a restart. */
  at(path: string): LocalSampler {
    const parsed = parsePath(path);
    const canonical = parsed ? [`tinker://${parsed.modelId}/sampler_weights/${parsed.name}`, `tinker://${parsed.modelId}/${parsed.name}`] : [path];
    for (const p of canonical) {
      const s = this.saved.get(p);
      if (s) return s;
    }
    const { header, tensors } = readCheckpoint(checkpointFile(this.o.dir, path, 'sampler'));
    const b = new LocalBackend(header.config, new BpeTokenizer(header.tokenizer), { dir: this.o.dir, baseModel: this.o.modelName, trainRows: 'all-rows' });
    b.model.params.a.set(tensors.params!);
    const s = b.samplerInMemory(path);
    this.saved.set(path, s);
    return s;
  }
}
