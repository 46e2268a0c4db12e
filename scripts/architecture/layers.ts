import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { importGraph, type ImportEdge } from './imports.js';

/** One row of the layer table: the paths it owns (`src/eval/`, `src/errors.ts`) and its place in the stack. */
export interface LayerRow {
  /** The layer the row belongs to (`data`, `training`, ...): a blank first cell continues the one above. */
  readonly layer: string;
  /** The row's index from the top: a row may import only from rows with a smaller index, or from itself. */
  readonly rank: number;
  readonly paths: readonly string[];
}

/** An import that runs up the stack, or one whose file is in no row. */
export interface LayerViolation {
  readonly edge: ImportEdge;
  readonly message: string;
}

/**
 * The rows of the table under `## Layers` in `markdown` (docs/ARCHITECTURE.md), so that the doc is the
 * plan the test holds the code to. Paths are the backquoted `src/...` names of the second column.
 */
export function parseLayerTable(markdown: string, source = 'docs/ARCHITECTURE.md'): LayerRow[] {
  const section = /^## Layers\n([\s\S]*?)(?=^## )/mu.exec(markdown)?.[1];
  if (section === undefined) throw new Error(`${source}: no "## Layers" section`);
  const tableLines = section.split('\n').filter((line) => line.startsWith('|'));
  const rows: LayerRow[] = [];
  let layer = '';
  // The first two lines are the header and its separator.
  for (const line of tableLines.slice(2)) {
    const [layerCell = '', folderCell = ''] = line.split('|').slice(1).map((cell) => cell.trim());
    if (layerCell !== '') layer = layerCell;
    const paths = [...folderCell.matchAll(/`(src\/[^`]*)`/gu)].map((m) => m[1]!);
    if (layer === '' || paths.length === 0) throw new Error(`${source}: layer table row "${line}" names no layer or no src/ path`);
    rows.push({ layer, rank: rows.length, paths });
  }
  if (rows.length === 0) throw new Error(`${source}: the "## Layers" section has no table rows`);
  return rows;
}

/** The row owning `file`: the longest path of the table that is the file itself or a folder holding it. */
export function rowOf(rows: readonly LayerRow[], file: string): { row: LayerRow; path: string } | undefined {
  let best: { row: LayerRow; path: string } | undefined;
  for (const row of rows) {
    for (const path of row.paths) {
      const owns = path.endsWith('/') ? file.startsWith(path) : file === path;
      if (owns && (best === undefined || path.length > best.path.length)) best = { row, path };
    }
  }
  return best;
}

const describe = (place: { row: LayerRow; path: string }) => `${place.path} (layer ${place.row.layer}, row ${place.row.rank + 1})`;

/**
 * Every import in `edges` that breaks the table: one from a row to a row below it, one to another folder
 * of its own row (a row's folders are peers, which name each other only through something above both),
 * and one from or to a file no row owns.
 */
export function layerViolations(rows: readonly LayerRow[], edges: readonly ImportEdge[]): LayerViolation[] {
  const violations: LayerViolation[] = [];
  for (const edge of edges) {
    const from = rowOf(rows, edge.from);
    const to = rowOf(rows, edge.to);
    const where = `${edge.from} imports '${edge.specifier}'`;
    if (from === undefined) violations.push({ edge, message: `${where}, but ${edge.from} is in no row of the layer table` });
    else if (to === undefined) violations.push({ edge, message: `${where}, but ${edge.to} is in no row of the layer table` });
    else if (from.path === to.path) continue;
    else if (to.row.rank > from.row.rank) violations.push({ edge, message: `${where}: ${describe(from)} imports from ${describe(to)}, which is below it` });
    else if (to.row.rank === from.row.rank) violations.push({ edge, message: `${where}: ${describe(from)} imports from its peer ${describe(to)} in the same row` });
  }
  return violations;
}

/** The layer check of the tree at `root`: its `src/` against the table in its `docs/ARCHITECTURE.md`. */
export function checkLayers(root: string): LayerViolation[] {
  const rows = parseLayerTable(readFileSync(join(root, 'docs/ARCHITECTURE.md'), 'utf8'));
  // The explorer's browser code is its own program (built by vite, not tsc), outside the stack.
  return layerViolations(rows, importGraph(root, 'src', ['src/explorer/web']));
}
