import { z } from 'zod';
import { isInputError } from '../../errors.js';
import type { Task } from '../../tasks/task.js';
import { parseArguments } from '../../env/args.js';
import { toolSpec } from '../../env/tool-spec.js';
import { EpisodeBase, errorResult } from '../../env/episode-base.js';
import type { SearchBackend } from '../search/env.js';
import type { Budgets, EndReason, Environment, ToolCall, ToolResult, ToolSpec } from '../../env/types.js';
import { environmentSettings } from '../../env/types.js';
import { docLine } from '../../protocol/tags.js';

/**
 * The QA variant (HotpotQA, MuSiQue), after Search-R1 and the Wikipedia research-agent tutorial: a
 * search tool that returns the top 3 paragraphs, a budget of 5 searches, then an answer. The answer
 * comes either from the `answer` tool or from a final message holding `<answer>…</answer>` or
 * `<<…>>`. A search past the budget ends the episode without an answer (end reason `budget`), as
 * the tutorial's harness does. Closed book (the tutorial's floor): no search tool is offered, and a
 * search call is refused.
 */
export interface QaEnvOptions {
  /** Paragraphs per search (default 3). */
  topK?: number;
  /** Searches per episode (default 5). */
  maxSearches?: number;
  /** Longest paragraph text shown, in characters (default 800). */
  textChars?: number;
  /** No search tool: the model answers from what it knows (default false). */
  closedBook?: boolean;
  budgets?: Budgets;
}

/** The two tools: each declared once, its JSON Schema derived from the schema its calls are checked with. */
const ARGS = {
  search: z.object({ query: z.string().trim().min(1, 'query must not be empty').describe('A short keyword query.') }),
  answer: z.object({ answer: z.string().describe('Only the answer.') }),
};

const ANSWER_TOOL = toolSpec('answer', 'Give the final answer (a name, date, number, or yes/no) and end the episode.', ARGS.answer);

export const QA_TOOLS: ToolSpec[] = [toolSpec('search', 'Search Wikipedia paragraphs by keywords; returns the top few paragraphs with their titles.', ARGS.search), ANSWER_TOOL];

/**
 * The answer in a final message, trimmed; undefined when there is none. Each form is read the way
 * the seed that uses it reads it: the first `<answer>…</answer>` (the tutorial's harness takes
 * `re.search`'s first match), else the last `<<…>>` (the small-models blog: "extracted from the
 * last <<...>> block").
 */
export function extractAnswer(text: string): string | undefined {
  const tagged = /<answer>([\s\S]*?)<\/answer>/u.exec(text);
  if (tagged) return tagged[1]!.trim();
  const angled = [...text.matchAll(/<<([\s\S]*?)>>/gu)].at(-1);
  return angled ? angled[1]!.trim() : undefined;
}

export class QaEnvironment implements Environment {
  readonly name = 'qa';
  readonly tools: ToolSpec[];
  readonly defaultBudgets: Budgets;
  readonly options: Required<Omit<QaEnvOptions, 'budgets'>>;

  constructor(readonly backend: SearchBackend, options: QaEnvOptions = {}) {
    // One turn per search plus one to answer, with room for a few mistakes.
    const own = (o: Required<Omit<QaEnvOptions, 'budgets'>>): Budgets => ({ maxTurns: (o.closedBook ? 0 : o.maxSearches) + 3, maxTokensPerTurn: 512, contextTokens: 16384 });
    ({ settings: this.options, budgets: this.defaultBudgets } = environmentSettings(options, { topK: 3, maxSearches: 5, textChars: 800, closedBook: false }, own));
    this.tools = this.options.closedBook ? [ANSWER_TOOL] : QA_TOOLS;
  }

  systemPrompt(): string {
    if (this.options.closedBook) {
      return ['You answer questions from memory.', '', 'Give only the final answer: a name, date, number, or yes/no, inside <answer></answer> (or with the answer tool).'].join('\n');
    }
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
    const { maxSearches, topK, textChars, closedBook } = this.env.options;
    if (call.name === 'search' && closedBook) return errorResult('closed_book', 'this is a closed-book question: there is no search tool; answer from what you know');
    if (call.name !== 'search') return errorResult('unknown_tool', `no tool named '${call.name}'; tools: ${this.env.tools.map((t) => t.name).join(', ')}`);
    const args = parseArguments('search', ARGS.search, call.arguments);
    if (!args.ok) return errorResult('bad_arguments', args.error);
    if (this.searches.length >= maxSearches) {
      this.ended = 'budget';
      return errorResult('search_budget', `all ${maxSearches} searches were used; the episode ends without an answer`);
    }
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
      return docLine(i + 1, { title: hit.title, text: text.length > textChars ? text.slice(0, textChars - 1) + '…' : text });
    });
    let content = docs.length ? docs.join('\n') : 'No results. Try other keywords.';
    if (this.searches.length === maxSearches) content += '\nThat was your last search. Answer now inside <answer></answer>.';
    return { outcome: 'ok', content, chunkIds: hits.map((h) => h.id) };
  }
}
