import type { ToolResult, ToolSpec } from '../../env/types.js';
import type { ParsedCall, ParsedTurn, Renderer } from '../types.js';
import { BpeTokenizer } from './bpe.js';

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
  /** Longest string kept in a tool result (characters); longer ones end with '…'. */
  maxString?: number;
  /** Longest string kept for fields named text/content (a read document). */
  maxText?: number;
}

export class CompactRenderer implements Renderer {
  readonly name = 'compact';
  readonly stopTokens: number[];
  private readonly ids: Record<(typeof SPECIALS)[number], number>;

  constructor(
    readonly tokenizer: BpeTokenizer,
    private readonly opts: CompactOptions = {},
  ) {
    this.ids = Object.fromEntries(SPECIALS.map((s) => [s, tokenizer.special(s)])) as CompactRenderer['ids'];
    this.stopTokens = [this.ids['<|end|>']];
  }

  prompt(input: { system: string; user: string; tools: ToolSpec[] }): number[] {
    return this.encode(`<|system|>${input.system}${renderTools(input.tools)}<|end|><|user|>${input.user}<|end|><|assistant|>`);
  }

  /** Text of a whole assistant turn as the model should write it (for SFT data and tokenizer text). */
  renderAssistant(text: string, calls: { name: string; arguments: unknown }[]): string {
    return `${text}${calls.map((c) => `<|call|>${JSON.stringify({ name: c.name, arguments: c.arguments })}`).join('')}<|end|>`;
  }

  /** Text of the tool results and the next assistant header, as toolResults() encodes them. */
  renderResults(results: ToolResult[]): string {
    return results.map((r) => `<|tool|>${compactContent(r.content, this.opts)}<|end|>`).join('') + '<|assistant|>';
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

const TEXT_FIELDS = new Set(['text', 'content', 'body']);

/**
 * Shrink a tool result for the small context: long strings cut (document text less so), numbers
 * rounded to 3 significant digits, nothing else dropped (ids and titles stay whole). Non-JSON
 * content (a short error) is cut to the string limit.
 */
export function compactContent(content: string, opts: CompactOptions = {}): string {
  const maxString = opts.maxString ?? 120;
  const maxText = opts.maxText ?? 400;
  const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    return cut(content, maxString);
  }
  const shrink = (v: unknown, key: string): unknown => {
    if (typeof v === 'string') return key === 'id' || key === 'title' || key === 'ids' ? v : cut(v, TEXT_FIELDS.has(key) ? maxText : maxString);
    if (typeof v === 'number') return Number.isInteger(v) ? v : Number(v.toPrecision(3));
    if (Array.isArray(v)) return v.map((x) => shrink(x, key));
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shrink(x, k)]));
    return v;
  };
  return JSON.stringify(shrink(value, ''));
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

function findLooseCall(text: string): { name: string; arguments: unknown; raw: string } | null {
  const obj = firstObject(text);
  if (!obj) return null;
  const c = lenientCall(obj);
  return c ? { ...c, raw: obj } : null;
}
