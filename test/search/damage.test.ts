import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Chunk } from '../../src/corpus/chunk.js';
import { embeddedChunks } from '../../src/corpus/embedded.js';
import { DamagedIndexError, InputError } from '../../src/errors.js';
import { buildIndex, openIndex, openSearcher } from '../../src/search/index.js';
import { verifyIndex } from '../../src/search/verify.js';
import { damageFile, DAMAGES, reseal, unseal } from './damage.js';

/**
 * The damage matrix: every file of an index, every kind of damage that keeps its size, then the
 * same searches, greps and reads as on the clean index. Each must give the clean answer (the
 * damage was not reached) or an error naming the damaged file; never another answer, never
 * another error. `index verify` must find every damaged file.
 */
const root = mkdtempSync(join(tmpdir(), 'sleuth-damage-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const chunks: Chunk[] = [];
beforeAll(async () => {
  // Real text: the first 600 paragraphs of the embedded corpus (HotpotQA and MuSiQue).
  for await (const c of embeddedChunks()) {
    chunks.push(c);
    if (chunks.length === 600) break;
  }
});

/** What a query sees: the results, or the error (as the class and the file it names). */
type Outcome = { ok: string } | { error: string };

async function outcomes(dir: string, probes: string[][]): Promise<Outcome[]> {
  const run = (f: () => unknown): Outcome => {
    try {
      return { ok: JSON.stringify(f()) };
    } catch (err) {
      return { error: judge(err) };
    }
  };
  let index;
  try {
    index = await openIndex(dir);
  } catch (err) {
    return probes.map(() => ({ error: judge(err) }));
  }
  try {
    return probes.map(([op, arg]) => run(() => (op === 'search' ? index.search(arg!, 10) : op === 'grep' ? index.grep(arg!, { k: 10 }) : index.read(arg!))));
  } finally {
    index.close();
  }
}

/** An error as the matrix judges it: a DamagedIndexError by the file it names; anything else as itself. */
function judge(err: unknown): string {
  if (err instanceof DamagedIndexError) return `damaged:${err.file}`;
  if (err instanceof InputError) return `input:${err.message}`;
  return `other:${(err as Error).stack ?? String(err)}`;
}
for (const compressTexts of [false, true]) damageMatrix(compressTexts, true);
damageMatrix(false, false);

/**
 * The matrix over an index with plain or compressed texts. `checked` false: over the same index
 * without its checksums, as built before them, where the same damage gives wrong answers (the
 * issue counted 58 of 116 cases): the matrix can tell.
 */
function damageMatrix(compressTexts: boolean, checked: boolean) {
  const label = `${compressTexts ? 'compressed' : 'plain'} texts${checked ? '' : ', no checksums'}`;
  it(checked ? `gives the clean answer or an error naming the file, for every file and damage (${label})` : `finds silent wrong answers where there are no checksums (${label})`, async () => {
    const clean = join(root, `clean-${label}`);
    await buildIndex((async function* () { yield* chunks; })(), clean, { compressTexts });
    if (!checked) unseal(clean);
    // Queries from the corpus's own titles (early, middle and late documents), greps, reads.
    const picks = [0, 1, 57, 150, 299, 300, 451, 598, 599].map((i) => chunks[i]!);
    const probes = [
      ...picks.map((c) => ['search', c.title]),
      ['search', 'american film director born'],
      ['search', 'river city county population'],
      ...picks.slice(0, 5).map((c) => ['grep', c.title.split(' ')[0]!.replace(/[^\p{L}\p{N}]/gu, '') || 'the']),
      ['grep', '(?i)the [a-z]+ of'],
      ...picks.map((c) => ['read', c.id]),
    ];
    const want = await outcomes(clean, probes);
    expect(want.every((o) => 'ok' in o)).toBe(true);

    const files = readdirSync(clean).sort();
    const verdicts = { clean: 0, error: 0, wrong: [] as string[], otherError: [] as string[] };
    let cases = 0;
    for (const file of files) {
      for (const damage of DAMAGES) {
        const dir = join(root, 'case');
        rmSync(dir, { recursive: true, force: true });
        cpSync(clean, dir, { recursive: true });
        if (!damageFile(join(dir, file), damage, cases + 1)) continue;
        cases++;
        const got = await outcomes(dir, probes);
        got.forEach((o, i) => {
          const what = `${file} ${damage}: ${probes[i]!.join(' ')}`;
          if ('ok' in o) {
            if (o.ok === (want[i] as { ok: string }).ok) verdicts.clean++;
            else verdicts.wrong.push(what);
          } else if (o.error === `damaged:${file}` || (file === 'manifest.json' && o.error.startsWith('input:') && o.error.includes(dir))) {
            verdicts.error++;
          } else {
            verdicts.otherError.push(`${what} -> ${o.error.slice(0, 300)}`);
          }
        });
        // A full check finds the damage, naming the file.
        if (checked) expect((await verifyIndex(dir)).problems.map((p) => p.file), `${file} ${damage}`).toContain(file);
      }
    }
    if (!checked) {
      expect(verdicts.wrong.length).toBeGreaterThan(10);
      return;
    }
    expect(verdicts.wrong).toEqual([]);
    expect(verdicts.otherError).toEqual([]);
    // Every file was damaged every way but the few that left it unchanged, and damage was reached.
    expect(cases).toBeGreaterThan(files.length * (DAMAGES.length - 1));
    expect(verdicts.error).toBeGreaterThan(0);
    expect(verdicts.clean).toBeGreaterThan(0);
  }, 120_000);
}

describe('a segmented index', () => {
  it('verify checks every segment, naming the damaged file with its segment; a search that reads it fails', async () => {
    const dir = join(root, 'segmented');
    await buildIndex((async function* () { yield* chunks; })(), dir, { segmentPostings: 8_000 });
    expect(readdirSync(dir).filter((f) => f.startsWith('seg-')).length).toBeGreaterThan(1);
    const clean = await verifyIndex(dir);
    expect(clean).toMatchObject({ checksums: true, problems: [] });
    expect(clean.files).toBeGreaterThan(40);
    expect(damageFile(join(dir, 'seg-001', 'titles.bin'), 'zeroed')).toBe(true);
    const report = await verifyIndex(dir);
    expect(report.problems.map((p) => p.file)).toEqual(['seg-001/titles.bin']);
    const index = await openSearcher(dir);
    const second = (JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { segments: { firstDoc: number }[] }).segments[1]!;
    expect(() => index.search(chunks[second.firstDoc]!.title, 5)).toThrow(/seg-001: titles\.bin is damaged/);
    // The segments' manifest is sealed too.
    expect(damageFile(join(dir, 'manifest.json'), 'flip-middle')).toBe(true);
    expect((await verifyIndex(dir)).problems.map((p) => p.file)).toEqual(['manifest.json']);
    await expect(openSearcher(dir)).rejects.toThrow(/manifest\.json is damaged|malformed JSON/);
  });
});

describe('an index without checksums', () => {
  it('opens with a warning that says to rebuild, and verify checks its structure', async () => {
    const dir = join(root, 'old');
    await buildIndex((async function* () { yield* chunks.slice(0, 100); })(), dir);
    unseal(dir);
    const errors: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((s: string) => (errors.push(String(s)), true)) as typeof process.stderr.write;
    let index;
    try {
      index = await openIndex(dir);
    } finally {
      process.stderr.write = write;
    }
    expect(errors.join('')).toMatch(/index .*old has no checksums .* rebuild it with `sleuth index` to enable checks/);
    expect(index.search(chunks[3]!.title, 3)[0]!.id).toBe(chunks[3]!.id);
    index.close();
    const report = await verifyIndex(dir);
    expect(report.checksums).toBe(false);
    expect(report.problems).toEqual([]);
  });

  it('a rebuilt index passes verify; a structural lie with good checksums does not', async () => {
    const dir = join(root, 'rebuilt');
    await buildIndex((async function* () { yield* chunks.slice(0, 200); })(), dir);
    const report = await verifyIndex(dir);
    expect(report).toMatchObject({ checksums: true, problems: [] });
    expect(report.files).toBe(readdirSync(dir).length - 1);
    // One checksum per file in the manifest (of its blocks' checksums), every file but sums.bin.
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { files: Record<string, number>; checksums: { files: Record<string, string> } };
    expect(Object.keys(manifest.checksums.files).sort()).toEqual(Object.keys(manifest.files).filter((f) => f !== 'sums.bin').sort());
    expect(Object.values(manifest.checksums.files).every((h) => /^[0-9a-f]{8}$/u.test(h))).toBe(true);
    // Two ids swapped in ids.order by a writer that also rewrote the checksums.
    const clean = readFileSync(join(dir, 'ids.order'));
    const order = Buffer.from(clean);
    const first = order.readUInt32LE(0);
    order.writeUInt32LE(order.readUInt32LE(4), 0);
    order.writeUInt32LE(first, 4);
    writeFileSync(join(dir, 'ids.order'), order);
    reseal(dir);
    const lie = await verifyIndex(dir);
    expect(lie.problems).toEqual([{ file: 'ids.order', offset: 4, problem: 'the ids at ranks 0 and 1 are not in ascending order' }]);
    // Put back, then a block's score bound lowered (block 1: one checked without its postings' norms).
    writeFileSync(join(dir, 'ids.order'), clean);
    const max = readFileSync(join(dir, 'block.max'));
    max.writeFloatLE(0, 4);
    writeFileSync(join(dir, 'block.max'), max);
    reseal(dir);
    expect((await verifyIndex(dir)).problems).toMatchObject([{ file: 'block.max', offset: 4 }]);
  });
});
