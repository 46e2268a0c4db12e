import { namedRubrics, type Rubric } from '../reward/rubric.js';
import type { Suite } from './types.js';

/** A suite's fields as a suite whose episodes end in an answer writes them: its rubrics as named weights. */
export type AnswerSuiteFields = Omit<Suite, 'rubrics' | 'usesBeta' | 'partsAtBeta' | 'result'> & {
  /** Rubric names (global: prefix them with the suite's kind) and the parts each weighs. */
  readonly rubrics: Readonly<Record<string, Rubric['weights']>>;
};

/** A suite whose episodes end in an answer (qa, invoices, the template): it takes no beta. */
export function answerSuite(fields: AnswerSuiteFields): Suite {
  return { ...fields, rubrics: namedRubrics(fields.kind, fields.rubrics), usesBeta: false, result: 'answer' };
}
