import { mkdtempSync, rmSync, statSync, truncateSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultIndexDir, ensureDefaultIndex, openIndex } from '../../src/search/index.js';

const root = mkdtempSync(join(tmpdir(), 'sleuth-default-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('ensureDefaultIndex', () => {
  it('defaults to .sleuth/index/default', () => {
    expect(defaultIndexDir()).toBe(join('.sleuth', 'index', 'default'));
  });

  it('builds the embedded index once, reuses it, and rebuilds it when stale', async () => {
    const dir = join(root, 'default');
    expect(await ensureDefaultIndex(dir)).toBe(dir);
    const manifest = join(dir, 'manifest.json');
    const built = statSync(manifest).mtimeMs;
    const index = await openIndex(dir);
    expect(index.manifest.source).toMatch(/^embedded:[0-9a-f]{16}$/);
    expect(index.search('Corliss Archer Kiss and Tell', 5).map((h) => h.title)).toContain('Kiss and Tell (1945 film)');

    await ensureDefaultIndex(dir);
    expect(statSync(manifest).mtimeMs).toBe(built);

    // Built from other corpus bytes: rebuilt.
    const m = JSON.parse(readFileSync(manifest, 'utf8'));
    writeFileSync(manifest, JSON.stringify({ ...m, source: 'embedded:0000000000000000' }));
    await ensureDefaultIndex(dir);
    expect(JSON.parse(readFileSync(manifest, 'utf8')).source).toBe(m.source);

    // A grep prefilter of another grep format version: rebuilt.
    const grepPath = join(dir, 'grep.bin');
    const grepBytes = readFileSync(grepPath);
    const otherVersion = Buffer.from(grepBytes);
    otherVersion.writeUInt32LE(otherVersion.readUInt32LE(8) + 1, 8);
    writeFileSync(grepPath, otherVersion);
    await ensureDefaultIndex(dir);
    expect(readFileSync(grepPath).equals(grepBytes)).toBe(true);

    // A damaged file: rebuilt.
    truncateSync(join(dir, 'post.data'), 4);
    await ensureDefaultIndex(dir);
    expect((await openIndex(dir)).size).toBe(index.size);
  });

  it('waits for another build of the same index (two commands at once on a fresh checkout) and uses it', async () => {
    const dir = join(root, 'twice');
    const [a, b] = await Promise.all([ensureDefaultIndex(dir), ensureDefaultIndex(dir)]);
    expect([a, b]).toEqual([dir, dir]);
    expect((await openIndex(dir)).search('Corliss Archer Kiss and Tell', 5).map((h) => h.title)).toContain('Kiss and Tell (1945 film)');
  });
});
