import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { alignRows, fit, formatHits, groupedTable, outputWidth, UNLIMITED, wrap } from '../../src/text/width.js';

const longest = (text: string) => Math.max(...text.split('\n').map((l) => [...l].length));

describe('output width', () => {
  it('is COLUMNS when set, the terminal width on a terminal, and unlimited for a pipe', () => {
    const saved = process.env['COLUMNS'];
    try {
      delete process.env['COLUMNS'];
      expect(outputWidth({ isTTY: false })).toBe(UNLIMITED);
      expect(outputWidth({ isTTY: true, columns: 100 })).toBe(100);
      process.env['COLUMNS'] = '72';
      expect(outputWidth({ isTTY: false })).toBe(72);
      process.env['COLUMNS'] = 'wide';
      expect(outputWidth({ isTTY: false })).toBe(UNLIMITED);
    } finally {
      if (saved === undefined) delete process.env['COLUMNS'];
      else process.env['COLUMNS'] = saved;
    }
  });

  it('wraps at spaces within the width, keeps inner double spaces, splits an over-long word', () => {
    const text = 'Kiss and Tell is a 1945 American comedy film starring then 17-year-old Shirley Temple as Corliss Archer.';
    const w = wrap(text, 40, '    ');
    expect(longest(w)).toBeLessThanOrEqual(40);
    expect(w.split('\n').every((l) => l.startsWith('    '))).toBe(true);
    expect(w.replace(/\n {4}/g, ' ').trim()).toBe(text);
    expect(wrap(text, UNLIMITED, '  ')).toBe(`  ${text}`);
    expect(wrap('Title  [id]', 80)).toBe('Title  [id]');
    expect(longest(wrap('x'.repeat(100), 40))).toBe(40);
    expect(fit('abcdef', 4)).toBe('abc…');
  });

  it('aligns columns so that a missing last cell (n.s.) does not shift the others', () => {
    const lines = alignRows([['metric', '1.000', '+0.100', 'n.s.'], ['recall', '0.500', '-0.250', '']]);
    expect(lines[0]!.indexOf('+0.100')).toBe(lines[1]!.indexOf('-0.250'));
  });

  it('lays a grouped table side by side when it fits and stacks it when it does not', () => {
    const table = {
      label: 'metric',
      groups: [{ name: 'base' }, { name: 'grpo', head: 'grpo  (vs first, 95%)' }],
      rows: [
        { label: 'reward', cells: [['0.697', '[0.659, 0.732]'], ['0.761', '[0.695, 0.822]', '+0.064', '[0.010, 0.120]', '']] },
        { label: 'turns', cells: [['2.000', '[2.000, 2.000]'], ['12.042', '[2.017, 2.071]', '+0.042', '[-0.017, 0.071]', 'n.s.']] },
      ],
    };
    const wide = groupedTable(table, UNLIMITED).split('\n');
    expect(wide).toHaveLength(3);
    expect(wide[1]!.indexOf('[0.695')).toBe(wide[2]!.indexOf('[2.017'));
    expect(wide[1]!.indexOf('+0.064')).toBe(wide[2]!.indexOf('+0.042'));
    const narrow = groupedTable(table, 70);
    expect(longest(narrow)).toBeLessThanOrEqual(70);
    expect(narrow.split('\n')).toEqual([
      'reward',
      expect.stringMatching(/^ {2}base +0\.697 +\[0\.659, 0\.732\]$/),
      expect.stringMatching(/^ {2}grpo +0\.761 +\[0\.695, 0\.822\] +\+0\.064 +\[0\.010, 0\.120\]$/),
      'turns',
      expect.stringMatching(/^ {2}base +2\.000/),
      expect.stringMatching(/n\.s\.$/),
    ]);
  });

  it('numbers hits with the given list numbers and wraps their snippets', () => {
    const hits = [{ id: 'a1b2c3d4e5', title: 'Kiss and Tell (1945 film)', snippet: 'word '.repeat(40).trim(), score: 13.5661 }];
    const out = formatHits(hits, 50, { numbers: [12], indent: '  ' });
    expect(out.split('\n')[0]).toBe('  12. Kiss and Tell (1945 film)  [a1b2c3d4e5]');
    expect(longest(out)).toBeLessThanOrEqual(50);
    expect(formatHits(hits, UNLIMITED).split('\n')).toHaveLength(2);
  });
});

describe('search, grep and compare fit a narrow COLUMNS and keep full width in a pipe', () => {
  const sleuth = (args: string[], env: Record<string, string | undefined>) =>
    spawnSync(process.execPath, ['bin/sleuth.js', ...args], { encoding: 'utf8', env: { ...process.env, ...env } });

  it('search and grep', () => {
    for (const args of [['search', '-k', '3', 'Corliss Archer Kiss and Tell'], ['grep', '-k', '3', '(?i)corliss\\s+archer']]) {
      const narrow = sleuth(args, { COLUMNS: '60' });
      expect(narrow.status).toBe(0);
      expect(longest(narrow.stdout)).toBeLessThanOrEqual(60);
      const piped = sleuth(args, { COLUMNS: undefined });
      expect(piped.status).toBe(0);
      expect(piped.stdout.trim().split('\n')).toHaveLength(6);
      expect(longest(piped.stdout)).toBeGreaterThan(60);
    }
  });
});
