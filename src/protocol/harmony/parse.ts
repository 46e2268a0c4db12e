import type { ParsedCall, ParsedTurn, StopReason } from '../types.js';
import { CHANNELS, type Terminator } from './format.js';
import { SPECIAL, TERMINATORS, decodeTokens } from './tokens.js';

/**
 * Parsing what a gpt-oss model wrote after `<|start|>assistant` (docs/reference/FORMATS.md §1.8 and §1.10).
 *
 * One pass, two verdicts: the lenient reading recovers every call it can, and each deviation
 * from the canonical form a strict parser would reject is recorded as a problem. A call with no
 * problems is `ok`, one with problems the lenient reading still executes is `off_form` (the
 * `-format` rubrics penalise these), and one that cannot be executed at all is `unparseable`.
 */

export interface HarmonyParsedMessage {
  /** `assistant`, or whatever role the model wrote after a `<|start|>`. */
  author: string;
  recipient?: string;
  channel?: string;
  /** As written: `<|constrain|>json`, `json`, `code`, ... */
  contentType?: string;
  content: string;
  /** Absent when the tokens ran out first. */
  terminator?: Terminator;
  /** [start, end) into the sampled tokens, from the `<|start|>` (or 0) through the terminator. */
  span: [number, number];
  /** Deviations from the canonical header (each one makes a call off-form). */
  headerProblems: string[];
}

const TERMINATOR_NAME = new Map<number, Terminator>([
  [SPECIAL.end, 'end'],
  [SPECIAL.return, 'return'],
  [SPECIAL.call, 'call'],
]);

const CHANNEL_MARK = '<|channel|>';
const CONSTRAIN_MARK = '<|constrain|>';
const KNOWN_CHANNELS: readonly string[] = CHANNELS;

/**
 * Splits tokens into messages. In sampled tokens the first message's role is implied by the
 * prompt (`<|start|>assistant`); every other message starts at a `<|start|>`. Text between a
 * terminator and the next `<|start|>` is reported as stray.
 */
export function splitMessages(
  tokens: readonly number[],
  options: { afterAssistantHeader?: boolean } = {},
): { messages: HarmonyParsedMessage[]; problems: string[] } {
  const messages: HarmonyParsedMessage[] = [];
  const problems: string[] = [];
  let i = 0;
  // Sampled tokens continue the prompt's `<|start|>assistant`; a full transcript starts with `<|start|>`.
  let first = options.afterAssistantHeader ?? true;
  while (i < tokens.length) {
    let start = i;
    if (!first) {
      while (i < tokens.length && tokens[i] !== SPECIAL.start) i++;
      if (i > start) problems.push(`stray text between messages: ${JSON.stringify(decodeTokens(tokens.slice(start, i)))}`);
      if (i >= tokens.length) break;
      start = i;
      i++; // <|start|>
      if (messages.at(-1)?.terminator === 'return') problems.push('a message follows <|return|>, which ends the turn');
    }
    const headerStart = i;
    while (i < tokens.length && tokens[i] !== SPECIAL.message && tokens[i] !== SPECIAL.start && !TERMINATORS.has(tokens[i]!)) i++;
    let header: string;
    let content: string;
    const headerProblems: string[] = [];
    if (tokens[i] === SPECIAL.message) {
      header = decodeTokens(tokens.slice(headerStart, i));
      const contentStart = ++i;
      while (i < tokens.length && tokens[i] !== SPECIAL.start && !TERMINATORS.has(tokens[i]!)) i++;
      content = decodeTokens(tokens.slice(contentStart, i));
    } else {
      // No <|message|>: the header ends with the channel and any header words right after it.
      [header, content] = splitHeaderlessMessage(decodeTokens(tokens.slice(headerStart, i)));
      headerProblems.push('missing <|message|>');
    }
    const terminator = i < tokens.length ? TERMINATOR_NAME.get(tokens[i]!) : undefined;
    if (terminator !== undefined) i++;
    if (i === headerStart) {
      // Nothing before the next <|start|>: the model opened its turn with a new header.
      problems.push('the turn starts with <|start|> instead of a header');
      first = false;
      continue;
    }
    const parsed = parseHeader(header, first);
    messages.push({
      ...parsed,
      content,
      ...(terminator !== undefined ? { terminator } : {}),
      span: [start, i],
      headerProblems: [...headerProblems, ...parsed.headerProblems],
    });
    first = false;
  }
  return { messages, problems };
}

const HEADER_WORD = /^(to=\S+|(<\|constrain\|>)?json|code)$/;

function splitHeaderlessMessage(text: string): [string, string] {
  const at = text.indexOf(CHANNEL_MARK);
  if (at < 0) return ['', text];
  const rest = text.slice(at + CHANNEL_MARK.length);
  const channelEnd = rest.search(/[\s<]|$/);
  let header = text.slice(0, at + CHANNEL_MARK.length + channelEnd);
  let body = rest.slice(channelEnd);
  for (;;) {
    const m = /^(\s*)(\S+)/.exec(body);
    if (!m || !HEADER_WORD.test(m[2]!)) break;
    header += ` ${m[2]}`;
    body = body.slice(m[0].length);
  }
  return [header, body.replace(/^\s/, '')];
}

interface HeaderFields {
  author: string;
  recipient?: string;
  channel?: string;
  contentType?: string;
  headerProblems: string[];
}

/** The reference header algorithm (docs/reference/FORMATS.md §1.8), recording every repair it needs. */
export function parseHeader(headerIn: string, roleImplied: boolean): HeaderFields {
  const problems: string[] = [];
  let header = headerIn;
  let channel: string | undefined;
  const channelValues: string[] = [];
  let at: number;
  while ((at = header.indexOf(CHANNEL_MARK)) >= 0) {
    const rest = header.slice(at + CHANNEL_MARK.length);
    const end = rest.search(/[\s<]|$/);
    channelValues.push(rest.slice(0, end));
    header = `${header.slice(0, at)} ${rest.slice(end)}`;
  }
  if (channelValues.length > 1) problems.push(`${channelValues.length} <|channel|> markers`);
  const written = channelValues.find((v) => v.length > 0);
  if (written !== undefined) {
    channel = written;
    if (!KNOWN_CHANNELS.includes(written)) {
      const known = KNOWN_CHANNELS.find((c) => written.includes(c));
      problems.push(`channel ${JSON.stringify(written)}${known ? '' : ' is not a Harmony channel'}`);
      if (known) channel = known;
    }
  } else if (channelValues.length > 0) {
    problems.push('empty channel');
  }

  const parts = header.replaceAll(CONSTRAIN_MARK, ` ${CONSTRAIN_MARK}`).split(/\s+/).filter((p) => p.length > 0);
  let author = 'assistant';
  if (!roleImplied) {
    author = parts.shift() ?? '';
    if (author.startsWith('to=')) {
      parts.unshift(author);
      author = '';
    }
    if (author === '') problems.push('no role after <|start|>');
  } else if (parts[0] === 'assistant') {
    parts.shift();
    problems.push('role repeated after <|start|>assistant');
  }

  let recipient: string | undefined;
  let contentType: string | undefined;
  const stray: string[] = [];
  const words = parts.filter((p) => !p.startsWith('to='));
  for (const p of parts) {
    if (!p.startsWith('to=')) continue;
    if (recipient === undefined) recipient = p.slice(3);
    else stray.push(p);
  }
  // The last other word is the content type, unless it is a bare recipient (`functions.x`).
  const last = words.pop();
  if (last !== undefined) {
    if (recipient === undefined && /^functions\.[A-Za-z0-9_.-]+$/.test(last)) {
      recipient = last;
      problems.push('recipient written without to=');
    } else {
      contentType = last;
    }
  }
  stray.push(...words);
  if (stray.length > 0) problems.push(`stray header words ${JSON.stringify(stray)}`);
  return {
    author,
    ...(recipient !== undefined ? { recipient } : {}),
    ...(channel !== undefined ? { channel } : {}),
    ...(contentType !== undefined ? { contentType } : {}),
    headerProblems: problems,
  };
}

/** Recipients that address people, not tools: a message to them is text, never a call. */
const NOT_TOOLS = new Set(['assistant', 'all', 'user']);

interface Resolved {
  name: string;
  /** The lenient reading found a declared tool (or the canonical functions. namespace). */
  resolved: boolean;
  problems: string[];
}

const GLUED_TYPE = /(json|code)$/;

/** Maps what the model wrote after `to=` onto a tool name (docs/reference/FORMATS.md §1.10 rows 4 and 5). */
export function resolveRecipient(recipient: string, declared: ReadonlySet<string>): Resolved {
  const inFunctions = recipient.startsWith('functions.');
  const bare = inFunctions ? recipient.slice('functions.'.length) : recipient;
  const problems = inFunctions ? [] : ['recipient lacks the functions. namespace'];
  if (declared.has(bare)) return { name: bare, resolved: true, problems };
  const unglued = bare.replace(GLUED_TYPE, '');
  if (unglued !== bare && declared.has(unglued)) {
    return { name: unglued, resolved: true, problems: [...problems, `content type glued to the name (${recipient})`] };
  }
  // functions.<unknown>: well formed; the environment answers that the tool does not exist.
  return { name: bare, resolved: inFunctions, problems };
}

export interface HarmonyParseOptions {
  stopReason?: StopReason;
  /** Declared tool names, for resolving bare and glued recipients. */
  declared: ReadonlySet<string>;
}

/** A call message to a ParsedCall with its status. */
function toCall(message: HarmonyParsedMessage, tokens: readonly number[], options: HarmonyParseOptions): ParsedCall {
  const recipient = message.recipient!;
  const { name, resolved, problems: recipientProblems } = resolveRecipient(recipient, options.declared);
  const problems = [...message.headerProblems, ...recipientProblems];
  const fatal: string[] = [];
  if (message.channel === undefined) problems.push('no channel');
  else if (message.channel !== 'commentary') {
    if (resolved) problems.push(`call on the ${message.channel} channel`);
    else fatal.push(`call to undeclared ${recipient} on the ${message.channel} channel`);
  } else if (!resolved) {
    fatal.push(`recipient ${recipient} is not a declared tool`);
  }
  const type = message.contentType?.replace(CONSTRAIN_MARK, '');
  if (type !== undefined && type !== 'json') problems.push(`content type ${JSON.stringify(message.contentType)}`);
  if (message.terminator === 'end' || message.terminator === 'return') problems.push(`call ended by <|${message.terminator}|>`);
  if (message.terminator === undefined && message.span[1] < tokens.length) {
    problems.push('not terminated before the next <|start|>');
  } else if (message.terminator === undefined) {
    // The last message: whether the sampler stopped on a token it left out is the stop reason's call.
    if (options.stopReason === 'length') fatal.push('truncated at the token limit');
    else if (options.stopReason === undefined) problems.push('unterminated (no <|call|>)');
  }
  let args: unknown;
  try {
    args = JSON.parse(message.content);
  } catch {
    args = undefined;
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    fatal.push('arguments are not a JSON object');
    args = message.content;
  }
  const status = fatal.length > 0 ? 'unparseable' : problems.length > 0 ? 'off_form' : 'ok';
  const problem = [...fatal, ...problems].join('; ');
  return {
    name,
    arguments: args,
    status,
    raw: decodeTokens(tokens.slice(...message.span)),
    tokenSpan: message.span,
    ...(problem ? { problem } : {}),
  };
}

export function isCallMessage(message: HarmonyParsedMessage): boolean {
  return message.author === 'assistant' && message.recipient !== undefined && !NOT_TOOLS.has(message.recipient);
}

/** The whole turn: calls with statuses and spans, visible text, reasoning, turn-level problems. */
export function parseHarmonyTurn(tokens: readonly number[], options: HarmonyParseOptions): ParsedTurn & { messages: HarmonyParsedMessage[] } {
  const { messages, problems } = splitMessages(tokens);
  const calls: ParsedCall[] = [];
  const text: string[] = [];
  const reasoning: string[] = [];
  for (const message of messages) {
    if (isCallMessage(message)) {
      calls.push(toCall(message, tokens, options));
      continue;
    }
    if (message.author !== 'assistant') problems.push(`the model wrote a message as ${JSON.stringify(message.author)}`);
    text.push(message.content);
    if (message.channel === 'analysis') reasoning.push(message.content);
  }
  const final = calls.length === 0 && messages.some((m) => m.author === 'assistant' && m.channel === 'final');
  return {
    text: text.join('\n'),
    calls,
    final,
    ...(reasoning.length > 0 ? { reasoning: reasoning.join('\n') } : {}),
    ...(problems.length > 0 ? { problems } : {}),
    messages,
  };
}
