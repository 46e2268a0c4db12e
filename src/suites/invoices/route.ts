/**
 * A task's gold route: the tool calls that answer it, run through the real tools. Task
 * generation runs it to prove every task is answerable (and unambiguous) with the tools, and
 * the scripted oracle runs it to answer.
 */
import type { ToolResult } from '../../env/types.js';
import type { InvoiceToolName, InvoiceTools } from './tools.js';

/** In a LookupOrderRows step, this value stands for the id that the SearchSupplier step returned. */
export const SUPPLIER_FROM_SEARCH = '$supplier_id';

export interface RouteStep {
  name: InvoiceToolName;
  arguments: Record<string, string | number>;
}

export interface Route {
  steps: RouteStep[];
  /** Fields of the final result's rows that hold the answer, in gold-value order. */
  answerFields: string[];
  /**
   * first: the answer is the first (newest) row;
   * unique: every returned row must agree on the answer fields.
   */
  answerFrom: 'first' | 'unique';
}

export interface RouteRun {
  /** Each call made, with its result. */
  calls: { name: InvoiceToolName; arguments: Record<string, string | number>; result: ToolResult }[];
  /** The answer values (stringified), or undefined when the route did not resolve. */
  answer?: string[];
  /** Why the route did not resolve. */
  problem?: string;
}

type Row = Record<string, unknown>;

function rowsOf(result: ToolResult, key: 'rows' | 'suppliers'): Row[] {
  const body = JSON.parse(result.content) as Record<string, Row[] | undefined>;
  return body[key] ?? [];
}

export function runRoute(tools: InvoiceTools, route: Route): RouteRun {
  const run: RouteRun = { calls: [] };
  let supplierId: string | undefined;
  let last: ToolResult | undefined;
  for (const step of route.steps) {
    const args = Object.fromEntries(
      Object.entries(step.arguments).map(([k, v]) => [k, v === SUPPLIER_FROM_SEARCH ? (supplierId ?? v) : v]),
    );
    const result = tools.call({ name: step.name, arguments: args });
    run.calls.push({ name: step.name, arguments: args, result });
    if (result.outcome !== 'ok') return { ...run, problem: `${step.name} failed: ${result.content}` };
    if (step.name === 'SearchSupplier') {
      const suppliers = rowsOf(result, 'suppliers');
      if (suppliers.length !== 1) return { ...run, problem: `SearchSupplier found ${suppliers.length} suppliers, not 1` };
      supplierId = String(suppliers[0]!.supplier_id);
    }
    last = result;
  }
  if (!last) return { ...run, problem: 'empty route' };
  const rows = rowsOf(last, 'rows');
  if (rows.length === 0) return { ...run, problem: 'the final call returned no rows' };
  const answers = rows.map((row) => route.answerFields.map((f) => String(row[f])));
  if (route.answerFrom === 'unique' && new Set(answers.map((a) => JSON.stringify(a))).size !== 1) {
    return { ...run, problem: `the final call returned ${rows.length} rows that disagree on ${route.answerFields.join(', ')}` };
  }
  return { ...run, answer: answers[0]! };
}
