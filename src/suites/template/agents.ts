import { call, scriptedAgent, turn, type Plan } from '../../agent/plan.js';
import { noArgument } from '../../agent/registry.js';
import type { Agent } from '../../agent/types.js';
import type { SuiteAgentFactory } from '../types.js';

/**
 * The suite's scripted agents, which bound every metric: `oracle` from above (looks up the task's
 * own key and answers with the value), `baseline` from below (looks up the whole question, which
 * is no key, and answers with whatever it got).
 */

function valueIn(content: string): string {
  try {
    const value = (JSON.parse(content) as { value?: unknown }).value;
    return typeof value === 'string' ? value : '';
  } catch {
    return '';
  }
}

export function templateOracleAgent(spec = 'oracle'): Agent {
  return scriptedAgent(spec, function* (ctx): Plan {
    const [result] = yield turn('Look the key up.', call('lookup', { key: String(ctx.task.meta?.['key'] ?? '') }));
    yield turn('Answer.', call('answer', { answer: result?.result.outcome === 'ok' ? valueIn(result.result.content) : '' }));
  });
}

export function templateBaselineAgent(spec = 'baseline'): Agent {
  return scriptedAgent(spec, function* (ctx): Plan {
    const [result] = yield turn('Look the question up.', call('lookup', { key: ctx.task.query }));
    yield turn('Answer.', call('answer', { answer: result?.result.outcome === 'ok' ? valueIn(result.result.content) : 'unknown' }));
  });
}

/** The suite's agents table (Suite.agents): the one place its agents are registered. */
export const TEMPLATE_AGENTS: ReadonlyMap<string, SuiteAgentFactory> = new Map([
  ['baseline', noArgument(templateBaselineAgent)],
  ['oracle', noArgument(templateOracleAgent)],
]);
