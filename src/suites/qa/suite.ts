import { InputError } from '../../errors.js';
import { qaRewardParts } from './reward.js';
import { answerSuite } from '../answer-suite.js';
import { openTaskSetSuite } from '../search/task-set.js';
import type { Suite } from '../types.js';
import { QA_AGENTS } from './agents.js';
import { QA_TOOLS, QaEnvironment } from './env.js';

/**
 * The QA suite: search a corpus, then answer; an episode returns an answer, scored against the
 * task's answers. Named rubrics: exact match (Search-R1), token F1, F1 with the 0.1 format floor
 * (ReSearch), and exact match + 0.3 x partial credit. The default, F1 + format floor, is the QA
 * shape the ReSearch paper found most stable across seeds.
 */
export const qaSuite: Suite = answerSuite({
  kind: 'qa',
  summary: 'the QA variant: top-3 search, 5 searches, then an answer',
  rubrics: {
    'qa-em': { exact_match: 1 },
    'qa-f1': { f1: 1 },
    'qa-f1-format': { f1_format: 1 },
    'qa-partial': { exact_match: 1, partial_credit: 0.3 },
  },
  defaultRubric: 'qa-f1-format',
  rewardParts: qaRewardParts,
  // correct (exact match), near miss (answered, token F1 >= 0.5), wrong (answered), no answer.
  buckets: ['correct', 'near_miss', 'wrong', 'no_answer'],
  bucket(parts) {
    if (parts['exact_match'] === 1) return 'correct';
    if (parts['answered'] !== 1) return 'no_answer';
    return (parts['f1'] ?? 0) >= 0.5 ? 'near_miss' : 'wrong';
  },
  success: (parts) => parts['exact_match'] === 1,
  headline: ['reward', 'exact_match', 'f1'],
  tools: QA_TOOLS,
  lookupTools: new Set(['search']),
  taskSets: true,
  environmentOptions: new Set(['defaultK', 'searchBudget', 'closedBook']),
  agents: QA_AGENTS,
  open: (options = {}) =>
    openTaskSetSuite(qaSuite, options, (backend, o) =>
        new QaEnvironment(backend, {
          ...(o.budgets ? { budgets: o.budgets } : {}),
          ...(o.defaultK !== undefined ? { topK: o.defaultK } : {}),
          ...(o.searchBudget !== undefined ? { maxSearches: o.searchBudget } : {}),
          ...(o.closedBook ? { closedBook: true } : {}),
        }), (tasks, where) => {
      const missing = tasks.find((t) => !t.answers?.length);
      if (missing) throw new InputError(`env qa needs tasks with answers; task '${missing.id}' of ${where} has none`);
    }),
});
