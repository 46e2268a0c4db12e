import { toolPromptLines } from './tools.js';

/** The prompts of the search environment; its tool list comes from the tools (tools.ts), which the renderer declares in full. */

export function searchSystemPrompt(curateCap: number): string {
  return [
    'You are a search agent. Another agent will answer the user\'s query from the chunks you return, so your job is to find every chunk that holds evidence for it.',
    '',
    'Tools:',
    ...toolPromptLines({ curateCap }),
    '',
    'Work step by step: search with several different keyword queries, read chunks when the snippet is not enough, curate every chunk that supports part of the answer as soon as you find it, and call finish when the set covers the whole query. Only curated chunks count, and you may run out of turns, so curate early.',
  ].join('\n');
}

export function searchUserPrompt(query: string): string {
  return query;
}
