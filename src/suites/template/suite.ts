import { answerSuite } from '../answer-suite.js';
import { openOwnTasks } from '../own-tasks.js';
import type { Suite } from '../types.js';
import { TEMPLATE_AGENTS } from './agents.js';
import { TemplateEnvironment } from './env.js';
import { TEMPLATE_BUCKETS, templateBucket, templateParts } from './reward.js';
import { TEMPLATE_TABLE, templateTasks } from './tasks.js';
import { TEMPLATE_LOOKUP_TOOLS, TEMPLATE_TOOLS } from './tools.js';

/**
 * The template suite: look a key up in a table, then answer. `sleuth new-suite NAME` copies this
 * folder (and test/suites/template/) under a new name; it is in no registry until its line is
 * added to SUITES in src/suites/registry.ts.
 */
export const templateSuite: Suite = answerSuite({
  kind: 'template',
  summary: 'the template: look a country up in a table, then answer',
  // Named rubrics and the parts each weighs (rubric names are global: prefix them with the suite's kind).
  rubrics: { 'template-em': { exact_match: 1 }, 'template-em-lookup': { exact_match: 1, looked_up: 0.2 } },
  defaultRubric: 'template-em',
  rewardParts: templateParts,
  buckets: TEMPLATE_BUCKETS,
  bucket: templateBucket,
  success: (parts) => parts['exact_match'] === 1,
  headline: ['reward', 'exact_match', 'looked_up'],
  tools: TEMPLATE_TOOLS,
  lookupTools: TEMPLATE_LOOKUP_TOOLS,
  agents: TEMPLATE_AGENTS,
  taskSets: false,
  open: async (options = {}) => openOwnTasks(templateSuite, options, templateTasks, (budgets) => new TemplateEnvironment(TEMPLATE_TABLE, budgets)),
});
