import { InputError } from '../../errors.js';
import { openAIAgentFromSpec } from '../../agent/openai.js';
import { openIndex } from '../../search/index.js';
import { checkNewTaskSetName, readTaskSet, splitNames, taskSetDir } from '../../tasks/registry.js';
import { goldChunkIds } from '../../tasks/split.js';
import { describeDrops, synthesizeTaskSet } from '../../tasks/synthesize/synthesize.js';
import type { WriterOptions } from '../../tasks/synthesize/writer.js';
import { intFlag, numberFlag, parseFlags, printJson } from '../command.js';
import { INDEX_FLAGS, indexDirOf } from '../index-flag.js';
import { liveProgress } from '../progress.js';

export const SYNTHESIZE_USAGE = `  sleuth tasks synthesize [--index DIR | --tasks NAME] --name NEW [--count N] [--hops 2|2,3|2..4]
                          [--writer openai:MODEL[@URL]] [--writer-timeout S] [--writer-retries N]
                          [--writer-concurrency N] [--api-key-env NAME] [--test-fraction F]
                          [--dev-fraction F] [--exclude-gold NAME[:SPLIT]]... [--known-items N] [--seed S]
                          [--force] [--json]
      multi-hop search tasks from an index alone (default: the default index; --tasks NAME, a task
      set's, its questions unused): chains of chunks where one's text names the next one's title,
      asked without the bridge names (keywords of the first and last chunk; with --writer, a
      model's question). Kept only when the question's own top 10 misses a gold chunk and the hop
      oracle finds them all; splits train/dev/test by hop count, no chunk or bridge in two.
      --count N tasks (default 500); when the index's chains run out first, the set holds what
      they made and says so (fewer than 10, or than --count if smaller: exit 2, nothing written).
      --known-items N: also N one-chunk tasks, each asked by its chunk's four most distinctive words
      and kept when they find it (one search is enough for these, by design; default 0).
      --exclude-gold: no chunk that is gold in that task set (split) is used, so tasks made over a
      held-out set's pool never train on its answers. --writer-timeout: seconds per call (default
      60), then up to --writer-retries more tries (default 2), each counted`;

const FLAGS = {
  ...INDEX_FLAGS,
  name: { type: 'string' },
  count: { type: 'string' },
  'known-items': { type: 'string' },
  hops: { type: 'string' },
  writer: { type: 'string' },
  'writer-timeout': { type: 'string' },
  'writer-retries': { type: 'string' },
  'writer-concurrency': { type: 'string' },
  'api-key-env': { type: 'string' },
  'test-fraction': { type: 'string' },
  'dev-fraction': { type: 'string' },
  'exclude-gold': { type: 'string', multiple: true },
  seed: { type: 'string' },
  force: { type: 'boolean' },
  json: { type: 'boolean' },
} as const;

/** `--hops 2`, `--hops 2,3`, `--hops 2..4`: hop counts from 2 to 4. */
export function parseHops(value: string | undefined): number[] {
  if (value === undefined) return [2];
  const range = /^\s*(\d+)\s*\.\.\s*(\d+)\s*$/u.exec(value);
  const hops = range ? Array.from({ length: Math.max(0, Number(range[2]) - Number(range[1]) + 1) }, (_, i) => Number(range[1]) + i) : value.split(',').map((h) => Number(h.trim()));
  if (hops.length === 0 || hops.some((h) => !Number.isInteger(h) || h < 2 || h > 4)) throw new InputError(`--hops must be hop counts from 2 to 4, comma-separated or a range (e.g. 2, 2,3 or 2..4), got '${value}'`);
  return [...new Set(hops)];
}

/** Gold chunk ids of `NAME` or `NAME:SPLIT` task sets: what synthesis must leave alone. */
function excludedGold(specs: string[]): Set<string> {
  const ids = new Set<string>();
  for (const spec of specs) {
    const [name, split] = spec.split(':');
    const set = readTaskSet(name!);
    const splits = splitNames(set.tasks);
    if (split !== undefined && !splits.includes(split)) throw new InputError(`--exclude-gold ${spec}: task set '${set.name}' has splits ${splits.join(', ')}`);
    for (const t of set.tasks) if (split === undefined || t.split === split) for (const id of goldChunkIds(t)) ids.add(id);
  }
  return ids;
}

/** A writer over an OpenAI-compatible endpoint; the client itself does not retry (synthesis counts its retries). */
function openAIWriter(spec: string, values: { 'writer-timeout'?: string; 'writer-retries'?: string; 'writer-concurrency'?: string; 'api-key-env'?: string }): WriterOptions {
  if (!spec.startsWith('openai:')) throw new InputError(`--writer '${spec}': a writer is openai:MODEL[@URL] (any OpenAI-compatible endpoint)`);
  const timeoutMs = numberFlag(values['writer-timeout'], 'writer-timeout', 60, 0.001, 3600) * 1000;
  const concurrency = intFlag(values['writer-concurrency'], 'writer-concurrency', 4, 1, 256);
  const agent = openAIAgentFromSpec(spec.slice('openai:'.length), spec, {
    // Twice the slots: a call abandoned at the timeout may hold its slot a moment longer, and must not delay the retry.
    openai: { maxRetries: 0, timeoutMs, maxConcurrent: 2 * concurrency, ...(values['api-key-env'] ? { apiKeyEnv: values['api-key-env'] } : {}) },
  });
  return {
    spec: agent.spec,
    timeoutMs,
    retries: intFlag(values['writer-retries'], 'writer-retries', 2, 0, 10),
    concurrency,
    write: async ({ system, user }) => {
      const reply = await agent.complete({ model: agent.options.model, messages: [{ role: 'system', content: system }, { role: 'user', content: user }] });
      return reply.choices[0]?.message?.content ?? '';
    },
  };
}

export async function synthesizeCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, FLAGS, 'tasks synthesize');
  if (positionals.length > 0) throw new InputError(`tasks synthesize: unexpected argument '${positionals[0]}'`);
  if (values.name === undefined) throw new InputError('tasks synthesize: --name NEW is required');
  checkNewTaskSetName(values.name);
  const count = intFlag(values.count, 'count', 500, 1, 1_000_000);
  const knownItems = intFlag(values['known-items'], 'known-items', 0, 0, 1_000_000);
  const hops = parseHops(values.hops);
  const testFraction = numberFlag(values['test-fraction'], 'test-fraction', 0.2, 0, 1);
  const devFraction = numberFlag(values['dev-fraction'], 'dev-fraction', 0.2, 0, 1);
  if (testFraction + devFraction > 1) throw new InputError(`--test-fraction ${testFraction} and --dev-fraction ${devFraction} add up to more than 1`);
  const exclude = excludedGold(values['exclude-gold'] ?? []);
  const writer = values.writer === undefined ? undefined : openAIWriter(values.writer, values);
  const indexDir = await indexDirOf(values);
  const index = await openIndex(indexDir);
  const started = Date.now();
  const progress = liveProgress({ label: 'synthesize', unit: 'tasks kept', enabled: !values.json });
  const summary = await synthesizeTaskSet(index, indexDir, values.name, taskSetDir(values.name), {
    count,
    hops,
    testFraction,
    devFraction,
    ...(values.seed !== undefined ? { seed: values.seed } : {}),
    ...(writer ? { writer } : {}),
    ...(exclude.size ? { exclude } : {}),
    ...(knownItems ? { knownItems } : {}),
    force: values.force ?? false,
    onProgress: (kept) => progress.update(kept, { total: count }),
  });
  progress.done();
  if (values.json) printJson({ ...summary, seconds: (Date.now() - started) / 1000 });
  else {
    const s = summary.synthesis;
    console.log(`task set ${summary.name}: ${Object.entries(summary.counts).map(([split, n]) => `${split} ${n} (${summary.sha256[split]!.slice(0, 12)})`).join(', ')}; corpus ${summary.chunks} chunks, in ${summary.dir}`);
    console.log(`  ${s.kept} tasks kept of ${s.chains} chains in ${((Date.now() - started) / 1000).toFixed(1)} s; dropped: ${describeDrops(s)}`);
    const multiHop = s.kept - (s.knownItems?.kept ?? 0);
    if (multiHop < count) console.log(`  ${multiHop} of --count ${count}: the index's ${s.chains} chains ran out (a chain is a chunk whose text names another's title)`);
    if (s.knownItems) console.log(`  known-item tasks: ${s.knownItems.kept} of --known-items ${knownItems} (one search finds each: they teach the first move)`);
  }
  return 0;
}
