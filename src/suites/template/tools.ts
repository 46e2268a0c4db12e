import { z } from 'zod';
import { toolSpec } from '../../env/tool-spec.js';
import type { ToolSpec } from '../../env/types.js';

/**
 * The suite's tool table, each tool declared once: the zod schema its calls are checked with is the
 * source of the JSON Schema models are shown, of the prompt's tool list and of `sleuth play`'s help.
 */
export const TEMPLATE_ARGS = {
  lookup: z.object({ key: z.string().trim().min(1, 'key must not be empty').describe('A country, as the question names it.') }),
  answer: z.object({ answer: z.string().describe('Only the answer.') }),
};

export const TEMPLATE_TOOLS: ToolSpec[] = [
  toolSpec('lookup', "Look a country up in the table; returns its capital, or an error when the table has no such row.", TEMPLATE_ARGS.lookup),
  toolSpec('answer', 'Give the final answer and end the episode.', TEMPLATE_ARGS.answer),
];

/** The tools that look something up (SFT keeps only attempts that used one). */
export const TEMPLATE_LOOKUP_TOOLS: ReadonlySet<string> = new Set(['lookup']);
