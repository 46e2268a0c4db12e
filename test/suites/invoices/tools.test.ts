import { describe, expect, it } from 'vitest';
import { groupIban, normalizeIdentifier } from '../../../src/suites/invoices/bank.js';
import { buildInvoiceDb } from '../../../src/suites/invoices/generate.js';
import { INVOICE_TOOL_SPECS, InvoiceTools, MAX_ORDER_ROWS } from '../../../src/suites/invoices/tools.js';
import type { ToolResult } from '../../../src/env/types.js';

const { db, world } = buildInvoiceDb();
const tools = new InvoiceTools(db);
type Row = Record<string, unknown>;

function ok(result: ToolResult): Row {
  expect(result.outcome, result.content).toBe('ok');
  return JSON.parse(result.content) as Row;
}
const rowsOf = (result: ToolResult) => (ok(result)['rows'] as Row[]) ?? [];
const suppliersOf = (result: ToolResult) => (ok(result)['suppliers'] as Row[]) ?? [];
const call = (name: string, args: unknown) => tools.call({ name, arguments: args });

function expectError(result: ToolResult, kind: string, mentions: RegExp) {
  expect(result.outcome).toBe('error');
  expect(result.errorKind).toBe(kind);
  expect(result.content).toMatch(mentions);
  expect(result.content.length).toBeLessThan(300);
  expect(result.chunkIds).toEqual([]);
}

const productsById = new Map(world.products.map((p) => [p.id, p]));
const supplierOfRow = (r: (typeof world.orderRows)[number]) => productsById.get(r.productId)!.supplierId;

describe('tool specs', () => {
  it('declares the three tools with one-line descriptions and JSON Schemas', () => {
    expect(INVOICE_TOOL_SPECS.map((t) => t.name)).toEqual(['GetOrderBySubscription', 'SearchSupplier', 'LookupOrderRows']);
    for (const spec of INVOICE_TOOL_SPECS) {
      expect(spec.description).not.toContain('\n');
      expect(spec.parameters['type']).toBe('object');
    }
    expect(INVOICE_TOOL_SPECS[0]!.parameters['required']).toEqual(['sub_no']);
    expect(INVOICE_TOOL_SPECS[2]!.parameters['required']).toEqual(['supplier_id']);
  });

  it('an unknown tool or unreadable arguments are short errors, never exceptions', () => {
    expectError(call('DropTables', {}), 'unknown_tool', /unknown tool 'DropTables'/);
    expectError(call('GetOrderBySubscription', '{"sub_no": '), 'bad_arguments', /not a JSON object/);
    expectError(call('GetOrderBySubscription', 42), 'bad_arguments', /GetOrderBySubscription/);
  });
});

describe('GetOrderBySubscription', () => {
  const counts = new Map<number, number>();
  for (const r of world.orderRows) counts.set(r.subscriptionNo, (counts.get(r.subscriptionNo) ?? 0) + 1);
  const renewed = [...counts.entries()].find(([, n]) => n >= 3)![0];

  it('returns every order row of the subscription, newest delivery period first', () => {
    const result = call('GetOrderBySubscription', { sub_no: renewed });
    const rows = rowsOf(result);
    expect(rows.length).toBe(counts.get(renewed));
    const starts = rows.map((r) => String(r['period_start']));
    expect(starts).toEqual([...starts].sort().reverse());
    expect(rows.every((r) => r['subscription_no'] === renewed)).toBe(true);
    // Rows carry what the questions ask about.
    for (const field of ['product', 'supplier', 'department', 'organisation', 'parent_corporation', 'subscriber', 'period_end', 'amount', 'invoice_no']) expect(rows[0]).toHaveProperty(field);
    expect(result.chunkIds).toHaveLength(rows.length);
    expect(result.chunkIds.every((id) => id.startsWith('order_row:'))).toBe(true);
  });

  it('never shows a supplier id: only SearchSupplier gives those', () => {
    const row = world.orderRows.find((r) => r.subscriptionNo === renewed)!;
    expect(call('GetOrderBySubscription', { sub_no: renewed }).content).not.toContain(supplierOfRow(row));
  });

  it('accepts the number written as a string', () => {
    expect(rowsOf(call('GetOrderBySubscription', { sub_no: ` ${renewed} ` }))).toHaveLength(counts.get(renewed)!);
    expect(rowsOf(call('GetOrderBySubscription', JSON.stringify({ sub_no: renewed })))).toHaveLength(counts.get(renewed)!);
  });

  it('an unknown subscription is an empty result with a note', () => {
    const body = ok(call('GetOrderBySubscription', { sub_no: 1 }));
    expect(body['rows']).toEqual([]);
    expect(String(body['note'])).toContain('no order rows for subscription 1');
  });

  it('rejects a missing, non-numeric or negative number and unknown arguments', () => {
    expectError(call('GetOrderBySubscription', {}), 'bad_arguments', /sub_no/);
    expectError(call('GetOrderBySubscription', { sub_no: 'abc' }), 'bad_arguments', /sub_no/);
    expectError(call('GetOrderBySubscription', { sub_no: -5 }), 'bad_arguments', /sub_no/);
    expectError(call('GetOrderBySubscription', { sub_no: 12.5 }), 'bad_arguments', /sub_no/);
    expectError(call('GetOrderBySubscription', { sub_no: renewed, supplier: 'x' }), 'bad_arguments', /unknown argument.*'supplier'/);
  });
});

describe('SearchSupplier', () => {
  const withPostgiro = world.suppliers.find((s) => s.postgiro !== null)!;
  const swedish = world.suppliers.find((s) => /[åäö]/.test(s.name))!;

  it('matches part of the name, ignoring case (Swedish letters too)', () => {
    const part = swedish.name.slice(0, Math.max(4, swedish.name.search(/[åäö]/) + 2)).toLocaleUpperCase('sv');
    const found = suppliersOf(call('SearchSupplier', { name: part }));
    expect(found.map((s) => s['supplier_id'])).toContain(swedish.id);
    expect(found.every((s) => String(s['name']).toLocaleUpperCase('sv').includes(part))).toBe(true);
  });

  it('matches identifiers ignoring spaces and dashes', () => {
    const s = withPostgiro;
    const ids = (args: Row) => suppliersOf(call('SearchSupplier', args)).map((x) => x['supplier_id']);
    expect(ids({ iban: s.iban })).toEqual([s.id]);
    expect(ids({ iban: groupIban(s.iban) })).toEqual([s.id]);
    expect(ids({ iban: groupIban(s.iban).replace(/ /g, '-').toLowerCase() })).toEqual([s.id]);
    expect(ids({ bankgiro: normalizeIdentifier(s.bankgiro) })).toEqual([s.id]);
    expect(ids({ bankgiro: s.bankgiro.replace('-', ' ') })).toEqual([s.id]);
    expect(ids({ postgiro: normalizeIdentifier(s.postgiro!) })).toEqual([s.id]);
    expect(ids({ postgiro: s.postgiro! })).toEqual([s.id]);
    expect(ids({ vat_number: `SE ${s.orgNumber} 01` })).toEqual([s.id]);
    expect(ids({ vat_number: `se${s.orgNumber.slice(0, 6)}-${s.orgNumber.slice(6)}01` })).toEqual([s.id]);
  });

  it('identifiers match whole, not in part', () => {
    expect(suppliersOf(call('SearchSupplier', { bankgiro: normalizeIdentifier(withPostgiro.bankgiro).slice(0, -1) }))).toEqual([]);
  });

  it('requires every given parameter to match', () => {
    const [a, b] = world.suppliers;
    expect(suppliersOf(call('SearchSupplier', { name: a!.shortName, bankgiro: a!.bankgiro })).map((s) => s['supplier_id'])).toEqual([a!.id]);
    const none = ok(call('SearchSupplier', { name: a!.shortName, bankgiro: b!.bankgiro }));
    expect(none['suppliers']).toEqual([]);
    expect(String(none['note'])).toMatch(/no supplier/);
  });

  it('returns the supplier id with its bank details, and reports the suppliers as seen', () => {
    const s = world.suppliers[3]!;
    const result = call('SearchSupplier', { name: s.name });
    expect(suppliersOf(result)).toEqual([
      expect.objectContaining({ supplier_id: s.id, name: s.name, bankgiro: s.bankgiro, vat_number: s.vatNumber, postgiro: s.postgiro }),
    ]);
    expect(result.chunkIds).toEqual([`supplier:${s.id}`]);
  });

  it('needs at least one parameter; empty strings and nulls do not count', () => {
    expectError(call('SearchSupplier', {}), 'bad_arguments', /at least one of name, iban/);
    expectError(call('SearchSupplier', { name: '  ', iban: null }), 'bad_arguments', /at least one/);
    expectError(call('SearchSupplier', { name: 5 }), 'bad_arguments', /'name'/);
  });

  it('takes the name literally: SQL wildcards match nothing', () => {
    expect(suppliersOf(call('SearchSupplier', { name: '%' }))).toEqual([]);
    expect(suppliersOf(call('SearchSupplier', { name: '_' }))).toEqual([]);
  });

  it('caps long result lists with a note', () => {
    const body = ok(call('SearchSupplier', { name: 'a' }));
    expect((body['suppliers'] as Row[]).length).toBe(10);
    expect(String(body['note'])).toMatch(/first 10/);
  });
});

describe('LookupOrderRows', () => {
  // A supplier with many order rows, to test filters against a brute-force reading of the world.
  const rowsBySupplier = new Map<string, typeof world.orderRows>();
  for (const r of world.orderRows) rowsBySupplier.set(supplierOfRow(r), [...(rowsBySupplier.get(supplierOfRow(r)) ?? []), r]);
  const [busyId, busyRows] = [...rowsBySupplier.entries()].sort((a, b) => b[1].length - a[1].length)[0]!;
  const medium = [...rowsBySupplier.entries()].find(([, rows]) => rows.length >= 6 && rows.length <= MAX_ORDER_ROWS)!;
  const lookup = (args: Row) => call('LookupOrderRows', args);
  const idsOf = (result: ToolResult) => [...result.chunkIds].sort();
  const expected = (rows: typeof world.orderRows) => rows.map((r) => `order_row:${r.id}`).sort();

  it('returns the supplier order rows, newest period first', () => {
    const [id, rows] = medium;
    const result = lookup({ supplier_id: id });
    expect(idsOf(result)).toEqual(expected(rows));
    const starts = rowsOf(result).map((r) => String(r['period_start']));
    expect(starts).toEqual([...starts].sort().reverse());
  });

  it('filters by period overlap, edges included', () => {
    const [id, rows] = medium;
    const windows = [
      ['2023-01-01', '2023-06-30'],
      ['2022-06-15', '2022-06-15'],
      ['2024-12-31', '2025-01-01'],
    ];
    for (const row of rows.slice(0, 3)) windows.push([row.periodEnd, row.periodEnd], [row.periodStart, row.periodStart]);
    for (const [start, end] of windows) {
      const want = rows.filter((r) => r.periodStart <= end! && r.periodEnd >= start!);
      expect(idsOf(lookup({ supplier_id: id, period_start: start, period_end: end })), `${start}..${end}`).toEqual(expected(want));
    }
    // Open-ended windows.
    const from = rows[0]!.periodStart;
    expect(idsOf(lookup({ supplier_id: id, period_start: from }))).toEqual(expected(rows.filter((r) => r.periodEnd >= from)));
    expect(idsOf(lookup({ supplier_id: id, period_end: from }))).toEqual(expected(rows.filter((r) => r.periodStart <= from)));
    // The day after a row ends does not overlap it.
    const row = rows[0]!;
    const dayAfter = new Date(Date.parse(`${row.periodEnd}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    expect(idsOf(lookup({ supplier_id: id, period_start: dayAfter, period_end: dayAfter }))).not.toContain(`order_row:${row.id}`);
  });

  it('matches part of the product and subscriber names, ignoring case', () => {
    const [id, rows] = medium;
    const row = rows[0]!;
    const product = productsById.get(row.productId)!.name;
    const part = product.split(' ')[0]!.toUpperCase();
    const want = rows.filter((r) => productsById.get(r.productId)!.name.toLowerCase().includes(part.toLowerCase()));
    expect(idsOf(lookup({ supplier_id: id, product_name: part }))).toEqual(expected(want));
    const surname = row.subscriber.split(' ')[1]!.toLowerCase();
    const bySub = rows.filter((r) => r.subscriber.toLowerCase().includes(surname));
    expect(idsOf(lookup({ supplier_id: id.toUpperCase(), subscriber_name: surname }))).toEqual(expected(bySub));
    const both = rows.filter((r) => r.subscriber === row.subscriber && productsById.get(r.productId)!.name === product);
    expect(idsOf(lookup({ supplier_id: id, subscriber_name: row.subscriber, product_name: product }))).toEqual(expected(both));
  });

  it('caps long results with a note', () => {
    expect(busyRows.length).toBeGreaterThan(MAX_ORDER_ROWS);
    const result = lookup({ supplier_id: busyId });
    expect(rowsOf(result)).toHaveLength(MAX_ORDER_ROWS);
    expect(String(ok(result)['note'])).toMatch(/narrow/);
  });

  it('an unknown supplier id gives no rows and says where ids come from', () => {
    const body = ok(lookup({ supplier_id: '00000000-0000-4000-8000-000000000000' }));
    expect(body['rows']).toEqual([]);
    expect(String(body['note'])).toMatch(/SearchSupplier/);
  });

  it('rejects a supplier name or number as supplier_id, bad dates and reversed periods', () => {
    const [id] = medium;
    expectError(lookup({ supplier_id: world.suppliers[0]!.name }), 'bad_arguments', /supplier_id.*UUID returned by SearchSupplier/);
    expectError(lookup({}), 'bad_arguments', /supplier_id/);
    expectError(lookup({ supplier_id: id, period_start: '2024-02-30' }), 'bad_arguments', /period_start.*YYYY-MM-DD/);
    expectError(lookup({ supplier_id: id, period_end: 'March 2024' }), 'bad_arguments', /period_end.*YYYY-MM-DD/);
    expectError(lookup({ supplier_id: id, period_start: '2024-05-01', period_end: '2024-04-01' }), 'bad_arguments', /after period_end/);
  });
});
