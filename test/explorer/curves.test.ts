import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { curvesSvg, SEED_CURVES, seriesOf } from '../../src/explorer/curves-svg.js';

const lines = [
  { step: 2, kind: 'train', reward: 0.5, valid_share: 1, entropy: 1.2 },
  { step: 1, kind: 'train', reward: 0.25, valid_share: 0.5, entropy: 1.5 },
  { step: 3, kind: 'train', reward: null, valid_share: 1, entropy: 1.1 },
  { step: 0, kind: 'eval', f1: 0.1, reward: 0.9 },
  { step: 3, kind: 'eval', f1: 0.3, reward: 0.95 },
];

describe('training curves as SVG', () => {
  it('takes each series from its kind of line, in step order, skipping missing values', () => {
    expect(seriesOf(lines, SEED_CURVES[0]!)).toEqual([[1, 0.25], [2, 0.5]]);
    expect(seriesOf(lines, SEED_CURVES.find((c) => c.field === 'f1')!)).toEqual([[0, 0.1], [3, 0.3]]);
  });

  it('draws one panel per curve with a line through its points, and escapes the title', () => {
    const svg = curvesSvg(lines, { title: 'run <a&b>' });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    for (const p of SEED_CURVES) expect(svg).toContain(`>${p.title}<`);
    // Train reward 2 points, eval reward 2, valid 3, entropy 3, eval F1 2; no curated sizes (no data).
    expect(svg.match(/<path d="M/g)).toHaveLength(5);
    expect(svg.match(/<circle /g)).toHaveLength(2 + 2 + 3 + 3 + 2);
    expect(svg).toContain('no data');
    expect(svg).toContain('run &#60;a&#38;b&#62;');
    expect(curvesSvg([])).toContain('no data');
  });

  it('sleuth curves writes the SVG of a run, and rejects a directory without metrics (exit 2)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sleuth-curves-'));
    try {
      writeFileSync(join(dir, 'metrics.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
      const out = execFileSync('node', ['bin/sleuth.js', 'curves', dir], { encoding: 'utf8' });
      expect(out).toContain('train reward 2 point(s)');
      expect(readFileSync(join(dir, 'curves.svg'), 'utf8')).toContain('<path d="M');
      const bad = spawnSync('node', ['bin/sleuth.js', 'curves', tmpdir() + '/nope-' + process.pid], { encoding: 'utf8' });
      expect(bad.status).toBe(2);
      expect(bad.stderr).toMatch(/metrics\.jsonl: no such file/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
