import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runEpisode } from '../../src/agent/episode.js';
import { resolveScriptedAgent } from '../../src/suites/registry.js';
import { searchSuite } from '../../src/suites/search/suite.js';
import { keywordQuery } from '../../src/suites/search/agents.js';
import { SearchEnvironment } from '../../src/suites/search/env.js';
import { parseSpanPlan, ShownSpans, spanAgent, spanScripts, spanSpec, spanSweepAgent, spanTeacherPlans, SPAN_STRIDE } from '../../src/suites/search/span-scripts.js';
import { bridgePlans } from '../../src/suites/search/multihop.js';
import { ensureCorpusIndex, openIndex } from '../../src/search/index.js';
import { readSplitTasks, shippedCorpusPaths, shippedTasksPath } from '../../src/tasks/store.js';
import { withoutSplit } from '../../src/tasks/split.js';
import type { Task } from '../../src/tasks/task.js';
import { agentEpisodes } from '../../src/demo/learn-report.js';
import { trainBpe } from '../../src/protocol/compact/bpe.js';
import { SPECIALS } from '../../src/protocol/compact/renderer.js';
import { localRenderer } from '../../src/protocol/compact/local.js';
import { renderRollout } from '../../src/train/datums.js';
import { runEval } from '../../src/eval/runner.js';
import { resolveRubric } from '../../src/suites/registry.js';
import { TEXTS } from '../backend/helpers.js';

let env: SearchEnvironment;
const tasks: Task[] = readSplitTasks(shippedTasksPath('musique')).filter((t) => t.split === 'dev').slice(0, 6).map(withoutSplit);
const tok = trainBpe([...TEXTS, ...tasks.map((t) => t.query)], 600, [...SPECIALS]);
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sleuth-spans-'));
  env = new SearchEnvironment(await openIndex(await ensureCorpusIndex(shippedCorpusPaths('musique'), join(dir, 'index'))));
});

const searches = (r: Awaited<ReturnType<typeof runEpisode>>) => r.turns.flatMap((t) => t.calls).filter((c) => c.name === 'bm25_search');
const hitsOf = (c: { result: { content: string } }) => (JSON.parse(c.result.content) as { hits: { id: string; title: string; snippet: string }[] }).hits;

describe('span scripts', () => {
  it('follow span j of hit i with the words its hit lacks, and the local model writes that follow-up as {"s": N}', async () => {
    let followed = 0;
    for (const task of tasks) {
      const r = await runEpisode(spanAgent(parseSpanPlan('10,1.1,5,10,5', 'span:10,1.1,5,10,5')), env, task);
      const [first, ...rest] = searches(r);
      expect(first!.arguments).toEqual({ query: keywordQuery(task.query), k: 10 });
      const shown = new ShownSpans(task.query);
      shown.note(hitsOf(first!));
      const span = shown.span(hitsOf(first!)[0]!, 1);
      if (!span) {
        expect(rest).toEqual([]);
        continue;
      }
      followed++;
      expect(rest.map((c) => c.arguments)).toEqual([{ query: shown.query(span.n, 'rest'), k: 5 }]);
      // Curated: the question's top 10 and the follow-up's top 5, which is every hit shown.
      expect(new Set(r.curated)).toEqual(new Set([...hitsOf(first!), ...hitsOf(rest[0]!)].map((h) => h.id)));
      const text = tok.decode(renderRollout(localRenderer(tok).forEpisode(), env, task, r).tokens);
      expect(text).toContain(`{"name":"bm25_search","arguments":{"k":5,"s":${span.n}}}`);
      expect(text).toContain('{"name":"curate","arguments":{"ids":"1-"}}');
    }
    expect(followed).toBeGreaterThan(3);
  });

  it('curate the chosen width: the top FIRST of the question and the top THEN of each follow-up', async () => {
    const r = await runEpisode(resolveScriptedAgent(searchSuite, 'span:10,1.1+2.1,5,3,2,all'), env, tasks[0]!);
    const [first, ...rest] = searches(r);
    expect(rest.length).toBeGreaterThan(0);
    const want = new Set([...hitsOf(first!).slice(0, 3), ...rest.flatMap((c) => hitsOf(c).slice(0, 2))].map((h) => h.id));
    expect(new Set(r.curated)).toEqual(want);
    // With `all`, a follow-up carries every question word.
    for (const c of rest) expect((c.arguments as { query: string }).query.endsWith(keywordQuery(tasks[0]!.query))).toBe(true);
  });

  it('parse their specs, and refuse a bad one naming it', () => {
    for (const p of spanScripts()) expect(parseSpanPlan(spanSpec(p).slice('span:'.length), spanSpec(p))).toEqual(p);
    expect(() => parseSpanPlan('10,1.9,5,10,5', 'span:10,1.9,5,10,5')).toThrow(/agent 'span:10,1.9,5,10,5': span:K,HIT.SPAN/);
    expect(() => parseSpanPlan('10,11.1,5,10,5', 'x')).toThrow(/HIT up to K/);
    expect(() => parseSpanPlan(undefined, 'span')).toThrow(/e.g. span:10,1.1,5,10,5/);
  });

  it('the span teacher visits every plan (its spans and the bridge plans) before repeating one, without reading gold', async () => {
    const n = spanTeacherPlans().length + bridgePlans().length;
    const seen = new Set<string>();
    const task = tasks[1]!;
    // A task without facts: the teacher never looks at them.
    const blind: Task = { ...task, facts: [{ text: '', chunkIds: ['none'] }], meta: {} };
    for (let sample = 0; sample < n; sample++) {
      const r = await runEpisode(spanSweepAgent(), env, blind, undefined, { sample });
      seen.add(JSON.stringify(searches(r).map((c) => c.arguments)) + r.curated.length);
    }
    // Plans that follow a span the hit lacks end alike; every distinct plan is reached.
    expect(seen.size).toBeGreaterThan(6);
    expect(SPAN_STRIDE % 2).toBe(1);
    expect(n % SPAN_STRIDE).not.toBe(0);
  });

  it("bench:learn's report reads the episodes back as the model writes them", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sleuth-span-report-'));
    const rubric = resolveRubric('f4-traj-format');
    await runEval({ dir, agent: resolveScriptedAgent(searchSuite, 'span:10,1.1,5,10,5'), env, tasks, samples: 1, concurrency: 2, rubric, config: {}, identity: [] });
    const r = agentEpisodes('script', dir, new Map(tasks.map((t) => [t.id, t])), rubric, tok);
    expect(r.episodes).toHaveLength(tasks.length);
    expect(r.moves.follow_up.span).toBe(1);
    expect(r.moves.curate['curate-all-shown']).toBe(1);
    expect(r.moves.curated_not_all_shown).toBe(0);
    expect(r.perfect_curation).toBeGreaterThanOrEqual(r.reward);
    expect(r.episodes[0]!.calls[0]).toEqual([{ name: 'bm25_search', arguments: { k: 10, q: '1-' } }]);
  });
});
