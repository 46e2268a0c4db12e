import type { Analyzer } from './analyzer.js';

/**
 * A window of about `length` characters of `text` around the densest cluster of query terms,
 * weighted by idf (a rare term matters more than a common one; each term counts once per window).
 * Cut at word boundaries, with "…" where text was left out. Without a match: the text's start.
 */
export function makeSnippet(text: string, analyzer: Analyzer, weights: ReadonlyMap<string, number>, length: number): string {
  if (text.length <= length) return text;
  const hits: { start: number; end: number; term: string }[] = [];
  analyzer.forEachTerm(text, (term, start, end) => {
    if (weights.has(term)) hits.push({ term, start, end });
  });

  let bestStart = 0;
  if (hits.length > 0) {
    let bestScore = -1;
    // Slide a window starting at each hit; O(hits^2) in the worst case, hits are few per chunk.
    for (let i = 0; i < hits.length; i++) {
      const seen = new Set<string>();
      let score = 0;
      for (let j = i; j < hits.length && hits[j]!.end - hits[i]!.start <= length; j++) {
        const h = hits[j]!;
        if (!seen.has(h.term)) {
          seen.add(h.term);
          score += weights.get(h.term)!;
        }
      }
      if (score > bestScore) {
        bestScore = score;
        bestStart = hits[i]!.start;
      }
    }
    // Lead in with a little context before the first matched word.
    bestStart = Math.max(0, bestStart - Math.floor(length / 5));
  }
  let start = Math.min(bestStart, text.length - length);
  let end = start + length;
  // Move the cut points back to word boundaries (never past the window).
  if (start > 0) {
    const space = text.indexOf(' ', start);
    if (space !== -1 && space < start + 30) start = space + 1;
  }
  if (end < text.length) {
    const space = text.lastIndexOf(' ', end);
    if (space > start + length / 2) end = space;
  }
  return `${start > 0 ? '…' : ''}${text.slice(start, end).trim()}${end < text.length ? '…' : ''}`;
}
