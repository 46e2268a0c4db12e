import { performance } from 'node:perf_hooks';
import { runEpisode } from '../agent/episode.js';
import { followAgent, followPlans, PLAN_STRIDE } from '../suites/search/agents.js';
import { createLocalBackend, DEFAULT_MODEL, embeddedTokenizerTexts, LONG_MODEL, trainLocalTokenizer } from '../backend/local/index.js';
import type { TrainRows } from '../backend/local/gradients.js';
import { invoiceOracleAgent, loadInvoiceSuite } from '../suites/invoices/index.js';
import type { Datum } from '../backend/types.js';
import { embeddedChunks } from '../corpus/embedded.js';
import type { Chunk } from '../corpus/chunk.js';
import { SearchEnvironment } from '../suites/search/env.js';
import { seededRandom } from '../random.js';
import { loadTaskSet } from '../tasks/registry.js';
import type { Task } from '../tasks/task.js';
import { openIndex } from '../search/index.js';
import { renderRollout } from '../train/datums.js';
import type { BpeTokenizer } from '../protocol/compact/bpe.js';
import { localRenderer } from '../protocol/compact/local.js';

/**
 * The shipped local base model (src/backend/local/assets/local-base.sampler.ckpt): the local model
 * pretrained on the embedded corpus's text and on rendered search transcripts, which takes longer
 * than the demo may spend, so the file is in the repository and this rebuilds it bit for bit
 * (`sleuth demo --build-base`; two training threads, whose gradients the backend adds in a fixed
 * order, and every choice seeded).
 *
 * Transcripts are real episodes of the scripted `follow` teacher in the search environment,
 * rendered in the local model's format, every turn written by the teacher (no harness turn): search
 * the question's words (as references), curate the top k1, follow up to three bridge titles, curate
 * more, finish, with the plan varied over every followPlans() entry; on the training split's
 * questions and on pseudo-queries made from corpus chunks (a title and the opening words). The
 * held-out split (dev and test) is never read. Phase 1's loss is next-token cross-entropy on
 * every token; the tuning rounds' is on the model-written tokens only.
 */
export interface BaseBuildOptions {
  out: string;
  /** Phase 1: next-token steps on every token of transcripts and paragraphs. */
  steps: number;
  /**
   * Phase 2: rounds of steps on transcripts with loss on the model-written tokens only; each round
   * restarts Adam and the learning-rate schedule from the previous round's weights.
   */
  tuneSteps: number[];
  batch: number;
  /** Corpus-derived pseudo-queries besides the training questions. */
  pseudoQueries: number;
  /** Context of the model (tokens): multi-search transcripts need about 1,000. */
  context: number;
  learningRate: number;
  seed: number;
  /** The model's width, depth and heads. */
  model: { dModel: number; nLayers: number; nHeads: number };
  /** Episodes of the invoice oracle on the invoice train split added to the transcripts (0: none). */
  invoiceTranscripts: number;
  /**
   * forwardBackward's path. The shipped base was built on 'all-rows' and stays reproducible bit for
   * bit on it; 'loss-rows' gives the same gradients to float rounding, faster, but not the same bits.
   */
  trainRows: TrainRows;
  log?: (line: string) => void;
}

export const BASE_BUILD: Omit<BaseBuildOptions, 'out' | 'log'> = {
  steps: 400, tuneSteps: [600], batch: 8, pseudoQueries: 1000, context: 1024, learningRate: 3e-3, seed: 0,
  model: { dModel: DEFAULT_MODEL.dModel, nLayers: DEFAULT_MODEL.nLayers, nHeads: DEFAULT_MODEL.nHeads }, invoiceTranscripts: 0, trainRows: 'all-rows',
};

/**
 * The long-episode model (src/backend/local/assets/local-long.sampler.ckpt): LONG_MODEL's size, a context
 * of 2,048, the base build's data plus invoice-oracle episodes, and half the base's steps, most of
 * them on the model-written tokens: a step costs about 14 times the base's CPU per token, so these
 * 500 steps take about 40 minutes of CPU on a 2-core machine (100 + 150 steps left the model writing
 * malformed calls: 0.02 on 8 dev tasks).
 */
export const LONG_BUILD: Omit<BaseBuildOptions, 'out' | 'log'> = {
  steps: 100, tuneSteps: [400], batch: 8, pseudoQueries: 1000, context: LONG_MODEL.context, learningRate: 2e-3, seed: 0,
  model: { dModel: LONG_MODEL.dModel, nLayers: LONG_MODEL.nLayers, nHeads: LONG_MODEL.nHeads }, invoiceTranscripts: 600, trainRows: 'loss-rows',
};

/** The builds `sleuth demo --build-base --size NAME` knows, and their default output. */
export const BUILDS = {
  base: { options: BASE_BUILD, out: 'src/backend/local/assets/local-base.sampler.ckpt' },
  long: { options: LONG_BUILD, out: 'src/backend/local/assets/local-long.sampler.ckpt' },
} as const;

export async function buildBaseModel(o: BaseBuildOptions): Promise<{ path: string; losses: number[] }> {
  const log = o.log ?? (() => {});
  const t0 = performance.now();
  // The shipped models' tokenizer text stays as they were built (test/backend/tokenizer-text.test.ts
  // pins it): every suite's oracle transcripts, which base models built on demand read
  // (base-model.ts), would make a new vocabulary, a new shipped model and new bench:demo numbers.
  const tokenizer = trainLocalTokenizer(await embeddedTokenizerTexts(400_000, 200), 2048);
  log(`tokenizer: ${tokenizer.vocabSize} tokens (${((performance.now() - t0) / 1000).toFixed(1)}s)`);
  const dir = o.out.replace(/\/[^/]*$/, '');
  const name = o.out.slice(dir.length + 1).replace(/\.sampler\.ckpt$/, '');
  const backend = createLocalBackend({ tokenizer, config: { ...o.model, context: o.context }, seed: o.seed, dir, threads: 2, trainRows: o.trainRows });
  const ctx = backend.config.context;

  // One random stream: the pseudo-queries are drawn from it first, then phase 1's batches.
  const rng = seededRandom(o.seed + 101);
  const { streams, masks } = await transcriptsFor(tokenizer, ctx, o, rng);
  if (o.invoiceTranscripts > 0) {
    const inv = await invoiceTranscriptsFor(tokenizer, ctx, o.invoiceTranscripts);
    streams.push(...inv.streams);
    masks.push(...inv.masks);
  }
  const chunks: Chunk[] = [];
  for await (const c of embeddedChunks()) chunks.push(c);
  const paragraphs = chunks.filter((_, i) => i % 3 === 0).map((c) => tokenizer.encode(`${c.title}\n${c.text}`).slice(0, ctx));
  log(`data: ${streams.length} transcripts (${Math.round(streams.reduce((s, t) => s + t.length, 0) / streams.length)} tokens on average), ${paragraphs.length} paragraphs (${((performance.now() - t0) / 1000).toFixed(1)}s)`);

  const datum = (tokens: number[]): Datum => ({ inputTokens: tokens.slice(0, -1), targetTokens: tokens.slice(1), weights: tokens.slice(1).map(() => 1) });
  const losses: number[] = [];
  for (let step = 0; step < o.steps; step++) {
    // Three transcripts to one paragraph; the learning rate decays along a half cosine to a tenth.
    const batch = Array.from({ length: o.batch }, (_, b) => (b % 4 === 3 ? paragraphs[Math.floor(rng() * paragraphs.length)]! : streams[Math.floor(rng() * streams.length)]!)).filter((t) => t.length >= 2).map(datum);
    const r = await backend.forwardBackward(batch, 'cross_entropy');
    const lr = o.learningRate * (0.1 + 0.9 * 0.5 * (1 + Math.cos((Math.PI * step) / o.steps)));
    backend.optimStepSync({ learningRate: lr, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 1 });
    const tokens = batch.reduce((s, d) => s + d.targetTokens.length, 0);
    losses.push(r.loss / tokens);
    if ((step + 1) % 10 === 0) log(`step ${step + 1}/${o.steps}: loss ${(r.loss / tokens).toFixed(3)} per token (${((performance.now() - t0) / 1000).toFixed(0)}s)`);
    if ((step + 1) % 50 === 0 && step + 1 < o.steps) await backend.saveWeightsForSampler(`${name}-step${step + 1}`);
  }
  let from = (await backend.saveWeightsForSampler(`${name}-phase1`)).modelPath;
  await backend.close();
  for (let round = 0; round < o.tuneSteps.length; round++) {
    const out = round === o.tuneSteps.length - 1 ? name : `${name}-round${round}`;
    losses.push(...(await tuneOnTranscripts(from, dir, out, streams, masks, o, t0, round)));
    from = `${dir}/${out}.sampler.ckpt`;
  }
  return { path: o.out, losses };
}

/**
 * Phase 2, from phase 1's weights with fresh Adam moments: the transcripts again, with loss on the
 * model-written tokens only, so the model's capacity goes to acting (the call syntax, copying the
 * query and the ids) rather than to predicting tool results.
 */
export async function tuneOnTranscripts(from: string, dir: string, name: string, streams: number[][], masks: number[][], o: BaseBuildOptions, t0 = performance.now(), round = 0): Promise<number[]> {
  const log = o.log ?? (() => {});
  const backend = createLocalBackend({ checkpoint: from, dir, threads: 2, trainRows: o.trainRows });
  backend.resetOptimizer();
  // Round 0 draws from seed + 202 (as the first build did), later rounds from their own streams.
  const rng = seededRandom(o.seed + 202 + 1000 * round);
  const losses: number[] = [];
  const steps = o.tuneSteps[round]!;
  for (let step = 0; step < steps; step++) {
    const picks = Array.from({ length: o.batch }, () => Math.floor(rng() * streams.length));
    const batch: Datum[] = picks.map((i) => ({ inputTokens: streams[i]!.slice(0, -1), targetTokens: streams[i]!.slice(1), weights: masks[i]!.slice(1) }));
    const r = await backend.forwardBackward(batch, 'cross_entropy');
    const lr = o.learningRate * (0.1 + 0.9 * 0.5 * (1 + Math.cos((Math.PI * step) / steps)));
    await backend.optimStep({ learningRate: lr, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 1 });
    const tokens = batch.reduce((s, d) => s + d.weights.reduce((a, w) => a + w, 0), 0);
    losses.push(r.loss / tokens);
    if ((step + 1) % 10 === 0) log(`tune round ${round + 1}, ${step + 1}/${steps}: loss ${(r.loss / tokens).toFixed(3)} per model token (${((performance.now() - t0) / 1000).toFixed(0)}s)`);
    
  }
  await backend.saveWeightsForSampler(name);
  await backend.close();
  return losses;
}

/** Rendered episodes of the invoice oracle on the first `limit` tasks of the invoice train split (those that fit the context). */
export async function invoiceTranscriptsFor(tokenizer: BpeTokenizer, ctx: number, limit: number): Promise<{ streams: number[][]; masks: number[][] }> {
  const renderer = localRenderer(tokenizer);
  const suite = loadInvoiceSuite();
  const agent = invoiceOracleAgent();
  const streams: number[][] = [], masks: number[][] = [];
  for (const task of suite.tasks('train').slice(0, limit)) {
    const r = await runEpisode(agent, suite.env, task);
    const s = renderRollout(renderer, suite.env, task, r);
    if (s.tokens.length <= ctx) {
      streams.push(s.tokens);
      masks.push(s.mask);
    }
  }
  return { streams, masks };
}

/** Rendered episodes of the follow teacher (every plan of followPlans() in turn) on the training questions and on corpus pseudo-queries; deterministic. */
export async function transcriptsFor(tokenizer: BpeTokenizer, ctx: number, o: Pick<BaseBuildOptions, 'pseudoQueries' | 'seed'>, rng = seededRandom(o.seed + 101)): Promise<{ streams: number[][]; masks: number[][] }> {
  const renderer = localRenderer(tokenizer);
  const set = await loadTaskSet('default');
  const env = new SearchEnvironment(await openIndex(set.indexDir));
  const chunks: Chunk[] = [];
  for await (const c of embeddedChunks()) chunks.push(c);
  const pseudo: Task[] = Array.from({ length: o.pseudoQueries }, (_, i) => {
    const c = chunks[Math.floor(rng() * chunks.length)]!;
    const words = c.text.split(/\s+/u).slice(0, 4 + Math.floor(rng() * 8)).join(' ');
    return { id: `pseudo-${i}`, query: `${c.title}: ${words}`, facts: [{ text: c.title, chunkIds: [c.id] }] };
  });
  const streams: number[][] = [], masks: number[][] = [];
  const plans = followPlans();
  for (const [i, task] of [...set.tasks('train'), ...pseudo].entries()) {
    // The stride is prime to the number of plans (a test checks it): far-apart plans for consecutive tasks, and every plan recurs.
    const r = await runEpisode(followAgent(plans[(i * PLAN_STRIDE + o.seed) % plans.length]!), env, task);
    const s = renderRollout(renderer, env, task, r);
    if (s.tokens.length <= ctx) {
      streams.push(s.tokens);
      masks.push(s.mask);
    }
  }
  return { streams, masks };
}
