import { beforeAll, describe, expect, it } from 'vitest';
import { runEpisode } from '../../src/agent/episode.js';
import { resolveScriptedAgent } from '../../src/suites/registry.js';
import { searchSuite } from '../../src/suites/search/suite.js';
import { followAgent, followPlans, followSweepAgent, keywordQuery, PLAN_STRIDE } from '../../src/suites/search/agents.js';
import { SearchEnvironment } from '../../src/suites/search/env.js';
import { Analyzer } from '../../src/search/analyzer.js';
import type { Task } from '../../src/tasks/task.js';
import { hotpotFixture } from '../env/fixture.js';

const A = new Analyzer();
let env: SearchEnvironment;
let tasks: Task[];
beforeAll(async () => {
  const f = await hotpotFixture(12);
  env = new SearchEnvironment(f.searcher);
  tasks = f.tasks;
});

const searches = (r: Awaited<ReturnType<typeof runEpisode>>) => r.turns.flatMap((t) => t.calls).filter((c) => c.name === 'bm25_search');

describe('the follow teacher', () => {
  it('searches the question, curates its top k1, follows bridge titles with the question, curates k2 new hits of each', async () => {
    for (const task of tasks.slice(0, 6)) {
      const r = await runEpisode(followAgent({ k1: 3, follow: 2, withQuestion: true, k2: 2 }), env, task);
      const s = searches(r);
      expect(s[0]!.arguments).toEqual({ query: keywordQuery(task.query), k: 10 });
      const first = (JSON.parse(s[0]!.result.content) as { hits: { id: string; title: string }[] }).hits;
      expect(r.curated.slice(0, 3)).toEqual(first.slice(0, 3).map((h) => h.id));
      const asked = new Set(A.terms(task.query));
      for (const follow of s.slice(1)) {
        const query = (follow.arguments as { query: string }).query;
        expect(query.endsWith(` ${keywordQuery(task.query)}`)).toBe(true);
        const title = query.slice(0, -keywordQuery(task.query).length - 1);
        // A bridge title is a hit of the first search that brings a word the question lacks.
        expect(first.map((h) => h.title)).toContain(title);
        expect(A.terms(title).some((t) => !asked.has(t))).toBe(true);
      }
      expect(s.length).toBeLessThanOrEqual(3);
      expect(r.curated.length).toBeLessThanOrEqual(3 + 2 * (s.length - 1));
      expect(new Set(r.curated).size).toBe(r.curated.length);
      expect(r.endReason).toBe('finish');
    }
  });

  it("with select titles, also curates the hits whose titles the question names, and never past the cap", async () => {
    for (const task of tasks.slice(0, 6)) {
      const r = await runEpisode(followAgent({ k1: 1, follow: 0, withQuestion: false, k2: 0, select: 'titles' }), env, task);
      const hits = (JSON.parse(searches(r)[0]!.result.content) as { hits: { id: string; title: string }[] }).hits;
      const asked = new Set(A.terms(task.query));
      const named = hits.filter((h, i) => i >= 1 && 2 * A.terms(h.title).filter((t) => asked.has(t)).length >= A.terms(h.title).length && A.terms(h.title).length > 0);
      expect(r.curated).toEqual([hits[0]!.id, ...named.map((h) => h.id)]);
    }
    const wide = await runEpisode(followAgent({ k1: 10, follow: 3, withQuestion: false, k2: 50, followK: 20 }), env, tasks[0]!);
    expect(wide.curated.length).toBeLessThanOrEqual(30);
  });

  it('sweeps every plan: attempt j of a query is a different plan, and the stride visits them all', async () => {
    const n = followPlans().length;
    const gcd = (a: number, b: number): number => (b ? gcd(b, a % b) : a);
    expect(gcd(PLAN_STRIDE, n)).toBe(1);
    const sweep = followSweepAgent();
    const shapes = new Set<string>();
    for (let sample = 0; sample < 6; sample++) {
      const r = await runEpisode(sweep, env, tasks[1]!, env.defaultBudgets, { sample });
      shapes.add(JSON.stringify(r.turns.map((t) => t.calls.map((c) => [c.name, c.arguments]))));
    }
    expect(shapes.size).toBeGreaterThan(3);
    expect(resolveScriptedAgent(searchSuite, 'follow:10,2,5,q').spec).toBe('follow:10,2,5,q');
    expect(() => resolveScriptedAgent(searchSuite, 'follow:10,x')).toThrow(/follow:K1,TITLES,K2/);
    expect(() => resolveScriptedAgent(searchSuite, 'follow-sweep:3')).toThrow(/takes no argument/);
  });
});
