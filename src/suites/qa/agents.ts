import { call, scriptedAgent, turn, type Plan } from '../../agent/plan.js';
import { noArgument } from '../../agent/registry.js';
import type { Agent, ToolExchange } from '../../agent/types.js';
import type { CorpusReader } from '../../corpus/chunk.js';
import { InputError } from '../../errors.js';
import { goldSearch } from '../search/agents.js';
import { answerAgent, answerSweepAgent, parseAnswerPlan } from './answer-scripts.js';
import type { SuiteAgentContext, SuiteAgentFactory } from '../types.js';

/**
 * The QA suite's scripted agents: `baseline` searches the question and answers with the top hit's
 * title; `oracle` searches the question, then the gold paragraphs it has not seen, and gives the
 * first gold answer.
 */

function titlesIn(results: ToolExchange[]): string[] {
  const titles: string[] = [];
  // QA results are lines `Doc N(Title: T) text`; the lazy match stops at the first `) ` so titles may hold parentheses.
  for (const r of results) for (const m of r.result.content.matchAll(/^Doc \d+\(Title: (.*?)\) /gmu)) titles.push(m[1]!);
  return titles;
}

export function qaBaselineAgent(spec = 'baseline'): Agent {
  return scriptedAgent(spec, function* (ctx): Plan {
    const results = yield turn('Search the question.', call('search', { query: ctx.task.query }));
    yield turn('Answer with the title of the top hit.', call('answer', { answer: titlesIn(results)[0] ?? '' }));
  });
}

export function qaOracleAgent(corpus: CorpusReader, spec = 'oracle'): Agent {
  return scriptedAgent(spec, function* (ctx): Plan {
    const { unseen, note, probe } = goldSearch(corpus, ctx.task);
    note(yield turn('Search the question.', call('search', { query: ctx.task.query })));
    for (const id of unseen().slice(0, 4)) note(yield turn('Search a gold paragraph.', call('search', { query: probe(id) })));
    yield turn('Answer.', call('answer', { answer: ctx.task.answers?.[0] ?? '' }));
  });
}

export const QA_AGENTS: ReadonlyMap<string, SuiteAgentFactory> = new Map<string, SuiteAgentFactory>([
  ['baseline', noArgument(qaBaselineAgent)],
  ['answer', (arg, spec) => answerAgent(parseAnswerPlan(arg, spec), spec)],
  ['answer-sweep', noArgument((spec) => answerSweepAgent(spec))],
  [
    'oracle',
    noArgument((spec, context: SuiteAgentContext) => {
      if (!context.corpus) throw new InputError(`agent '${spec}': the oracle needs the corpus of the task set`);
      return qaOracleAgent(context.corpus, spec);
    }),
  ],
]);
