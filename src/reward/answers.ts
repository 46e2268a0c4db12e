/**
 * Answer scoring against gold answers (HotpotQA, MuSiQue), after SQuAD/HotpotQA normalisation:
 * lowercase, drop punctuation, drop the articles a/an/the, collapse white space.
 */

const PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/gu;
/** Answers that are right or wrong as a whole: partial overlap with them means nothing. */
const ALL_OR_NOTHING = new Set(['yes', 'no', 'noanswer']);

export function normalizeAnswer(text: string): string {
  return text
    .toLowerCase()
    .replace(PUNCTUATION, '')
    .replace(/\b(a|an|the)\b/gu, ' ')
    .split(/\s+/u)
    .filter((t) => t !== '')
    .join(' ');
}

function tokens(text: string): string[] {
  const n = normalizeAnswer(text);
  return n === '' ? [] : n.split(' ');
}

/** 1 when the normalised prediction equals any normalised gold answer. */
export function exactMatch(prediction: string, answers: readonly string[]): number {
  const p = normalizeAnswer(prediction);
  return answers.some((a) => normalizeAnswer(a) === p) ? 1 : 0;
}

/**
 * Token-overlap F-beta against the best-matching gold answer (beta 1: the SQuAD token F1).
 * When either side normalises to yes, no or noanswer, only an exact match scores (1).
 */
export function tokenFBeta(prediction: string, answers: readonly string[], beta = 1): number {
  const pred = tokens(prediction);
  let best = 0;
  for (const answer of answers) {
    const gold = tokens(answer);
    const p = pred.join(' ');
    const g = gold.join(' ');
    if (ALL_OR_NOTHING.has(p) || ALL_OR_NOTHING.has(g)) {
      if (p === g) best = Math.max(best, 1);
      continue;
    }
    const counts = new Map<string, number>();
    for (const t of gold) counts.set(t, (counts.get(t) ?? 0) + 1);
    let common = 0;
    for (const t of pred) {
      const left = counts.get(t) ?? 0;
      if (left > 0) {
        common++;
        counts.set(t, left - 1);
      }
    }
    if (common === 0) continue;
    const precision = common / pred.length;
    const recall = common / gold.length;
    const b2 = beta * beta;
    best = Math.max(best, ((1 + b2) * precision * recall) / (b2 * precision + recall));
  }
  return best;
}

export function tokenF1(prediction: string, answers: readonly string[]): number {
  return tokenFBeta(prediction, answers, 1);
}
