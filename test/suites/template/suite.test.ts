import { describe, expect, it } from 'vitest';
import { runEpisode } from '../../../src/agent/episode.js';
import { weighParts } from '../../../src/reward/rubric.js';
import { resolveScriptedAgent } from '../../../src/suites/registry.js';
import { templateSuite } from '../../../src/suites/template/suite.js';

/** The suite through its contract: its own tasks, its environment, its agents, its reward parts and rubrics. */
describe('the template suite', () => {
  const rubric = templateSuite.rubrics.find((r) => r.name === templateSuite.defaultRubric)!;

  it('has tasks in its splits, and names an unknown split', async () => {
    const opened = await templateSuite.open();
    expect(opened.tasks().length).toBe(opened.tasks('train').length + opened.tasks('eval').length);
    expect(opened.tasks('eval').length).toBeGreaterThan(0);
    expect(() => opened.tasks('dev')).toThrow(/split 'dev'/);
    await expect(templateSuite.open({ tasks: 'default' })).rejects.toThrow(/has its own tasks/);
  });

  it('the oracle solves every task through the tools; the baseline solves none', async () => {
    const opened = await templateSuite.open();
    const { env, close } = await opened.environment();
    for (const task of opened.tasks()) {
      const oracle = await runEpisode(resolveScriptedAgent(templateSuite, 'oracle'), env, task);
      const parts = templateSuite.rewardParts(task, oracle, 0);
      expect(parts, task.id).toEqual({ exact_match: 1, looked_up: 1, answered: 1 });
      expect(weighParts(rubric, parts).total).toBe(1);
      // Every rubric weighs only parts the suite computes (weighParts throws on any other).
      for (const r of templateSuite.rubrics) expect(weighParts(r, parts).total).toBeGreaterThan(0);
      expect(templateSuite.bucket(parts, 0)).toBe('correct');
      const baseline = await runEpisode(resolveScriptedAgent(templateSuite, 'baseline'), env, task);
      expect(baseline.turns[0]!.calls[0]!.result.errorKind).toBe('unknown_key');
      const floor = templateSuite.rewardParts(task, baseline, 0);
      expect(floor).toEqual({ exact_match: 0, looked_up: 0, answered: 1 });
      expect(templateSuite.bucket(floor, 0)).toBe('wrong');
    }
    await close();
  });

  it('names what is wrong: an unknown tool, bad arguments, an agent argument', async () => {
    const opened = await templateSuite.open();
    const { env } = await opened.environment();
    const episode = env.start(opened.tasks()[0]!);
    expect((await episode.call({ name: 'search', arguments: { key: 'France' } })).content).toBe("Error (unknown_tool): no tool named 'search'; tools: lookup, answer");
    expect((await episode.call({ name: 'lookup', arguments: { key: ' ' } })).errorKind).toBe('bad_arguments');
    expect(() => resolveScriptedAgent(templateSuite, 'oracle:3')).toThrow(/takes no argument/);
  });
});
