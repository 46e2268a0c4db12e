import type { Chunk } from '../../corpus/chunk.js';
import type { Task } from '../task.js';

/** What a loader returns: validated tasks, and the paragraphs the task file itself carries. */
export interface LoadedTasks {
  tasks: Task[];
  /**
   * Chunks found in the task file (HotpotQA contexts, MuSiQue paragraphs), one per distinct id, in
   * first-seen order; empty when the corpus lives elsewhere (Harness-1 corpora, plain JSONL).
   */
  chunks: Chunk[];
  /** Records left out on purpose (e.g. unanswerable MuSiQue questions), with the reason. */
  skipped: { where: string; reason: string }[];
  /** Splits the data assigns itself (a `split` field in plain JSONL), by task id. */
  splits?: Map<string, string>;
}

/** Collects chunks keyed by id, keeping the first copy of each. */
export class ChunkCollector {
  private readonly byId = new Map<string, Chunk>();
  add(chunk: Chunk): void {
    if (!this.byId.has(chunk.id)) this.byId.set(chunk.id, chunk);
  }
  get chunks(): Chunk[] {
    return [...this.byId.values()];
  }
}
