/**
 * The loss table: every loss a TrainingBackend takes, by the name Tinker gives it
 * (docs/reference/TINKER_API.md), with its default clip thresholds, its per-token loss and the
 * metrics it reports. The config
 * schema, the usage text, both backends and the Tinker-API server read their losses from here, so
 * a new loss is one entry in LOSSES (plus a server that accepts its name, for a remote backend).
 *
 * Every loss depends on the weights only through the learner logprob lp_t of each target token, so
 * a per-token loss and its derivative dLoss/dlp_t are all the model's backward pass needs. Losses
 * are summed over tokens and datums, never averaged (hosted Tinker's reduction); normalise through
 * the weights or advantages for a mean.
 *
 * Masking: each token's loss is multiplied by its weight. cross_entropy uses weights as Tinker does;
 * for the RL losses Tinker masks through zero advantages, and with the 0/1 weights of
 * src/backend/types.ts (0 exactly where the advantage is 0) the two agree.
 */

export interface TokenInputs {
  /** The learner's logprob of the target token. */
  lp: number;
  weight: number;
  /** The sampler's logprob of the target token (0 for cross_entropy). */
  samplerLogprob: number;
  advantage: number;
}

export interface TokenLoss {
  loss: number;
  /** dLoss / dlp. */
  grad: number;
  /** The ratio was clipped (ppo, cispo). */
  clipped: boolean;
}

/** Sums over the weighted tokens of a forwardBackward call, from which its metrics are computed. */
export interface LossSums {
  loss: number;
  /** Tokens of weight != 0. */
  tokens: number;
  /** Of those, tokens whose ratio was clipped. */
  clipped: number;
  /** Sum of the ratios exp(lp - sampler logprob) (RL losses). */
  ratio: number;
  /** Sum of (sampler logprob - lp) (RL losses). */
  kl: number;
}

/** The metrics a loss can report (besides loss:sum and tokens:sum, which every loss reports). */
const METRICS = {
  'ratio:mean': (s: LossSums) => (s.tokens ? s.ratio / s.tokens : 1),
  /** Mean of (sampler - learner) logprob over trained tokens: a KL(sampler || learner) estimate. */
  'kl_sampler_learner:mean': (s: LossSums) => (s.tokens ? s.kl / s.tokens : 0),
  'clip_fraction:mean': (s: LossSums) => (s.tokens ? s.clipped / s.tokens : 0),
} as const;

type MetricName = keyof typeof METRICS;

export interface LossSpec {
  /** What the loss is, for the usage text. */
  summary: string;
  /** Trains on sampled tokens with advantages: datums need logprobs and advantages. */
  rl: boolean;
  /** The default [low, high] thresholds of the clipped ratio, for a loss that clips (config clipLow/clipHigh). */
  clip?: readonly [number, number];
  /** The loss of one token of weight != 0 and its derivative by lp, given the ratio's clip range. */
  token(x: TokenInputs, lo: number, hi: number): TokenLoss;
  /** Metrics reported beside loss:sum and tokens:sum. */
  metrics: readonly MetricName[];
}

const RL_METRICS = ['ratio:mean', 'kl_sampler_learner:mean'] as const;

/** A token as a clipped-ratio loss sees it: the ratio learner / sampler, that ratio clipped to [lo, hi], and the token's logprob, weight and advantage. */
interface ClippedToken {
  r: number;
  rc: number;
  lp: number;
  w: number;
  A: number;
}

/** An RL loss of the clipped ratio (ppo, cispo): `rule` is its per-token loss and gradient. */
function clippedRatioLoss(summary: string, clip: readonly [number, number], rule: (t: ClippedToken) => TokenLoss): LossSpec {
  return {
    summary,
    rl: true,
    clip,
    token: ({ lp, weight, samplerLogprob, advantage }, lo, hi) => {
      const r = Math.exp(lp - samplerLogprob);
      return rule({ r, rc: Math.min(Math.max(r, lo), hi), lp, w: weight, A: advantage });
    },
    metrics: [...RL_METRICS, 'clip_fraction:mean'],
  };
}

const TABLE = {
  cross_entropy: {
    summary: 'minus the weighted logprob of the targets (SFT)',
    rl: false,
    token: ({ lp, weight: w }) => ({ loss: -w * lp, grad: -w, clipped: false }),
    metrics: [],
  },
  importance_sampling: {
    summary: 'minus ratio x advantage, the ratio learner/sampler unclipped',
    rl: true,
    // L = -r A, dr/dlp = r.
    token: ({ lp, weight: w, samplerLogprob, advantage: A }) => {
      const r = Math.exp(lp - samplerLogprob);
      return { loss: -w * r * A, grad: -w * r * A, clipped: false };
    },
    metrics: RL_METRICS,
  },
  // L = -min(r A, clip(r) A). The clipped branch is constant in lp, so it has no gradient.
  ppo: clippedRatioLoss('PPO: minus min(ratio x advantage, clipped ratio x advantage)', [0.8, 1.2], ({ r, rc, w, A }) => {
    const unclipped = r * A, clippedTerm = rc * A;
    if (unclipped <= clippedTerm) return { loss: -w * unclipped, grad: -w * r * A, clipped: false };
    return { loss: -w * clippedTerm, grad: 0, clipped: true };
  }),
  // L = -sg(clip(r)) lp A: the clipped ratio is a constant weight on the logprob's gradient.
  cispo: clippedRatioLoss('CISPO: minus the clipped ratio (no gradient through it) x logprob x advantage', [0, 4], ({ r, rc, lp, w, A }) => ({
    loss: -w * rc * lp * A,
    grad: -w * rc * A,
    clipped: rc !== r,
  })),
} as const satisfies Record<string, LossSpec>;

export type LossFn = keyof typeof TABLE;

/** The loss table, by name. */
export const LOSSES: Readonly<Record<LossFn, LossSpec>> = TABLE;

export const LOSS_NAMES = Object.keys(LOSSES) as [LossFn, ...LossFn[]];

/** The losses GRPO can train with (those that take advantages). */
export const RL_LOSS_NAMES = LOSS_NAMES.filter((n) => LOSSES[n].rl) as [LossFn, ...LossFn[]];

export interface LossConfig {
  /** A clipping loss's thresholds; defaults in its LOSSES entry. */
  clipLowThreshold?: number;
  clipHighThreshold?: number;
}

export function isLossFn(name: string): name is LossFn {
  return Object.hasOwn(LOSSES, name);
}

/** The loss's entry; an unknown name is an error naming the known ones. */
export function lossSpec(lossFn: string): LossSpec {
  if (!isLossFn(lossFn)) throw new Error(`unknown loss function '${lossFn}' (known: ${LOSS_NAMES.join(', ')})`);
  return LOSSES[lossFn];
}

/** The clip range a config gives a loss (its defaults where the config says nothing; [0.8, 1.2] for a loss that does not clip). */
export function clipRange(lossFn: LossFn, config: LossConfig = {}): [number, number] {
  const [lo, hi] = LOSSES[lossFn].clip ?? [0.8, 1.2];
  return [config.clipLowThreshold ?? lo, config.clipHighThreshold ?? hi];
}

export function tokenLoss(lossFn: LossFn, x: TokenInputs, lo: number, hi: number): TokenLoss {
  if (x.weight === 0) return { loss: 0, grad: 0, clipped: false };
  return lossSpec(lossFn).token(x, lo, hi);
}

export function emptySums(): LossSums {
  return { loss: 0, tokens: 0, clipped: 0, ratio: 0, kl: 0 };
}

/**
 * One token's loss, added to `sums`; returns the loss and gradient. The one place both backends
 * compute a token's loss and its share of the metrics, so that they mean the same on either.
 */
export function addTokenLoss(sums: LossSums, lossFn: LossFn, x: TokenInputs, lo: number, hi: number): TokenLoss {
  const r = tokenLoss(lossFn, x, lo, hi);
  sums.loss += r.loss;
  if (x.weight !== 0) {
    sums.tokens += 1;
    if (r.clipped) sums.clipped += 1;
    if (LOSSES[lossFn].rl) {
      sums.ratio += Math.exp(x.lp - x.samplerLogprob);
      sums.kl += x.samplerLogprob - x.lp;
    }
  }
  return r;
}

/** Add sums (of shards of one call) in order. */
export function addSums(parts: readonly LossSums[]): LossSums {
  const total = emptySums();
  for (const p of parts) {
    total.loss += p.loss;
    total.tokens += p.tokens;
    total.clipped += p.clipped;
    total.ratio += p.ratio;
    total.kl += p.kl;
  }
  return total;
}

/**
 * The metrics of a forwardBackward call: loss:sum, tokens:sum, `extra` (what only one backend can
 * measure, such as the learner's entropy), then the loss's own metrics.
 */
export function lossMetrics(lossFn: LossFn, s: LossSums, extra: Record<string, number> = {}): Record<string, number> {
  const m: Record<string, number> = { 'loss:sum': s.loss, 'tokens:sum': s.tokens, ...extra };
  for (const name of LOSSES[lossFn].metrics) m[name] = METRICS[name](s);
  return m;
}

/** One line per loss (name, what it is, default clip thresholds), for usage text. */
export function lossUsage(names: readonly LossFn[] = LOSS_NAMES): string[] {
  return names.map((n) => {
    const spec = LOSSES[n];
    return `${n}: ${spec.summary}${spec.clip ? ` (clip ${spec.clip[0]} / ${spec.clip[1]})` : ''}`;
  });
}
