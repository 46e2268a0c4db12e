export { scoreSet, fBeta, factRecall, supportingIds, searchParts, offFormCalls, allCalls, type SetScores } from './search.js';
export { normalizeAnswer, exactMatch, tokenF1, tokenFBeta, qaParts, FORMAT_FLOOR } from './qa.js';
export { betaAt, BetaScheduleSchema, type BetaSchedule } from './schedule.js';
export { scoreRollout, resolveRubric, parseRubric, RUBRICS, DEFAULT_RUBRIC, DEFAULT_QA_RUBRIC, RubricSchema, type Rubric, type RubricInput } from './rubric.js';
