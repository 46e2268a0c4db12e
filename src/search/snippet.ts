/** A query term's occurrence in a text: UTF-16 span, which term, and its weight (idf). */
export interface TermHit {
  start: number;
  end: number;
  term: number;
  weight: number;
}

/**
 * A window of about `length` characters of `text` around the densest cluster of query terms,
 * weighted by idf (a rare term matters more than a common one; each term counts once per window).
 * Cut at word boundaries, with "…" where text was left out. Without a match: the text's start.
 * `hits` are the query terms' occurrences in text, in order.
 */
export function makeSnippet(text: string, hits: readonly TermHit[], length: number): string {
  if (text.length <= length) return text;

  let bestStart = 0;
  if (hits.length > 0) {
    let bestScore = -1;
    // Slide a window starting at each hit; O(hits^2) in the worst case, hits are few per chunk.
    for (let i = 0; i < hits.length; i++) {
      const seen = new Set<number>();
      let score = 0;
      for (let j = i; j < hits.length && hits[j]!.end - hits[i]!.start <= length; j++) {
        const h = hits[j]!;
        if (!seen.has(h.term)) {
          seen.add(h.term);
          score += h.weight;
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
