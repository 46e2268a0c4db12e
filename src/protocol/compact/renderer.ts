import type { ToolResult, ToolSpec } from '../../env/types.js';
import type { ParsedCall, ParsedTurn, Renderer } from '../types.js';
import { BpeTokenizer } from './bpe.js';
import { parseDocLines, type ParsedDoc } from '../tags.js';
import { EpisodeReferences, readSpans, REFERENCE_TOOLS, spanString, takesReferences } from './references.js';

/**
 * The compact chat format of sleuth's small local model: few template tokens, JSON tool calls,
 * and tool results cut down to ids, titles and short snippets, so that a whole search episode
 * fits a context of about 1,000 tokens.
 *
 *   <|system|>SYSTEM
 *   tools:
 *   - bm25_search(query, k?): Keyword search ...<|end|><|user|>QUESTION<|end|><|assistant|>
 *   optional thoughts<|call|>{"name":"bm25_search","arguments":{"query":"..."}}<|end|>
 *   <|tool|>{"hits":[{"id":"a1b2c3d4e5","title":"...","snippet":"..."}]}<|end|><|assistant|>...
 *
 * An assistant turn is free text, then any number of `<|call|>JSON` calls, then `<|end|>` (the
 * stop token). A turn without calls is the final message.
 */
export const SPECIALS = ['<|system|>', '<|user|>', '<|assistant|>', '<|tool|>', '<|call|>', '<|end|>'] as const;

export interface CompactOptions {
  /** Longest string kept in other JSON results and error messages (characters; default 160). */
  maxString?: number;
  /** Longest snippet per search or grep hit (default 80). */
  maxSnippet?: number;
  /** Longest text of a read document (default 400). */
  maxText?: number;
  /**
   * Show chunk ids as short per-episode numbers (1, 2, 3, ... in order of first appearance) and
   * read the model's numbers back as those chunks' ids. A small model can copy `3` where it cannot
   * copy `5d1f9c0a7b`; the environment, the rollout record and the rewards still see the real ids.
   * Renderers with aliases keep episode state: use forEpisode() for each episode.
   */
  aliasIds?: boolean;
  /**
   * Number the question's keywords in the user message and let search and grep calls name them
   * (`q`) and shown hits' titles (`t`) instead of copying text (references.ts). Needs aliasIds for `t`.
   */
  references?: boolean;
  /**
   * With references: show each newly shown hit's candidate spans (at most this many; spans.ts),
   * numbered across the episode, in place of its snippet, and let search, grep and curate name
   * them (`s`). 0 or absent: snippets, no spans.
   */
  spans?: number;
}

/**
 * One episode's short names for chunk ids: alias n is the n-th distinct id shown to the model.
 * A number the episode never showed is passed on as a string, a string as written (the environment
 * reports an unknown id).
 */
export class IdAliases {
  private readonly byId = new Map<string, number>();
  private readonly ids: string[] = [];

  /** The alias of an id, assigning the next number on first sight. */
  alias(id: string): number {
    let n = this.byId.get(id);
    if (n === undefined) {
      this.ids.push(id);
      n = this.ids.length;
      this.byId.set(id, n);
    }
    return n;
  }

  /** How many ids have been shown (aliases run from 1 to this). */
  get size(): number {
    return this.ids.length;
  }

  /** The alias of an id already shown, else undefined. */
  known(id: string): number | undefined {
    return this.byId.get(id);
  }

  /** The chunk id a model-written value names: an alias (number or digit string) or anything else as is. */
  resolve(value: unknown): unknown {
    const n = typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d+\s*$/u.test(value) ? Number(value) : NaN;
    if (!Number.isInteger(n)) return value;
    return this.ids[n - 1] ?? (typeof value === 'number' ? String(n) : value);
  }

  /** Every shown id in a text replaced by its alias (error messages quote ids). */
  replaceIn(text: string): string {
    let out = text;
    for (const [id, n] of this.byId) if (out.includes(id)) out = out.split(id).join(String(n));
    return out;
  }
}

/** Arguments with `id` / `ids` mapped through f (the only fields that name chunks). */
export function mapIdArguments(args: unknown, f: (v: unknown) => unknown): unknown {
  if (!isObject(args)) return args;
  const out: Record<string, unknown> = { ...args };
  if ('id' in out) out.id = f(out.id);
  if (Array.isArray(out.ids)) out.ids = out.ids.map(f);
  return out;
}

export class CompactRenderer implements Renderer {
  readonly name = 'compact';
  readonly stopTokens: number[];
  private readonly ids: Record<(typeof SPECIALS)[number], number>;
  /** This episode's id aliases (when opts.aliasIds). */
  private readonly aliases: IdAliases | undefined;
  /** This episode's question words and shown titles (when opts.references). */
  private readonly refs: EpisodeReferences | undefined;

  constructor(
    readonly tokenizer: BpeTokenizer,
    readonly opts: CompactOptions = {},
  ) {
    this.ids = Object.fromEntries(SPECIALS.map((s) => [s, tokenizer.special(s)])) as CompactRenderer['ids'];
    this.stopTokens = [this.ids['<|end|>']];
    this.aliases = opts.aliasIds ? new IdAliases() : undefined;
    this.refs = opts.references ? new EpisodeReferences() : undefined;
  }

  /** A renderer of the same format with fresh episode state (its own id aliases). */
  forEpisode(): this {
    if (!this.aliases && !this.refs) return this;
    return new (this.constructor as new (t: BpeTokenizer, o: CompactOptions) => this)(this.tokenizer, this.opts);
  }

  prompt(input: { system: string; user: string; tools: ToolSpec[] }): number[] {
    const refs = this.refs;
    // Only an environment with tools that take references gets numbered question words (an invoice email does not).
    if (!refs || !input.tools.some((t) => takesReferences(t.name))) return this.encode(promptText(input));
    refs.setQuestion(input.user);
    const line = refs.wordsLine();
    return this.encode(promptText({ ...input, user: line ? `${input.user}\n${line}` : input.user }));
  }

  /** Text of a whole assistant turn as the model should write it (for SFT data and tokenizer text). */
  renderAssistant(text: string, written: { name: string; arguments: unknown }[]): string {
    const refs = this.refs;
    const calls = refs ? written.map((c) => ({ name: c.name, arguments: refs.compress(c.name, c.arguments) })) : written;
    const aliases = this.aliases;
    if (!aliases) return assistantText(text, calls);
    const shown = (v: unknown) => (typeof v === 'string' ? (aliases.known(v) ?? v) : v);
    return assistantText(text, calls.map((c) => ({ name: c.name, arguments: refs ? idSpans(this.curateByReference(c.name, mapIdArguments(c.arguments, shown)), aliases.size) : mapIdArguments(c.arguments, shown) })));
  }

  /**
   * A curate call written the shortest way the model can: a set that is one run of hit numbers
   * stays one ("1-", "1-3", "4-": idSpans); else the top k of each result list becomes
   * {"top": "k1,k2"}, and exactly the hits holding one shown span {"s": n}; anything else stays
   * hit numbers ("1-3,7"). Measured: writing every top-k set as {"top": k}, even the first
   * search's top 3 that "1-3" writes, left the default demo's SFT model writing neither (test
   * reward 0.00 against 0.59).
   */
  private curateByReference(name: string, args: unknown): unknown {
    if (!this.opts.spans || !this.refs || !this.aliases || name !== REFERENCE_TOOLS.curate || !isObject(args) || !Array.isArray(args.ids) || !args.ids.length || !args.ids.every((v) => typeof v === 'number')) return args;
    const ids = args.ids as number[];
    const { ids: _ids, ...rest } = args;
    if (!spanString([...new Set(ids)].sort((a, b) => a - b), this.aliases.size).includes(',')) return args;
    const top = this.refs.topCovering(ids);
    if (top !== undefined) return { ...rest, top };
    const n = this.refs.spanCovering(ids);
    return n === undefined ? args : { ...rest, s: n };
  }

  /** Text of the tool results and the next assistant header, as toolResults() encodes them. */
  renderResults(results: ToolResult[]): string {
    return resultsText(results, this.opts, this.aliases, this.refs);
  }

  /** One tool result's content as the model sees it (compacted, ids aliased). */
  renderToolContent(content: string): string {
    return compactContent(content, this.opts, this.aliases, this.refs);
  }

  parse(sampled: number[]): ParsedTurn {
    const callId = this.ids['<|call|>'], endId = this.ids['<|end|>'];
    let end = sampled.indexOf(endId);
    if (end < 0) end = sampled.length;
    const callStarts: number[] = [];
    for (let i = 0; i < end; i++) if (sampled[i] === callId) callStarts.push(i);
    const textEnd = callStarts.length ? callStarts[0]! : end;
    const text = this.decodeText(sampled.slice(0, textEnd));
    const calls: ParsedCall[] = [];
    callStarts.forEach((start, j) => {
      const stop = j + 1 < callStarts.length ? callStarts[j + 1]! : end;
      const raw = this.decodeText(sampled.slice(start + 1, stop));
      calls.push({ ...parseCall(raw), raw, tokenSpan: [start, stop] });
    });
    // A model that forgot the <|call|> token but wrote a call object in its text: off-form.
    if (!calls.length) {
      const loose = findLooseCall(text);
      if (loose) calls.push({ ...loose, status: 'off_form', problem: 'call written without <|call|>', tokenSpan: [0, end] });
    }
    const aliases = this.aliases;
    const refs = this.refs;
    if (aliases && refs) {
      // Hit numbers written as a string of spans ("1-3,7"), as references allow, become a list.
      for (const c of calls) {
        const args = c.arguments;
        if (!isObject(args) || (typeof args.ids !== 'string' && typeof args.ids !== 'number')) continue;
        const read = readSpans(args.ids, aliases.size);
        if (read.ok) c.arguments = { ...args, ids: read.numbers };
        else c.argumentError = `ids: ${JSON.stringify(read.item)} is not a shown hit (hits are numbered 1 to ${aliases.size})`;
      }
      // curate {"s": N}: the shown hits holding span N, as hit numbers.
      for (const c of calls) {
        if (c.name !== REFERENCE_TOOLS.curate || c.status === 'unparseable' || c.argumentError) continue;
        const e = refs.expandCurate(c.arguments);
        if (e.ok) c.arguments = e.arguments;
        else c.argumentError = e.error;
      }
    }
    if (aliases) for (const c of calls) c.arguments = mapIdArguments(c.arguments, (v) => aliases.resolve(v));
    if (refs) {
      for (const c of calls) {
        if (c.status === 'unparseable' || c.argumentError) continue;
        const e = refs.expand(c.name, c.arguments);
        if (e.ok) c.arguments = e.arguments;
        else c.argumentError = e.error;
      }
    }
    return { text: text.trim(), calls, final: calls.length === 0 };
  }

  toolResults(sampled: number[], results: { call: ParsedCall; result: ToolResult }[]): number[] {
    const close = sampled[sampled.length - 1] === this.ids['<|end|>'] ? '' : '<|end|>';
    return this.encode(close + this.renderResults(results.map((r) => r.result)));
  }

  encode(text: string): number[] {
    return this.tokenizer.encode(text);
  }

  decode(tokens: number[]): string {
    return this.tokenizer.decode(tokens);
  }

  /** Decoded text without template tokens. */
  private decodeText(tokens: number[]): string {
    return this.tokenizer.decode(tokens.filter((t) => !this.tokenizer.isSpecial(t)));
  }
}

/**
 * Arguments whose `ids` are all hit numbers, with the ids written as a span string ("1-3,7"); a
 * span that reaches the last hit shown is written open, as question words are: "1-" is every hit
 * shown so far, which a model can write without counting the hits.
 */
function idSpans(args: unknown, last: number): unknown {
  if (!isObject(args) || !Array.isArray(args.ids) || !args.ids.length || !args.ids.every((v) => typeof v === 'number')) return args;
  return { ...args, ids: spanString(args.ids as number[], last) };
}

/** Text of an assistant turn: free text, then each call as `<|call|>{"name":..,"arguments":..}`, then <|end|>. */
export function assistantText(text: string, calls: { name: string; arguments: unknown }[]): string {
  return `${text}${calls.map((c) => `<|call|>${JSON.stringify({ name: c.name, arguments: c.arguments })}`).join('')}<|end|>`;
}

/** Text of tool results (compacted; a result's chunk ids number its Search-R1 documents) followed by the header of the next assistant turn. */
export function resultsText(results: readonly (string | Pick<ToolResult, 'content' | 'chunkIds'>)[], opts: CompactOptions = {}, aliases?: IdAliases, refs?: EpisodeReferences): string {
  return results.map((r) => (typeof r === 'string' ? { content: r, chunkIds: [] } : r)).map((r) => `<|tool|>${compactContent(r.content, opts, aliases, refs, r.chunkIds)}<|end|>`).join('') + '<|assistant|>';
}

/** Text of a prompt: system message with the tool list, user message, open assistant turn. */
export function promptText(input: { system: string; user: string; tools: ToolSpec[] }): string {
  return `<|system|>${input.system}${renderTools(input.tools)}<|end|><|user|>${input.user}<|end|><|assistant|>`;
}

/** One line per tool: name(required, optional?): description. */
export function renderTools(tools: ToolSpec[]): string {
  if (!tools.length) return '';
  const lines = tools.map((t) => {
    const props = (t.parameters as { properties?: Record<string, unknown>; required?: string[] }) ?? {};
    const required = new Set(props.required ?? []);
    const args = Object.keys(props.properties ?? {}).map((k) => (required.has(k) ? k : `${k}?`));
    return `- ${t.name}(${args.join(', ')}): ${t.description}`;
  });
  return `\ntools:\n${lines.join('\n')}`;
}

/**
 * Shrink a tool result for the small context. Search and grep results become one line per hit,
 * `id title: snippet`, under a line of the other fields (`seen=12 curated=3`); a read document
 * becomes `id title: text`; snippets and texts are cut (ending in '…'), ids and titles never.
 * Other JSON is kept as JSON with long strings cut and numbers at 3 significant digits; non-JSON
 * content (an error message) is cut to the string limit. With aliases, every chunk id becomes its
 * episode number: ids of hits and read documents get one assigned, ids quoted elsewhere (curate
 * results, error messages) are replaced when they have one.
 */
export function compactContent(content: string, opts: CompactOptions = {}, aliases?: IdAliases, refs?: EpisodeReferences, chunkIds?: readonly string[]): string {
  const maxString = opts.maxString ?? 160;
  const maxSnippet = opts.maxSnippet ?? 80;
  const maxText = opts.maxText ?? 400;
  const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);
  const maxSpans = refs && aliases ? (opts.spans ?? 0) : 0;
  const idOf = (id: unknown, title: unknown, text?: unknown) => {
    if (!aliases) return String(id ?? '');
    const n = aliases.alias(String(id ?? ''));
    refs?.noteTitle(n, String(title ?? ''));
    if (typeof text === 'string') refs?.noteText(n, text);
    return n;
  };
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    const docs = aliases && refs ? parseDocLines(content, chunkIds) : undefined;
    if (docs) return docHitLines(docs, maxSpans, maxSnippet, aliases!, refs!);
    return cut(aliases ? aliases.replaceIn(content) : content, maxString);
  }
  const shrink = (v: unknown): unknown => {
    if (typeof v === 'string') return (aliases?.known(v) ?? cut(v, maxString));
    if (typeof v === 'number') return Number.isInteger(v) ? v : Number(v.toPrecision(3));
    if (Array.isArray(v)) return v.map(shrink);
    if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === 'title' ? x : k === 'id' ? (typeof x === 'string' ? (aliases?.known(x) ?? x) : x) : shrink(x)]));
    return v;
  };
  if (isObject(value) && Array.isArray(value.hits)) {
    const fields = Object.entries(value).filter(([k]) => k !== 'hits').map(([k, x]) => `${k}=${typeof x === 'string' ? x : JSON.stringify(shrink(x))}`);
    // A hit the episode has shown before is one number and its title: the model has read its snippet.
    const line = (h: Record<string, unknown>) => {
      const shown = aliases?.known(String(h.id ?? '')) !== undefined;
      const title = String(h.title ?? '');
      const matched = refs?.matchedWords(title);
      const text = String(h.snippet ?? h.text ?? '');
      const n = idOf(h.id, h.title, h.snippet ?? h.text);
      const head = `${n} ${title}${matched ? ` [${matched}]` : ''}`;
      if (shown) return head;
      // With spans, a new hit shows its candidate spans, numbered, where the snippet was (the snippet when it has none).
      const spans = maxSpans && typeof n === 'number' ? refs!.noteSpans(n, title, text, maxSpans) : '';
      return `${head}: ${spans || cut(text, maxSnippet)}`;
    };
    const lines = value.hits.map((h) => (isObject(h) ? line(h) : JSON.stringify(shrink(h))));
    // The result list in rank order, as curate {"top": k} counts it.
    if (refs && aliases) refs.noteList(value.hits.filter(isObject).map((h) => aliases.alias(String(h.id ?? ''))));
    return [fields.join(' '), ...(lines.length ? lines : ['no hits'])].join('\n');
  }
  if (isObject(value) && typeof value.id === 'string' && typeof value.text === 'string') {
    return `${idOf(value.id, value.title)} ${String(value.title ?? '')}: ${cut(value.text, maxText)}`;
  }
  return JSON.stringify(shrink(value));
}

/**
 * Search-R1 document lines (the QA environment's results) as hit lines, the way search hits are
 * shown: `n Title [matched words]: 7 span; 8 span` for a new hit (its snippet when it has no span),
 * `n Title` for one shown before; the hit's number is its id's alias (parseDocLines). Other lines
 * (the last-search note) follow, as written.
 */
function docHitLines(parsed: { docs: ParsedDoc[]; other: string[] }, maxSpans: number, maxSnippet: number, aliases: IdAliases, refs: EpisodeReferences): string {
  const list: number[] = [];
  const lines = parsed.docs.map((d) => {
    const shown = aliases.known(d.id) !== undefined;
    const n = aliases.alias(d.id);
    list.push(n);
    refs.noteTitle(n, d.title);
    refs.noteText(n, d.text);
    const matched = refs.matchedWords(d.title);
    const head = `${n} ${d.title}${matched ? ` [${matched}]` : ''}`;
    if (shown) return head;
    const spans = maxSpans ? refs.noteSpans(n, d.title, d.text, maxSpans) : '';
    return `${head}: ${spans || (d.text.length > maxSnippet ? `${d.text.slice(0, maxSnippet)}…` : d.text)}`;
  });
  refs.noteList(list);
  return [...lines, ...parsed.other].join('\n');
}

type CallFields = Pick<ParsedCall, 'name' | 'arguments' | 'status' | 'problem'>;

/** Strict: exactly {"name": string, "arguments": object}. Lenient: common near-misses, off_form. */
export function parseCall(raw: string): CallFields {
  const trimmed = raw.trim();
  try {
    const v = JSON.parse(trimmed) as unknown;
    if (isObject(v) && typeof v.name === 'string' && isObject(v.arguments) && Object.keys(v).length === 2) {
      return { name: v.name, arguments: v.arguments, status: 'ok' };
    }
  } catch {
    // fall through to the lenient reading
  }
  const lenient = lenientCall(trimmed);
  if (lenient) return { ...lenient, status: 'off_form', problem: 'call is not exactly {"name": string, "arguments": object}' };
  return { name: '', arguments: null, status: 'unparseable', problem: trimmed ? 'no JSON object with a tool name' : 'empty call' };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The first balanced {...} in s (string-aware), or null. */
function firstObject(s: string): string | null {
  const start = s.indexOf('{');
  if (start < 0) return null;
  let depth = 0, quote: string | null = null;
  for (let i = start; i < s.length; i++) {
    const ch = s[i]!;
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return s.slice(start, i + 1);
  }
  return null;
}

function lenientJson(s: string): unknown {
  for (const attempt of [s, s.replace(/,\s*([}\]])/g, '$1'), s.replace(/'/g, '"').replace(/,\s*([}\]])/g, '$1')]) {
    try {
      return JSON.parse(attempt);
    } catch {
      // next repair
    }
  }
  return undefined;
}

function lenientCall(s: string): { name: string; arguments: unknown } | null {
  const obj = firstObject(s);
  if (!obj) return null;
  const v = lenientJson(obj);
  if (!isObject(v)) return null;
  const name = [v.name, v.tool, v.function].find((x) => typeof x === 'string') as string | undefined;
  if (!name) return null;
  let args = v.arguments ?? v.args ?? v.parameters ?? v.input ?? {};
  if (typeof args === 'string') args = lenientJson(args) ?? args;
  return { name, arguments: args };
}

/** The first call object written in free text ({"name": .., "arguments": ..} or a near miss), if any. */
export function findLooseCall(text: string): { name: string; arguments: unknown; raw: string } | null {
  const obj = firstObject(text);
  if (!obj) return null;
  const c = lenientCall(obj);
  return c ? { ...c, raw: obj } : null;
}
