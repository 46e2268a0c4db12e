/**
 * Scripted policies for the invoice environment, to bound its metrics: the oracle follows the
 * task's gold route through the real tools and writes a reply from what the tools returned; the
 * baseline makes one plausible call and replies with the first record it got back.
 *
 * They are written against the shapes of src/agent/types.ts (AgentTurn, ToolExchange, Agent)
 * without importing them, since environments sit before agents in the data flow: a plan
 * generator here can be delegated to (`yield*`) from a scripted agent, and the agents below are
 * structurally `Agent`s that runEpisode accepts.
 */
import type { Task } from '../../tasks/task.js';
import type { ToolResult } from '../../env/types.js';
import type { Lang } from './names.js';
import { SUPPLIER_FROM_SEARCH, type Route, type RouteStep } from './route.js';

export interface PlanCall {
  name: string;
  arguments: Record<string, unknown>;
  status: 'ok';
}
export interface PlanTurn {
  text: string;
  calls: PlanCall[];
}
export interface PlanExchange {
  result: ToolResult;
}
export type InvoicePlan = Generator<PlanTurn, void, PlanExchange[]>;

type Row = Record<string, unknown>;

function parseBody(results: PlanExchange[]): Row {
  const last = results.at(-1)?.result;
  if (!last || last.outcome !== 'ok') return {};
  try {
    return JSON.parse(last.content) as Row;
  } catch {
    return {};
  }
}

function turn(text: string, call?: RouteStep | PlanCall): PlanTurn {
  return { text, calls: call ? [{ name: call.name, arguments: { ...call.arguments }, status: 'ok' }] : [] };
}

const LABELS: Record<Lang, Record<string, string>> = {
  sv: {
    product: 'Produkt', department: 'Avdelning', period_end: 'Periodens slutdatum', invoice_no: 'Fakturanummer',
    supplier: 'Leverantör', amount: 'Belopp (kr)', subscription_no: 'Prenumerationsnummer', period_start: 'Periodens startdatum',
    subscriber: 'Prenumerant', organisation: 'Organisation', invoice_date: 'Fakturadatum', invoice_status: 'Fakturastatus',
    name: 'Leverantör', bankgiro: 'Bankgiro', iban: 'IBAN', postgiro: 'Plusgiro', vat_number: 'Momsregistreringsnummer',
  },
  en: {
    product: 'Product', department: 'Department', period_end: 'Period end date', invoice_no: 'Invoice number',
    supplier: 'Supplier', amount: 'Amount (SEK)', subscription_no: 'Subscription number', period_start: 'Period start date',
    subscriber: 'Subscriber', organisation: 'Organisation', invoice_date: 'Invoice date', invoice_status: 'Invoice status',
    name: 'Supplier', bankgiro: 'Bankgiro', iban: 'IBAN', postgiro: 'Postgiro', vat_number: 'VAT number',
  },
};

/** A short reply in the email's language listing the given fields of one record. */
export function writeReply(lang: Lang, record: Row, fields: string[]): string {
  const lines = fields.filter((f) => record[f] !== undefined && record[f] !== null).map((f) => `${LABELS[lang][f] ?? f}: ${String(record[f])}`);
  if (lang === 'sv') {
    return lines.length > 0
      ? `Hej!\n\nTack för ditt mejl. Här är uppgifterna:\n${lines.join('\n')}\n\nVänliga hälsningar\nKundtjänst`
      : 'Hej!\n\nTyvärr hittar vi inga uppgifter som matchar din fråga. Kan du skicka fler detaljer?\n\nVänliga hälsningar\nKundtjänst';
  }
  return lines.length > 0
    ? `Hello,\n\nThank you for your email. Here are the details:\n${lines.join('\n')}\n\nKind regards,\nCustomer service`
    : "Hello,\n\nUnfortunately we couldn't find anything matching your question. Could you send more details?\n\nKind regards,\nCustomer service";
}

function langOf(task: Task): Lang {
  return task.meta?.['lang'] === 'en' ? 'en' : 'sv';
}

/** The gold route of an invoice task (from its meta). */
export function routeOf(task: Task): Route {
  const route = task.meta?.['route'] as Route | undefined;
  if (!route || !Array.isArray(route.steps) || !Array.isArray(route.answerFields)) throw new Error(`task '${task.id}' has no invoice route in meta.route`);
  return route;
}

/**
 * Follow the gold route: each step is one call, the supplier id carried from SearchSupplier's
 * result into LookupOrderRows; then reply with the answer fields of the first row returned.
 */
export function* invoiceOraclePlan(task: Task): InvoicePlan {
  const route = routeOf(task);
  let supplierId: string | undefined;
  let body: Row = {};
  for (const step of route.steps) {
    const args = Object.fromEntries(Object.entries(step.arguments).map(([k, v]) => [k, v === SUPPLIER_FROM_SEARCH ? (supplierId ?? v) : v]));
    const results = yield turn(`Call ${step.name}.`, { name: step.name, arguments: args });
    body = parseBody(results);
    if (step.name === 'SearchSupplier') {
      const suppliers = (body['suppliers'] as Row[] | undefined) ?? [];
      supplierId = suppliers.length > 0 ? String(suppliers[0]!['supplier_id']) : undefined;
    }
  }
  const rows = (body['rows'] as Row[] | undefined) ?? [];
  yield turn(writeReply(langOf(task), rows[0] ?? {}, route.answerFields));
}

const ORDER_ROW_FIELDS = ['subscription_no', 'product', 'supplier', 'department', 'subscriber', 'period_start', 'period_end', 'amount', 'invoice_no', 'invoice_status'];
const SUPPLIER_FIELDS = ['name', 'bankgiro', 'iban', 'postgiro', 'vat_number'];

/** The one call a naive agent would make from the email's surface. */
export function plausibleCall(email: string): PlanCall | undefined {
  const call = (name: string, args: Record<string, unknown>): PlanCall => ({ name, arguments: args, status: 'ok' });
  const subscription = /(?<![\d-])\d{5}(?![\d-])/u.exec(email);
  if (subscription) return call('GetOrderBySubscription', { sub_no: Number(subscription[0]) });
  const iban = /\bSE\d{2}(?:[ -]?\d{4}){5}\b/iu.exec(email);
  if (iban) return call('SearchSupplier', { iban: iban[0] });
  const vat = /\bSE ?\d{6}-?\d{4} ?01\b/iu.exec(email);
  if (vat) return call('SearchSupplier', { vat_number: vat[0] });
  const bankgiro = /(?<!\d)\d{3,4}[- ]?\d{4}(?!\d)/u.exec(email);
  if (bankgiro) return call('SearchSupplier', { bankgiro: bankgiro[0] });
  return undefined;
}

/** One plausible call, then a reply listing the first record it returned. */
export function* invoiceBaselinePlan(task: Task): InvoicePlan {
  const call = plausibleCall(task.query);
  if (!call) {
    yield turn(writeReply(langOf(task), {}, []));
    return;
  }
  const body = parseBody(yield turn(`Call ${call.name}.`, call));
  const rows = (body['rows'] as Row[] | undefined) ?? (body['suppliers'] as Row[] | undefined) ?? [];
  yield turn(writeReply(langOf(task), rows[0] ?? {}, call.name === 'SearchSupplier' ? SUPPLIER_FIELDS : ORDER_ROW_FIELDS));
}

/** A scripted agent over a plan, shaped like src/agent/types.ts's Agent. */
export interface PlanAgent {
  readonly spec: string;
  start(ctx: { task: Task }): { next(results: PlanExchange[]): Promise<PlanTurn> };
}

function planAgent(spec: string, plan: (task: Task) => InvoicePlan): PlanAgent {
  return {
    spec,
    start(ctx) {
      const generator = plan(ctx.task);
      let started = false;
      return {
        async next(results) {
          const step = started ? generator.next(results) : generator.next(undefined as unknown as PlanExchange[]);
          started = true;
          return step.done ? turn('') : step.value;
        },
      };
    },
  };
}

export function invoiceOracleAgent(spec = 'oracle'): PlanAgent {
  return planAgent(spec, invoiceOraclePlan);
}

export function invoiceBaselineAgent(spec = 'baseline'): PlanAgent {
  return planAgent(spec, invoiceBaselinePlan);
}
