import { beforeAll, describe, expect, it } from 'vitest';
import { runEpisode } from '../../src/agent/episode.js';
import { trainBpe } from '../../src/protocol/compact/bpe.js';
import { localRenderer } from '../../src/protocol/compact/local.js';
import { SPECIALS } from '../../src/protocol/compact/renderer.js';
import { writeTurnTokens } from '../../src/protocol/write-turn.js';
import type { SearchIndex } from '../../src/search/index.js';
import { answerAgent, answerScripts, answerSpec, answerSweepAgent, docHits, isYesNoQuestion, parseAnswerPlan, yesNoByOverlap } from '../../src/suites/qa/answer-scripts.js';
import { QaEnvironment } from '../../src/suites/qa/env.js';
import type { Task } from '../../src/tasks/task.js';
import { TEXTS } from '../backend/helpers.js';
import { hotpotFixture } from '../env/fixture.js';

let searcher: SearchIndex;
let tasks: Task[];

beforeAll(async () => {
  const f = await hotpotFixture(12);
  searcher = f.searcher;
  tasks = f.tasks;
}, 60_000);

describe('answer scripts', () => {
  it('read and write their specs; a bad spec is an error that names it and the form', () => {
    for (const plan of answerScripts()) expect(parseAnswerPlan(answerSpec(plan).slice('answer:'.length), answerSpec(plan))).toEqual(plan);
    expect(answerScripts()).toHaveLength(24);
    expect(parseAnswerPlan('1.2>s2.3,yn', 'x')).toEqual({ follow: { hit: 1, span: 2 }, pick: { kind: 'span', hit: 2, span: 3 }, yesNo: true });
    for (const bad of [undefined, '', 't0', 's1.4', 's1', '0.1>t1', 't1,no', 'first,yn,yn', 't11']) {
      expect(() => parseAnswerPlan(bad, `answer:${bad ?? ''}`)).toThrow(/agent 'answer:.*': answer:\[HIT\.SPAN>\]PICK\[,yn\]/);
    }
  });

  it('tell yes/no questions by their opening verb, and answer them by overlap with the shown hits', () => {
    expect(isYesNoQuestion('Were Scott Derrickson and Ed Wood of the same nationality?')).toBe(true);
    expect(isYesNoQuestion('Is Ed Wood a director?')).toBe(true);
    expect(isYesNoQuestion('Which director was born first?')).toBe(false);
    expect(isYesNoQuestion('Island of the Blue Dolphins is set where?')).toBe(false);
    const hits = [{ id: 'a', title: 'Ed Wood', snippet: 'Edward Davis Wood Jr. was an American filmmaker.' }];
    expect(yesNoByOverlap('Was Ed Wood an American filmmaker?', hits)).toBe('yes');
    expect(yesNoByOverlap('Was Ed Wood a French filmmaker?', hits)).toBe('no');
  });

  it('answer what the local model is shown, so that the same answer is one reference for the model', async () => {
    const env = new QaEnvironment(searcher);
    for (const task of tasks.slice(0, 6)) {
      for (const spec of ['t1', 's1.1', 'first', '1.1>t1']) {
        const rollout = await runEpisode(answerAgent(parseAnswerPlan(spec, `answer:${spec}`)), env, task);
        expect(rollout.endReason).toBe('answer');
        const searches = rollout.turns.flatMap((t) => t.calls).filter((c) => c.name === 'search');
        // A follow-up runs only when the question's top hit has that span.
        expect(searches.length).toBe(spec.includes('>') ? searches.length : 1);
        expect(searches.length).toBeLessThanOrEqual(2);
        // The model sees the same results; the script's answer is written as a reference it can make.
        const r = localRenderer(trainBpe([...TEXTS, task.query], 400, [...SPECIALS])).forEpisode();
        r.prompt({ system: 'S', user: task.query, tools: env.tools });
        for (const s of searches) r.renderResults([s.result]);
        const last = docHits([{ call: { name: 'search', arguments: {}, status: 'ok' }, result: searches.at(-1)!.result }])[0]!;
        const written = r.decode(writeTurnTokens(r, { calls: [{ name: 'answer', arguments: { answer: rollout.answer ?? '' } }] }));
        if (spec.endsWith('t1') && last[0]) expect(rollout.answer).toBe(last[0].title);
        if (rollout.answer) expect(written).toMatch(/^<\|call\|>\{"name":"answer","arguments":\{"[st]":\d+\}\}<\|end\|>$/u);
      }
    }
  });

  it('the answer teacher runs a different plan on each of its attempts at a task, and never reads gold', async () => {
    const env = new QaEnvironment(searcher);
    const task = tasks[0]!;
    const calls = new Set<string>();
    const written = async (t: Task, sample: number) => JSON.stringify((await runEpisode(answerSweepAgent(), env, t, env.defaultBudgets, { sample })).turns.map((x) => x.calls.map((c) => [c.name, c.arguments])));
    for (let sample = 0; sample < 12; sample++) {
      const seen = await written(task, sample);
      // The same calls whatever the gold answers are.
      expect(await written({ ...task, answers: ['(hidden)'], facts: [] }, sample)).toBe(seen);
      calls.add(seen);
    }
    expect(calls.size).toBeGreaterThan(3);
  });
});
