import { z } from 'zod';
import { isInputError } from '../../errors.js';
import type { Task } from '../../tasks/task.js';
import { parseArguments } from '../../env/args.js';
import { toolSpec } from '../../env/tool-spec.js';
import { EpisodeBase, errorResult } from '../../env/episode-base.js';
import type { SearchBackend } from '../search/env.js';
import type { Budgets, EndReason, Environment, ToolCall, ToolResult, ToolSpec } from '../../env/types.js';
import { environmentSettings } from '../../env/types.js';

/**
 * The QA variant (HotpotQA, MuSiQue), after Search-R1: a search tool that
 * returns the top 3 paragraphs, a budget of 5 searches, then an answer. The answer comes either
 * from the `answer` tool or from a final message holding `<answer>…</answer>` or `<<…>>`.
 */
export interface QaEnvOptions {
  /** Paragraphs per search (default 3). */
  topK?: number;
  /** Searches per episode (default 5). */
  maxSearches?: number;
  /** Longest paragraph text shown, in characters (default 800). */
  textChars?: number;
  budgets?: Budgets;
}

/** The two tools: each declared once, its JSON Schema derived from the schema its calls are checked with. */
const ARGS = {
  search: z.object({ query: z.string().trim().min(1, 'query must not be empty').describe('A short keyword query.') }),
  answer: z.object({ answer: z.string().describe('Only the answer.') }),
};

export const QA_TOOLS: ToolSpec[] = [
  toolSpec('search', 'Search Wikipedia paragraphs by keywords; returns the top few paragraphs with their titles.', ARGS.search),
  toolSpec('answer', 'Give the final answer (a name, date, number, or yes/no) and end the episode.', ARGS.answer),
];

/** The first `<answer>…</answer>`, else the first `<<…>>`, trimmed; undefined when neither is there. */
export function extractAnswer(text: string): string | undefined {
  const tagged = /<answer>([\s\S]*?)<\/answer>/u.exec(text) ?? /<<([\s\S]*?)>>/u.exec(text);
  return tagged ? tagged[1]!.trim() : undefined;
}

export class QaEnvironment implements Environment {
  readonly name = 'qa';
  readonly tools = QA_TOOLS;
  readonly defaultBudgets: Budgets;
  readonly options: Required<Omit<QaEnvOptions, 'budgets'>>;

  constructor(readonly backend: SearchBackend, options: QaEnvOptions = {}) {
    // One turn per search plus one to answer, with room for a few mistakes.
    const own = (o: Required<Omit<QaEnvOptions, 'budgets'>>): Budgets => ({ maxTurns: o.maxSearches + 3, maxTokensPerTurn: 512, contextTokens: 16384 });
    ({ settings: this.options, budgets: this.defaultBudgets } = environmentSettings(options, { topK: 3, maxSearches: 5, textChars: 800 }, own));
  }

  systemPrompt(): string {
    return [
      'You are a research agent. You answer questions by searching Wikipedia.',
      '',
      `Each reply holds exactly one action: search with a short keyword query (you have ${this.options.maxSearches} searches, each returns ${this.options.topK} paragraphs), or, when you know it, give only the answer: a name, date, number, or yes/no, inside <answer></answer> (or with the answer tool).`,
      '',
      'Most questions need two facts: find the first, then search for the second. Never answer before you have searched.',
    ].join('\n');
  }

  userPrompt(task: Task): string {
    return `Question: ${task.query}`;
  }

  start(_task: Task): QaEpisode {
    return new QaEpisode(this);
  }
}

export class QaEpisode extends EpisodeBase {
  searches: string[] = [];

  constructor(private readonly env: QaEnvironment) {
    super();
  }

  finalMessage(text: string): EndReason {
    const answer = extractAnswer(text);
    if (answer !== undefined) this.answer = answer;
    this.ended = answer !== undefined ? 'answer' : 'finish';
    return this.ended;
  }

  protected async handle(call: ToolCall): Promise<ToolResult> {
    if (call.name === 'answer') {
      const args = parseArguments('answer', ARGS.answer, call.arguments);
      if (!args.ok) return errorResult('bad_arguments', args.error);
      this.answerWith(args.value.answer);
      return { outcome: 'ok', content: 'Answer recorded.', chunkIds: [] };
    }
    if (call.name !== 'search') return errorResult('unknown_tool', `no tool named '${call.name}'; tools: ${QA_TOOLS.map((t) => t.name).join(', ')}`);
    const args = parseArguments('search', ARGS.search, call.arguments);
    if (!args.ok) return errorResult('bad_arguments', args.error);
    const { maxSearches, topK, textChars } = this.env.options;
    if (this.searches.length >= maxSearches) return errorResult('search_budget', `all ${maxSearches} searches are used; answer now inside <answer></answer>`);
    const query = args.value.query;
    let hits;
    try {
      hits = await this.env.backend.search(query, topK);
    } catch (err) {
      if (isInputError(err)) return errorResult('bad_query', err.message);
      throw err;
    }
    this.searches.push(query);
    const docs = hits.map((hit, i) => {
      const text = this.env.backend.read(hit.id)?.text ?? hit.snippet;
      return `Doc ${i + 1}(Title: ${hit.title}) ${text.length > textChars ? text.slice(0, textChars - 1) + '…' : text}`;
    });
    let content = docs.length ? docs.join('\n') : 'No results. Try other keywords.';
    if (this.searches.length === maxSearches) content += '\nThat was your last search. Answer now inside <answer></answer>.';
    return { outcome: 'ok', content, chunkIds: hits.map((h) => h.id) };
  }
}
