/**
 * Output that fits the terminal. On a terminal, lines are laid out for its width (`COLUMNS`
 * overrides it, for a terminal or not); output that is not a terminal (a pipe, a file) keeps its
 * full width, as does every `--json` document (it never comes here). The layout functions are pure:
 * they take the width, so a caller can lay out for any.
 */

/** No width limit: a pipe, a file. */
export const UNLIMITED = Number.POSITIVE_INFINITY;

/** Below this, wrapping would give a word per line: narrower terminals get this width anyway. */
const MIN_WIDTH = 40;

/** Length in characters (code points), as a terminal counts them for most scripts. */
const len = (s: string) => [...s].length;
const padEnd = (s: string, n: number) => s + ' '.repeat(Math.max(0, n - len(s)));
const padStart = (s: string, n: number) => ' '.repeat(Math.max(0, n - len(s))) + s;

/** The width `stream`'s output should fit: `COLUMNS` when set, else the terminal's columns, else unlimited. */
export function outputWidth(stream: { isTTY?: boolean; columns?: number } = process.stdout): number {
  const fromEnv = Number(process.env['COLUMNS']);
  if (process.env['COLUMNS'] !== undefined && Number.isInteger(fromEnv) && fromEnv > 0) return Math.max(MIN_WIDTH, fromEnv);
  if (stream.isTTY && stream.columns && stream.columns > 0) return Math.max(MIN_WIDTH, stream.columns);
  return UNLIMITED;
}

/** One line cut to `width` characters, ending in '…' when cut. */
export function fit(text: string, width: number): string {
  const chars = [...text];
  return chars.length <= width ? text : `${chars.slice(0, Math.max(1, width - 1)).join('')}…`;
}

/**
 * `text` wrapped at spaces into lines of at most `width` characters, the first starting with
 * `first`, the others with `indent`; a word longer than a line is split. Unlimited width: one line.
 */
export function wrap(text: string, width: number, indent = '', first = indent): string {
  // Line breaks and tabs become spaces; runs of spaces inside a line are kept ("Title  [id]").
  const flat = text.replace(/[\t\n\r\v\f]/gu, ' ').trim();
  if (!Number.isFinite(width)) return first + flat;
  const room = Math.max(MIN_WIDTH / 2, width - Math.max(len(indent), len(first)));
  const lines: string[] = [];
  let line = '';
  let gap = '';
  for (const [, found, after] of flat.matchAll(/(\S+)( *)/gu)) {
    let word = found!;
    while (len(word) > room) {
      if (line) lines.push(line);
      const chars = [...word];
      lines.push(chars.slice(0, room).join(''));
      word = chars.slice(room).join('');
      line = '';
    }
    if (!line) line = word;
    else if (len(line) + len(gap) + len(word) <= room) line += gap + word;
    else {
      lines.push(line);
      line = word;
    }
    gap = after!;
  }
  if (line || lines.length === 0) lines.push(line);
  return lines.map((l, i) => (i === 0 ? first : indent) + l).join('\n');
}

/**
 * Rows aligned in columns: the first `left` columns left-aligned (labels), the others
 * right-aligned (numbers), `gap` apart. Every row's cell c is as wide as the widest cell c, so a
 * short or missing cell never shifts the columns after it.
 */
export function alignRows(rows: readonly (readonly string[])[], { gap = '  ', left = 1 }: { gap?: string; left?: number } = {}): string[] {
  const n = Math.max(0, ...rows.map((r) => r.length));
  const widths = Array.from({ length: n }, (_, c) => Math.max(0, ...rows.map((r) => len(r[c] ?? ''))));
  return rows.map((r) => widths.map((w, c) => (c < left ? padEnd(r[c] ?? '', w) : padStart(r[c] ?? '', w))).join(gap).trimEnd());
}

/** A table of labelled rows, with the value columns in groups (one group per run, say). */
export interface GroupedTable {
  /** Heading of the label column. */
  label: string;
  /** Each group's name (stacked layout) and heading (side-by-side layout; default the name). */
  groups: { name: string; head?: string }[];
  /** Per row: its label and, per group, that group's cells. */
  rows: { label: string; cells: string[][] }[];
}

/**
 * A grouped table laid out for `width`: side by side (a column of labels, then each group's cells
 * aligned under its heading) when that fits, otherwise stacked (each row's label on its own line,
 * then one line per group: the group's name and its cells, aligned across rows).
 */
export function groupedTable(table: GroupedTable, width: number): string {
  // Each group's cells aligned across every row, so a group is a block of equal-width strings.
  const blocks = table.groups.map((_, g) => alignRows(table.rows.map((r) => r.cells[g] ?? []), { gap: ' ', left: 0 }));
  const heads = table.groups.map((g) => g.head ?? g.name);
  const blockWidths = blocks.map((b, g) => Math.max(len(heads[g]!), ...b.map(len)));
  const labelWidth = Math.max(len(table.label), ...table.rows.map((r) => len(r.label)));
  const sideBySide = [
    [padEnd(table.label, labelWidth), ...heads.map((h, g) => padEnd(h, blockWidths[g]!))].join('   ').trimEnd(),
    ...table.rows.map((r, i) => [padEnd(r.label, labelWidth), ...blocks.map((b, g) => padEnd(b[i]!, blockWidths[g]!))].join('   ').trimEnd()),
  ];
  if (Math.max(...sideBySide.map(len)) <= width) return sideBySide.join('\n');
  // Stacked: every group line of every row aligned together, so means sit under means.
  const lines = alignRows(table.rows.flatMap((r) => table.groups.map((g, j) => [`  ${g.name}`, ...(r.cells[j] ?? [])])));
  const stacked = table.rows.flatMap((r, i) => [r.label, ...lines.slice(i * table.groups.length, (i + 1) * table.groups.length)]);
  return stacked.join('\n');
}

/** A search or grep hit as the CLI shows it. */
export interface ShownHit {
  id: string;
  title: string;
  snippet: string;
  score?: number;
}

/**
 * Hits as numbered entries: `N. Title  [id]  score S`, then the snippet wrapped under it. `numbers`
 * gives each hit's number (default 1, 2, ...: play passes its episode's list numbers).
 */
export function formatHits(hits: readonly ShownHit[], width: number, { numbers, indent = '' }: { numbers?: readonly number[]; indent?: string } = {}): string {
  const labels = hits.map((_, i) => `${numbers?.[i] ?? i + 1}.`);
  const labelWidth = Math.max(3, ...labels.map(len));
  const body = indent + ' '.repeat(labelWidth + 1);
  return hits
    .map((h, i) => {
      const head = `${h.title}  [${h.id}]${h.score !== undefined ? `  score ${h.score.toFixed(3)}` : ''}`;
      return `${wrap(head, width, body, indent + padStart(labels[i]!, labelWidth) + ' ')}\n${wrap(h.snippet, width, body)}`;
    })
    .join('\n');
}
