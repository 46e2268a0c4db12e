import type { SearchIndex } from '../../search/index.js';
import { seededKey } from '../split.js';

/**
 * Chains of chunks linked by name, found in an index with no questions: chunk A's text names the
 * entity that chunk B is about (B's title), so a question that starts from A and asks about B needs
 * two searches when the entity is left out of it. The entity is the bridge; a chain of h chunks
 * has h - 1 of them.
 */

/** One chunk of a chain: its document number in the index, id, title, and the entity it is about. */
export interface ChainNode {
  doc: number;
  id: string;
  title: string;
  entity: string;
}

/** Hops in order; nodes[i].entity for i >= 1 are the bridges (named in nodes[i - 1]'s text). */
export interface Chain {
  nodes: ChainNode[];
}

/**
 * The entity a title is about: a man page's `name(section)` ("ls(1) DESCRIPTION" is about "ls(1)",
 * the form other pages name it in), else the title without a trailing parenthetical
 * ("James Scott (actor)" is about "James Scott").
 */
export function entityOf(title: string): string {
  const t = title.trim();
  const man = /^(\S+\(\w+\))(?:\s|$)/u.exec(t);
  if (man) return man[1]!;
  return t.replace(/\s*\([^()]*\)$/u, '').trim();
}

/** Whether `text` names `name` as a whole word (not inside a longer word); case-sensitive unless told. */
export function namesEntity(text: string, name: string, ignoreCase = false): boolean {
  const hay = ignoreCase ? text.toLowerCase() : text;
  const needle = ignoreCase ? name.toLowerCase() : name;
  const word = /[\p{L}\p{N}_]/u;
  for (let at = hay.indexOf(needle); at >= 0; at = hay.indexOf(needle, at + 1)) {
    const before = at > 0 ? hay[at - 1]! : ' ';
    const after = at + needle.length < hay.length ? hay[at + needle.length]! : ' ';
    // A boundary is only needed where the name itself starts or ends with a word character.
    if ((!word.test(needle[0]!) || !word.test(before)) && (!word.test(needle[needle.length - 1]!) || !word.test(after))) return true;
  }
  return false;
}

export interface EntityTable {
  /** The chunks about each entity, in index order. */
  docs: Map<string, number[]>;
  /** Entities by their rarest analyzed term: a text can only name an entity whose rarest term it holds. */
  byRarestTerm: Map<string, string[]>;
  /** Entity of each document. */
  entityOfDoc: string[];
}

/**
 * Every entity a chain may bridge through. An entity whose rarest term is in more than `maxDf`
 * chunks ("Introduction", "Early life") is too common to lead anywhere in particular, and one with
 * fewer than 3 characters or no letter is no name: both are left out.
 */
export function entityTable(index: SearchIndex, maxDf: number): EntityTable {
  const docs = new Map<string, number[]>();
  const entityOfDoc: string[] = [];
  for (let doc = 0; doc < index.size; doc++) {
    const entity = entityOf(index.store.title(doc));
    entityOfDoc.push(entity);
    const list = docs.get(entity);
    if (list) list.push(doc);
    else docs.set(entity, [doc]);
  }
  const byRarestTerm = new Map<string, string[]>();
  for (const entity of docs.keys()) {
    if (entity.length < 3 || !/\p{L}/u.test(entity)) continue;
    let rarest: { term: string; df: number } | undefined;
    for (const term of index.analyzer.terms(entity)) {
      const id = index.scorer.termId(term);
      const df = id < 0 ? 0 : index.scorer.df(id);
      if (df > 0 && (!rarest || df < rarest.df)) rarest = { term, df };
    }
    if (!rarest || rarest.df > maxDf) continue;
    const list = byRarestTerm.get(rarest.term);
    if (list) list.push(entity);
    else byRarestTerm.set(rarest.term, [entity]);
  }
  return { docs, byRarestTerm, entityOfDoc };
}

/** Entities a chunk's text names (other than its own), in the order it first names them. */
export function mentions(index: SearchIndex, table: EntityTable, doc: number): string[] {
  const text = index.store.text(doc);
  const own = table.entityOfDoc[doc];
  const found: string[] = [];
  const tried = new Set<string>();
  index.analyzer.forEachTerm(text, (term) => {
    for (const entity of table.byRarestTerm.get(term) ?? []) {
      if (tried.has(entity) || entity === own) continue;
      tried.add(entity);
      if (namesEntity(text, entity)) found.push(entity);
    }
  });
  return found;
}

export interface ChainSearch {
  /** Hops of each chain, by chain number (chain i aims at hops[i % hops.length]; one that stops short keeps a shorter count of the list). */
  hops: readonly number[];
  seed: string;
  maxDf: number;
  /** Chunk ids no chain may use (held-out questions' gold, when synthesizing over their pool). */
  exclude?: ReadonlySet<string>;
}

/**
 * Chains in a seeded order, each chunk and each bridge entity used once across all of them (so
 * that no two tasks share a gold chunk or a bridge: the splits cannot leak). A chain starts at a
 * chunk, follows a name its text gives to a chunk about that entity, and so on; the next name and
 * which of the entity's chunks is taken are seeded choices. Lazy: callers stop when they have enough.
 */
export function* findChains(index: SearchIndex, options: ChainSearch): Generator<Chain> {
  const table = entityTable(index, options.maxDf);
  const keys = Array.from({ length: index.size }, (_, doc) => seededKey(options.seed, index.store.id(doc)));
  const starts = Array.from({ length: index.size }, (_, doc) => doc).sort((a, b) => cmp(keys[a]!, keys[b]!));
  const usedDocs = new Set<number>();
  for (const id of options.exclude ?? []) if (index.store.docOf(id) >= 0) usedDocs.add(index.store.docOf(id));
  const usedEntities = new Set<string>();
  const node = (doc: number): ChainNode => ({ doc, id: index.store.id(doc), title: index.store.title(doc), entity: table.entityOfDoc[doc]! });
  let made = 0;
  for (const start of starts) {
    if (usedDocs.has(start)) continue;
    const hops = options.hops[made % options.hops.length]!;
    const nodes = [node(start)];
    const entities = new Set([nodes[0]!.entity]);
    while (nodes.length < hops) {
      const last = nodes[nodes.length - 1]!;
      const next = mentions(index, table, last.doc).filter((e) => !entities.has(e) && !usedEntities.has(e) && !nodes.some((n) => namesEntity(n.entity, e, true) || namesEntity(e, n.entity, true)));
      // A chunk that names an earlier hop's entity back would be found by the question itself.
      const fresh = (d: number) => !usedDocs.has(d) && !nodes.some((n) => n.doc === d || namesEntity(index.store.text(d), n.entity, true));
      const choices = next.flatMap((e) => table.docs.get(e)!.filter(fresh));
      if (choices.length === 0) break;
      const pick = choices.sort((a, b) => cmp(seededKey(`${options.seed}:${last.id}`, String(a)), seededKey(`${options.seed}:${last.id}`, String(b))))[0]!;
      nodes.push(node(pick));
      entities.add(nodes[nodes.length - 1]!.entity);
    }
    // A chain that stops short of its hop count is kept at the count it reached, if that is one asked for.
    if (!options.hops.includes(nodes.length)) continue;
    for (const n of nodes) usedDocs.add(n.doc);
    for (const n of nodes.slice(1)) usedEntities.add(n.entity);
    made += 1;
    yield { nodes };
  }
}

/**
 * Up to `n` words of a chunk that pick it out, as written: its terms ranked by tf x idf, leaving out
 * those in `exclude` (the bridges' words: a question must not name them), terms in fewer than
 * `minDf` chunks (an id or a code that alone would find the chunk) or more than `maxDf`, short ones
 * and numbers.
 */
export function keywords(index: SearchIndex, doc: number, exclude: ReadonlySet<string>, n: number, minDf = 2, maxDf = Infinity): string[] {
  const text = index.store.text(doc);
  const stats = new Map<string, { word: string; tf: number; idf: number }>();
  index.analyzer.forEachTerm(text, (term, start, end) => {
    const seen = stats.get(term);
    if (seen) return void (seen.tf += 1);
    if (exclude.has(term) || term.length < 3 || /^\d+$/u.test(term)) return;
    const id = index.scorer.termId(term);
    if (id < 0 || index.scorer.df(id) < minDf || index.scorer.df(id) > maxDf) return;
    stats.set(term, { word: text.slice(start, end), tf: 1, idf: index.scorer.idf(id) });
  });
  return [...stats.values()]
    .sort((a, b) => b.tf * b.idf - a.tf * a.idf || cmp(a.word, b.word))
    .slice(0, n)
    .map((s) => s.word);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
