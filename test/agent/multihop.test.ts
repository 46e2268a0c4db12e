import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runEpisode } from '../../src/agent/episode.js';
import { resolveScriptedAgent } from '../../src/suites/registry.js';
import { searchSuite } from '../../src/suites/search/suite.js';
import { keywordQuery } from '../../src/suites/search/agents.js';
import { SearchEnvironment } from '../../src/suites/search/env.js';
import { bridgePlans, BRIDGE_STRIDE, hopOracleAgent, hopQuery, inShownOrder, interleave, multiSearchAgent } from '../../src/suites/search/multihop.js';
import { ensureCorpusIndex, openIndex } from '../../src/search/index.js';
import { readSplitTasks, shippedCorpusPaths, shippedTasksPath } from '../../src/tasks/store.js';
import { withoutSplit } from '../../src/tasks/split.js';
import type { Task } from '../../src/tasks/task.js';

let env: SearchEnvironment;
const tasks: Task[] = readSplitTasks(shippedTasksPath('musique')).filter((t) => t.split === 'dev').slice(0, 8).map(withoutSplit);
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sleuth-multihop-'));
  env = new SearchEnvironment(await openIndex(await ensureCorpusIndex(shippedCorpusPaths('musique'), join(dir, 'index'))));
});

const calls = (r: Awaited<ReturnType<typeof runEpisode>>, name: string) => r.turns.flatMap((t) => t.calls).filter((c) => c.name === name);
const hitsOf = (c: { result: { content: string } }) => (JSON.parse(c.result.content) as { hits: { id: string; title: string; snippet: string }[] }).hits;

describe('the hop oracle', () => {
  it('searches each gold sub-question with the earlier answers filled in, and curates their hits interleaved by rank', async () => {
    for (const task of tasks) {
      const hops = task.meta!['decomposition'] as { question: string; answer: string }[];
      const r = await runEpisode(hopOracleAgent(10, 10), env, task);
      const searches = calls(r, 'bm25_search');
      expect(searches.map((c) => c.arguments)).toEqual(hops.map((h) => ({ query: hopQuery(h.question), k: 10 })));
      // No answer of a hop is searched by its own hop: only later hops carry earlier answers.
      expect((searches[0]!.arguments as { query: string }).query).toBe(hopQuery(hops[0]!.question));
      expect(r.curated).toEqual(interleave(searches.map(hitsOf), 10));
      expect(r.endReason).toBe('finish');
    }
    // 'Van Hook Township >> located in ...' with #1 filled in: the second hop names the first's answer.
    const vanHook = readSplitTasks(shippedTasksPath('musique')).find((t) => t.id === '2hop__574419_270105')!;
    expect((vanHook.meta!['decomposition'] as { question: string }[]).map((h) => hopQuery(h.question))).toEqual(['Van Hook Township located in the administrative territorial entity', 'Mountrail County capital']);
  });

  it('refuses a task without a gold decomposition, naming it', async () => {
    const plain: Task = { id: 'plain-1', query: 'Who?', facts: [{ text: 'x', chunkIds: ['c'] }] };
    const r = await runEpisode(hopOracleAgent(), env, plain);
    expect(r.endReason).toBe('error');
    expect(JSON.stringify(r)).toContain("task 'plain-1' has no gold decomposition");
  });
});

describe('the fixed multi-search scripts', () => {
  it('follow the top hits by title or by their text with the question, then curate 10 interleaved', async () => {
    for (const task of tasks.slice(0, 4)) {
      const titles = await runEpisode(resolveScriptedAgent(searchSuite, 'titles:10,2,5,10'), env, task);
      const [first, ...follow] = calls(titles, 'bm25_search');
      expect(first!.arguments).toEqual({ query: keywordQuery(task.query), k: 10 });
      expect(follow.map((c) => (c.arguments as { query: string }).query)).toEqual(hitsOf(first!).slice(0, 2).map((h) => h.title));
      // The interleaved set, written in the order the hits were first shown (the compact format's numbering).
      expect(titles.curated).toEqual(inShownOrder(interleave([first!, ...follow].map(hitsOf), 10), [first!, ...follow].map(hitsOf)));
      const text = await runEpisode(resolveScriptedAgent(searchSuite, 'hit-text:10,3,5,10'), env, task);
      const [q, ...more] = calls(text, 'bm25_search');
      expect(more.map((c) => c.arguments)).toEqual(hitsOf(q!).slice(0, 3).map((h) => ({ query: `${h.snippet.split(/\s+/u).filter(Boolean).join(' ')} ${keywordQuery(task.query)}`, k: 5 })));
      expect(new Set(text.curated).size).toBe(10);
    }
    // CHAIN 1: one more hop, following the first hit of the follow-up that the first search did not show.
    for (const task of tasks.slice(0, 4)) {
      const chained = await runEpisode(resolveScriptedAgent(searchSuite, 'hit-text:10,1,5,10,1'), env, task);
      const [q, f, next] = calls(chained, 'bm25_search');
      const fresh = hitsOf(f!).find((h) => !hitsOf(q!).some((x) => x.id === h.id));
      if (!fresh) {
        expect(next).toBeUndefined();
        continue;
      }
      expect((next!.arguments as { query: string }).query).toBe(`${fresh.snippet.split(/\s+/u).filter(Boolean).join(' ')} ${keywordQuery(task.query)}`);
    }
    expect(() => resolveScriptedAgent(searchSuite, 'hit-text:10,x')).toThrow("hit-text:K,FOLLOW[,FOLLOWK[,CURATE[,CHAIN]]]");
  });

  it('the bridge teacher sweeps every plan across attempts', async () => {
    const n = bridgePlans().length;
    const gcd = (a: number, b: number): number => (b ? gcd(b, a % b) : a);
    expect(gcd(BRIDGE_STRIDE, n)).toBe(1);
    const plan = bridgePlans().find((p) => p.followHits?.join() === '2,3')!;
    const r = await runEpisode(multiSearchAgent(plan), env, tasks[0]!);
    const [first, ...follow] = calls(r, 'bm25_search');
    expect(follow.map((c) => (c.arguments as { query: string }).query.split(' ')[0])).toEqual(hitsOf(first!).slice(1, 3).map((h) => h.snippet.split(/\s+/u)[0]));
    // Blocks: the first search's top 10 and every hit the follow-ups showed first, in shown order:
    // every hit shown.
    const firstIds = hitsOf(first!).map((h) => h.id);
    const fresh = [...new Set(follow.flatMap(hitsOf).map((h) => h.id))].filter((id) => !firstIds.includes(id));
    expect(r.curated).toEqual([...firstIds.slice(0, 10), ...fresh]);
  });
});
