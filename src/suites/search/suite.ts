import { namedRubrics, type Rubric } from '../../reward/rubric.js';
import type { Suite } from '../types.js';
import { SEARCH_AGENTS } from './agents.js';
import { SEARCH_DEFAULTS, SearchEnvironment } from './env.js';
import { searchParts, searchPartsAtBeta } from './reward.js';
import { openTaskSetSuite } from './task-set.js';
import { SEARCH_LOOKUP_TOOLS, searchToolSpecs } from './tools.js';

/**
 * Named rubrics. The plain reward is F4, with -0.2 when nothing was curated (the `empty` part is 1
 * then and F4 is 0); `-traj` adds +0.2 x trajectory recall to an episode that curated something,
 * so an empty set scores -0.2 flat under it too, as in the seed; `-format` subtracts 0.1 when any
 * call was off-form, an empty set's -0.2 included (-0.3).
 */
const RUBRICS: Rubric[] = namedRubrics('search', {
  f4: { fbeta: 1, empty: -0.2 },
  'f4-traj': { fbeta: 1, empty: -0.2, trajectory_recall_if_curated: 0.2 },
  'f4-format': { fbeta: 1, empty: -0.2, offform: -0.1 },
  'f4-traj-format': { fbeta: 1, empty: -0.2, trajectory_recall_if_curated: 0.2, offform: -0.1 },
  f1: { f1: 1, empty: -0.2 },
});

/** The search suite: six tools over a corpus (tools.ts); an episode returns a curated set of chunks. */
export const searchSuite: Suite = {
  kind: 'search',
  summary: 'the search harness: find and curate the chunks that hold the evidence',
  rubrics: RUBRICS,
  defaultRubric: 'f4',
  rewardParts: searchParts,
  usesBeta: true,
  partsAtBeta: searchPartsAtBeta,
  result: 'curated set',
  // complete (every fact covered), partial, missed (curated but covered nothing), empty (curated nothing).
  buckets: ['complete', 'partial', 'missed', 'empty'],
  bucket(parts, curatedSize) {
    if (curatedSize === 0) return 'empty';
    const recall = parts['recall'] ?? 0;
    return recall >= 1 ? 'complete' : recall > 0 ? 'partial' : 'missed';
  },
  success: (parts) => (parts['recall'] ?? 0) >= 1,
  headline: ['reward', 'f1', 'fbeta', 'recall'],
  tools: searchToolSpecs(SEARCH_DEFAULTS.curateCap, SEARCH_DEFAULTS.defaultK),
  lookupTools: SEARCH_LOOKUP_TOOLS,
  taskSets: true,
  environmentOptions: new Set(['defaultK']),
  agents: SEARCH_AGENTS,
  open: (options = {}) =>
    openTaskSetSuite(searchSuite, options, (backend, o) => new SearchEnvironment(backend, { ...(o.budgets ? { budgets: o.budgets } : {}), ...(o.defaultK !== undefined ? { defaultK: o.defaultK } : {}) })),
};
