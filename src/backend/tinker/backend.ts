import { InputError } from '../../errors.js';
import { BpeDataSchema, BpeTokenizer } from '../../protocol/compact/bpe.js';
import { addTokenLoss, clipRange, emptySums, LOSSES, lossMetrics } from '../losses.js';
import { validateDatums } from '../validate.js';
import type { AdamParams, Datum, ForwardBackwardResult, LossConfig, LossFn, SampledSequence, Sampler, SamplingParams, TrainingBackend } from '../types.js';
import { checkBaseUrl, TinkerClient, type ClientOptions, type Submitted } from './client.js';
import { TinkerConflictError, TinkerHttp, TinkerRequestError, TinkerServerError, type CallOptions, type HttpOptions } from './http.js';
import {
  API,
  adamParams,
  ForwardBackwardResultSchema,
  fromWireSequences,
  lossFnConfig,
  mergeMetrics,
  modelInput,
  OptimStepResultSchema,
  PathResult,
  SamplerResult,
  SampleResultSchema,
  samplingParams,
  toWireDatum,
  type Flavor,
  type WireDatum,
} from './wire.js';

/**
 * sleuth's TrainingBackend over the Tinker REST API (hosted Tinker or SkyRL's tx server).
 *
 * Loss reduction (TINKER_API.md §9): `reduction: 'sum'` (default) gives hosted Tinker's semantics
 * on both servers: per-token losses summed over tokens and datums. SkyRL divides each sequence's
 * loss by its Σ weights and averages gradients over the B sequences of a step, so on SkyRL each
 * datum's advantages are multiplied by n_i · B (n_i = its Σ weights, B = datums of the
 * forwardBackward call), which restores the sum for every RL loss (all are linear in A). This
 * assumes one forwardBackward per optimStep, as sleuth's trainer does. `reduction: 'server'`
 * sends advantages unchanged (SkyRL: token mean, then sequence mean).
 *
 * The loss and the ratio/KL/clip metrics are computed here from the learner logprobs the server
 * returns, so they mean the same thing whichever server trained.
 */

export const HOSTED_BASE_URL = 'https://tinker.thinkingmachines.dev/services/tinker-prod';

/** Per-request limits of a chunked forward_backward (§5, the SDK's client_config defaults). */
const MAX_CHUNK_DATUMS = 1024;
const MAX_CHUNK_BYTES = 5_000_000;
const NAME = /^[A-Za-z0-9_-]{1,255}$/;

/** USD per 1M tokens, as in configs/prices.json (null = unknown). */
export interface TokenPrice {
  prefill: number | null;
  sample: number | null;
  train: number | null;
}

export interface TinkerBackendOptions {
  /** Default: $TINKER_BASE_URL, else hosted Tinker. */
  baseUrl?: string;
  /** The base model name (e.g. openai/gpt-oss-20b). */
  baseModel: string;
  loraRank: number;
  /** The environment variable holding the API key (default TINKER_API_KEY). */
  apiKeyEnv?: string;
  /** 'auto' (default): hosted Tinker by its URL; otherwise what the server says it is, else SkyRL. */
  flavor?: Flavor | 'auto';
  reduction?: 'sum' | 'server';
  /** named: save_weights_for_sampler with a name (a tinker:// path); ephemeral: a sampling session. */
  samplerWeights?: 'named' | 'ephemeral';
  /** Prices of this model, for the spend carried in optimStep's metrics. */
  price?: TokenPrice;
  /** LoRA initialisation seed. */
  seed?: number;
  maxChunkDatums?: number;
  maxChunkBytes?: number;
  log?: (line: string) => void;
  /** Transport tuning (tests shrink the back-off). */
  http?: Partial<Omit<HttpOptions, 'baseUrl' | 'apiKey' | 'log'>> & Pick<ClientOptions, 'heartbeatMs' | 'pollTimeoutMs' | 'maxPollErrors'>;
}

/** Tokens this backend has been billed for, and their price (null when a needed price is unknown). */
export interface TinkerUsage {
  prefillTokens: number;
  sampleTokens: number;
  trainTokens: number;
  spendUsd: number | null;
}

export class TinkerBackend implements TrainingBackend {
  readonly kind = 'tinker' as const;
  readonly baseModel: string;
  readonly client: TinkerClient;
  readonly reduction: 'sum' | 'server';
  /** The server does not say how long a sequence may be. */
  readonly contextLimit = undefined;
  /** The model's tokenizer when the server is `sleuth serve-tinker` (its local BPE model). */
  readonly tokenizer: BpeTokenizer | undefined;
  private modelIdValue: string;
  private readonly opts: TinkerBackendOptions;
  private readonly used = { prefillTokens: 0, sampleTokens: 0, trainTokens: 0 };

  constructor(client: TinkerClient, modelId: string, opts: TinkerBackendOptions, tokenizer?: BpeTokenizer) {
    this.client = client;
    this.modelIdValue = modelId;
    this.baseModel = opts.baseModel;
    this.reduction = opts.reduction ?? 'sum';
    this.opts = opts;
    this.tokenizer = tokenizer;
  }

  get modelId(): string {
    return this.modelIdValue;
  }

  get flavor(): Flavor {
    return this.client.flavor;
  }

  async forwardBackward(datums: Datum[], lossFn: LossFn, config: LossConfig = {}): Promise<ForwardBackwardResult> {
    const pending = await this.submitForwardBackward(datums, lossFn, config);
    return this.collectForwardBackward(pending, datums, lossFn, config);
  }

  async optimStep(adam: AdamParams): Promise<{ metrics: Record<string, number> }> {
    const sub = await this.submitOptimStep(adam);
    return this.collectOptimStep(sub);
  }

  /**
   * forward_backward and optim_step submitted back to back, then both awaited: the service works
   * in clock cycles of about 10 s, and waiting for the first result before sending the step costs
   * a cycle (§1 rule 4).
   */
  async forwardBackwardAndStep(datums: Datum[], lossFn: LossFn, config: LossConfig, adam: AdamParams): Promise<{ forwardBackward: ForwardBackwardResult; optim: { metrics: Record<string, number> } }> {
    const fb = await this.submitForwardBackward(datums, lossFn, config);
    const step = await this.submitOptimStep(adam);
    const [forwardBackward, optim] = await Promise.all([this.collectForwardBackward(fb, datums, lossFn, config), this.collectOptimStep(step)]);
    return { forwardBackward, optim };
  }

  async saveWeightsForSampler(name: string): Promise<TinkerSampler> {
    checkName(name, 'saveWeightsForSampler');
    if (this.opts.samplerWeights === 'ephemeral') {
      const seq = this.client.nextSamplingSessionSeq();
      const r = await this.client.result(await this.submitModel('save_weights_for_sampler', { sampling_session_seq_id: seq }), SamplerResult);
      if (!('sampling_session_id' in r)) throw new InputError(`save_weights_for_sampler: the server returned a path, not a sampling session`);
      return new TinkerSampler(this.client, { sampling_session_id: r.sampling_session_id }, `${this.modelId}@${name}`, this.counter);
    }
    const path = await this.save('save_weights_for_sampler', name, this.flavor === 'skyrl' ? `tinker://${this.modelId}/${name}` : `tinker://${this.modelId}/sampler_weights/${name}`);
    return new TinkerSampler(this.client, { model_path: path }, path, this.counter);
  }

  /**
   * save_weights(_for_sampler) under a name. A 409 "already exists" answering a retry (the first
   * attempt's reply was lost) means the first attempt saved it: that is success, at the path the
   * server names checkpoints by. A 409 on the first attempt is a name already used: an error.
   */
  private async save(kind: 'save_weights' | 'save_weights_for_sampler', name: string, pathIfSaved: string): Promise<string> {
    try {
      const r = await this.client.result(await this.submitModel(kind, { path: name }, { conflictIsFinal: true }), SamplerResult);
      if (!('path' in r)) throw new InputError(`${kind}: the server returned a sampling session, not a path`);
      return r.path;
    } catch (err) {
      if (err instanceof TinkerConflictError && err.afterRetry) {
        this.opts.log?.(`tinker: ${kind} '${name}': HTTP 409 on a retry: the first attempt saved it (${pathIfSaved})`);
        return pathIfSaved;
      }
      if (err instanceof TinkerConflictError) throw new TinkerRequestError(`${kind}: a checkpoint named '${name}' already exists on the server (${err.message}); save under a new name`, 409);
      throw err;
    }
  }

  /** A sampler on a saved path (tinker://…, either form of §11) or on a base model name. */
  samplerFor(pathOrModel: string): TinkerSampler {
    return new TinkerSampler(this.client, pathOrModel.startsWith('tinker://') ? { model_path: pathOrModel } : { base_model: pathOrModel }, pathOrModel, this.counter);
  }

  async saveState(name: string): Promise<string> {
    checkName(name, 'saveState');
    return this.save('save_weights', name, `tinker://${this.modelId}/weights/${name}`);
  }

  /**
   * Load weights and optimiser state. Servers accept load_weights only as a model's first request
   * (§4), so a model that has already been used is replaced by a fresh one first.
   */
  async loadState(path: string): Promise<void> {
    if (!path.startsWith('tinker://')) throw new InputError(`loadState: '${path}' is not a tinker:// path (Tinker loads only checkpoints saved on the server)`);
    if (this.client.requestsSent(this.modelId) > 0) {
      this.modelIdValue = await this.client.createModel(this.baseModel, { rank: this.opts.loraRank, ...(this.opts.seed !== undefined ? { seed: this.opts.seed } : {}) });
      this.lostSubmission = undefined;
    }
    await this.client.result(await this.submitModel('load_weights', { path, optimizer: true }), PathResultLoose);
  }

  usage(): TinkerUsage {
    return { ...this.used, spendUsd: spend(this.used, this.opts.price) };
  }

  async close(): Promise<void> {
    this.client.close();
  }

  /**
   * Submit a request of the training model with the next seq_id. The server runs a model's requests
   * in seq_id order, so one that never got through leaves a gap every later request would wait on:
   * after that the model refuses further requests (loadState starts a fresh model). A request the
   * server refused (4xx) leaves no gap: hosted Tinker skips a rejected seq_id (the official SDK
   * relies on it) and SkyRL does not order by seq_id.
   *
   * SkyRL ignores idempotency keys, so there a training request whose first attempt may have run is
   * not sent again (it could step twice); saves are, since a repeat answers 409 (see save).
   */
  private async submitModel(path: string, fields: Record<string, unknown>, opts: CallOptions = {}): Promise<Submitted> {
    if (this.lostSubmission) throw new TinkerServerError(`${path}: an earlier request of model ${this.modelId} could not be submitted (${this.lostSubmission}); later requests would wait for it forever. Start a new backend, or loadState a checkpoint into a fresh model`);
    const seq = this.client.nextSeq(this.modelId);
    const retry: CallOptions = this.flavor === 'skyrl' && !opts.conflictIsFinal ? { retryMaybeRan: false } : {};
    try {
      return await this.client.submit(path, { model_id: this.modelId, seq_id: seq, ...fields, type: path }, { ...retry, ...opts });
    } catch (err) {
      if (!(err instanceof TinkerRequestError)) this.lostSubmission = `${path} seq_id ${seq}: ${(err as Error).message}`;
      throw err;
    }
  }

  private lostSubmission: string | undefined;

  private readonly counter = (prefill: number, sampled: number): void => {
    this.used.prefillTokens += prefill;
    this.used.sampleTokens += sampled;
  };

  private async submitForwardBackward(datums: Datum[], lossFn: LossFn, config: LossConfig): Promise<{ subs: Submitted[]; sizes: number[] }> {
    validateDatums(datums, lossFn);
    // SkyRL's request model has no loss_fn_config: thresholds would be dropped, and the metrics
    // computed here would describe a loss the server did not use.
    if (this.flavor === 'skyrl' && (config.clipLowThreshold !== undefined || config.clipHighThreshold !== undefined)) {
      throw new InputError(`forwardBackward: SkyRL ignores loss_fn_config, so clip thresholds ${JSON.stringify(config)} cannot be applied there; leave them at the server's defaults`);
    }
    const skyrlSum = this.flavor === 'skyrl' && this.reduction === 'sum';
    if (skyrlSum && !LOSSES[lossFn].rl) {
      throw new InputError("forwardBackward: SkyRL averages cross_entropy over each sequence's weights, which no rescaling of the inputs undoes; use reduction 'server' for cross_entropy on SkyRL");
    }
    const B = datums.length;
    const wire: WireDatum[] = datums.map((d) => {
      if (!skyrlSum) return toWireDatum(d, lossFn);
      const n = d.weights.reduce((a, w) => a + w, 0);
      const factor = n > 0 ? n * B : 1;
      return toWireDatum(d, lossFn, d.advantages!.map((a) => a * factor));
    });
    const maxDatums = this.opts.maxChunkDatums ?? MAX_CHUNK_DATUMS;
    const maxBytes = this.opts.maxChunkBytes ?? MAX_CHUNK_BYTES;
    const chunks: WireDatum[][] = [];
    let current: WireDatum[] = [], bytes = 0;
    for (const w of wire) {
      const size = JSON.stringify(w).length;
      if (current.length && (current.length >= maxDatums || bytes + size > maxBytes)) {
        chunks.push(current);
        current = [];
        bytes = 0;
      }
      current.push(w);
      bytes += size;
    }
    if (current.length) chunks.push(current);
    const cfg = lossFnConfig(lossFn, config);
    const subs: Submitted[] = [];
    // Submitted one after another so seq_ids reach the server in order; results are awaited together.
    for (const data of chunks) {
      try {
        subs.push(await this.submitModel('forward_backward', { forward_backward_input: { data, loss_fn: lossFn, ...(cfg ? { loss_fn_config: cfg } : {}) } }));
      } catch (err) {
        // SkyRL 0.3.0's request model lists no cispo: a 422 at submission.
        if (err instanceof TinkerRequestError && err.status === 422 && LOSSES[lossFn].rl && err.message.includes('loss_fn')) {
          throw new TinkerRequestError(`forwardBackward: this server does not accept loss_fn '${lossFn}' (${err.message}); SkyRL tx 0.3.0 has no cispo: use ppo or importance_sampling, or a server that lists it`, 422);
        }
        throw err;
      }
    }
    this.used.trainTokens += datums.reduce((s, d) => s + d.inputTokens.length, 0);
    return { subs, sizes: chunks.map((c) => c.length) };
  }

  private async collectForwardBackward(p: { subs: Submitted[]; sizes: number[] }, datums: Datum[], lossFn: LossFn, config: LossConfig): Promise<ForwardBackwardResult> {
    const outs = await Promise.all(p.subs.map((s) => this.client.result(s, ForwardBackwardResultSchema)));
    const logprobs: number[][] = [];
    outs.forEach((o, i) => {
      if (o.loss_fn_outputs.length !== p.sizes[i]) throw new Error(`forward_backward: the server returned ${o.loss_fn_outputs.length} outputs for ${p.sizes[i]} datums`);
      for (const out of o.loss_fn_outputs) logprobs.push(out['logprobs']?.data ?? []);
    });
    datums.forEach((d, i) => {
      if (logprobs[i]!.length !== d.inputTokens.length) throw new Error(`forward_backward: datum ${i}: the server returned ${logprobs[i]!.length} logprobs for ${d.inputTokens.length} tokens`);
    });
    const metrics = mergeMetrics(outs.map((o, i) => ({ metrics: o.metrics, weight: p.sizes[i]! })));
    Object.assign(metrics, learnerLossMetrics(datums, logprobs, lossFn, config));
    return { loss: metrics['loss:sum']!, logprobs, metrics };
  }

  private async submitOptimStep(adam: AdamParams): Promise<Submitted> {
    for (const [k, v] of Object.entries(adam)) if (!Number.isFinite(v)) throw new InputError(`optimStep: ${k} must be a finite number, got ${v}`);
    if (this.flavor === 'skyrl' && adam.gradClipNorm > 0) throw new InputError(`optimStep: SkyRL ignores adam_params.grad_clip_norm, so clipping at ${adam.gradClipNorm} would silently not happen; set gradClipNorm 0 for SkyRL`);
    return this.submitModel('optim_step', { adam_params: adamParams(adam) });
  }

  private async collectOptimStep(sub: Submitted): Promise<{ metrics: Record<string, number> }> {
    const r = await this.client.result(sub, OptimStepResultSchema);
    const u = this.usage();
    const metrics: Record<string, number> = { ...(r.metrics ?? {}), 'tinker/prefill_tokens': u.prefillTokens, 'tinker/sample_tokens': u.sampleTokens, 'tinker/train_tokens': u.trainTokens };
    if (u.spendUsd !== null) metrics['tinker/spend_usd'] = u.spendUsd;
    return { metrics };
  }
}

/** load_weights answers {path?, model_id?}: nothing required. */
const PathResultLoose = PathResult.partial().passthrough();

export class TinkerSampler implements Sampler {
  private seq = 0;
  constructor(
    private readonly client: TinkerClient,
    /** How asample addresses the weights: model_path, sampling_session_id (+ seq_id) or base_model. */
    private target: { model_path: string } | { sampling_session_id: string } | { base_model: string },
    readonly modelPath: string,
    /** Told the tokens of each request (prompt, sampled), for the spend. */
    private readonly onUsage: (prefill: number, sampled: number) => void = () => {},
  ) {}

  async sample(prompt: number[], params: SamplingParams, numSamples = 1): Promise<SampledSequence[]> {
    if (prompt.length === 0) throw new InputError('sampling: the prompt is empty');
    if (!Number.isInteger(params.maxTokens) || params.maxTokens < 1) throw new InputError(`sampling: maxTokens must be a whole number >= 1, got ${params.maxTokens}`);
    if (!Number.isInteger(numSamples) || numSamples < 1) throw new InputError(`sampling: numSamples must be a whole number >= 1, got ${numSamples}`);
    const r = await this.client.request('asample', { ...(await this.address()), prompt: modelInput(prompt), num_samples: numSamples, sampling_params: samplingParams(params), type: 'sample' }, SampleResultSchema);
    const out = fromWireSequences(r);
    this.onUsage(prompt.length, out.reduce((s, q) => s + q.tokens.length, 0));
    return out;
  }

  /** asample with max_tokens 1 and prompt_logprobs (as the SDK's compute_logprobs). */
  async computeLogprobs(tokens: number[]): Promise<(number | null)[]> {
    if (tokens.length === 0) return [];
    const r = await this.client.request('asample', { ...(await this.address()), prompt: modelInput(tokens), num_samples: 1, sampling_params: samplingParams({ maxTokens: 1, temperature: 1 }), prompt_logprobs: true, type: 'sample' }, SampleResultSchema);
    this.onUsage(tokens.length, 1);
    const lps = r.prompt_logprobs;
    // Hosted Tinker: one per token, the first null. SkyRL: one per token after the first.
    if (lps && lps.length === tokens.length) return lps.map((v, i) => (i === 0 ? null : v));
    if (lps && lps.length === tokens.length - 1) return [null, ...lps];
    throw new Error(`computeLogprobs: the server returned ${lps?.length ?? 'no'} prompt logprobs for ${tokens.length} tokens`);
  }

  /**
   * How asample names the weights. On hosted Tinker, as the official SDK does: a sampling session
   * (create_sampling_session once), then its seq_id per request. SkyRL takes model_path directly.
   */
  private async address(): Promise<Record<string, unknown>> {
    if (!('sampling_session_id' in this.target) && this.client.flavor === 'tinker') this.target = { sampling_session_id: await (this.session ??= this.client.createSamplingSession(this.target)) };
    if ('sampling_session_id' in this.target) return { sampling_session_id: this.target.sampling_session_id, seq_id: this.seq++ };
    return { ...this.target };
  }

  private session: Promise<string> | undefined;
}

function checkName(name: string, what: string): void {
  // SkyRL's rule (§11), stricter than hosted Tinker's.
  if (!NAME.test(name)) throw new InputError(`${what}: name '${name}' must be 1-255 letters, digits, '_' or '-'`);
}

/** Tinker's summed loss and sleuth's RL diagnostics, from the learner logprobs the server returned (as the local backend computes them). */
function learnerLossMetrics(datums: Datum[], logprobs: number[][], lossFn: LossFn, config: LossConfig): Record<string, number> {
  const [lo, hi] = clipRange(lossFn, config);
  const sums = emptySums();
  datums.forEach((d, i) => {
    const lps = logprobs[i]!;
    for (let t = 0; t < d.inputTokens.length; t++) {
      addTokenLoss(sums, lossFn, { lp: lps[t]!, weight: d.weights[t]!, samplerLogprob: d.logprobs?.[t] ?? 0, advantage: d.advantages?.[t] ?? 0 }, lo, hi);
    }
  });
  return lossMetrics(lossFn, sums);
}

function spend(u: { prefillTokens: number; sampleTokens: number; trainTokens: number }, price: TokenPrice | undefined): number | null {
  if (!price) return null;
  let usd = 0;
  for (const [count, perM] of [[u.prefillTokens, price.prefill], [u.sampleTokens, price.sample], [u.trainTokens, price.train]] as const) {
    if (count === 0) continue;
    if (perM === null) return null;
    usd += (count * perM) / 1e6;
  }
  return usd;
}

/** Hosted Tinker by its host name (§2). */
export function isHostedUrl(url: URL): boolean {
  return url.hostname.endsWith('thinkingmachines.dev') || url.hostname.endsWith('thinkingmachines.ai');
}

/** Where and how to reach a Tinker server (the options shared by training and sampling-only clients). */
export type ConnectOptions = Pick<TinkerBackendOptions, 'baseUrl' | 'apiKeyEnv' | 'flavor' | 'log' | 'http'>;

/**
 * A session on the server, in the right dialect. The key is read from the environment variable
 * `apiKeyEnv` (default TINKER_API_KEY); a self-hosted server without one gets the placeholder
 * `tml-dummy` (SkyRL accepts any key).
 */
export async function connectTinker(options: ConnectOptions): Promise<TinkerClient> {
  const baseUrl = options.baseUrl ?? process.env['TINKER_BASE_URL'] ?? HOSTED_BASE_URL;
  const url = checkBaseUrl(baseUrl);
  const envName = options.apiKeyEnv ?? 'TINKER_API_KEY';
  let apiKey = process.env[envName];
  if (!apiKey) {
    if (options.apiKeyEnv || isHostedUrl(url)) throw new InputError(`tinker: no API key: set ${envName} (hosted Tinker keys start with 'tml-')`);
    apiKey = 'tml-dummy';
  }
  const log = options.log ?? ((line: string) => process.stderr.write(line + '\n'));
  const transport = { ...options.http, log };
  let flavor: Flavor;
  if (options.flavor && options.flavor !== 'auto') flavor = options.flavor;
  else if (isHostedUrl(url)) flavor = 'tinker';
  else {
    // A self-hosted server: sleuth serve-tinker says which dialect it speaks; anything else is SkyRL's.
    let caps: unknown = {};
    try {
      caps = await new TinkerHttp({ baseUrl, apiKey, ...transport }).call('GET', `${API}/get_server_capabilities`);
    } catch (err) {
      if (!(err instanceof TinkerRequestError)) throw err;
    }
    const said = (caps as Record<string, unknown> | null)?.['sleuth_flavor'];
    flavor = said === 'tinker' || said === 'skyrl' ? said : 'skyrl';
  }
  return TinkerClient.connect({ baseUrl, apiKey, flavor, ...transport });
}

/** Connect, create a session and a LoRA training model on `baseModel`, and return the backend. */
export async function createTinkerBackend(options: TinkerBackendOptions): Promise<TinkerBackend> {
  if (!options.baseModel) throw new InputError('tinker: a base model name is required (--model)');
  if (!Number.isInteger(options.loraRank) || options.loraRank < 1) throw new InputError(`tinker: --lora-rank must be a whole number >= 1, got ${options.loraRank}`);
  const client = await connectTinker(options);
  try {
    // The server's limits for chunked forward_backward, as the SDK reads them (unless given).
    const config = await client.clientConfig();
    const limit = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined);
    options = { ...options, maxChunkDatums: options.maxChunkDatums ?? limit(config['fwdbwd_max_chunk_len']), maxChunkBytes: options.maxChunkBytes ?? limit(config['fwdbwd_max_chunk_bytes_count']) };
    const modelId = await client.createModel(options.baseModel, { rank: options.loraRank, ...(options.seed !== undefined ? { seed: options.seed } : {}) });
    const info = await client.getInfo(modelId).catch(() => ({}) as Record<string, unknown>);
    const data = (info['model_data'] ?? {}) as Record<string, unknown>;
    const tok = BpeDataSchema.safeParse(data['sleuth_tokenizer']);
    return new TinkerBackend(client, modelId, options, tok.success ? new BpeTokenizer(tok.data) : undefined);
  } catch (err) {
    client.close();
    throw err;
  }
}

/** A sampler on a base model name or a saved tinker:// sampler path, with no training model. */
export async function createTinkerSampler(modelOrPath: string, options: ConnectOptions = {}): Promise<TinkerSampler> {
  if (!modelOrPath) throw new InputError('tinker: a base model name or a tinker:// sampler path is required');
  const client = await connectTinker(options);
  return new TinkerSampler(client, modelOrPath.startsWith('tinker://') ? { model_path: modelOrPath } : { base_model: modelOrPath }, modelOrPath);
}
