import { contentChunkId, normalizeWhitespace, type Chunk } from '../../corpus/chunk.js';

/**
 * A Wikipedia paragraph as a chunk: HotpotQA gives it as a list of sentences (each but the first
 * starting with a space), IRCoT and MuSiQue as one string. Joining the sentences with a space and
 * normalising white space makes the two agree, so one paragraph gets one id in every dataset.
 */
export function paragraphChunk(title: string, text: string | string[]): Chunk {
  const joined = normalizeWhitespace(Array.isArray(text) ? text.join(' ') : text);
  return { id: contentChunkId(title, joined), title: normalizeWhitespace(title), text: joined };
}
