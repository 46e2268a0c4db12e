import { describe, expect, it } from 'vitest';
import { runEpisode } from '../../../src/agent/episode.js';
import type { Agent } from '../../../src/agent/types.js';
import { invoiceBaselineAgent, invoiceBucket, invoiceOracleAgent, invoiceParts, loadInvoiceSuite, ONE_CALL_TYPES } from '../../../src/suites/invoices/index.js';

const suite = loadInvoiceSuite();
const validation = suite.tasks('validation');

describe('invoice environment', () => {
  it('exposes the three tools, a system prompt and the email as the user prompt', () => {
    const env = suite.env;
    expect(env.name).toBe('invoices');
    expect(env.tools.map((t) => t.name)).toEqual(['GetOrderBySubscription', 'SearchSupplier', 'LookupOrderRows']);
    expect(env.systemPrompt()).toMatch(/supplier_id must come from SearchSupplier/);
    expect(env.userPrompt(validation[0]!)).toContain(validation[0]!.query);
  });

  it('the oracle passes every validation task through the real tools', async () => {
    const agent: Agent = invoiceOracleAgent();
    for (const task of validation) {
      const rollout = await runEpisode(agent, suite.env, task);
      const parts = invoiceParts(task, rollout);
      expect(parts, `${task.id}: ${rollout.answer}`).toEqual({ gold_share: 1, pass: 1, answered: 1 });
      expect(rollout.endReason).toBe('answer');
      expect(rollout.env).toBe('invoices');
      const calls = rollout.turns.flatMap((t) => t.calls);
      expect(calls.every((c) => c.result.outcome === 'ok')).toBe(true);
      // Its route, one call per turn, then the reply.
      expect(rollout.turns).toHaveLength(calls.length + 1);
      expect(calls.map((c) => c.name)).toEqual((task.meta!['route'] as { steps: { name: string }[] }).steps.map((s) => s.name));
      // The gold rows were in what the tools returned.
      for (const fact of task.facts) expect(fact.chunkIds.some((id) => rollout.trajectory.includes(id))).toBe(true);
    }
  });

  it('the one-call baseline answers the one-call types and fails those that need SearchSupplier first', async () => {
    const agent: Agent = invoiceBaselineAgent();
    for (const task of validation) {
      const rollout = await runEpisode(agent, suite.env, task);
      const oneCall = (ONE_CALL_TYPES as readonly string[]).includes(task.meta!['type'] as string);
      expect(rollout.turns.flatMap((t) => t.calls).length).toBeLessThanOrEqual(1);
      expect(invoiceParts(task, rollout).pass, task.id).toBe(oneCall ? 1 : 0);
    }
  });

  it('a bad call is an error result, the episode goes on, and the reply ends it', async () => {
    const task = validation[0]!;
    const episode = suite.env.start(task);
    const bad = await episode.call({ name: 'LookupOrderRows', arguments: { supplier_id: 'Acme' } });
    expect(bad).toMatchObject({ outcome: 'error', errorKind: 'bad_arguments' });
    const unknown = await episode.call({ name: 'search', arguments: { query: 'x' } });
    expect(unknown).toMatchObject({ outcome: 'error', errorKind: 'unknown_tool' });
    expect(episode.ended).toBeUndefined();
    const good = await episode.call({ name: 'SearchSupplier', arguments: { name: 'a' } });
    expect(good.outcome).toBe('ok');
    expect(episode.trajectory.length).toBe(good.chunkIds.length);
    expect(episode.log.map((e) => e.outcome)).toEqual(['error', 'error', 'ok']);
    expect(episode.finalMessage('  Hej! Svar här.  ')).toBe('answer');
    expect(episode.answer).toBe('Hej! Svar här.');
    const after = await episode.call({ name: 'SearchSupplier', arguments: { name: 'a' } });
    expect(after.errorKind).toBe('episode_over');
  });

  it('scores only the final reply: an episode cut off by a budget scores 0', async () => {
    const task = validation.find((t) => (t.meta!['route'] as { steps: unknown[] }).steps.length === 2)!;
    const rollout = await runEpisode(invoiceOracleAgent(), suite.env, task, { ...suite.env.defaultBudgets, maxTurns: 2 });
    expect(rollout.endReason).toBe('turns');
    expect(rollout.answer).toBeUndefined();
    const parts = invoiceParts(task, rollout);
    expect(parts).toEqual({ gold_share: 0, pass: 0, answered: 0 });
    expect(invoiceBucket(parts)).toBe('no_answer');
    expect(invoiceBucket({ answered: 1, pass: 0, gold_share: 0.5 })).toBe('partial');
    expect(invoiceBucket({ answered: 1, pass: 0, gold_share: 0 })).toBe('wrong');
    expect(invoiceBucket({ answered: 1, pass: 1, gold_share: 1 })).toBe('correct');
  });
});
