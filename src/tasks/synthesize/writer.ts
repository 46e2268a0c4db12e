import { namesEntity, type Chain } from './chains.js';

/**
 * A question writer: a language model behind any OpenAI-compatible endpoint, reached through a
 * function the caller makes (the tasks layer knows no agents). It is given a chain's passages and
 * asked for one question; what it returns is checked here, and a slow or failing call is retried a
 * bounded number of times. Every outcome is counted, so a task set says what its writer cost.
 */

/** One chat request: a system and a user message. Returns the model's reply text. */
export type Writer = (request: { system: string; user: string }) => Promise<string>;

export interface WriterOptions {
  write: Writer;
  /** The spec recorded in the set's provenance (`openai:MODEL@URL`, no key). */
  spec: string;
  /** A call that takes longer is abandoned and counted as a timeout. */
  timeoutMs: number;
  /** Further tries after a timeout or an error (not after a bad reply: the model answered). */
  retries: number;
  /** Calls in flight at once. */
  concurrency: number;
}

/** What the writer did, over all chains. */
export interface WriterCounts {
  calls: number;
  retries: number;
  timeouts: number;
  errors: number;
  /** Replies that held no JSON object with a `question` string. */
  junk: number;
  /** Questions that named a bridge entity (so one search would find every hop). */
  namesBridge: number;
  /**
   * Replies with no answer, or an answer the chain's passages do not hold: the question may not be
   * answerable from the gold chunks alone (the answer's presence is the check).
   */
  unanswerable: number;
  /** Chains given up after every try timed out or failed. */
  failed: number;
}

export function emptyWriterCounts(): WriterCounts {
  return { calls: 0, retries: 0, timeouts: 0, errors: 0, junk: 0, namesBridge: 0, unanswerable: 0, failed: 0 };
}

/** Characters of each passage shown to the writer: enough for the facts, bounded for small contexts. */
const PASSAGE_CHARS = 700;

const SYSTEM = [
  'You write one search question that needs every passage below, in order.',
  'The question names the subject of passage 1 and asks for something only the last passage says.',
  'It must not name any of the entities listed as bridges: a reader finds them only by reading the passages.',
  'The answer is words copied from the last passage.',
  'Reply with one JSON object and nothing else: {"question": "...", "answer": "..."}.',
].join(' ');

/** PASSAGE_CHARS of a text, around the first place it names `name` (the link must be in what the writer sees). */
export function excerpt(text: string, name?: string): string {
  const at = name === undefined ? -1 : text.indexOf(name);
  const start = at < 0 ? 0 : Math.max(0, Math.min(at - PASSAGE_CHARS / 2, text.length - PASSAGE_CHARS));
  return text.slice(start, start + PASSAGE_CHARS);
}

/** The request for a chain: its passages, and the bridge names the question must leave out. */
export function writerRequest(chain: Chain, text: (doc: number) => string): { system: string; user: string } {
  const passages = chain.nodes.map((n, i) => `Passage ${i + 1} (${n.title}):\n${excerpt(text(n.doc), chain.nodes[i + 1]?.entity)}`);
  const bridges = chain.nodes.slice(1).map((n) => `"${n.entity}"`);
  return { system: SYSTEM, user: `${passages.join('\n\n')}\n\nBridges (never in the question): ${bridges.join(', ')}` };
}

/** The question of a writer's reply: the first JSON object in it with a non-empty `question`, else undefined. */
export function parseWriterReply(reply: string): { question: string; answer?: string } | undefined {
  const start = reply.indexOf('{');
  const end = reply.lastIndexOf('}');
  if (start < 0 || end <= start) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(reply.slice(start, end + 1));
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const { question, answer } = value as { question?: unknown; answer?: unknown };
  if (typeof question !== 'string') return undefined;
  const q = question.replace(/\s+/gu, ' ').trim();
  if (q.length === 0 || q.length > 600) return undefined;
  return typeof answer === 'string' && answer.trim() ? { question: q, answer: answer.trim() } : { question: q };
}

/** Text compared for an answer's presence: lower case, runs of white space as one space. */
function normalised(text: string): string {
  return text.toLowerCase().replace(/\s+/gu, ' ').trim();
}

/** Whether `answer` is in one of the chain's passages (its title or text, whole, not the excerpt the writer saw). */
export function answerInChain(answer: string, chain: Chain, text: (doc: number) => string): boolean {
  const a = normalised(answer);
  return a.length > 0 && chain.nodes.some((n) => normalised(`${n.title} ${text(n.doc)}`).includes(a));
}

/** Whether a question names any bridge of the chain (case-insensitively, as a whole word). */
export function namesABridge(question: string, chain: Chain): boolean {
  return chain.nodes.slice(1).some((n) => namesEntity(question, n.entity, true));
}

class Timeout extends Error {}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Timeout(`no reply in ${ms} ms`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

/**
 * The writer's question for a chain, or undefined (counted) when every try failed, the reply was
 * junk, the question named a bridge, or its answer is not in the chain's passages.
 */
export async function writeQuestion(chain: Chain, text: (doc: number) => string, options: WriterOptions, counts: WriterCounts): Promise<{ question: string; answer?: string } | undefined> {
  const request = writerRequest(chain, text);
  for (let attempt = 0; ; attempt++) {
    let reply: string;
    try {
      counts.calls += 1;
      reply = await withTimeout(options.write(request), options.timeoutMs);
    } catch (err) {
      if (err instanceof Timeout) counts.timeouts += 1;
      else counts.errors += 1;
      if (attempt < options.retries) {
        counts.retries += 1;
        continue;
      }
      counts.failed += 1;
      return undefined;
    }
    const parsed = parseWriterReply(reply);
    if (!parsed) {
      counts.junk += 1;
      return undefined;
    }
    if (namesABridge(parsed.question, chain)) {
      counts.namesBridge += 1;
      return undefined;
    }
    if (parsed.answer === undefined || !answerInChain(parsed.answer, chain, text)) {
      counts.unanswerable += 1;
      return undefined;
    }
    return parsed;
  }
}
