import type { CallStatus } from '../env/types.js';
import type { ParsedCall } from './types.js';

/**
 * Search-R1 tags for the QA variant (docs/reference/FORMATS.md §3): `<search>query</search>`, results inside
 * `<information>…</information>`, and `<answer>…</answer>`; plus the `<<answer>>` form of the
 * seeds (the answer is the last `<<…>>` block). Pure text functions; the token-level renderer
 * that uses them is src/protocol/qwen3/tags-renderer.ts. Actions map onto the QA environment's
 * tools: `search {query}` and `answer {answer}`.
 */

export type TagAction =
  | { kind: 'search'; query: string; status: CallStatus; span: [number, number]; problem?: string }
  | { kind: 'answer'; answer: string; form: 'tag' | 'double_angle'; status: CallStatus; span: [number, number]; problem?: string }
  | { kind: 'none' };

/** Generation stops after the first of these (the action is complete). */
export const TAG_STOP_STRINGS = ['</search>', '</answer>'] as const;

/**
 * The action in a reply: the first closed `<search>`/`<answer>` block; else an unclosed one at the
 * end (the sampler cut at a stop string it left out: off-form); else the last `<<…>>` block.
 * Spans are [start, end) character offsets into `text`.
 */
export function parseTagAction(text: string): TagAction {
  const closed = /(?<!<)<(search|answer)>(?!>)([\s\S]*?)<\/\1>/.exec(text);
  if (closed) return action(closed[1]!, closed[2]!, [closed.index, closed.index + closed[0].length], 'ok');
  const unclosed = /(?<!<)<(search|answer)>(?!>)((?:(?!<\/?(?:search|answer)>)[\s\S])*)$/.exec(text);
  if (unclosed && unclosed[2]!.trim() !== '') {
    return action(unclosed[1]!, unclosed[2]!, [unclosed.index, text.length], 'off_form', `unclosed <${unclosed[1]}>`);
  }
  const blocks = [...text.matchAll(/<<([\s\S]*?)>>/g)];
  const last = blocks.at(-1);
  if (last) {
    const start = last.index;
    const inner = last[1]!.trim();
    // "<<answer>> Paris" instead of "<<Paris>>" (a failure small models make): the answer follows.
    if (inner.toLowerCase() === 'answer') {
      const after = /^[ \t]*([^\n]*)/.exec(text.slice(start + last[0].length))![1]!.trim();
      if (after !== '') {
        const end = start + last[0].length + text.slice(start + last[0].length).indexOf(after) + after.length;
        return { kind: 'answer', answer: after, form: 'double_angle', status: 'off_form', span: [start, end], problem: 'literal <<answer>> followed by the answer' };
      }
    }
    return { kind: 'answer', answer: inner, form: 'double_angle', status: 'ok', span: [start, start + last[0].length] };
  }
  return { kind: 'none' };
}

function action(tag: string, body: string, span: [number, number], status: CallStatus, problem?: string): TagAction {
  const value = body.trim();
  const extra = problem ? { problem } : {};
  if (tag === 'search') {
    if (value === '') return { kind: 'search', query: '', status: 'unparseable', span, problem: 'empty <search>' };
    return { kind: 'search', query: value, status, span, ...extra };
  }
  return { kind: 'answer', answer: value, form: 'tag', status, span, ...extra };
}

/** The QA environment's call for an action (`search {query}` or `answer {answer}`). */
export function tagActionToCall(text: string, act: TagAction): ParsedCall | undefined {
  if (act.kind === 'none') return undefined;
  const raw = text.slice(...act.span);
  const base = act.kind === 'search' ? { name: 'search', arguments: { query: act.query } } : { name: 'answer', arguments: { answer: act.answer } };
  return { ...base, status: act.status, raw, ...(act.problem ? { problem: act.problem } : {}) };
}

/** The last `<answer>` block of a completion (Search-R1 scores the last one; score the completion only). */
export function lastAnswer(text: string): string | undefined {
  const all = [...text.matchAll(/<answer>([\s\S]*?)<\/answer>/g)];
  return all.at(-1)?.[1]?.trim();
}

/** Cuts a reply after its first complete action: after the first `</search>`, else the first `</answer>`. */
export function cutAtAction(text: string): string {
  for (const stop of TAG_STOP_STRINGS) {
    const at = text.indexOf(stop);
    if (at >= 0) return text.slice(0, at + stop.length);
  }
  return text;
}

/** One retrieved document as Search-R1 shows it: `Doc i(Title: t) text` (i from 1). */
export function docLine(i: number, doc: { title: string; text: string }): string {
  return `Doc ${i}(Title: ${doc.title}) ${doc.text}`;
}

/** Retrieved documents as Search-R1 shows them: `Doc i(Title: t) text` lines inside <information>. */
export function formatInformation(docs: readonly { title: string; text: string }[]): string {
  return `<information>${docs.map((d, i) => `${docLine(i + 1, d)}\n`).join('')}</information>`;
}

/** A document of docLine lines, with the id it is known by. */
export interface ParsedDoc {
  /** The chunk id the result names for it (`chunkIds[i]`), else `title:TITLE`. */
  id: string;
  title: string;
  text: string;
}

/**
 * The documents of a text made of docLine lines, in order, each with its chunk id from the
 * result's `chunkIds` (in the same order), and the text's other lines (a note such as "That was
 * your last search."); undefined when no line is a document. A title ends at the first `) `, so
 * titles may hold parentheses ("Kiss and Tell (1945 film)").
 */
export function parseDocLines(text: string, chunkIds: readonly string[] = []): { docs: ParsedDoc[]; other: string[] } | undefined {
  const docs: ParsedDoc[] = [];
  const other: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^Doc \d+\(Title: (.*?)\) (.*)$/u.exec(line);
    if (m) docs.push({ id: chunkIds[docs.length] ?? `title:${m[1]!}`, title: m[1]!, text: m[2]! });
    else if (line.trim()) other.push(line.trim());
  }
  return docs.length ? { docs, other } : undefined;
}

/** How the model is told to act (appended to the system prompt by the tags renderer). */
export const TAGS_INSTRUCTIONS = [
  'Each reply holds exactly one action.',
  'To search, put a short query between <search> and </search>, then stop; the results come back between <information> and </information>.',
  'When you know the answer, put only the answer (a name, date, number, or yes/no) between <answer> and </answer>.',
].join('\n');
