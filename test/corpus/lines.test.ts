import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { readLines, type Line } from '../../src/corpus/lines.js';

const dir = mkdtempSync(join(tmpdir(), 'sleuth-lines-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function lines(path: string): Promise<Line[]> {
  const out: Line[] = [];
  for await (const l of readLines(path)) out.push(l);
  return out;
}

describe('readLines', () => {
  it('splits LF and CRLF lines, strips a BOM, keeps a last line without newline', async () => {
    const p = join(dir, 'a.txt');
    writeFileSync(p, '\ufeffone\r\ntwo\n\nfour');
    expect(await lines(p)).toEqual([{ number: 1, text: 'one' }, { number: 2, text: 'two' }, { number: 3, text: '' }, { number: 4, text: 'four' }]);
  });
  it('keeps multi-byte characters and long lines intact across read buffers', async () => {
    const long = 'é東😀'.repeat(400_000); // > 1 MiB, so it spans several reads
    const p = join(dir, 'b.txt');
    writeFileSync(p, `${long}\nshort\n${long}`);
    const got = await lines(p);
    expect(got.map((l) => l.text.length)).toEqual([long.length, 5, long.length]);
    expect(got[0]!.text === long && got[2]!.text === long).toBe(true);
  });
  it('reads gzip files', async () => {
    const p = join(dir, 'c.txt.gz');
    writeFileSync(p, gzipSync('x\ny\n'));
    expect((await lines(p)).map((l) => l.text)).toEqual(['x', 'y']);
  });
});
