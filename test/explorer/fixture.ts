import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallRecord, Rollout, TurnRecord } from '../../src/agent/rollout.js';
import type { ToolResult } from '../../src/env/types.js';
import { searchSystemPrompt, searchUserPrompt } from '../../src/suites/search/prompt.js';
import { searchToolSpecs } from '../../src/suites/search/tools.js';
import { groupAdvantages } from '../../src/train/advantages.js';
import { getRenderer } from '../../src/protocol/registry.js';
import type { Renderer } from '../../src/protocol/types.js';
import { resolveRubric, scoreRollout } from '../../src/suites/registry.js';
import { appendJsonl } from '../../src/runs/jsonl.js';
import { runPath } from '../../src/runs/layout.js';
import { appendMetrics, appendRollouts, openRunDir, writeSummary } from '../../src/runs/store.js';
import type { Task } from '../../src/tasks/task.js';

/**
 * A training run directory written the way the trainer writes one (src/runs/ writers, records of
 * the real Rollout shape): token streams made by the real Qwen3 renderer (prompt, canonical turns,
 * tool results), calls parsed back by it (so a malformed call gets the status the parser gives),
 * rewards from scoreRollout, Dr. GRPO advantages per group. Chunks and model text carry XSS payloads.
 */
export const XSS_CHUNK = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script> Rotterdam lies on the Nieuwe Maas.';
export const XSS_TEXT = 'Found it <script>window.__xss=3</script><img src=y onerror="window.__xss=4"> curating.';

export const CHUNKS: Record<string, { title: string; text: string }> = {
  'c-nixon': { title: 'Richard Nixon', text: 'Richard Nixon was the 37th president of the United States, serving from 1969 to 1974.' },
  'c-apollo': { title: 'Apollo 11', text: 'Apollo 11 landed on the Moon in July 1969, during the Nixon presidency.' },
  'c-ford': { title: 'Gerald Ford', text: 'Gerald Ford was the 38th president, succeeding Richard Nixon in 1974.' },
  'c-xss': { title: 'Rotterdam <b>port</b>', text: XSS_CHUNK },
  'c-carter': { title: 'Jimmy Carter', text: 'Jimmy Carter was the 39th president, a peanut farmer from Georgia.' },
};

export const TASKS: Task[] = [
  { id: 'q-nixon', query: 'Who was president when Apollo 11 landed?', facts: [{ text: 'Apollo 11 landed in 1969', chunkIds: ['c-apollo'] }, { text: 'Nixon was president 1969-1974', chunkIds: ['c-nixon'] }] },
  { id: 'q-ford', query: 'Who succeeded Richard Nixon?', facts: [{ text: 'Ford succeeded Nixon', chunkIds: ['c-ford'] }] },
  { id: 'q-port', query: 'Which port city lies on the Nieuwe Maas? <script>window.__xss=5</script>', facts: [{ text: 'Rotterdam <i>is</i> on the Nieuwe Maas', chunkIds: ['c-xss'] }] },
];

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function searchResult(ids: string[]): ToolResult {
  return { outcome: 'ok', content: JSON.stringify({ hits: ids.map((id) => ({ id, title: CHUNKS[id]!.title, snippet: CHUNKS[id]!.text })) }), chunkIds: ids };
}

/** One episode: search, (maybe) a malformed call, curate a subset, finish. */
function episode(renderer: Renderer, task: Task, rand: () => number, xssText: boolean): TurnRecord[] {
  const tools = searchToolSpecs(20, 10);
  const turns: TurnRecord[] = [];
  let inserted = renderer.prompt({ system: searchSystemPrompt(20), user: searchUserPrompt(task.query), tools });
  // Gold chunks turn up in most results, not all: trajectory recall is then not always 1.
  const hits = Object.keys(CHUNKS).filter((id) => (task.facts.some((f) => f.chunkIds.includes(id)) ? rand() < 0.85 : rand() < 0.3));
  if (hits.length === 0) hits.push('c-carter');
  const picked = hits.filter(() => rand() < 0.6);
  const plan: { text: string; sampled?: number[]; call: { name: string; arguments: unknown }; result: ToolResult }[] = [
    { text: 'Searching for the query terms.', call: { name: 'bm25_search', arguments: { query: task.query.slice(0, 40) } }, result: searchResult(hits) },
  ];
  const odd = rand();
  if (odd < 0.4) {
    // Arguments JSON-encoded twice: only the lenient parser recovers them (off_form). Single
    // quotes: neither parser does (unparseable). The parser, not this fixture, decides.
    const raw = odd < 0.3
      ? `Reading.\n<tool_call>\n{"name": "read_document", "arguments": ${JSON.stringify(JSON.stringify({ id: hits[0] }))}}\n</tool_call><|im_end|>`
      : `Reading.\n<tool_call>\n{'name': 'read_document', 'arguments': {'id': '${hits[0]}'}}\n</tool_call><|im_end|>`;
    plan.push({ text: 'Reading.', sampled: renderer.encode(raw), call: { name: 'read_document', arguments: { id: hits[0] } }, result: { outcome: 'ok', content: CHUNKS[hits[0]!]!.text, chunkIds: [hits[0]!] } });
  }
  if (picked.length) plan.push({ text: xssText ? XSS_TEXT : 'Curating what supports the answer.', call: { name: 'curate', arguments: { ids: picked } }, result: { outcome: 'ok', content: JSON.stringify({ curated: picked.length }), chunkIds: [] } });
  plan.push({ text: 'Done.', call: { name: 'finish', arguments: {} }, result: { outcome: 'ok', content: 'finished', chunkIds: [] } });
  const curated: string[] = [];
  plan.forEach((p, index) => {
    const sampled = p.sampled ?? renderer.writeTurn!({ text: p.text, calls: [p.call] });
    const parsed = renderer.parse(sampled, { stopReason: 'stop' });
    const calls: CallRecord[] = parsed.calls.map((c) => ({ name: c.name, arguments: c.arguments, status: c.status, ...(c.status !== 'ok' ? { raw: c.raw } : {}), ...(c.tokenSpan ? { tokenSpan: c.tokenSpan } : {}), result: p.result, ms: 1 }));
    if (p.call.name === 'curate') curated.push(...(p.call.arguments as { ids: string[] }).ids);
    turns.push({
      index,
      insertedTokens: inserted,
      sampledTokens: sampled,
      sampledLogprobs: sampled.map(() => -Math.pow(rand(), 3) * 4),
      text: parsed.text || p.text,
      calls,
      curated: [...curated],
      sampleMs: 20,
      envMs: 2,
      promptTokens: turns.reduce((s, t) => s + t.insertedTokens.length + t.sampledTokens.length, 0) + inserted.length,
      completionTokens: sampled.length,
    });
    inserted = renderer.toolResults(sampled, parsed.calls.map((call) => ({ call, result: p.result })));
  });
  return turns;
}

export interface TrainFixture {
  dir: string;
  tasksDir: string;
  rollouts: Rollout[];
}

/**
 * Write a training run of `steps` steps, `groups` groups of `groupSize` per step, into root/name;
 * with `fromStep`, append steps fromStep+1..steps to the run as a trainer still going would.
 */
export async function writeTrainRun(root: string, name: string, o: { steps: number; groups: number; groupSize: number; seed?: number; fromStep?: number; done?: boolean }): Promise<TrainFixture> {
  const renderer = await getRenderer('qwen3');
  const rubric = resolveRubric('f4');
  // Inside the runs directory: the explorer follows a config's task-set path only there (or into sleuth's task store).
  const tasksDir = join(root, `.${name}-tasks`);
  mkdirSync(tasksDir, { recursive: true });
  writeFileSync(join(tasksDir, 'tasks.jsonl'), TASKS.map((t) => JSON.stringify({ split: 'train', ...t })).join('\n') + '\n');
  const dir = join(root, name);
  openRunDir(dir, { kind: 'train', tasks: tasksDir, trainSplit: 'train', env: 'search', backend: 'local', model: 'base', renderer: 'qwen3', groupSize: o.groupSize, groupsPerStep: o.groups, seed: o.seed ?? 0, advantage: 'dr-grpo', loss: 'importance_sampling', reward: { rubric: 'f4' }, createdAt: '2026-11-30T09:00:00.000Z' }, ['tasks']);
  const from = o.fromStep ?? 0;
  const rand = rng((o.seed ?? 1) + from * 7919);
  const all: Rollout[] = [];
  let cursor = from * o.groups;
  if (from === 0) appendJsonl(runPath(dir, 'checkpoints'), [{ step: 0, path: join(dir, 'state-0'), samplerPath: null, cursor: 0, time: new Date().toISOString() }]);
  for (let step = from + 1; step <= o.steps; step++) {
    const stepRollouts: Rollout[] = [];
    const rewardsByGroup: number[][] = [];
    for (let g = 0; g < o.groups; g++) {
      const group = (step - 1) * o.groups + g;
      const task = TASKS[cursor++ % TASKS.length]!;
      const members: Rollout[] = [];
      for (let j = 0; j < o.groupSize; j++) {
        const turns = episode(renderer, task, rand, task.id === 'q-port' && j === 0);
        const curated = turns.at(-1)!.curated;
        const r: Rollout = {
          version: 1,
          id: `step${step}/g${group}/${task.id}#${j}`,
          taskId: task.id,
          agent: `train:${name}@step-${step - 1}`,
          env: 'search',
          sample: j,
          query: task.query,
          turns,
          curated,
          trajectory: [...new Set(turns.flatMap((t) => t.calls.flatMap((c) => c.result.chunkIds)))],
          read: [],
          endReason: 'finish',
          promptTokens: turns.reduce((s, t) => s + t.promptTokens, 0),
          completionTokens: turns.reduce((s, t) => s + t.completionTokens, 0),
          wallMs: 50,
          startedAt: new Date(Date.UTC(2026, 10, 30, 9, step)).toISOString(),
          budgets: { maxTurns: 40, maxTokensPerTurn: 1024, contextTokens: 32768 },
          step,
          group,
        };
        r.reward = scoreRollout(task, r, rubric, step - 1);
        members.push(r);
      }
      const rewards = members.map((m) => m.reward!.total);
      groupAdvantages(rewards, 'dr-grpo').forEach((a, i) => (members[i]!.advantage = a));
      rewardsByGroup.push(rewards);
      stepRollouts.push(...members);
    }
    appendRollouts(dir, stepRollouts);
    appendMetrics(dir, [stepMetrics(step, stepRollouts, rewardsByGroup)]);
    if (step === 1 || step === o.steps) appendMetrics(dir, [evalPoint(step, stepRollouts)]);
    all.push(...stepRollouts);
  }
  if (o.done ?? true) writeSummary(dir, { kind: 'train', steps_done: o.steps, steps: o.steps, done: true });
  return { dir, tasksDir, rollouts: all };
}

const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / (xs.length || 1);

/** The trainer's per-step record (src/train/metrics.ts names). */
export function stepMetrics(step: number, rs: Rollout[], rewardsByGroup: number[][]): Record<string, unknown> {
  const sampled = rs.flatMap((r) => r.turns.flatMap((t) => t.sampledLogprobs));
  const calls = rs.flatMap((r) => r.turns.flatMap((t) => t.calls));
  return {
    step,
    kind: 'train',
    reward: mean(rs.map((r) => r.reward!.total)),
    valid_share: mean(rs.map((r) => (r.curated.length ? 1 : 0))),
    entropy: -mean(sampled),
    groups: rewardsByGroup.length,
    groups_all_equal_share: mean(rewardsByGroup.map((g) => (Math.max(...g) - Math.min(...g) < 1e-9 ? 1 : 0))),
    curated_size: mean(rs.map((r) => new Set(r.curated).size)),
    turns: mean(rs.map((r) => r.turns.length)),
    offform_call_share: calls.filter((c) => c.status === 'off_form').length / calls.length,
    offform_episode_share: mean(rs.map((r) => (r.turns.some((t) => t.calls.some((c) => c.status === 'off_form')) ? 1 : 0))),
    trajectory_recall: mean(rs.map((r) => r.reward!.parts['trajectory_recall']!)),
    curated_recall: mean(rs.map((r) => r.reward!.parts['recall']!)),
    queries_consumed: rewardsByGroup.length,
    // The importance-sampling loss at ratio 1: -advantage x sampler logprob, per sampled token.
    loss: mean(rs.flatMap((r) => r.turns.flatMap((t) => t.sampledLogprobs.map((lp) => -r.advantage! * lp)))),
    time: new Date().toISOString(),
  };
}

function evalPoint(step: number, rs: Rollout[]): Record<string, unknown> {
  return { step, kind: 'eval', f1: mean(rs.map((r) => r.reward!.parts['f1']!)), precision: mean(rs.map((r) => r.reward!.parts['precision']!)), recall: mean(rs.map((r) => r.reward!.parts['recall']!)) };
}
