export { BpeTokenizer, BpeDataSchema, trainBpe, type BpeData } from './bpe.js';
export { CompactRenderer, SPECIALS, compactContent, parseCall, renderTools, type CompactOptions } from './renderer.js';
