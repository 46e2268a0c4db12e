import { z } from 'zod';

/** One fact the agent must find evidence for; covered when any of its chunks is curated. */
export const FactSchema = z.object({
  text: z.string(),
  chunkIds: z.array(z.string().min(1)).min(1),
  isFinalAnswer: z.boolean().optional(),
});

/** The one task format every loader produces and every environment consumes. */
export const TaskSchema = z.object({
  id: z.string().min(1),
  query: z.string().trim().min(1),
  facts: z.array(FactSchema).min(1),
  answers: z.array(z.string()).optional(),
  meta: z.record(z.string(), z.unknown()).optional(),
});

export type Fact = z.infer<typeof FactSchema>;
export type Task = z.infer<typeof TaskSchema>;
