import { z } from 'zod';
import { normalizeWhitespace, type Chunk } from '../../corpus/chunk.js';
import { InputError } from '../../errors.js';
import { finishTasks, type DraftTask } from '../check.js';
import { readTextFile } from '../../corpus/text-file.js';
import { parseRecord, streamRecords, type SourceRecord } from '../records.js';
import type { Fact } from '../task.js';
import { paragraphChunk } from './paragraph.js';
import { ChunkCollector, type LoadedTasks } from './types.js';

/** HotpotQA as released: supporting facts are [title, sentence index] pairs into `context`. */
const OriginalRecord = z.object({
  _id: z.string().min(1),
  question: z.string(),
  answer: z.string(),
  type: z.string().optional(),
  level: z.string().optional(),
  supporting_facts: z.array(z.tuple([z.string(), z.number().int()])),
  context: z.array(z.tuple([z.string(), z.array(z.string())])),
});

/** HotpotQA as IRCoT ships it: whole paragraphs, the supporting ones flagged. */
const IrcotRecord = z.object({
  question_id: z.string().min(1),
  question_text: z.string(),
  answers_objects: z.array(
    z.object({
      spans: z.array(z.string()).optional(),
      number: z.union([z.string(), z.number()]).optional(),
    }),
  ),
  contexts: z.array(z.object({ title: z.string(), paragraph_text: z.string(), is_supporting: z.boolean().optional() })),
});

export interface HotpotQAOptions {
  /**
   * Paragraphs by title, for supporting facts whose paragraph is not in the record's own context
   * (the fullwiki setting). The HotpotQA corpus layout `{title: [sentences]}` gives exactly this.
   */
  corpusByTitle?: Map<string, string[]>;
}

/**
 * Load HotpotQA questions from either layout (told apart per record). Facts are the supporting
 * paragraphs, one fact per paragraph, its chunk the paragraph; answers are the answer strings.
 */
export async function loadHotpotQA(path: string, options: HotpotQAOptions = {}): Promise<LoadedTasks> {
  const collector = new ChunkCollector();
  const drafts: DraftTask[] = [];
  for await (const record of streamRecords(path)) {
    const value = record.value as Record<string, unknown> | null;
    if (value !== null && typeof value === 'object' && 'question_id' in value) drafts.push(fromIrcot(record, collector));
    else if (value !== null && typeof value === 'object' && '_id' in value) drafts.push(fromOriginal(record, collector, options));
    else throw new InputError(`${record.where}: not a HotpotQA record (expected '_id' with 'supporting_facts', or IRCoT's 'question_id' with 'contexts')`);
  }
  return { tasks: finishTasks(drafts), chunks: collector.chunks, skipped: [] };
}

function fromIrcot(record: SourceRecord, collector: ChunkCollector): DraftTask {
  const r = parseRecord(IrcotRecord, record);
  const facts: Fact[] = [];
  for (const context of r.contexts) {
    const chunk = paragraphChunk(context.title, context.paragraph_text);
    collector.add(chunk);
    // IRCoT keeps no sentence ids, so the fact is named by its paragraph's title.
    if (context.is_supporting) facts.push({ text: chunk.title, chunkIds: [chunk.id] });
  }
  const answers = r.answers_objects.flatMap((a) => (a.spans && a.spans.length > 0 ? a.spans : a.number !== undefined && a.number !== '' ? [String(a.number)] : []));
  return {
    where: record.where,
    task: { id: r.question_id, query: r.question_text.trim(), facts, answers, meta: { source: 'hotpotqa' } },
  };
}

function fromOriginal(record: SourceRecord, collector: ChunkCollector, options: HotpotQAOptions): DraftTask {
  const r = parseRecord(OriginalRecord, record);
  const contextByTitle = new Map<string, string[]>();
  for (const [title, sentences] of r.context) {
    contextByTitle.set(title, sentences);
    collector.add(paragraphChunk(title, sentences));
  }
  // One fact per supporting paragraph, in the order the supporting facts name them.
  const sentenceIdsByTitle = new Map<string, number[]>();
  for (const [title, sentenceId] of r.supporting_facts) {
    sentenceIdsByTitle.set(title, [...(sentenceIdsByTitle.get(title) ?? []), sentenceId]);
  }
  const facts: Fact[] = [];
  for (const [title, sentenceIds] of sentenceIdsByTitle) {
    const sentences = contextByTitle.get(title) ?? options.corpusByTitle?.get(title);
    if (sentences === undefined) {
      throw new InputError(`${record.where}: supporting fact title '${title}' is in neither the record's context nor the corpus`);
    }
    const chunk: Chunk = paragraphChunk(title, sentences);
    collector.add(chunk);
    // A few HotpotQA records point past the end of their paragraph; the paragraph still supports the fact.
    const supporting = sentenceIds.filter((i) => i >= 0 && i < sentences.length).map((i) => sentences[i] as string);
    facts.push({ text: supporting.length > 0 ? normalizeWhitespace(supporting.join(' ')) : chunk.title, chunkIds: [chunk.id] });
  }
  const meta: Record<string, unknown> = { source: 'hotpotqa' };
  if (r.type !== undefined) meta['type'] = r.type;
  if (r.level !== undefined) meta['level'] = r.level;
  return { where: record.where, task: { id: r._id, query: r.question.trim(), facts, answers: [r.answer], meta } };
}

/** Read a HotpotQA corpus file in the `{title: [sentences]}` layout into a title map. */
export function readHotpotQACorpusByTitle(path: string): Map<string, string[]> {
  let value: unknown;
  try {
    value = JSON.parse(readTextFile(path));
  } catch (err) {
    throw new InputError(`${path}: not valid JSON (${(err as Error).message})`);
  }
  const parsed = z.record(z.string(), z.array(z.string())).safeParse(value);
  if (!parsed.success) throw new InputError(`${path}: not a HotpotQA corpus (expected one JSON object {title: [sentences]})`);
  return new Map(Object.entries(parsed.data));
}
