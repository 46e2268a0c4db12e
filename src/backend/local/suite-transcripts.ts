import { runEpisode } from '../../agent/episode.js';
import type { Rollout } from '../../agent/rollout.js';
import type { Environment } from '../../env/types.js';
import { InputError } from '../../errors.js';
import { assistantText, promptText, resultsText } from '../../protocol/compact/renderer.js';
import { suiteAgent, suiteOf, SUITE_KINDS } from '../../suites/registry.js';
import type { Task } from '../../tasks/task.js';

/** The scripted agent whose episodes teach the tokenizer a suite's format: every suite has one. */
export const TRANSCRIPT_AGENT = 'oracle';

/**
 * Transcripts of every registered suite, for the tokenizer and pretraining of a newly built base
 * model: each suite's `oracle` agent on `perSuite` of its training tasks (evenly spaced), written
 * in the compact format as text. So a suite added to the registry is in the vocabulary of the next
 * base model without a line elsewhere. Deterministic: the oracles are scripted and the tasks fixed.
 */
export async function suiteTranscripts(perSuite: number, kinds: readonly string[] = SUITE_KINDS): Promise<string[]> {
  const out: string[] = [];
  if (perSuite <= 0) return out;
  for (const kind of kinds) {
    const opened = await suiteOf(kind).open();
    const agent = suiteAgent(opened.suite, TRANSCRIPT_AGENT, opened.corpus ? { corpus: opened.corpus } : {});
    if (!agent) throw new Error(`suite '${kind}' has no '${TRANSCRIPT_AGENT}' agent to write its tokenizer transcripts`);
    const tasks = trainingTasks(opened.tasks.bind(opened));
    const stride = Math.max(1, Math.floor(tasks.length / perSuite));
    const { env, close } = await opened.environment({ searchWorkers: 0 });
    try {
      for (const task of tasks.filter((_, i) => i % stride === 0).slice(0, perSuite)) {
        out.push(transcriptText(env, task, await runEpisode(agent, env, task)));
      }
    } finally {
      await close();
    }
  }
  return out;
}

/** The suite's training split, or all its tasks when it has no split of that name. */
function trainingTasks(tasks: (split?: string) => Task[]): Task[] {
  try {
    return tasks('train');
  } catch (e) {
    if (e instanceof InputError) return tasks();
    throw e;
  }
}

/** An episode as the compact format's text: the prompt, then each turn's calls and their results. */
export function transcriptText(env: Environment, task: Task, rollout: Rollout): string {
  let text = promptText({ system: env.systemPrompt(), user: env.userPrompt(task), tools: env.tools });
  rollout.turns.forEach((turn, i) => {
    text += assistantText(turn.text, turn.calls.map((c) => ({ name: c.name, arguments: c.arguments })));
    if (i < rollout.turns.length - 1) text += resultsText(turn.calls.map((c) => c.result.content));
  });
  return text;
}
