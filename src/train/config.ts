import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { lossUsage, RL_LOSS_NAMES } from '../backend/losses.js';
import { InputError } from '../errors.js';
import { BetaScheduleSchema } from '../reward/schedule.js';
import type { Rubric } from '../reward/rubric.js';
import { DEFAULT_SUITE, RUBRICS, resolveRubric, SUITE_KINDS, suiteOf } from '../suites/registry.js';
import { CONSTANT_LR, LrScheduleSchema } from './lr-schedule.js';

/** SFT's support rules (sft.ts judgeAttempt): the gold a kept teacher attempt must have seen. */
export const SFT_KEEP_IF = ['any-fact', 'all-gold'] as const;
export type SftKeepIf = (typeof SFT_KEEP_IF)[number];

/**
 * The configuration of a GRPO run (`sleuth train`). A preset file (JSON or YAML) and flags are
 * merged, then validated here; the resolved config is written to the run directory as config.json,
 * and `--resume` reads it back from there. Defaults are those of a hosted run (Tinker, gpt-oss-20b); configs/ holds the local presets.
 */

/**
 * The upper bound of counts in a config (steps, groups, limits, tokens): far past any real run
 * (published GRPO runs take thousands of steps), low enough that a typo such as `--steps 1e12`
 * (an ETA of a billion minutes) is refused with the field named instead of started.
 */
const MANY = 1_000_000;

const AdamSchema = z
  .object({
    learningRate: z.number().positive().default(1e-4),
    beta1: z.number().min(0).max(1).default(0.9),
    beta2: z.number().min(0).max(1).default(0.95),
    eps: z.number().positive().default(1e-8),
    weightDecay: z.number().min(0).default(0),
    /** 0 = off. */
    gradClipNorm: z.number().min(0).default(0),
  })
  .strict();

const BudgetsSchema = z
  .object({
    maxTurns: z.number().int().min(1).max(10_000).default(40),
    maxTokensPerTurn: z.number().int().min(1).max(MANY).default(2048),
    contextTokens: z.number().int().min(16).max(10 * MANY).default(30720),
  })
  .strict();

export const RewardConfigSchema = z
  .object({
    /** A named rubric (src/reward/rubric.ts): f4, f4-traj, f4-format, qa-f1-format, ... */
    rubric: z.string().default('f4'),
    /** F-beta's beta, constant (a number) or a schedule over training steps. */
    beta: z.union([z.number().positive(), BetaScheduleSchema]).optional(),
    /** Reward when nothing was curated (the named rubrics: -0.2). */
    emptyValue: z.number().optional(),
    /** Weight of trajectory recall, given only when something was curated (the `-traj` rubrics: +0.2). */
    trajectoryBonus: z.number().optional(),
    /** Subtracted when any call of the episode was off-form (the `-format` rubrics: 0.1). */
    offformPenalty: z.number().min(0).optional(),
  })
  .strict();

/** The local model's size when training starts from scratch (no checkpoint). */
const LocalModelSchema = z
  .object({
    dModel: z.number().int().min(8).max(8192).optional(),
    nLayers: z.number().int().min(1).max(256).optional(),
    nHeads: z.number().int().min(1).max(256).optional(),
    context: z.number().int().min(16).max(MANY).optional(),
    vocab: z.number().int().min(300).max(MANY).optional(),
    /** Next-token steps on corpus text and transcripts when the base model is built. */
    pretrainSteps: z.number().int().min(0).max(MANY).optional(),
    /**
     * Gradient threads (default 2 where there are 2 cores). 1 on a machine loaded by other work:
     * two threads wait on the slower of them (bench:local measured a demo step 3.75-4.71 s on two
     * against 5.89-9.11 on one in one round, and 13.7-17.7 s on two when the load rose to 7.4).
     */
    threads: z.number().int().min(1).max(256).optional(),
  })
  .strict();

/** The local model's size and build, without how it runs (threads): what names a base model. */
export function modelSize(local: z.infer<typeof LocalModelSchema>): Omit<z.infer<typeof LocalModelSchema>, 'threads'> {
  const { threads: _, ...size } = local;
  return size;
}

export const TrainConfigSchema = z
  .object({
    /** Task set name or path, and the splits trained and evaluated on. */
    tasks: z.string().default('default'),
    trainSplit: z.string().default('train'),
    evalSplit: z.string().default('eval'),
    /** Only the first N tasks of each split (0 = all). */
    trainLimit: z.number().int().min(0).max(MANY).default(0),
    evalLimit: z.number().int().min(0).max(MANY).default(0),
    /** The environment: a suite of src/suites/. */
    env: z.enum(SUITE_KINDS).default(DEFAULT_SUITE),
    backend: z.enum(['local', 'tinker']).default('local'),
    /**
     * local: a checkpoint path, `shipped` (the pretrained base model in src/backend/local/assets/),
     * `shipped-long` (the long-episode model there, context 2,048), or `base`
     * (a fresh model of localModel's size with its tokenizer, built on first use).
     * tinker: the base model name (e.g. openai/gpt-oss-20b) or a tinker:// checkpoint.
     */
    model: z.string().default('base'),
    /** Renderer name (local: compact; tinker: harmony, qwen3, ...). */
    renderer: z.string().default('compact'),
    /** Tinker only. */
    loraRank: z.number().int().min(1).max(4096).default(32),
    baseUrl: z.string().optional(),
    apiKeyEnv: z.string().optional(),
    localModel: LocalModelSchema.default({}),
    groupsPerStep: z.number().int().min(1).max(MANY).default(64),
    groupSize: z.number().int().min(1).max(4096).default(8),
    /** Optimiser steps; when absent, epochs over the train split decide (ceil(epochs × tasks / groupsPerStep)). */
    steps: z.number().int().min(1).max(MANY).optional(),
    epochs: z.number().positive().max(MANY).optional(),
    adam: AdamSchema.default(AdamSchema.parse({})),
    /** The learning rate over the run's steps (src/train/lr-schedule.ts): warmup, then constant, linear or cosine. */
    lrSchedule: LrScheduleSchema.default(CONSTANT_LR),
    temperature: z.number().min(0).default(1),
    /**
     * k of a search for the whole question that the harness makes as every episode's first turn
     * (0 = none): for a model too small to copy the question into a query (the local demo's).
     */
    openingSearch: z.number().int().min(0).max(50).default(0),
    /**
     * SFT by rejection sampling: which passing teacher attempt of a query is kept. shortest: the
     * STaR rule; best: the highest-scoring one (shorter first on a tie).
     */
    sftKeep: z.enum(['shortest', 'best']).default('shortest'),
    /**
     * SFT by rejection sampling: what gold support an attempt must have seen in its tool results.
     * any-fact: one fact's; all-gold: every fact's (the seed's rule, rl-small-language-models-blog).
     */
    sftKeepIf: z.enum(SFT_KEEP_IF).default('any-fact'),
    budgets: BudgetsSchema.default(BudgetsSchema.parse({})),
    reward: RewardConfigSchema.default(RewardConfigSchema.parse({})),
    /** dr-grpo: reward - group mean; grpo: also divided by the group's std. */
    advantage: z.enum(['dr-grpo', 'grpo']).default('dr-grpo'),
    /** An RL loss of the loss table (src/backend/losses.ts); clipLow/clipHigh override a clipping loss's thresholds. */
    loss: z.enum(RL_LOSS_NAMES).default('importance_sampling'),
    clipLow: z.number().min(0).optional(),
    clipHigh: z.number().min(0).optional(),
    /**
     * Divide each datum's advantages by this many tokens so that a step's loss is a mean, not a sum
     * over hundreds of thousands of tokens (Tinker sums): `tokens` = the batch's trained tokens,
     * `none` = Tinker's raw sum.
     */
    lossScale: z.enum(['tokens', 'none']).default('tokens'),
    /** off: keep every group; filter: drop groups with no reward variance; refill: drop and sample more. */
    dynamicSampling: z.enum(['off', 'filter', 'refill']).default('off'),
    /** With refill: at most this many extra rounds of groups per step. */
    refillRounds: z.number().int().min(1).max(1000).default(4),
    /**
     * Maximum off-policy staleness in steps (0 = fully synchronous, as in the blog post "Training
     * Search Agents with GRPO"): with k > 0
     * the next k steps' rollouts are sampled while this step trains, with weights up to k steps old
     * (the importance ratio against the sampler's logprobs corrects for it). prime-rl's `max_async_level`.
     */
    maxStaleness: z.number().int().min(0).max(4).default(0),
    /**
     * KL penalty to the frozen starting weights, in the reward (the Tinker cookbook's
     * `kl_penalty_coef`; 0 = off): each model-written token's advantage loses coef x the estimate
     * (k1: log p_sampler - log p_ref; k3: r - 1 - log r with r = p_ref / p_sampler, never negative).
     */
    klPenaltyCoef: z.number().min(0).default(0),
    klEstimator: z.enum(['k1', 'k3']).default('k1'),
    /**
     * Updates per batch (verl's `ppo_epochs`; the Tinker cookbook's `num_substeps` x epochs): the
     * batch is split into `minibatches` (whole groups each) and every one takes an optimiser step,
     * `ppoEpochs` times over; after the first update the learner has moved from the sampler, so ppo
     * and cispo clip.
     */
    ppoEpochs: z.number().int().min(1).max(1000).default(1),
    minibatches: z.number().int().min(1).max(MANY).default(1),
    /** State checkpoints (weights + optimiser) kept on disk: the newest N (HF's `save_total_limit`). Sampler weights are all kept. */
    keepCheckpoints: z.number().int().min(1).max(MANY).default(1),
    /**
     * Difficulty filter (0 = off): a task whose last K groups each scored the same for every rollout
     * (all solved or all failed: no learning signal) is skipped when the data order reaches it again.
     */
    difficultyFilter: z.number().int().min(0).max(MANY).default(0),
    /** Eval on the eval split every N steps (0 = only at the end), with M samples per task. */
    evalEvery: z.number().int().min(0).max(MANY).default(0),
    evalSamples: z.number().int().min(1).max(4096).default(1),
    /** Eval at step 0 and after the last step. */
    evalAtStart: z.boolean().default(true),
    checkpointEvery: z.number().int().min(1).max(MANY).default(1),
    /** Episodes in flight at once while sampling. */
    concurrency: z.number().int().min(1).max(4096).default(16),
    /**
     * Worker threads answering the episodes' searches and greps (0 = in this thread). With many
     * episodes in flight over a large corpus, the searches are what the environment spends its time
     * on; workers spread them over the cores (npm run bench:env measures it).
     */
    searchWorkers: z.number().int().min(0).max(64).default(0),
    seed: z.number().int().min(0).default(0),
  })
  .strict();

export type TrainConfig = z.infer<typeof TrainConfigSchema>;
export type TrainConfigInput = z.input<typeof TrainConfigSchema>;

/** Read a JSON or YAML config file (by extension; anything else is tried as JSON then YAML). */
export function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new InputError(`--config ${path}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const ext = extname(path).toLowerCase();
  let value: unknown;
  try {
    value = ext === '.yaml' || ext === '.yml' ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    throw new InputError(`--config ${path}: not valid ${ext === '.yaml' || ext === '.yml' ? 'YAML' : 'JSON'}: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InputError(`--config ${path}: must hold an object of settings`);
  // Keys starting with '$' are notes ($comment), not settings.
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).filter(([k]) => !k.startsWith('$')));
}

/** Validate a merged config; the message names the source and the field. */
export function parseTrainConfig(value: unknown, source: string): TrainConfig {
  const r = TrainConfigSchema.safeParse(value);
  if (!r.success) {
    const issues = r.error.issues.map((i) => `${i.path.join('.') || '(config)'}: ${i.message}`);
    throw new InputError(`${source}: ${issues.join('; ')}`);
  }
  const c = r.data;
  if (c.steps === undefined && c.epochs === undefined) throw new InputError(`${source}: give steps or epochs`);
  if (c.backend === 'local' && c.renderer !== 'compact') throw new InputError(`${source}: renderer: the local backend's model speaks only the compact renderer, got '${c.renderer}'`);
  // A suite with one rubric (the invoices' share of gold values in the reply) has no other reward,
  // so a preset's rubric of another suite gives way to it; the resolved config records the one used.
  const suite = suiteOf(c.env);
  if (suite.rubrics.length === 1 && resolveRubric(c.reward.rubric).kind !== c.env) c.reward = { ...c.reward, rubric: suite.defaultRubric };
  const rubric = resolveRubric(c.reward.rubric);
  if (rubric.kind !== c.env) throw new InputError(`${source}: reward.rubric '${rubric.name}' scores ${rubric.kind} rollouts, but env is ${c.env}`);
  return c;
}

/** Deep-merge plain objects (b wins); arrays and scalars are replaced. */
export function mergeConfig(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    out[k] = isPlain(prev) && isPlain(v) ? mergeConfig(prev, v) : v;
  }
  return out;
}

function isPlain(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The rubric a config asks for: the named one with its overrides applied (named in the result). */
export function rubricOf(c: TrainConfig): Rubric {
  const base = resolveRubric(c.reward.rubric);
  const weights = { ...base.weights };
  const notes: string[] = [];
  const { beta, emptyValue, trajectoryBonus, offformPenalty } = c.reward;
  if (emptyValue !== undefined) {
    weights['empty'] = emptyValue;
    notes.push(`empty=${emptyValue}`);
  }
  if (trajectoryBonus !== undefined) {
    weights['trajectory_recall_if_curated'] = trajectoryBonus;
    notes.push(`traj=${trajectoryBonus}`);
  }
  if (offformPenalty !== undefined) {
    weights['offform'] = -offformPenalty;
    notes.push(`offform=-${offformPenalty}`);
  }
  let schedule = base.beta;
  if (beta !== undefined) {
    schedule = typeof beta === 'number' ? { kind: 'constant', beta } : beta;
    notes.push(`beta=${schedule.kind === 'constant' ? schedule.beta : `${schedule.kind}:${schedule.from}->${schedule.to}@${schedule.steps}`}`);
  }
  // The overrides set the weight of a part, or beta: the rubric's suite must have that part, or use beta.
  const suite = suiteOf(base.kind);
  const has = (part: string) => suite.rubrics.some((r) => part in r.weights);
  const misplaced = ([['emptyValue', emptyValue !== undefined && !has('empty')], ['trajectoryBonus', trajectoryBonus !== undefined && !has('trajectory_recall_if_curated')], ['offformPenalty', offformPenalty !== undefined && !has('offform')], ['beta', beta !== undefined && !suite.usesBeta]] as const).filter(([, bad]) => bad);
  if (misplaced.length) throw new InputError(`reward: ${misplaced.map(([name]) => name).join(', ')} do not apply to the ${base.kind} rubric '${base.name}'`);
  return { name: notes.length ? `${base.name}[${notes.join(',')}]` : base.name, kind: base.kind, weights, beta: schedule };
}

/** Steps of the run: `steps`, else ceil(epochs × train tasks / groupsPerStep). */
export function totalSteps(c: TrainConfig, trainTasks: number): number {
  if (c.steps !== undefined) return c.steps;
  return Math.max(1, Math.ceil(((c.epochs ?? 1) * trainTasks) / c.groupsPerStep));
}

// ---------------------------------------------------------------------------------------------
// Flags: every config field can be set on the command line, `--group-size 8`, `--adam.beta2 0.99`,
// `--reward.beta 2`. Names are the config's keys in kebab case; nested keys use a dot.
// ---------------------------------------------------------------------------------------------

type FlagKind = 'string' | 'int' | 'number' | 'boolean' | 'beta';

/** Every settable leaf of the config, with how its flag value is read. */
export const CONFIG_FLAGS: Record<string, { path: string[]; kind: FlagKind }> = {};
function leaf(flag: string, path: string[], kind: FlagKind) {
  CONFIG_FLAGS[flag] = { path, kind };
}
const kebab = (s: string) => s.replace(/[A-Z]/g, (m) => `-${m.toLowerCase()}`);
for (const [key, kind] of Object.entries({
  tasks: 'string', trainSplit: 'string', evalSplit: 'string', trainLimit: 'int', evalLimit: 'int', env: 'string', backend: 'string', model: 'string',
  renderer: 'string', loraRank: 'int', baseUrl: 'string', apiKeyEnv: 'string', groupsPerStep: 'int', groupSize: 'int', steps: 'int', epochs: 'number',
  temperature: 'number', openingSearch: 'int', sftKeep: 'string', sftKeepIf: 'string', advantage: 'string', loss: 'string', clipLow: 'number', clipHigh: 'number', lossScale: 'string', dynamicSampling: 'string',
  refillRounds: 'int', maxStaleness: 'int', klPenaltyCoef: 'number', klEstimator: 'string', ppoEpochs: 'int', minibatches: 'int', keepCheckpoints: 'int', difficultyFilter: 'int', evalEvery: 'int', evalSamples: 'int', evalAtStart: 'boolean', checkpointEvery: 'int', concurrency: 'int', searchWorkers: 'int', seed: 'int',
} as Record<string, FlagKind>)) leaf(kebab(key), [key], kind);
for (const key of ['learningRate', 'beta1', 'beta2', 'eps', 'weightDecay', 'gradClipNorm']) leaf(`adam.${kebab(key)}`, ['adam', key], 'number');
leaf('lr', ['adam', 'learningRate'], 'number');
leaf('lr-schedule', ['lrSchedule', 'kind'], 'string');
leaf('warmup-steps', ['lrSchedule', 'warmupSteps'], 'int');
leaf('min-lr-ratio', ['lrSchedule', 'minLrRatio'], 'number');
for (const key of ['maxTurns', 'maxTokensPerTurn', 'contextTokens']) leaf(kebab(key), ['budgets', key], 'int');
leaf('rubric', ['reward', 'rubric'], 'string');
leaf('beta', ['reward', 'beta'], 'beta');
for (const key of ['emptyValue', 'trajectoryBonus', 'offformPenalty']) leaf(kebab(key), ['reward', key], 'number');
for (const key of ['dModel', 'nLayers', 'nHeads', 'context', 'vocab', 'pretrainSteps', 'threads']) leaf(`local.${kebab(key)}`, ['localModel', key], 'int');

/** parseArgs options for every config flag (all strings, converted by configFromFlags). */
export function configFlagOptions(): Record<string, { type: 'string' }> {
  return Object.fromEntries(Object.keys(CONFIG_FLAGS).map((f) => [f, { type: 'string' as const }]));
}

/** The config fields set by flags, as a nested object to merge over the file. */
export function configFromFlags(values: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> = {};
  for (const [flag, { path, kind }] of Object.entries(CONFIG_FLAGS)) {
    const raw = values[flag];
    if (raw === undefined) continue;
    const text = String(raw);
    let v: unknown = text;
    if (kind === 'int' || kind === 'number') {
      const n = Number(text);
      if (text.trim() === '' || !Number.isFinite(n) || (kind === 'int' && !Number.isInteger(n))) throw new InputError(`--${flag} must be a ${kind === 'int' ? 'whole number' : 'number'}, got '${text}'`);
      v = n;
    } else if (kind === 'boolean') {
      if (text !== 'true' && text !== 'false') throw new InputError(`--${flag} must be true or false, got '${text}'`);
      v = text === 'true';
    } else if (kind === 'beta') {
      const n = Number(text);
      if (Number.isFinite(n)) v = n;
      else {
        // linear:FROM:TO:STEPS or cosine:FROM:TO:STEPS
        const m = /^(linear|cosine):([\d.]+):([\d.]+):(\d+)$/.exec(text);
        if (!m) throw new InputError(`--${flag} must be a number or linear|cosine:FROM:TO:STEPS, got '${text}'`);
        v = { kind: m[1], from: Number(m[2]), to: Number(m[3]), steps: Number(m[4]) };
      }
    }
    let nested: Record<string, unknown> = { [path[path.length - 1]!]: v };
    for (let i = path.length - 2; i >= 0; i--) nested = { [path[i]!]: nested };
    out = mergeConfig(out, nested);
  }
  return out;
}

/** One usage line per flag group, for --help. */
export function configFlagsUsage(): string {
  return `Every config field is also a flag (kebab case; nested fields with a dot):
  --tasks NAME --train-split S --eval-split S --train-limit N --eval-limit N --env ${SUITE_KINDS.join('|')}
  --backend local|tinker --model PATH|shipped|shipped-long|base|NAME --renderer NAME --lora-rank N --base-url URL --api-key-env NAME
  --local.d-model N --local.n-layers N --local.n-heads N --local.context N --local.vocab N --local.pretrain-steps N --local.threads N
  --groups-per-step N --group-size N --steps N --epochs X --concurrency N --search-workers N --seed N
  --lr X (= --adam.learning-rate) --adam.beta1 --adam.beta2 --adam.eps --adam.weight-decay --adam.grad-clip-norm
  --lr-schedule constant|linear|cosine --warmup-steps N --min-lr-ratio X
  --temperature T --max-turns N --max-tokens-per-turn N --context-tokens N
  --rubric NAME (${Object.keys(RUBRICS).join(', ')}) --beta B|linear:FROM:TO:STEPS|cosine:FROM:TO:STEPS
  --empty-value X --trajectory-bonus X --offform-penalty X
  --advantage dr-grpo|grpo --loss ${RL_LOSS_NAMES.join('|')} --clip-low X --clip-high X --loss-scale tokens|none
  --dynamic-sampling off|filter|refill --refill-rounds N --max-staleness K --difficulty-filter K
  --kl-penalty-coef X --kl-estimator k1|k3 --ppo-epochs N --minibatches N --keep-checkpoints N
  --eval-every N --eval-samples M --eval-at-start true|false --checkpoint-every N
  --sft-keep shortest|best --sft-keep-if ${SFT_KEEP_IF.join('|')} (sleuth sft)
Losses (--loss):
${lossUsage(RL_LOSS_NAMES).map((l) => `  ${l}`).join('\n')}`;
}
