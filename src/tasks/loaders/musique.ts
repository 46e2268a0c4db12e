import { z } from 'zod';
import { InputError } from '../../errors.js';
import { finishTasks, type DraftTask } from '../check.js';
import { parseRecord, streamRecords } from '../records.js';
import type { Fact } from '../task.js';
import { paragraphChunk } from './paragraph.js';
import { ChunkCollector, type LoadedTasks } from './types.js';

/** MuSiQue's official layout: 20 paragraphs per question and a decomposition into 2 to 4 hops. */
const MusiqueRecord = z.object({
  id: z.string().min(1),
  question: z.string(),
  answer: z.string(),
  answer_aliases: z.array(z.string()).default([]),
  answerable: z.boolean().default(true),
  paragraphs: z.array(z.object({ idx: z.number().int(), title: z.string(), paragraph_text: z.string() })),
  question_decomposition: z.array(
    z.object({
      question: z.string(),
      answer: z.string(),
      paragraph_support_idx: z.number().int().nullable(),
    }),
  ),
});

/**
 * Load MuSiQue questions. Each hop of `question_decomposition` is one fact, supported by the
 * paragraph its `paragraph_support_idx` names; the last hop's fact carries the final answer.
 * Answers are the answer and its aliases. Unanswerable questions (MuSiQue-Full) have no gold
 * support and are skipped, and reported as skipped. With `decomposition`, each task's meta also
 * keeps the hops as `decomposition: [{question, answer}]`, each question with the earlier hops'
 * answers filled in: what the hop oracle searches (privileged information, never shown to an agent
 * that is scored).
 */
export async function loadMusique(path: string, options: { decomposition?: boolean } = {}): Promise<LoadedTasks> {
  const collector = new ChunkCollector();
  const skipped: LoadedTasks['skipped'] = [];
  const drafts: DraftTask[] = [];
  for await (const record of streamRecords(path)) {
    const r = parseRecord(MusiqueRecord, record);
    const paragraphs = new Map<number, ReturnType<typeof paragraphChunk>>();
    for (const p of r.paragraphs) {
      const chunk = paragraphChunk(p.title, p.paragraph_text);
      paragraphs.set(p.idx, chunk);
      collector.add(chunk);
    }
    if (!r.answerable) {
      skipped.push({ where: record.where, reason: `question '${r.id}' is marked unanswerable` });
      continue;
    }
    const hopAnswers: string[] = [];
    const hops: { question: string; answer: string }[] = [];
    const facts: Fact[] = r.question_decomposition.map((hop, i) => {
      const chunk = hop.paragraph_support_idx === null ? undefined : paragraphs.get(hop.paragraph_support_idx);
      if (chunk === undefined) {
        throw new InputError(`${record.where}: hop ${i + 1} of '${r.id}' points at paragraph ${hop.paragraph_support_idx}, which the record does not have`);
      }
      // Hops refer to earlier answers as #1, #2, ...: spell them out so the fact reads on its own.
      const question = hop.question.replace(/#(\d+)/gu, (m, k: string) => hopAnswers[Number(k) - 1] ?? m);
      hopAnswers.push(hop.answer);
      hops.push({ question: question.trim(), answer: hop.answer });
      return { text: `${question.trim()} ${hop.answer}`, chunkIds: [chunk.id], isFinalAnswer: i === r.question_decomposition.length - 1 };
    });
    drafts.push({
      where: record.where,
      task: {
        id: r.id,
        query: r.question.trim(),
        facts,
        answers: [r.answer, ...r.answer_aliases.filter((a) => a !== r.answer)],
        meta: { source: 'musique', hops: facts.length, ...(options.decomposition ? { decomposition: hops } : {}) },
      },
    });
  }
  return { tasks: finishTasks(drafts), chunks: collector.chunks, skipped };
}
