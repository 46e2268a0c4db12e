import { embeddedChunks } from '../../corpus/embedded.js';
import type { Chunk } from '../../corpus/chunk.js';
import { SEARCH_TOOL, searchToolSpecs } from '../../suites/search/tools.js';
import { searchSystemPrompt } from '../../suites/search/prompt.js';
import { trainBpe, type BpeTokenizer } from '../../protocol/compact/bpe.js';
import { SPECIALS, assistantText, promptText, resultsText } from '../../protocol/compact/renderer.js';
import { seededRandom } from '../../random.js';

/** The local model's vocabulary: 256 bytes, the compact format's special tokens, and merges. */
export const DEFAULT_VOCAB = 2048;

/**
 * Search-episode transcripts in the compact format, built from corpus chunks (a search on a title,
 * its hits, a read, a curate, a finish), so the tokenizer learns the template, JSON call syntax,
 * chunk ids and result lines as well as prose. Deterministic given the chunks.
 */
export function syntheticTranscripts(chunks: Chunk[], count: number, seed = 0): string[] {
  if (!chunks.length) return [];
  const rng = seededRandom(seed);
  const tools = searchToolSpecs(30, 10);
  const system = searchSystemPrompt(30);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const hits = Array.from({ length: 5 }, () => chunks[Math.floor(rng() * chunks.length)]!);
    const target = hits[0]!;
    const query = target.title;
    const search = JSON.stringify({ hits: hits.map((h) => ({ id: h.id, title: h.title, score: Math.round(rng() * 20000) / 1000, snippet: h.text.slice(0, 240) })), seen: 5 * (i % 3 + 1), curated: i % 4 });
    const read = JSON.stringify({ id: target.id, title: target.title, text: target.text });
    const curate = JSON.stringify({ curated: [target.id], count: 1 });
    out.push(
      promptText({ system, user: `What is known about ${query}?`, tools }) +
        assistantText('', [{ name: SEARCH_TOOL.bm25_search, arguments: { query } }]) + resultsText([search]) +
        assistantText('', [{ name: SEARCH_TOOL.read_document, arguments: { id: target.id } }]) + resultsText([read]) +
        assistantText('', [{ name: SEARCH_TOOL.curate, arguments: { ids: [target.id] } }]) + resultsText([curate]) +
        assistantText('', [{ name: SEARCH_TOOL.finish, arguments: {} }]),
    );
  }
  return out;
}

/**
 * The tokenizer's training text from the embedded corpus: an evenly spaced sample of its chunks
 * (about `maxChars` characters, so training takes seconds) plus synthetic transcripts.
 */
export async function embeddedTokenizerTexts(maxChars = 1_200_000, transcripts = 300): Promise<string[]> {
  const chunks: Chunk[] = [];
  for await (const c of embeddedChunks()) chunks.push(c);
  return tokenizerTexts(chunks, maxChars, transcripts);
}

export function tokenizerTexts(chunks: Chunk[], maxChars = 1_200_000, transcripts = 300): string[] {
  const total = chunks.reduce((s, c) => s + c.title.length + c.text.length + 1, 0);
  const stride = Math.max(1, Math.ceil(total / maxChars));
  const sample = chunks.filter((_, i) => i % stride === 0);
  return [...sample.map((c) => `${c.title}\n${c.text}`), ...syntheticTranscripts(chunks, transcripts)];
}

export function trainLocalTokenizer(texts: string[], vocabSize = DEFAULT_VOCAB): BpeTokenizer {
  return trainBpe(texts, vocabSize, [...SPECIALS]);
}
