import type { Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEpisode } from '../../src/agent/episode.js';
import { OpenAIAgent } from '../../src/agent/openai.js';
import { resolveAgent } from '../../src/agent/registry.js';
import type { Agent } from '../../src/agent/types.js';
import { loadSampler } from '../../src/backend/local/backend.js';
import { SHIPPED_BUDGETS, shippedBasePath } from '../../src/backend/local/base-model.js';
import { createOpenAIServer } from '../../src/openai-server/server.js';
import { listen } from '../../src/http/lifecycle.js';
import '../../src/cli/agents.js';
import { compareRuns, loadRunRows } from '../../src/eval/compare.js';
import { runEval } from '../../src/eval/runner.js';
import type { Budgets, Environment } from '../../src/env/types.js';
import { defaultRubric, suiteOf } from '../../src/suites/registry.js';
import type { Task } from '../../src/tasks/task.js';

/**
 * The shipped checkpoint as `local:` and as served by `sleuth serve` (OpenAI-compatible), given the
 * same budgets, temperature and eval seed, scores the same: the paired interval of their reward
 * difference contains 0 (24 dev tasks x 4; both draw from the episode seeds, so the run repeats:
 * local 0.629, served 0.616, difference -0.013 [-0.057, 0.027] on 2026-12-03). (Not token-identical: the served path renders each assistant turn from its
 * parsed calls and draws with the request's seed, where the local agent keeps the sampled tokens.)
 * A conversation that outgrows the served model's context ends on its context, as the local one does.
 */
const budgets: Budgets = SHIPPED_BUDGETS.base as Budgets;
const checkpoint = shippedBasePath('base')!;
const tmp = mkdtempSync(join(tmpdir(), 'sleuth-parity-'));
let server: Server;
let served: OpenAIAgent;
let env: Environment;
let closeEnv: () => Promise<void>;
let tasks: Task[];

beforeAll(async () => {
  server = createOpenAIServer({ sampler: loadSampler(checkpoint) });
  const port = await listen(server, 0);
  served = new OpenAIAgent({ model: checkpoint, baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'unused', maxRetries: 0, spec: 'openai:shipped@serve' });
  const opened = await suiteOf('search').open({});
  tasks = opened.tasks('dev').slice(0, 24);
  ({ env, close: closeEnv } = await opened.environment());
});

afterAll(async () => {
  await closeEnv?.();
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  rmSync(tmp, { recursive: true, force: true });
});

const evalInto = (name: string, agent: Agent) =>
  runEval({ dir: join(tmp, name), agent, env, tasks, samples: 4, concurrency: 4, rubric: defaultRubric('search'), budgets, config: { agent: agent.spec }, identity: ['agent'], seed: 0, bootstrap: { seed: 0 } });

describe('local: and served parity', () => {
  it('scores the same checkpoint the same at the same budgets, and neither run has an error', async () => {
    const local = await evalInto('local', await resolveAgent('local:shipped', {}));
    const remote = await evalInto('served', served);
    expect(local.errors).toEqual([]);
    expect(remote.errors).toEqual([]);
    const comparison = compareRuns([loadRunRows(join(tmp, 'local')), loadRunRows(join(tmp, 'served'))], { seed: 0 });
    const reward = comparison.runs[1]!.diffs['reward']!;
    expect(comparison.sharedTasks).toHaveLength(tasks.length);
    expect(reward.shown).toBe(false);
  }, 300_000);

  it('ends an episode whose prompt outgrows the served context on its context, not in an error', async () => {
    const long = { ...tasks[0]!, query: `${tasks[0]!.query} ${'background '.repeat(1500)}` };
    const rollout = await runEpisode(served, env, long, budgets);
    expect(rollout.error).toBeUndefined();
    expect(rollout.endReason).toBe('context');
  }, 120_000);
});
