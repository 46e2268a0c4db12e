/**
 * The Snowball English ("Porter2") stemmer, written from the published description of the
 * algorithm (snowballstem.org/algorithms/english/stemmer.html), with its R1 prefix exceptions
 * gener-, commun-, arsen-. Input is one lower-case word; output is its stem.
 */

const VOWELS = new Set(['a', 'e', 'i', 'o', 'u', 'y']);
const DOUBLES = ['bb', 'dd', 'ff', 'gg', 'mm', 'nn', 'pp', 'rr', 'tt'];
const LI_ENDINGS = new Set(['c', 'd', 'e', 'g', 'h', 'k', 'm', 'n', 'r', 't']);

/**
 * Words whose stem is fixed by the algorithm rather than derived. A Map, not an object literal: an
 * object's lookup also finds Object.prototype's members, so 'constructor' or 'tostring' would
 * "stem" to a function.
 */
const EXCEPTIONS1 = new Map<string, string>(Object.entries({
  skis: 'ski', skies: 'sky', dying: 'die', lying: 'lie', tying: 'tie',
  idly: 'idl', gently: 'gentl', ugly: 'ugli', early: 'earli', only: 'onli', singly: 'singl',
  sky: 'sky', news: 'news', howe: 'howe', atlas: 'atlas', cosmos: 'cosmos', bias: 'bias', andes: 'andes',
}));
/** Words left alone once step 1a has run. */
const EXCEPTIONS2 = new Set(['inning', 'outing', 'canning', 'herring', 'earring', 'proceed', 'exceed', 'succeed']);

const isVowel = (c: string | undefined): boolean => c !== undefined && VOWELS.has(c);

/** Start of the region after the first non-vowel that follows a vowel, from `from` (or w.length). */
function regionAfter(w: string, from: number): number {
  for (let i = from + 1; i < w.length; i++) if (!isVowel(w[i]) && isVowel(w[i - 1])) return i + 1;
  return w.length;
}

function r1Start(w: string): number {
  for (const prefix of ['gener', 'commun', 'arsen']) if (w.startsWith(prefix)) return prefix.length;
  return regionAfter(w, 0);
}

/** A short syllable ending at index i (inclusive): see the algorithm's definition. */
function endsWithShortSyllable(w: string, end: number): boolean {
  const i = end - 1; // last letter of the syllable
  if (i === 1) return isVowel(w[0]) && !isVowel(w[1]);
  if (i < 2) return false;
  const c = w[i]!;
  return !isVowel(w[i - 2]) && isVowel(w[i - 1]) && !isVowel(c) && c !== 'w' && c !== 'x' && c !== 'Y';
}

function hasVowel(s: string): boolean {
  for (const c of s) if (isVowel(c)) return true;
  return false;
}

/** The longest of `suffixes` that w ends with, or undefined. Lists are ordered longest first. */
function longestSuffix(w: string, suffixes: readonly string[]): string | undefined {
  for (const s of suffixes) if (w.endsWith(s)) return s;
  return undefined;
}

const STEP1B = ['eedly', 'ingly', 'edly', 'eed', 'ing', 'ed'];
const STEP2: [string, string][] = [
  ['ization', 'ize'], ['ational', 'ate'], ['fulness', 'ful'], ['ousness', 'ous'], ['iveness', 'ive'],
  ['tional', 'tion'], ['biliti', 'ble'], ['lessli', 'less'], ['entli', 'ent'], ['ation', 'ate'],
  ['alism', 'al'], ['aliti', 'al'], ['ousli', 'ous'], ['iviti', 'ive'], ['fulli', 'ful'],
  ['enci', 'ence'], ['anci', 'ance'], ['abli', 'able'], ['izer', 'ize'], ['ator', 'ate'],
  ['alli', 'al'], ['bli', 'ble'], ['ogi', 'og'], ['li', ''],
];
const STEP2_SUFFIXES = STEP2.map(([s]) => s);
const STEP3: [string, string][] = [
  ['ational', 'ate'], ['tional', 'tion'], ['alize', 'al'], ['icate', 'ic'], ['iciti', 'ic'],
  ['ative', ''], ['ical', 'ic'], ['ness', ''], ['ful', ''],
];
const STEP3_SUFFIXES = STEP3.map(([s]) => s);
const STEP4 = ['ement', 'ance', 'ence', 'able', 'ible', 'ment', 'ant', 'ent', 'ism', 'ate', 'iti', 'ous', 'ive', 'ize', 'ion', 'al', 'er', 'ic'];

export function porter2(word: string): string {
  if (word.length <= 2) return word;
  const fixed = EXCEPTIONS1.get(word);
  if (fixed !== undefined) return fixed;

  let w = word.startsWith("'") ? word.slice(1) : word;
  // Mark consonant-y (initial, or after a vowel) as Y so it is not taken for a vowel.
  if (w.startsWith('y')) w = 'Y' + w.slice(1);
  for (let i = 1; i < w.length; i++) if (w[i] === 'y' && isVowel(w[i - 1])) w = w.slice(0, i) + 'Y' + w.slice(i + 1);

  const r1 = r1Start(w);
  const r2 = regionAfter(w, r1);

  // Step 0: possessive apostrophes.
  const s0 = longestSuffix(w, ["'s'", "'s", "'"]);
  if (s0) w = w.slice(0, -s0.length);

  // Step 1a: plurals.
  if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('ied') || w.endsWith('ies')) w = w.slice(0, -3) + (w.length > 4 ? 'i' : 'ie');
  else if (w.endsWith('us') || w.endsWith('ss')) {
    // unchanged
  } else if (w.endsWith('s') && hasVowel(w.slice(0, -2))) w = w.slice(0, -1);

  if (EXCEPTIONS2.has(w)) return w;

  // Step 1b: -ed, -ing and friends.
  const s1b = longestSuffix(w, STEP1B);
  if (s1b === 'eed' || s1b === 'eedly') {
    if (w.length - s1b.length >= r1) w = w.slice(0, -s1b.length) + 'ee';
  } else if (s1b) {
    const stem = w.slice(0, -s1b.length);
    if (hasVowel(stem)) {
      w = stem;
      if (w.endsWith('at') || w.endsWith('bl') || w.endsWith('iz')) w += 'e';
      else if (DOUBLES.some((d) => w.endsWith(d))) w = w.slice(0, -1);
      else if (r1 >= w.length && endsWithShortSyllable(w, w.length)) w += 'e';
    }
  }

  // Step 1c: -y to -i after a consonant that is not the first letter.
  if (w.length > 2 && (w.endsWith('y') || w.endsWith('Y')) && !isVowel(w[w.length - 2])) w = w.slice(0, -1) + 'i';

  // Step 2: in R1.
  const s2 = longestSuffix(w, STEP2_SUFFIXES);
  if (s2 && w.length - s2.length >= r1) {
    const stem = w.slice(0, -s2.length);
    if (s2 === 'ogi') {
      if (stem.endsWith('l')) w = stem + 'og';
    } else if (s2 === 'li') {
      if (LI_ENDINGS.has(stem[stem.length - 1] ?? '')) w = stem;
    } else {
      w = stem + STEP2.find(([s]) => s === s2)![1];
    }
  }

  // Step 3: in R1 (ative only in R2).
  const s3 = longestSuffix(w, STEP3_SUFFIXES);
  if (s3 && w.length - s3.length >= r1) {
    if (s3 !== 'ative' || w.length - s3.length >= r2) w = w.slice(0, -s3.length) + STEP3.find(([s]) => s === s3)![1];
  }

  // Step 4: in R2 (ion only after s or t).
  const s4 = longestSuffix(w, STEP4);
  if (s4 && w.length - s4.length >= r2) {
    const stem = w.slice(0, -s4.length);
    if (s4 !== 'ion' || stem.endsWith('s') || stem.endsWith('t')) w = stem;
  }

  // Step 5: final e and double l.
  if (w.endsWith('e')) {
    const at = w.length - 1;
    if (at >= r2 || (at >= r1 && !endsWithShortSyllable(w, at))) w = w.slice(0, -1);
  } else if (w.endsWith('l') && w.length - 1 >= r2 && w[w.length - 2] === 'l') {
    w = w.slice(0, -1);
  }

  return w.replace(/Y/g, 'y');
}
