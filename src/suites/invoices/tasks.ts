/**
 * The 2,000 invoice tasks: customer emails sampled from the same seeded pass as the database.
 * Each task has a gold SQL query (its gold values are whatever the query returns against the
 * database) and a gold route through the real tools. A task is kept only if its email never
 * contains a gold value, its gold route resolves to exactly the gold values, and its template
 * combination is new for its question type.
 *
 * Type mix (the seed's): three easy types, one GetOrderBySubscription call (58%); two types that
 * need SearchSupplier first (21% by supplier name, 21% by bank identifier).
 * Tasks 0–1799 train, 1800–1999 validation; the validation tasks come from the database's
 * validation world, whose suppliers and organisations never trade with the training world.
 */
import type Database from 'better-sqlite3';
import type { Task } from '../../tasks/task.js';
import { normalizeIdentifier } from './bank.js';
import type { BuiltDb, InvoiceWorld, OrderRow, Supplier, WorldName } from './generate.js';
import { personName } from './generate.js';
import type { Lang } from './names.js';
import { Rng } from './prng.js';
import { runRoute, SUPPLIER_FROM_SEARCH, type Route } from './route.js';
import { containsGoldValue } from './score.js';
import {
  chooseTemplate, ID_LABELS, renderEmail, SUBSCRIPTION_PHRASES, templateKey,
  type EmailFacts, type IdKind, type QuestionType, type SenderRole,
} from './templates.js';
import type { InvoiceTools } from './tools.js';

export type { QuestionType, SenderRole } from './templates.js';
export type InvoiceSplit = 'train' | 'validation';

export interface InvoiceTask {
  id: string;
  index: number;
  split: InvoiceSplit;
  type: QuestionType;
  lang: Lang;
  sender: SenderRole;
  /** The customer email. */
  question: string;
  /** What the reply must contain; the gold SQL's result row, as text. */
  gold_values: string[];
  gold_sql: string;
  route: Route;
  /** Order rows that carry the answer (as `order_row:<id>`, the ids tool results report). */
  gold_row_ids: string[];
  supplier_id: string;
  organisation_id: number;
  /** Which template variants wrote the email (unique within the question type). */
  template: string;
}

export const TASK_COUNTS = { train: 1800, validation: 200 } as const;

/** Per split, tasks of each type: 58% easy (three types), 21% + 21% two-call. */
const TYPE_COUNTS: Record<InvoiceSplit, Record<QuestionType, number>> = {
  train: {
    subscription_product_department: 348,
    subscription_period_invoice: 348,
    subscription_supplier_amount: 348,
    supplier_subscriber_lookup: 378,
    bank_id_period_lookup: 378,
  },
  validation: {
    subscription_product_department: 39,
    subscription_period_invoice: 39,
    subscription_supplier_amount: 38,
    supplier_subscriber_lookup: 42,
    bank_id_period_lookup: 42,
  },
};

/** 15% of emails come from end customers (subscribers); bank-identifier questions are staff-only. */
const END_CUSTOMERS: Record<InvoiceSplit, number> = { train: 270, validation: 30 };

export const ONE_CALL_TYPES: readonly QuestionType[] = ['subscription_product_department', 'subscription_period_invoice', 'subscription_supplier_amount'];

const MONTH_NAMES: Record<Lang, readonly string[]> = {
  sv: ['januari', 'februari', 'mars', 'april', 'maj', 'juni', 'juli', 'augusti', 'september', 'oktober', 'november', 'december'],
  en: ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'],
};

/** A literal for gold SQL (the queries are stored as text, so they carry their values). */
function sqlText(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

function lastDayOfMonth(year: number, month: number): string {
  const d = new Date(Date.UTC(year, month, 0));
  return d.toISOString().slice(0, 10);
}

interface Planned {
  type: QuestionType;
  lang: Lang;
  sender: SenderRole;
}

function plan(rng: Rng, split: InvoiceSplit): Planned[] {
  const items: Planned[] = [];
  for (const [type, count] of Object.entries(TYPE_COUNTS[split]) as [QuestionType, number][]) {
    for (let i = 0; i < count; i++) items.push({ type, lang: 'sv', sender: 'client_staff' });
  }
  // Exactly half in each language, alternating within each type so every type is balanced too.
  items.forEach((item, i) => (item.lang = i % 2 === 0 ? 'sv' : 'en'));
  const eligible = rng.shuffle(items.filter((it) => it.type !== 'bank_id_period_lookup'));
  for (const item of eligible.slice(0, END_CUSTOMERS[split])) item.sender = 'end_customer';
  return rng.shuffle(items);
}

/** Everything about one order row that the generator needs, looked up once. */
interface RowFacts {
  row: OrderRow;
  supplier: Supplier;
  productName: string;
  organisationId: number;
  organisationName: string;
  departmentName: string;
  otherDepartments: string[];
}

function indexWorld(world: InvoiceWorld) {
  const suppliers = new Map(world.suppliers.map((s) => [s.id, s]));
  const products = new Map(world.products.map((p) => [p.id, p]));
  const organisations = new Map(world.organisations.map((o) => [o.id, o]));
  const departments = new Map(world.organisations.flatMap((o) => o.departments.map((d) => [d.id, { d, o }] as const)));
  const facts = (row: OrderRow): RowFacts => {
    const product = products.get(row.productId)!;
    const { d, o } = departments.get(row.departmentId)!;
    return {
      row,
      supplier: suppliers.get(product.supplierId)!,
      productName: product.name,
      organisationId: o.id,
      organisationName: organisations.get(o.id)!.name,
      departmentName: d.name,
      otherDepartments: o.departments.filter((x) => x.id !== d.id).map((x) => x.name),
    };
  };
  // Newest row of each subscription, per world (the world is the supplier's, which is the organisation's).
  const newestBySubscription = new Map<number, OrderRow>();
  for (const row of world.orderRows) {
    const seen = newestBySubscription.get(row.subscriptionNo);
    if (!seen || row.periodStart > seen.periodStart) newestBySubscription.set(row.subscriptionNo, row);
  }
  const byWorld = (rows: Iterable<OrderRow>, w: WorldName) => [...rows].filter((r) => facts(r).supplier.world === w);
  return { facts, newestBySubscription, byWorld };
}

interface Draft {
  facts: Partial<EmailFacts>;
  /** How the scenario's key fact is written (part of the template key). */
  factForm: string;
  goldSql: string;
  route: Route;
}

/** How an identifier is written in an email: not always as the supplier registered it. */
function writeIdentifier(rng: Rng, kind: IdKind, supplier: Supplier): { text: string; form: number } {
  const form = rng.int(0, 2);
  switch (kind) {
    case 'iban': {
      const grouped = supplier.iban.replace(/(.{4})(?=.)/g, '$1 ');
      return { text: [supplier.iban, grouped, grouped.replace(/ /g, '-')][form]!, form };
    }
    case 'bankgiro':
      return { text: [supplier.bankgiro, normalizeIdentifier(supplier.bankgiro), supplier.bankgiro.replace('-', ' ')][form]!, form };
    case 'postgiro': {
      const digits = normalizeIdentifier(supplier.postgiro!);
      return { text: [supplier.postgiro!, digits, `${digits.slice(0, -1)}-${digits.slice(-1)}`][form]!, form };
    }
    case 'vat_number': {
      const org = supplier.orgNumber;
      return { text: [supplier.vatNumber, `SE ${org} 01`, `SE${org.slice(0, 6)}-${org.slice(6)}01`][form]!, form };
    }
  }
}

/** A period inside the row's period, as the email writes it and as the route asks for it. */
function writePeriod(rng: Rng, lang: Lang, row: OrderRow): { text: string; start: string; end: string; form: number } {
  const [sy, sm] = row.periodStart.split('-').map(Number) as [number, number];
  const [ey, em] = row.periodEnd.split('-').map(Number) as [number, number];
  const months = MONTH_NAMES[lang];
  const form = rng.int(0, 2);
  if (form === 0) {
    return { text: `${row.periodStart} ${lang === 'sv' ? '–' : 'to'} ${row.periodEnd}`, start: row.periodStart, end: row.periodEnd, form };
  }
  if (form === 1) {
    const from = sy === ey ? months[sm - 1]! : `${months[sm - 1]} ${sy}`;
    const text = `${from} ${lang === 'sv' ? 'till' : 'to'} ${months[em - 1]} ${ey}`;
    return { text, start: row.periodStart, end: row.periodEnd, form };
  }
  // One month within the period.
  const offset = rng.int(0, (ey - sy) * 12 + (em - sm));
  const year = sy + Math.floor((sm - 1 + offset) / 12);
  const month = ((sm - 1 + offset) % 12) + 1;
  const start = `${year}-${String(month).padStart(2, '0')}-01`;
  return { text: `${months[month - 1]} ${year}`, start, end: lastDayOfMonth(year, month), form };
}

const ORDER_ROW_JOINS = `FROM order_rows o
  JOIN products p ON p.id = o.product_id
  JOIN suppliers s ON s.id = p.supplier_id
  JOIN departments d ON d.id = o.department_id
  JOIN invoice_rows ir ON ir.order_row_id = o.id
  JOIN invoices i ON i.id = ir.invoice_id`;

function draft(rng: Rng, type: QuestionType, lang: Lang, f: RowFacts): Draft | undefined {
  const sub = f.row.subscriptionNo;
  const bySubscription = (fields: string[], columns: string): Draft => {
    const phrase = rng.int(0, SUBSCRIPTION_PHRASES[lang].length - 1);
    return {
      facts: { subscription: SUBSCRIPTION_PHRASES[lang][phrase]!(sub) },
      factForm: `p${phrase}`,
      goldSql: `SELECT ${columns} ${ORDER_ROW_JOINS}\nWHERE o.subscription_no = ${sub}\nORDER BY o.period_start DESC LIMIT 1`,
      route: { steps: [{ name: 'GetOrderBySubscription', arguments: { sub_no: sub } }], answerFields: fields, answerFrom: 'first' },
    };
  };
  switch (type) {
    case 'subscription_product_department':
      return bySubscription(['product', 'department'], 'p.name AS product, d.name AS department');
    case 'subscription_period_invoice':
      return bySubscription(['period_end', 'invoice_no'], 'o.period_end, i.invoice_no');
    case 'subscription_supplier_amount':
      return bySubscription(['supplier', 'amount'], "s.name AS supplier, printf('%.2f', o.amount) AS amount");
    case 'supplier_subscriber_lookup': {
      const supplierForm = rng.int(0, 1);
      const supplier = supplierForm === 0 ? f.supplier.name : f.supplier.shortName;
      // People drop the edition ("Print", "Digital") about half the time.
      const words = f.productName.split(' ');
      const editionWords = ['och', 'and'].includes(words.at(-2) ?? '') ? 3 : 1;
      const productForm = rng.int(0, 1);
      const product = productForm === 0 ? f.productName : words.slice(0, -editionWords).join(' ');
      return {
        facts: { supplier, product, subscriber: f.row.subscriber },
        factForm: `n${supplierForm}p${productForm}`,
        goldSql:
          `SELECT DISTINCT o.subscription_no, d.name AS department ${ORDER_ROW_JOINS}\n` +
          `WHERE s.id = ${sqlText(f.supplier.id)} AND o.subscriber_name = ${sqlText(f.row.subscriber)} AND p.name = ${sqlText(f.productName)}`,
        route: {
          steps: [
            { name: 'SearchSupplier', arguments: { name: supplier } },
            { name: 'LookupOrderRows', arguments: { supplier_id: SUPPLIER_FROM_SEARCH, product_name: product, subscriber_name: f.row.subscriber } },
          ],
          answerFields: ['subscription_no', 'department'],
          answerFrom: 'unique',
        },
      };
    }
    case 'bank_id_period_lookup': {
      const kinds: IdKind[] = ['iban', 'bankgiro', 'vat_number', ...(f.supplier.postgiro ? (['postgiro'] as const) : [])];
      const kind = rng.pick(kinds);
      const id = writeIdentifier(rng, kind, f.supplier);
      const labels = ID_LABELS[lang][kind];
      const label = rng.int(0, labels.length - 1);
      const period = writePeriod(rng, lang, f.row);
      return {
        facts: { idLabel: labels[label]!, idValue: id.text, subscriber: f.row.subscriber, period: period.text },
        factForm: `${kind}${id.form}l${label}d${period.form}`,
        goldSql:
          `SELECT p.name AS product, i.invoice_no ${ORDER_ROW_JOINS}\n` +
          `WHERE s.id = ${sqlText(f.supplier.id)} AND o.subscriber_name = ${sqlText(f.row.subscriber)}\n` +
          `  AND o.period_start <= ${sqlText(period.end)} AND o.period_end >= ${sqlText(period.start)}`,
        route: {
          steps: [
            { name: 'SearchSupplier', arguments: { [kind]: id.text } },
            {
              name: 'LookupOrderRows',
              arguments: { supplier_id: SUPPLIER_FROM_SEARCH, period_start: period.start, period_end: period.end, subscriber_name: f.row.subscriber },
            },
          ],
          answerFields: ['product', 'invoice_no'],
          answerFrom: 'unique',
        },
      };
    }
  }
}

/** Run a gold query: it must return exactly one row; its cells, as text, are the gold values. */
export function runGoldSql(db: Database.Database, sql: string): string[] {
  const rows = db.prepare(sql).raw().all() as unknown[][];
  if (rows.length !== 1) throw new Error(`gold SQL returned ${rows.length} rows, not 1:\n${sql}`);
  return rows[0]!.map((cell) => String(cell));
}

/** Generate every task (deterministic in the world's seed). */
export function generateInvoiceTasks(built: BuiltDb, tools: InvoiceTools): InvoiceTask[] {
  const { db, world } = built;
  const rng = new Rng(`${world.seed}:tasks`);
  const index = indexWorld(world);
  const tasks: InvoiceTask[] = [];
  // Template combinations already used, per question type, across both splits.
  const usedTemplates = new Set<string>();

  for (const split of ['train', 'validation'] as const) {
    const subscriptions = index.byWorld(index.newestBySubscription.values(), split);
    const rows = index.byWorld(world.orderRows, split);
    // Each type walks its own shuffled pool, so scenarios repeat within a type only once the pool is spent.
    const pools = new Map<QuestionType, { items: OrderRow[]; next: number }>();
    const nextScenario = (type: QuestionType) => {
      let pool = pools.get(type);
      if (!pool) pools.set(type, (pool = { items: rng.shuffle(type === 'bank_id_period_lookup' ? rows : subscriptions), next: 0 }));
      return pool.items[pool.next++ % pool.items.length]!;
    };

    /** One try at a task for this plan item on this scenario; undefined when a check fails. */
    const attempt = (item: Planned, f: RowFacts): InvoiceTask | undefined => {
      const d = draft(rng, item.type, item.lang, f);
      if (!d) return undefined;
      const choice = chooseTemplate(item.type, item.sender, item.lang, (n) => rng.int(0, n - 1));
      const key = `${item.type}:${templateKey(item.lang, item.sender, choice, d.factForm)}`;
      if (usedTemplates.has(key)) return undefined;
      const staff = item.sender === 'client_staff';
      const facts: EmailFacts = {
        ...d.facts,
        senderName: staff ? personName(rng, item.lang) : f.row.subscriber,
        senderDepartment: f.otherDepartments.length > 0 ? rng.pick(f.otherDepartments) : '',
        organisation: f.organisationName,
      };
      if (staff && facts.senderDepartment === '') return undefined;
      const question = renderEmail(item.type, item.sender, item.lang, choice, facts);
      const goldValues = runGoldSql(db, d.goldSql);
      if (goldValues.some((g) => containsGoldValue(question, g))) return undefined;
      const routed = runRoute(tools, d.route);
      if (!routed.answer || JSON.stringify(routed.answer) !== JSON.stringify(goldValues)) return undefined;
      usedTemplates.add(key);
      const taskIndex = tasks.length;
      const last = routed.calls.at(-1)!.result;
      return {
        id: `invoices-${String(taskIndex).padStart(4, '0')}`,
        index: taskIndex,
        split,
        type: item.type,
        lang: item.lang,
        sender: item.sender,
        question,
        gold_values: goldValues,
        gold_sql: d.goldSql,
        route: d.route,
        gold_row_ids: d.route.answerFrom === 'first' ? last.chunkIds.slice(0, 1) : last.chunkIds,
        supplier_id: f.supplier.id,
        organisation_id: f.organisationId,
        template: key,
      };
    };

    for (const item of plan(rng, split)) {
      let task: InvoiceTask | undefined;
      for (let tries = 0; !task; tries++) {
        if (tries >= 200) throw new Error(`could not generate a ${item.type} task for ${split}`);
        task = attempt(item, index.facts(nextScenario(item.type)));
      }
      tasks.push(task);
    }
  }
  return tasks;
}

/** The shared Task shape: one fact per gold value, supported by the order rows that carry it. */
export function toTask(task: InvoiceTask): Task {
  return {
    id: task.id,
    query: task.question,
    facts: task.gold_values.map((value) => ({ text: value, chunkIds: task.gold_row_ids, isFinalAnswer: true })),
    answers: task.gold_values,
    meta: {
      env: 'invoices',
      split: task.split,
      type: task.type,
      lang: task.lang,
      sender: task.sender,
      gold_values: task.gold_values,
      gold_sql: task.gold_sql,
      route: task.route,
      supplier_id: task.supplier_id,
      organisation_id: task.organisation_id,
      template: task.template,
    },
  };
}
