import { describe, expect, it } from 'vitest';
import { runEpisode } from '../../src/agent/episode.js';
import { MODEL_AGENTS } from '../../src/cli/agents.js';
import { resolveSuiteAgent } from '../../src/suites/registry.js';
import { invoiceSuite } from '../../src/suites/invoices/suite.js';
import { searchSuite } from '../../src/suites/search/suite.js';

/** Agents come from one place per kind: the suite's `agents` table, then the model agents. */
describe('resolveSuiteAgent', () => {
  it("takes the opened suite's scripted agent first, whatever another suite calls the same name", async () => {
    const opened = await invoiceSuite.open();
    const agent = await resolveSuiteAgent(opened, 'oracle', MODEL_AGENTS);
    expect(agent.spec).toBe('oracle');
    const task = opened.tasks()[0]!;
    const { env, close } = await opened.environment();
    const rollout = await runEpisode(agent, env, task);
    await close();
    // The invoice oracle runs the gold route through the SQL tools, not the search suite's oracle.
    expect(rollout.turns.flatMap((t) => t.calls.map((c) => c.name)).every((name) => invoiceSuite.lookupTools.has(name))).toBe(true);
    expect(rollout.endReason).toBe('answer');
  });

  it("refuses another suite's scripted agent, naming this suite's agents and the model agents", async () => {
    const opened = await invoiceSuite.open();
    expect(searchSuite.agents.has('follow')).toBe(true);
    await expect(resolveSuiteAgent(opened, 'follow:10,2,5', MODEL_AGENTS)).rejects.toThrow("unknown agent 'follow:10,2,5' for env invoices; known: baseline, oracle, openai, local, tinker");
  });

  it('hands a spec no suite agent takes to the model agents', async () => {
    const opened = await invoiceSuite.open();
    await expect(resolveSuiteAgent(opened, 'local', MODEL_AGENTS)).rejects.toThrow("agent 'local': local:PATH needs a checkpoint path, or shipped / shipped-long");
  });
});
