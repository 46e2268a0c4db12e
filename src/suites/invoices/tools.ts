/**
 * The invoice environment's three tools. Each is exactly one prepared, parameterised SQL query;
 * optional filters are written as `(? IS NULL OR ...)` so the statement never changes shape.
 * A bad call returns a short error result and never throws.
 */
import type Database from 'better-sqlite3';
import { z } from 'zod';
import type { ToolCall, ToolResult, ToolSpec } from '../../env/types.js';
import { normalizeIdentifier } from './bank.js';
import { fold } from './text.js';

export const INVOICE_TOOL_SPECS: ToolSpec[] = [
  {
    name: 'GetOrderBySubscription',
    description: 'Look up a subscription number and return its order rows, newest delivery period first.',
    parameters: {
      type: 'object',
      properties: { sub_no: { type: 'integer', description: 'The subscription number, e.g. 67484.' } },
      required: ['sub_no'],
      additionalProperties: false,
    },
  },
  {
    name: 'SearchSupplier',
    description:
      'Search suppliers by name (partial, case-insensitive) and/or bank details (IBAN, bankgiro, postgiro, VAT number; spaces and dashes ignored); all given parameters must match. Returns supplier_id.',
    parameters: {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'Part of the supplier name.' },
        iban: { type: 'string' },
        bankgiro: { type: 'string' },
        postgiro: { type: 'string' },
        vat_number: { type: 'string' },
      },
      additionalProperties: false,
    },
  },
  {
    name: 'LookupOrderRows',
    description:
      "Search one supplier's order rows (supplier_id from SearchSupplier); optional delivery period (rows overlapping it) and partial product or subscriber name.",
    parameters: {
      type: 'object',
      properties: {
        supplier_id: { type: 'string', description: 'Supplier UUID returned by SearchSupplier.' },
        period_start: { type: 'string', description: 'YYYY-MM-DD' },
        period_end: { type: 'string', description: 'YYYY-MM-DD' },
        product_name: { type: 'string', description: 'Part of the product name.' },
        subscriber_name: { type: 'string', description: 'Part of the subscriber name.' },
      },
      required: ['supplier_id'],
      additionalProperties: false,
    },
  },
];

/** Result caps: enough for any task, small enough for a 0.6B model's context. */
export const MAX_ORDER_ROWS = 20;
export const MAX_SUPPLIERS = 10;

const ORDER_ROW_COLUMNS = `
  o.subscription_no, o.period_start, o.period_end, p.name AS product, s.name AS supplier,
  d.name AS department, org.name AS organisation, c.name AS parent_corporation,
  o.subscriber_name AS subscriber, o.quantity, printf('%.2f', o.amount) AS amount,
  i.invoice_no, i.invoice_date, i.due_date, i.status AS invoice_status, o.id AS order_row_id`;
const ORDER_ROW_JOINS = `
  FROM order_rows o
  JOIN products p ON p.id = o.product_id
  JOIN suppliers s ON s.id = p.supplier_id
  JOIN departments d ON d.id = o.department_id
  JOIN organisations org ON org.id = d.organisation_id
  JOIN corporations c ON c.id = org.corporation_id
  JOIN invoice_rows ir ON ir.order_row_id = o.id
  JOIN invoices i ON i.id = ir.invoice_id`;

export const SQL = {
  getOrderBySubscription: `SELECT ${ORDER_ROW_COLUMNS} ${ORDER_ROW_JOINS}
    WHERE o.subscription_no = @sub_no
    ORDER BY o.period_start DESC LIMIT ${MAX_ORDER_ROWS + 1}`,
  searchSupplier: `SELECT id AS supplier_id, name, iban, bankgiro, postgiro, vat_number FROM suppliers
    WHERE (@name IS NULL OR instr(name_folded, @name) > 0)
      AND (@iban IS NULL OR replace(replace(upper(iban), ' ', ''), '-', '') = @iban)
      AND (@bankgiro IS NULL OR replace(replace(bankgiro, ' ', ''), '-', '') = @bankgiro)
      AND (@postgiro IS NULL OR replace(replace(postgiro, ' ', ''), '-', '') = @postgiro)
      AND (@vat_number IS NULL OR replace(replace(upper(vat_number), ' ', ''), '-', '') = @vat_number)
    ORDER BY name LIMIT ${MAX_SUPPLIERS + 1}`,
  // Overlap: a row overlaps [start, end] unless it ends before start or begins after end.
  lookupOrderRows: `SELECT ${ORDER_ROW_COLUMNS} ${ORDER_ROW_JOINS}
    WHERE p.supplier_id = @supplier_id
      AND (@period_start IS NULL OR o.period_end >= @period_start)
      AND (@period_end IS NULL OR o.period_start <= @period_end)
      AND (@product_name IS NULL OR instr(p.name_folded, @product_name) > 0)
      AND (@subscriber_name IS NULL OR instr(o.subscriber_folded, @subscriber_name) > 0)
    ORDER BY o.period_start DESC, o.subscription_no LIMIT ${MAX_ORDER_ROWS + 1}`,
} as const;

// Models write numbers as strings and leave optional fields empty or null: accept those forms.
const subNo = z.union([z.number(), z.string().trim().regex(/^\d+$/, 'must be digits').transform(Number)])
  .pipe(z.number().int('must be a whole number').positive('must be positive'));
const optionalText = z.string().nullish().transform((v) => (v == null || v.trim() === '' ? null : v));
const isoDate = optionalText.refine(
  (v) => v === null || (/^\d{4}-\d{2}-\d{2}$/.test(v) && new Date(`${v}T00:00:00Z`).toISOString().startsWith(v)),
  'must be a date written YYYY-MM-DD',
);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const ARGUMENTS = {
  GetOrderBySubscription: z.object({ sub_no: subNo }).strict(),
  SearchSupplier: z
    .object({ name: optionalText, iban: optionalText, bankgiro: optionalText, postgiro: optionalText, vat_number: optionalText })
    .strict()
    .refine((a) => Object.values(a).some((v) => v !== null), 'give at least one of name, iban, bankgiro, postgiro, vat_number'),
  LookupOrderRows: z
    .object({
      supplier_id: z.string().trim().regex(UUID, 'must be a supplier UUID returned by SearchSupplier'),
      period_start: isoDate,
      period_end: isoDate,
      product_name: optionalText,
      subscriber_name: optionalText,
    })
    .strict()
    .refine((a) => a.period_start === null || a.period_end === null || a.period_start <= a.period_end, 'period_start must not be after period_end'),
} as const;

export type InvoiceToolName = keyof typeof ARGUMENTS;

type Row = Record<string, unknown>;

function error(kind: string, message: string): ToolResult {
  return { outcome: 'error', content: `Error: ${message}`, chunkIds: [], errorKind: kind };
}

/** Order rows as shown to the model: the internal row id is kept for the trajectory, not shown. */
function orderRowsResult(rows: Row[], emptyNote: string): ToolResult {
  const shown = rows.slice(0, MAX_ORDER_ROWS);
  const body: Row = { rows: shown.map(({ order_row_id: _id, ...rest }) => rest) };
  if (rows.length > MAX_ORDER_ROWS) body.note = `only the first ${MAX_ORDER_ROWS} rows are shown; narrow the search`;
  if (rows.length === 0) body.note = emptyNote;
  return { outcome: 'ok', content: JSON.stringify(body), chunkIds: shown.map((r) => `order_row:${String(r.order_row_id)}`) };
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path.length > 0 ? `'${issue.path.join('.')}' ` : '';
  if (issue.code === 'unrecognized_keys') return `unknown argument(s) ${issue.keys.map((k) => `'${k}'`).join(', ')}`;
  return `${where}${issue.message}`;
}

/** The tools bound to one database; statements are prepared once and shared by every episode. */
export class InvoiceTools {
  readonly specs = INVOICE_TOOL_SPECS;
  private readonly statements: Record<InvoiceToolName, Database.Statement>;

  constructor(db: Database.Database) {
    this.statements = {
      GetOrderBySubscription: db.prepare(SQL.getOrderBySubscription),
      SearchSupplier: db.prepare(SQL.searchSupplier),
      LookupOrderRows: db.prepare(SQL.lookupOrderRows),
    };
  }

  call(call: ToolCall): ToolResult {
    if (!Object.hasOwn(ARGUMENTS, call.name)) {
      return error('unknown_tool', `unknown tool '${call.name}'; the tools are ${Object.keys(ARGUMENTS).join(', ')}`);
    }
    const name = call.name as InvoiceToolName;
    let args: unknown = call.arguments ?? {};
    if (typeof args === 'string') {
      try {
        args = JSON.parse(args) as unknown;
      } catch {
        return error('bad_arguments', `${name}: arguments are not a JSON object`);
      }
    }
    const parsed = ARGUMENTS[name].safeParse(args);
    if (!parsed.success) return error('bad_arguments', `${name}: ${parsed.error.issues.map(describeIssue).join('; ')}`);
    try {
      return this.run(name, parsed.data as Record<string, unknown>);
    } catch (err) {
      // Only a bug or a broken database gets here; the episode still must not crash.
      return error('internal', `${name} failed: ${(err as Error).message}`);
    }
  }

  private run(name: InvoiceToolName, args: Record<string, unknown>): ToolResult {
    const statement = this.statements[name];
    switch (name) {
      case 'GetOrderBySubscription': {
        const rows = statement.all({ sub_no: args.sub_no }) as Row[];
        return orderRowsResult(rows, `no order rows for subscription ${String(args.sub_no)}`);
      }
      case 'SearchSupplier': {
        const norm = (v: unknown) => (v === null ? null : normalizeIdentifier(String(v)));
        const rows = statement.all({
          name: args.name === null ? null : fold(String(args.name)),
          iban: norm(args.iban),
          bankgiro: norm(args.bankgiro),
          postgiro: norm(args.postgiro),
          vat_number: norm(args.vat_number),
        }) as Row[];
        const shown = rows.slice(0, MAX_SUPPLIERS);
        const body: Row = { suppliers: shown };
        if (rows.length > MAX_SUPPLIERS) body.note = `only the first ${MAX_SUPPLIERS} suppliers are shown; narrow the search`;
        if (rows.length === 0) body.note = 'no supplier matches all the given parameters';
        return { outcome: 'ok', content: JSON.stringify(body), chunkIds: shown.map((r) => `supplier:${String(r.supplier_id)}`) };
      }
      case 'LookupOrderRows': {
        const rows = statement.all({
          supplier_id: String(args.supplier_id).toLowerCase(),
          period_start: args.period_start,
          period_end: args.period_end,
          product_name: args.product_name === null ? null : fold(String(args.product_name)),
          subscriber_name: args.subscriber_name === null ? null : fold(String(args.subscriber_name)),
        }) as Row[];
        return orderRowsResult(rows, 'no order rows match; check that supplier_id comes from SearchSupplier and loosen the filters');
      }
    }
  }
}
