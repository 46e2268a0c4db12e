import { performance } from 'node:perf_hooks';
import type { CallStatus, EndReason, EnvEpisode, ToolCall, ToolLogEntry, ToolResult } from './types.js';

/** A tool result with an error: short, so the model can read it and try again. */
export function errorResult(errorKind: string, message: string): ToolResult {
  return { outcome: 'error', content: `Error (${errorKind}): ${message}`, chunkIds: [], errorKind };
}

export function okResult(content: unknown, chunkIds: string[] = []): ToolResult {
  return { outcome: 'ok', content: JSON.stringify(content), chunkIds };
}

/**
 * What every environment's episode shares: the seen set, the trajectory, the curated set and its
 * history per turn, the call log, and the rules for calls that cannot be handled (unparseable,
 * after the end). Subclasses implement handle() for their tools.
 */
export abstract class EpisodeBase implements EnvEpisode {
  ended: EndReason | undefined;
  answer: string | undefined;
  readonly seen = new Set<string>();
  readonly trajectory: string[] = [];
  readonly read: string[] = [];
  readonly log: ToolLogEntry[] = [];
  readonly curatedHistory: string[][] = [];
  /** Insertion-ordered, so the curated list reads in the order the model chose. */
  protected readonly curatedSet = new Set<string>();
  private turn = 0;

  get curated(): readonly string[] {
    return [...this.curatedSet];
  }

  /** End the episode with `text`, trimmed, as its answer (a final message or an answer tool). */
  protected answerWith(text: string): EndReason {
    this.answer = text.trim();
    this.ended = 'answer';
    return this.ended;
  }

  protected abstract handle(call: ToolCall): Promise<ToolResult>;
  abstract finalMessage(text: string): EndReason;

  async call(call: ToolCall, status: CallStatus = 'ok', turn: number = this.turn): Promise<ToolResult> {
    const started = performance.now();
    let result: ToolResult;
    if (status === 'unparseable') result = errorResult('unparseable', `could not read the tool call '${call.name || '?'}'; write one well-formed call per tool use`);
    else if (call.argumentError !== undefined) result = errorResult('bad_reference', call.argumentError);
    else if (this.ended) result = errorResult('episode_over', `the episode already ended (${this.ended}); '${call.name}' was not run`);
    else result = await this.handle(call);
    this.noteSeen(result.chunkIds);
    const entry: ToolLogEntry = { turn, name: call.name, arguments: call.arguments, status, outcome: result.outcome, ms: performance.now() - started };
    if (result.errorKind) entry.errorKind = result.errorKind;
    this.log.push(entry);
    return result;
  }

  endTurn(): void {
    this.curatedHistory.push([...this.curatedSet]);
    this.turn += 1;
  }

  private noteSeen(ids: string[]): void {
    for (const id of ids) {
      if (this.seen.has(id)) continue;
      this.seen.add(id);
      this.trajectory.push(id);
    }
  }
}
