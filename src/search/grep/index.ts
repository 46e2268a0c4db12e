/**
 * grep_corpus: Python-syntax regular expressions over the corpus, run by RE2 (linear time), with a
 * word-over-blocks prefilter so that a pattern with a literal scans only the blocks that can match.
 *
 *   const b = new GrepIndexBuilder(); b.add(0, text0); ...; b.write(indexDir);   // at index time
 *   const gi = loadGrepIndex(indexDir);                                          // at load time
 *   grep(store, gi, '(?i)corliss\\s+archer', { k: 10 });                         // per call
 *
 * Only chunk texts are searched, not titles (titles are returned with each hit).
 */
export { GrepIndexBuilder, DEFAULT_BLOCK_SIZE, type GrepBuilderOptions } from './builder.js';
export { GrepIndex, loadGrepIndex, touchPages, type DocSet } from './word-index.js';
export { grep, compilePattern, snippetAround, DEFAULT_K, DEFAULT_TIME_LIMIT_MS, DEFAULT_SNIPPET_CHARS, type CompiledPattern } from './scan.js';
export { translatePythonRegex, type Translation } from './translate.js';
export { parsePythonRegex } from './parse.js';
export { requiredLiterals, type Query } from './literals.js';
export { grepLatency, type GrepLatency } from './timing.js';
