export { BpeTokenizer, BpeDataSchema, trainBpe, type BpeData } from './bpe.js';
export { CompactRenderer, IdAliases, SPECIALS, assistantText, compactContent, mapIdArguments, parseCall, promptText, renderTools, resultsText, type CompactOptions } from './renderer.js';
export { LOCAL_RESULT_FORMAT, LocalRenderer, localRenderer } from './local.js';
