import { seededRandom } from '../../random.js';
import { z } from 'zod';
import { InputError } from '../../errors.js';
import { createKernels, rows, type IntTensor, type Kernels, type Tensor } from './tensor-math.js';

/**
 * A small GPT-2-style decoder (in the spirit of llm.c): token + learned position embeddings,
 * pre-norm blocks of multi-head causal attention and a GELU MLP, a final layer norm, and logits
 * through the tied token embedding. Forward and backward are written out below, one step per line;
 * the heavy loops live in the kernels (WebAssembly SIMD, see ./assembly/kernels.ts).
 *
 * One model instance processes one sequence at a time over buffers sized for its context; the
 * per-layer q|k|v rows double as the KV cache when sampling (rows before `from` are reused).
 */

export const ModelConfigSchema = z
  .object({
    vocabSize: z.number().int().min(260).max(65536),
    context: z.number().int().min(8).max(2048),
    dModel: z.number().int().min(8).max(1024).multipleOf(4),
    nLayers: z.number().int().min(1).max(16),
    nHeads: z.number().int().min(1).max(64),
  })
  .strict()
  .refine((c) => c.dModel % c.nHeads === 0 && (c.dModel / c.nHeads) % 4 === 0, { message: 'dModel / nHeads must be a whole multiple of 4' });

export type ModelConfig = z.infer<typeof ModelConfigSchema>;

interface LayerParams {
  ln1w: Tensor; ln1b: Tensor;
  qkvw: Tensor; qkvb: Tensor;
  attprojw: Tensor; attprojb: Tensor;
  ln2w: Tensor; ln2b: Tensor;
  fcw: Tensor; fcb: Tensor;
  fcprojw: Tensor; fcprojb: Tensor;
}

export interface ParamViews {
  wte: Tensor;
  wpe: Tensor;
  layers: LayerParams[];
  lnfw: Tensor;
  lnfb: Tensor;
}

/** Name, size and role of every parameter tensor, in storage order. */
export function paramShapes(c: ModelConfig): { name: string; size: number; matrix: boolean }[] {
  const d = c.dModel;
  const out = [
    { name: 'wte', size: c.vocabSize * d, matrix: true },
    { name: 'wpe', size: c.context * d, matrix: true },
  ];
  for (let l = 0; l < c.nLayers; l++) {
    out.push(
      { name: `h${l}.ln1w`, size: d, matrix: false }, { name: `h${l}.ln1b`, size: d, matrix: false },
      { name: `h${l}.qkvw`, size: 3 * d * d, matrix: true }, { name: `h${l}.qkvb`, size: 3 * d, matrix: false },
      { name: `h${l}.attprojw`, size: d * d, matrix: true }, { name: `h${l}.attprojb`, size: d, matrix: false },
      { name: `h${l}.ln2w`, size: d, matrix: false }, { name: `h${l}.ln2b`, size: d, matrix: false },
      { name: `h${l}.fcw`, size: 4 * d * d, matrix: true }, { name: `h${l}.fcb`, size: 4 * d, matrix: false },
      { name: `h${l}.fcprojw`, size: 4 * d * d, matrix: true }, { name: `h${l}.fcprojb`, size: d, matrix: false },
    );
  }
  out.push({ name: 'lnfw', size: d, matrix: false }, { name: 'lnfb', size: d, matrix: false });
  return out;
}

export function paramCount(c: ModelConfig): number {
  return paramShapes(c).reduce((s, p) => s + p.size, 0);
}

function viewParams(flat: Tensor, c: ModelConfig): ParamViews {
  const named = new Map<string, Tensor>();
  let off = 0;
  for (const s of paramShapes(c)) {
    named.set(s.name, { a: flat.a.subarray(off, off + s.size), p: flat.p + off * 4 });
    off += s.size;
  }
  const get = (n: string) => named.get(n)!;
  const layers: LayerParams[] = [];
  for (let l = 0; l < c.nLayers; l++) {
    const k = (n: string) => get(`h${l}.${n}`);
    layers.push({
      ln1w: k('ln1w'), ln1b: k('ln1b'), qkvw: k('qkvw'), qkvb: k('qkvb'), attprojw: k('attprojw'), attprojb: k('attprojb'),
      ln2w: k('ln2w'), ln2b: k('ln2b'), fcw: k('fcw'), fcb: k('fcb'), fcprojw: k('fcprojw'), fcprojb: k('fcprojb'),
    });
  }
  return { wte: get('wte'), wpe: get('wpe'), layers, lnfw: get('lnfw'), lnfb: get('lnfb') };
}

interface LayerActs {
  ln1: Tensor; ln1Mean: Tensor; ln1Rstd: Tensor;
  qkv: Tensor; atty: Tensor; att: Tensor; attproj: Tensor; res2: Tensor;
  ln2: Tensor; ln2Mean: Tensor; ln2Rstd: Tensor;
  fch: Tensor; fchGelu: Tensor; fcproj: Tensor; res3: Tensor;
}

/** Gradient scratch, reused by every layer (the backward pass visits one layer at a time). */
interface GradScratch {
  dres: Tensor; dln: Tensor; datty: Tensor; dqkv: Tensor; dfch: Tensor; dfchGelu: Tensor; scratch: Tensor;
}

/** Deterministic N(0, std) initialisation from a seed (xorshift + Box-Muller). */
function gaussianFill(a: Float32Array, std: number, rng: () => number): void {
  for (let i = 0; i < a.length; i += 2) {
    const u = Math.max(rng(), 1e-12), v = rng();
    const r = Math.sqrt(-2 * Math.log(u)) * std;
    a[i] = r * Math.cos(2 * Math.PI * v);
    if (i + 1 < a.length) a[i + 1] = r * Math.sin(2 * Math.PI * v);
  }
}


export interface ModelOptions {
  /** Allocate gradients and backward scratch. */
  training: boolean;
  /**
   * Sampling: KV caches of this many sequences (slots), for decoding a batch of them one token
   * each per step (decodeRows). 0: the one KV cache of forward().
   */
  kvSlots?: number;
  kernels?: 'auto' | 'wasm-simd' | 'js';
}

export class Model {
  readonly k: Kernels;
  readonly nParams: number;
  readonly params: Tensor;
  readonly grads: Tensor | null;
  readonly p: ParamViews;
  readonly g: ParamViews | null;
  private readonly encoded: Tensor;
  private readonly acts: LayerActs[];
  private readonly lnf: Tensor;
  private readonly lnfMean: Tensor;
  private readonly lnfRstd: Tensor;
  /** Logits of the last forward pass, then (in place) probabilities, then dL/dlogits. */
  readonly logits: Tensor;
  readonly targets: IntTensor;
  readonly lp: Tensor;
  readonly entropy: Tensor;
  /** dL/dlp per row, set by the loss before backward(). */
  readonly g_lp: Tensor;
  /** One row of vocabulary-sized scratch, and its log-sum-exp, for the sampler. */
  readonly rowScratch: Tensor;
  readonly rowLse: Tensor;
  private readonly d: GradScratch | null;
  /** Training: the loss rows' final-norm outputs (gathered) and their gradient. */
  private readonly lossLnf: Tensor | null;
  private readonly dLossLnf: Tensor | null;
  /** Training: per layer, the key/value gradients a shared prefix's suffixes send it. */
  private readonly prefixDqkv: Tensor[] | null;
  private tokens: Int32Array;
  /** kvSlots: per slot, per layer, the q|k|v rows of that sequence; and a batch's scratch. */
  private readonly slots: Tensor[][];
  private readonly batchQkv: Tensor | null;
  private readonly attyOne: Tensor | null;
  /** Rows (token positions) run through the network so far: how much work a KV cache saved. */
  rowsRun = 0;

  constructor(
    readonly config: ModelConfig,
    opts: ModelOptions,
  ) {
    const c = config;
    const S = c.context, D = c.dModel, V = c.vocabSize, L = c.nLayers, H = c.nHeads;
    this.nParams = paramCount(c);
    const perLayer = S * (D * 3 + 3 * D + D + D + D + D + 4 * D * 2 + D + D) + 4 * S;
    // Sampling needs one attention buffer in all; training keeps each layer's for the backward pass.
    const attFloats = H * S * S * (opts.training ? L : 1);
    // The attention backward's scratch: 2 S (two query rows' score gradients at a time).
    const gradFloats = opts.training ? this.nParams + S * (D * 3 + 3 * D + 8 * D) + 2 * S + 2 * S * D + L * S * 3 * D : 0;
    const nSlots = opts.kvSlots ?? 0;
    const slotFloats = nSlots > 0 ? nSlots * L * S * 3 * D + S * 3 * D + S * D : 0;
    const floats = this.nParams + gradFloats + S * D + L * perLayer + attFloats + S * D + 2 * S + S * V + 4 * S + V + slotFloats;
    const tensorsCount = 48 + 24 * L + nSlots * L;
    const bytes = (floats + tensorsCount * 4) * 4 + 65536 * 2;
    // WebAssembly (32-bit) memory holds at most 4 GiB; attention probabilities grow as heads x context².
    if (bytes > 2 ** 32 - 65536) throw new InputError(`local model config ${JSON.stringify(c)} needs ${(bytes / 2 ** 30).toFixed(1)} GiB of weights and activations, over the 4 GiB a WebAssembly memory holds: reduce context, nHeads or nLayers`);
    this.k = createKernels(bytes, opts.kernels ?? 'auto');
    const h = this.k.heap;
    this.params = h.f32(this.nParams);
    this.p = viewParams(this.params, c);
    this.grads = opts.training ? h.f32(this.nParams) : null;
    this.g = this.grads ? viewParams(this.grads, c) : null;
    this.encoded = h.f32(S * D);
    const sharedAtt = opts.training ? null : h.f32(H * S * S);
    this.acts = [];
    for (let l = 0; l < L; l++) {
      this.acts.push({
        ln1: h.f32(S * D), ln1Mean: h.f32(S), ln1Rstd: h.f32(S),
        qkv: h.f32(S * 3 * D), atty: h.f32(S * D), att: sharedAtt ?? h.f32(H * S * S), attproj: h.f32(S * D), res2: h.f32(S * D),
        ln2: h.f32(S * D), ln2Mean: h.f32(S), ln2Rstd: h.f32(S),
        fch: h.f32(S * 4 * D), fchGelu: h.f32(S * 4 * D), fcproj: h.f32(S * D), res3: h.f32(S * D),
      });
    }
    this.lnf = h.f32(S * D);
    this.lnfMean = h.f32(S);
    this.lnfRstd = h.f32(S);
    this.logits = h.f32(S * V);
    this.targets = h.i32(S);
    this.lp = h.f32(S);
    this.entropy = h.f32(S);
    this.g_lp = h.f32(S);
    this.rowScratch = h.f32(V);
    this.rowLse = h.f32(1);
    this.d = opts.training
      ? { dres: h.f32(S * D), dln: h.f32(S * D), datty: h.f32(S * D), dqkv: h.f32(S * 3 * D), dfch: h.f32(S * 4 * D), dfchGelu: h.f32(S * 4 * D), scratch: h.f32(2 * S) }
      : null;
    this.lossLnf = opts.training ? h.f32(S * D) : null;
    this.dLossLnf = opts.training ? h.f32(S * D) : null;
    this.prefixDqkv = opts.training ? Array.from({ length: L }, () => h.f32(S * 3 * D)) : null;
    this.tokens = new Int32Array(S);
    this.slots = Array.from({ length: nSlots }, () => Array.from({ length: L }, () => h.f32(S * 3 * D)));
    this.batchQkv = nSlots > 0 ? h.f32(S * 3 * D) : null;
    this.attyOne = nSlots > 0 ? h.f32(S * D) : null;
    if (nSlots > 0) this.useSlot(0);
  }

  get kvSlots(): number {
    return this.slots.length;
  }

  /** forward() now reads and writes the KV cache of slot i (its own rows stay as they were). */
  useSlot(i: number): void {
    this.acts.forEach((a, l) => (a.qkv = this.slots[i]![l]!));
  }

  /** Copy rows [0, n) of slot `from`'s KV cache into slot `to` (the samples of one prompt). */
  copySlot(from: number, to: number, n: number): void {
    const w = 3 * this.config.dModel;
    for (let l = 0; l < this.config.nLayers; l++) this.slots[to]![l]!.a.set(this.slots[from]![l]!.a.subarray(0, n * w));
  }

  /**
   * One decoding step of a batch: row b is token tokens[b] at position positions[b] of the sequence
   * in slot slots[b] (whose KV cache holds its rows before that position). Logits of row b go to
   * logits row b. Each row's arithmetic is that of forward() on its sequence alone (matmuls and
   * norms are row by row, attention reads the row's own cache), so the logits are bit-identical.
   */
  decodeRows(slots: ArrayLike<number>, tokens: ArrayLike<number>, positions: ArrayLike<number>): void {
    const c = this.config, k = this.k, D = c.dModel, S = c.context, B = slots.length;
    if (B === 0) return;
    if (B > S) throw new Error(`a decoding batch of ${B} rows exceeds the ${S} rows of the model's buffers`);
    this.rowsRun += B;
    const e = this.encoded.a, wte = this.p.wte.a, wpe = this.p.wpe.a;
    for (let b = 0; b < B; b++) {
      const tok = tokens[b]!, t = positions[b]!;
      if (!Number.isInteger(tok) || tok < 0 || tok >= c.vocabSize) throw new Error(`token ${tok} is outside the vocabulary of ${c.vocabSize}`);
      if (t >= S) throw new Error(`position ${t} exceeds the model context of ${S}`);
      for (let i = 0; i < D; i++) e[b * D + i] = wte[tok * D + i]! + wpe[t * D + i]!;
    }
    const R = (x: Tensor, w: number) => rows(x, 0, B, w);
    const W = 3 * D, qkvB = this.batchQkv!, one = this.attyOne!;
    const last = this.blocks(0, B, (l, p, a) => {
      // Each row's q|k|v goes to its own sequence's cache, and attends over that cache.
      k.matmulForward(R(qkvB, W), R(a.ln1, D), p.qkvw, p.qkvb, B, D, W);
      for (let b = 0; b < B; b++) {
        const t = positions[b]!, kv = this.slots[slots[b]!]![l]!;
        kv.a.set(qkvB.a.subarray(b * W, (b + 1) * W), t * W);
        k.attentionForward(one, a.att, kv, t, t + 1, D, c.nHeads, S);
        a.atty.a.set(one.a.subarray(t * D, (t + 1) * D), b * D);
      }
    });
    k.layernormForward(R(this.lnf, D), R(this.lnfMean, 1), R(this.lnfRstd, 1), R(last, D), this.p.lnfw, this.p.lnfb, B, D);
    k.matmulForward(R(this.logits, c.vocabSize), R(this.lnf, D), this.p.wte, null, B, D, c.vocabSize);
  }

  /** GPT-2 initialisation: N(0, 0.02), residual projections scaled by 1/sqrt(2 L), norms at 1. */
  init(seed: number): void {
    const rng = seededRandom(seed);
    const resStd = 0.02 / Math.sqrt(2 * this.config.nLayers);
    gaussianFill(this.p.wte.a, 0.02, rng);
    gaussianFill(this.p.wpe.a, 0.01, rng);
    for (const l of this.p.layers) {
      l.ln1w.a.fill(1); l.ln1b.a.fill(0); l.ln2w.a.fill(1); l.ln2b.a.fill(0);
      gaussianFill(l.qkvw.a, 0.02, rng); l.qkvb.a.fill(0);
      gaussianFill(l.attprojw.a, resStd, rng); l.attprojb.a.fill(0);
      gaussianFill(l.fcw.a, 0.02, rng); l.fcb.a.fill(0);
      gaussianFill(l.fcprojw.a, resStd, rng); l.fcprojb.a.fill(0);
    }
    this.p.lnfw.a.fill(1);
    this.p.lnfb.a.fill(0);
  }

  /**
   * Every block over rows [from, from + T) of the activations (encoded rows already set);
   * `attention(l, p, a)` turns the rows of a.ln1 into those of a.atty. Returns the last block's output.
   */
  private blocks(from: number, T: number, attention: (l: number, p: LayerParams, a: LayerActs) => void): Tensor {
    const k = this.k, D = this.config.dModel;
    const R = (x: Tensor, w: number) => rows(x, from, T, w);
    let input = this.encoded;
    for (let l = 0; l < this.config.nLayers; l++) {
      const p = this.p.layers[l]!, a = this.acts[l]!;
      k.layernormForward(R(a.ln1, D), R(a.ln1Mean, 1), R(a.ln1Rstd, 1), R(input, D), p.ln1w, p.ln1b, T, D);
      attention(l, p, a);
      k.matmulForward(R(a.attproj, D), R(a.atty, D), p.attprojw, p.attprojb, T, D, D);
      addInto(R(a.res2, D).a, R(input, D).a, R(a.attproj, D).a);
      k.layernormForward(R(a.ln2, D), R(a.ln2Mean, 1), R(a.ln2Rstd, 1), R(a.res2, D), p.ln2w, p.ln2b, T, D);
      k.matmulForward(R(a.fch, 4 * D), R(a.ln2, D), p.fcw, p.fcb, T, D, 4 * D);
      k.geluForward(R(a.fchGelu, 4 * D), R(a.fch, 4 * D), T * 4 * D);
      k.matmulForward(R(a.fcproj, D), R(a.fchGelu, 4 * D), p.fcprojw, p.fcprojb, T, 4 * D, D);
      addInto(R(a.res3, D).a, R(a.res2, D).a, R(a.fcproj, D).a);
      input = a.res3;
    }
    return input;
  }

  /**
   * Run rows [from, n) of `tokens` (rows before `from` must hold the same tokens from an earlier
   * call: the KV cache), and the logits of rows [logitsFrom, n).
   */
  forward(tokens: ArrayLike<number>, from = 0, logitsFrom = from): void {
    const c = this.config, k = this.k, n = tokens.length, D = c.dModel, S = c.context;
    if (n > S) throw new Error(`sequence of ${n} tokens exceeds the model context of ${S}`);
    const T = n - from;
    if (T <= 0) return;
    this.rowsRun += T;
    for (let t = from; t < n; t++) {
      const tok = tokens[t]!;
      if (!Number.isInteger(tok) || tok < 0 || tok >= c.vocabSize) throw new Error(`token ${tok} at position ${t} is outside the vocabulary of ${c.vocabSize}`);
      this.tokens[t] = tok;
      const e = this.encoded.a, wte = this.p.wte.a, wpe = this.p.wpe.a;
      for (let i = 0; i < D; i++) e[t * D + i] = wte[tok * D + i]! + wpe[t * D + i]!;
    }
    const R = (x: Tensor, w: number) => rows(x, from, T, w);
    const last = this.blocks(from, T, (_, p, a) => {
      k.matmulForward(R(a.qkv, 3 * D), R(a.ln1, D), p.qkvw, p.qkvb, T, D, 3 * D);
      k.attentionForward(a.atty, a.att, a.qkv, from, n, D, c.nHeads, S);
    });
    k.layernormForward(R(this.lnf, D), R(this.lnfMean, 1), R(this.lnfRstd, 1), R(last, D), this.p.lnfw, this.p.lnfb, T, D);
    const TL = n - logitsFrom;
    if (TL > 0) k.matmulForward(rows(this.logits, logitsFrom, TL, c.vocabSize), rows(this.lnf, logitsFrom, TL, D), this.p.wte, null, TL, D, c.vocabSize);
  }

  /**
   * After forward(tokens) over the whole sequence: log-softmax every row, the logprob of each
   * row's target into `lp`, each row's entropy into `entropy`; logits become probabilities.
   */
  logprobs(targets: ArrayLike<number>): void {
    const n = targets.length;
    for (let t = 0; t < n; t++) {
      const tgt = targets[t]!;
      if (!Number.isInteger(tgt) || tgt < 0 || tgt >= this.config.vocabSize) throw new Error(`target token ${tgt} at position ${t} is outside the vocabulary of ${this.config.vocabSize}`);
      this.targets.a[t] = tgt;
    }
    this.k.softmaxRows(this.logits, this.targets, this.lp, this.entropy, null, n, this.config.vocabSize);
  }

  /**
   * Accumulate into `grads` the gradient of a loss that depends on the logits only through
   * lp[t] (the row's target logprob), given g_lp[t] = dL/dlp[t]. Call after logprobs(): every row
   * of the sequence has logits (the all-rows path).
   */
  backward(n: number): void {
    const { k, d, g } = this.training();
    const D = this.config.dModel, V = this.config.vocabSize;
    const R = (x: Tensor, w: number) => rows(x, 0, n, w);
    // Logits = lnf · wteᵀ (tied embedding).
    k.softmaxBackward(R(this.logits, V), this.targets, this.g_lp, n, V);
    R(d.dln, D).a.fill(0);
    k.matmulBackward(R(d.dln, D), g.wte, null, R(this.logits, V), R(this.lnf, D), this.p.wte, n, D, V);
    this.backwardFromLnf(0, n);
    this.backwardBlocks(0, n, 'none');
  }

  /**
   * After forward(tokens, from, n) (no logits): the logits, log-softmax and entropy of the K rows
   * listed in `lossRows` only (ascending, each in [from, n)), into rows [0, K) of logits, lp and
   * entropy; `targets[i]` is row lossRows[i]'s target. The output layer is most of a small model's
   * work, and in RL only the model-written rows carry loss.
   */
  lossRowLogprobs(lossRows: ArrayLike<number>, targets: ArrayLike<number>): void {
    const { k } = this.training();
    const D = this.config.dModel, V = this.config.vocabSize, K = lossRows.length;
    const src = this.lnf.a, dst = this.lossLnf!.a;
    for (let i = 0; i < K; i++) {
      const r = lossRows[i]!, tgt = targets[i]!;
      if (!Number.isInteger(tgt) || tgt < 0 || tgt >= V) throw new Error(`target token ${tgt} at position ${r} is outside the vocabulary of ${V}`);
      this.targets.a[i] = tgt;
      dst.set(src.subarray(r * D, r * D + D), i * D);
    }
    if (K === 0) return;
    k.matmulForward(rows(this.logits, 0, K, V), rows(this.lossLnf!, 0, K, D), this.p.wte, null, K, D, V);
    k.softmaxRows(this.logits, this.targets, this.lp, this.entropy, null, K, V);
  }

  /**
   * The gradient of lossRowLogprobs' rows (g_lp[i] = dL/dlp of loss row i), through rows
   * [from, n) of the last forward. With from > 0 the rows before are a shared prefix: the
   * gradient reaching its keys and values is added into prefixDqkv, and backwardPrefix(from)
   * takes it through the prefix once, after all of the prefix's suffixes.
   */
  backwardLossRows(lossRows: ArrayLike<number>, from: number, n: number): void {
    const { k, d, g } = this.training();
    const D = this.config.dModel, V = this.config.vocabSize, K = lossRows.length;
    if (K === 0) return;
    k.softmaxBackward(rows(this.logits, 0, K, V), this.targets, this.g_lp, K, V);
    const dl = rows(this.dLossLnf!, 0, K, D);
    dl.a.fill(0);
    k.matmulBackward(dl, g.wte, null, rows(this.logits, 0, K, V), rows(this.lossLnf!, 0, K, D), this.p.wte, K, D, V);
    rows(d.dln, from, n - from, D).a.fill(0);
    for (let i = 0; i < K; i++) d.dln.a.set(dl.a.subarray(i * D, i * D + D), lossRows[i]! * D);
    this.backwardFromLnf(from, n);
    this.backwardBlocks(from, n, from > 0 ? 'collect' : 'none');
  }

  /** Zero the shared prefix's collected key/value gradients of rows [0, P) (before its suffixes). */
  beginPrefix(P: number): void {
    const w = 3 * this.config.dModel;
    for (const t of this.prefixDqkv!) t.a.fill(0, 0, P * w);
  }

  /**
   * The gradient of a shared prefix (rows [0, P), forward once, no loss rows of its own): what its
   * suffixes' attention sent to its keys and values, taken through every layer of its rows.
   */
  backwardPrefix(P: number): void {
    const { d } = this.training();
    rows(d.dres, 0, P, this.config.dModel).a.fill(0);
    this.backwardBlocks(0, P, 'apply');
  }

  private training(): { k: Kernels; d: GradScratch; g: ParamViews } {
    if (!this.g || !this.d) throw new Error('model was created without gradients (training: false)');
    return { k: this.k, d: this.d, g: this.g };
  }

  /** dres of rows [from, n) from dln (the final layer norm's output gradient). */
  private backwardFromLnf(from: number, n: number): void {
    const { k, d, g } = this.training();
    const D = this.config.dModel, T = n - from;
    const R = (x: Tensor, w: number) => rows(x, from, T, w);
    R(d.dres, D).a.fill(0);
    const last = this.config.nLayers > 0 ? this.acts[this.config.nLayers - 1]!.res3 : this.encoded;
    k.layernormBackward(R(d.dres, D), g.lnfw, g.lnfb, R(d.dln, D), R(last, D), this.p.lnfw, R(this.lnfMean, 1), R(this.lnfRstd, 1), T, D);
  }

  /**
   * From dres of rows [from, n) (the last block's output gradient) down through every block and
   * into the embeddings. prefix 'collect': rows before `from` are a shared prefix, whose key/value
   * gradients are added into prefixDqkv; 'apply': these rows are that prefix, and the collected
   * gradients join their own.
   */
  private backwardBlocks(from: number, n: number, prefix: 'none' | 'collect' | 'apply'): void {
    const { k, d, g } = this.training();
    const c = this.config, D = c.dModel, S = c.context, T = n - from;
    const R = (x: Tensor, w: number) => rows(x, from, T, w);
    const zero = (x: Tensor, w: number) => R(x, w).a.fill(0);
    for (let l = c.nLayers - 1; l >= 0; l--) {
      const p = this.p.layers[l]!, gl = g.layers[l]!, a = this.acts[l]!;
      const input = l === 0 ? this.encoded : this.acts[l - 1]!.res3;
      // res3 = res2 + fcproj: dres flows to both.
      zero(d.dfchGelu, 4 * D);
      k.matmulBackward(R(d.dfchGelu, 4 * D), gl.fcprojw, gl.fcprojb, R(d.dres, D), R(a.fchGelu, 4 * D), p.fcprojw, T, 4 * D, D);
      zero(d.dfch, 4 * D);
      k.geluBackward(R(d.dfch, 4 * D), R(a.fch, 4 * D), R(d.dfchGelu, 4 * D), T * 4 * D);
      zero(d.dln, D);
      k.matmulBackward(R(d.dln, D), gl.fcw, gl.fcb, R(d.dfch, 4 * D), R(a.ln2, D), p.fcw, T, D, 4 * D);
      k.layernormBackward(R(d.dres, D), gl.ln2w, gl.ln2b, R(d.dln, D), R(a.res2, D), p.ln2w, R(a.ln2Mean, 1), R(a.ln2Rstd, 1), T, D);
      // res2 = input + attproj: dres flows to both.
      zero(d.datty, D);
      k.matmulBackward(R(d.datty, D), gl.attprojw, gl.attprojb, R(d.dres, D), R(a.atty, D), p.attprojw, T, D, D);
      // Queries of rows [from, n) attend to keys and values of rows [0, n).
      rows(d.dqkv, 0, n, 3 * D).a.fill(0);
      k.attentionBackward(d.dqkv, d.scratch, d.datty, a.qkv, a.att, from, n, D, c.nHeads, S);
      if (prefix === 'collect') addInto(rows(this.prefixDqkv![l]!, 0, from, 3 * D).a, rows(this.prefixDqkv![l]!, 0, from, 3 * D).a, rows(d.dqkv, 0, from, 3 * D).a);
      if (prefix === 'apply') addInto(R(d.dqkv, 3 * D).a, R(d.dqkv, 3 * D).a, rows(this.prefixDqkv![l]!, 0, n, 3 * D).a);
      zero(d.dln, D);
      k.matmulBackward(R(d.dln, D), gl.qkvw, gl.qkvb, R(d.dqkv, 3 * D), R(a.ln1, D), p.qkvw, T, D, 3 * D);
      k.layernormBackward(R(d.dres, D), gl.ln1w, gl.ln1b, R(d.dln, D), R(input, D), p.ln1w, R(a.ln1Mean, 1), R(a.ln1Rstd, 1), T, D);
    }
    // Embeddings: encoded = wte[token] + wpe[position].
    const dres = d.dres.a, gwte = g.wte.a, gwpe = g.wpe.a;
    for (let t = from; t < n; t++) {
      const tok = this.tokens[t]!;
      for (let i = 0; i < D; i++) {
        gwte[tok * D + i]! += dres[t * D + i]!;
        gwpe[t * D + i]! += dres[t * D + i]!;
      }
    }
  }

  /** The KV cache of rows [0, n): every layer's q|k|v rows, copied out. */
  exportKV(n: number): Float32Array {
    const w = 3 * this.config.dModel;
    const out = new Float32Array(this.config.nLayers * n * w);
    this.acts.forEach((a, l) => out.set(a.qkv.a.subarray(0, n * w), l * n * w));
    return out;
  }

  /** Restore rows [0, n) of the KV cache from exportKV(n); forward(tokens, n) then continues. */
  importKV(kv: Float32Array, n: number): void {
    const w = 3 * this.config.dModel;
    this.acts.forEach((a, l) => a.qkv.a.set(kv.subarray(l * n * w, (l + 1) * n * w)));
  }

  zeroGrads(): void {
    this.grads?.a.fill(0);
  }
}

function addInto(out: Float32Array, a: Float32Array, b: Float32Array): void {
  for (let i = 0; i < out.length; i++) out[i] = a[i]! + b[i]!;
}
