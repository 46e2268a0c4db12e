/**
 * The invoice world: one procedural pass with a fixed seed builds the SQLite database
 * (suppliers with bank details, products, parent corporations, client organisations with
 * departments, invoices, invoice rows and order rows) and returns the generated entities so
 * that task scenarios are sampled from the same pass. Two disjoint "worlds" share the file:
 * suppliers and organisations of the validation world only ever trade with each other, so no
 * validation task can mention a supplier or organisation that training has seen.
 */
import { createHash } from 'node:crypto';
import { renameSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { InputError } from '../../errors.js';
import { groupIban, makeBankgiro, makeOrgNumber, makePostgiro, makeSwedishIban, vatFromOrgNumber } from './bank.js';
import {
  ADJECTIVES, CITIES, CORPORATION_NAMES, DEPARTMENTS, EDITIONS, FIRST_NAMES, ORGANISATION_FORMS, PRODUCT_FORMS,
  SUPPLIER_FORMS, SUPPLIER_WORDS, SURNAMES, TOPICS, type Lang,
} from './names.js';
import { Rng } from './prng.js';
import { fold } from './text.js';

export const DEFAULT_SEED = 'sleuth-invoices-v1';

/** The size of the real database the world imitates; tests hold the generator to these. */
export const WORLD_COUNTS = { suppliers: 149, products: 597, organisations: 96, orderRows: 1329, invoices: 600 } as const;
/** The validation world's share of suppliers, organisations and invoices (about 15%). */
const VALIDATION_COUNTS = { suppliers: 22, organisations: 14, invoices: 90 } as const;
const ACCOUNTS = { train: 220, validation: 32 } as const;

export type WorldName = 'train' | 'validation';

export interface Supplier {
  id: string;
  /** Full registered name, e.g. "Fjällförlaget AB". */
  name: string;
  /** The name without the legal form, as people write it in email. */
  shortName: string;
  lang: Lang;
  orgNumber: string;
  vatNumber: string;
  /** Compact IBAN (the stored form may be grouped). */
  iban: string;
  bankgiro: string;
  postgiro: string | null;
  world: WorldName;
}

export interface Product {
  id: number;
  supplierId: string;
  name: string;
  lang: Lang;
  annualPriceOre: number;
}

export interface Department {
  id: number;
  organisationId: number;
  name: string;
}

export interface Organisation {
  id: number;
  corporationId: number;
  name: string;
  lang: Lang;
  world: WorldName;
  departments: Department[];
}

export interface OrderRow {
  id: string;
  subscriptionNo: number;
  productId: number;
  departmentId: number;
  subscriber: string;
  periodStart: string;
  periodEnd: string;
  quantity: number;
  amountOre: number;
  invoiceId: number;
}

export interface Invoice {
  id: number;
  invoiceNo: string;
  supplierId: string;
  organisationId: number;
  invoiceDate: string;
  dueDate: string;
  status: 'paid' | 'unpaid' | 'overdue';
  rows: OrderRow[];
}

export interface InvoiceWorld {
  seed: string;
  suppliers: Supplier[];
  products: Product[];
  organisations: Organisation[];
  corporations: { id: number; name: string }[];
  invoices: Invoice[];
  orderRows: OrderRow[];
}

/**
 * The tables, in the order the content hash reads them: each column declared `name TYPE
 * [constraints]`. Every column but a primary key is NOT NULL unless its type ends in `?`.
 */
const TABLE_COLUMNS = {
  suppliers: [
    'id TEXT PRIMARY KEY', // UUID; the only way LookupOrderRows accepts a supplier
    'name TEXT',
    'name_folded TEXT', // fold(name): SQLite's LOWER only folds ASCII
    'org_number TEXT',
    'vat_number TEXT',
    'iban TEXT', // as registered: sometimes grouped, sometimes compact
    'bankgiro TEXT',
    'postgiro TEXT?', // plusgiro; not every supplier has one
  ],
  products: ['id INTEGER PRIMARY KEY', 'supplier_id TEXT REFERENCES suppliers(id)', 'name TEXT', 'name_folded TEXT', 'annual_price REAL'],
  corporations: ['id INTEGER PRIMARY KEY', 'name TEXT'],
  organisations: ['id INTEGER PRIMARY KEY', 'corporation_id INTEGER REFERENCES corporations(id)', 'name TEXT'],
  departments: ['id INTEGER PRIMARY KEY', 'organisation_id INTEGER REFERENCES organisations(id)', 'name TEXT'],
  invoices: [
    'id INTEGER PRIMARY KEY', 'invoice_no TEXT UNIQUE', 'supplier_id TEXT REFERENCES suppliers(id)', 'organisation_id INTEGER REFERENCES organisations(id)',
    'invoice_date TEXT', 'due_date TEXT', 'amount_excl_vat REAL', 'vat REAL', 'total REAL', 'status TEXT',
  ],
  order_rows: [
    'id TEXT PRIMARY KEY', 'subscription_no INTEGER', 'product_id INTEGER REFERENCES products(id)', 'department_id INTEGER REFERENCES departments(id)',
    'subscriber_name TEXT', 'subscriber_folded TEXT', 'period_start TEXT', 'period_end TEXT', 'quantity INTEGER', 'amount REAL',
  ],
  invoice_rows: [
    'id INTEGER PRIMARY KEY', 'invoice_id INTEGER REFERENCES invoices(id)', 'order_row_id TEXT UNIQUE REFERENCES order_rows(id)',
    'line_no INTEGER', 'amount REAL', 'vat REAL',
  ],
} as const;

/** A column declaration of TABLE_COLUMNS as SQL. */
function columnSql(declaration: string): string {
  const [name, type, ...constraints] = declaration.split(' ') as [string, string, ...string[]];
  if (type.endsWith('?')) return [name, type.slice(0, -1), ...constraints].join(' ');
  if (constraints[0] === 'PRIMARY') return declaration;
  return [name, type, 'NOT NULL', ...constraints].join(' ');
}

const SCHEMA = [
  ...Object.entries(TABLE_COLUMNS).map(([table, columns]) => `CREATE TABLE ${table} (${columns.map(columnSql).join(', ')});`),
  'CREATE INDEX order_rows_subscription ON order_rows(subscription_no);',
  'CREATE INDEX products_supplier ON products(supplier_id);',
  'CREATE INDEX order_rows_product ON order_rows(product_id);',
  'CREATE INDEX invoice_rows_invoice ON invoice_rows(invoice_id);',
].join('\n');

/** Tables in the order the content hash reads them. */
export const TABLES = Object.keys(TABLE_COLUMNS) as (keyof typeof TABLE_COLUMNS)[];

/** Periodicals carry 6% VAT in Sweden. */
const VAT_RATE = 0.06;
/** "Today" for invoice status, fixed so the world does not change with the clock. */
const AS_OF = '2025-09-30';
const FIRST_MONTH = monthIndex(2022, 0);
const LAST_MONTH = monthIndex(2025, 11);

function monthIndex(year: number, month0: number): number {
  return year * 12 + month0;
}
function monthStart(index: number): string {
  return `${Math.floor(index / 12)}-${String((index % 12) + 1).padStart(2, '0')}-01`;
}
function addDays(iso: string, days: number): string {
  const d = new Date(`${iso}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** Split `total` into `parts` whole numbers, each at least `min`, at random. */
function distribute(rng: Rng, total: number, parts: number, min: number): number[] {
  const out = new Array<number>(parts).fill(min);
  for (let left = total - parts * min; left > 0; left--) out[rng.int(0, parts - 1)]! += 1;
  return out;
}

export function personName(rng: Rng, lang: Lang): string {
  return `${rng.pick(FIRST_NAMES[lang])} ${rng.pick(SURNAMES[lang])}`;
}

function makeSuppliers(rng: Rng): Supplier[] {
  const suppliers: Supplier[] = [];
  const folded: { full: string; short: string }[] = [];
  // A name is accepted only if neither it nor its short form is contained in another supplier's
  // name (or the reverse): then a name search with either form finds exactly one supplier.
  const clashes = (full: string, short: string) =>
    folded.some((o) => o.full.includes(short) || full.includes(o.short));
  while (suppliers.length < WORLD_COUNTS.suppliers) {
    const lang: Lang = rng.chance(0.55) ? 'sv' : 'en';
    const form = rng.pick(SUPPLIER_FORMS[lang]);
    const { base, legal } = form(rng.pick(SUPPLIER_WORDS[lang]), rng.pick(SURNAMES[lang]));
    const name = `${base} ${legal}`;
    if (clashes(fold(name), fold(base))) continue;
    folded.push({ full: fold(name), short: fold(base) });
    const orgNumber = makeOrgNumber(rng);
    suppliers.push({
      id: rng.uuid(),
      name,
      shortName: base,
      lang,
      orgNumber,
      vatNumber: vatFromOrgNumber(orgNumber),
      iban: makeSwedishIban(rng),
      bankgiro: makeBankgiro(rng),
      postgiro: rng.chance(0.7) ? makePostgiro(rng) : null,
      world: 'train',
    });
  }
  return suppliers;
}

function makeProducts(rng: Rng, suppliers: Supplier[]): Product[] {
  const perSupplier = distribute(rng, WORLD_COUNTS.products, suppliers.length, 1);
  const used = new Set<string>();
  const products: Product[] = [];
  suppliers.forEach((supplier, i) => {
    for (let made = 0; made < perSupplier[i]!; ) {
      // Mostly titles in the publisher's language, some in the other.
      const lang: Lang = rng.chance(0.8) ? supplier.lang : supplier.lang === 'sv' ? 'en' : 'sv';
      const title = rng.pick(PRODUCT_FORMS[lang])(rng.pick(TOPICS[lang]), rng.pick(ADJECTIVES[lang]));
      const name = `${title} ${rng.pick(EDITIONS[lang])}`;
      if (used.has(fold(name))) continue;
      used.add(fold(name));
      // Annual prices from 290 to 14,900 kr, in whole kronor or fifty öre.
      const annualPriceOre = rng.int(580, 29800) * 50;
      products.push({ id: products.length + 1, supplierId: supplier.id, name, lang, annualPriceOre });
      made++;
    }
  });
  return products;
}

function makeOrganisations(rng: Rng): { organisations: Organisation[]; corporations: { id: number; name: string }[] } {
  const corporations = CORPORATION_NAMES.map((name, i) => ({ id: i + 1, name }));
  const organisations: Organisation[] = [];
  const used = new Set<string>();
  let departmentId = 1;
  while (organisations.length < WORLD_COUNTS.organisations) {
    const lang: Lang = rng.chance(0.65) ? 'sv' : 'en';
    const name = rng.pick(ORGANISATION_FORMS[lang])(rng.pick(CITIES), rng.pick(SUPPLIER_WORDS[lang]));
    if (used.has(name)) continue;
    used.add(name);
    const id = organisations.length + 1;
    const names = rng.shuffle(DEPARTMENTS[lang]).slice(0, rng.int(3, 6));
    const departments = names.map((n) => ({ id: departmentId++, organisationId: id, name: n }));
    organisations.push({ id, corporationId: rng.pick(corporations).id, name, lang, world: 'train', departments });
  }
  return { organisations, corporations };
}

interface Account {
  supplier: Supplier;
  organisation: Organisation;
  invoiceCount: number;
}

/** Supplier–organisation pairs that trade, always within one world; every supplier with at least one where possible. */
function makeAccounts(rng: Rng, suppliers: Supplier[], organisations: Organisation[], count: number, invoices: number): Account[] {
  const pairs = new Set<string>();
  const accounts: Account[] = [];
  const order = rng.shuffle(suppliers);
  for (let i = 0; accounts.length < count; i++) {
    const supplier = i < order.length ? order[i]! : rng.pick(suppliers);
    const organisation = rng.pick(organisations);
    const key = `${supplier.id}:${organisation.id}`;
    if (pairs.has(key)) continue;
    pairs.add(key);
    accounts.push({ supplier, organisation, invoiceCount: 0 });
  }
  distribute(rng, invoices, accounts.length, 1).forEach((n, i) => (accounts[i]!.invoiceCount = n));
  return accounts;
}

/** Build the entities (no database yet). Deterministic in `seed`. */
export function generateWorld(seed: string = DEFAULT_SEED): InvoiceWorld {
  const root = new Rng(seed);
  const suppliers = makeSuppliers(root.fork('suppliers'));
  const products = makeProducts(root.fork('products'), suppliers);
  const { organisations, corporations } = makeOrganisations(root.fork('organisations'));

  const split = root.fork('split');
  for (const s of split.shuffle(suppliers).slice(0, VALIDATION_COUNTS.suppliers)) s.world = 'validation';
  for (const o of split.shuffle(organisations).slice(0, VALIDATION_COUNTS.organisations)) o.world = 'validation';

  const trade = root.fork('trade');
  const inWorld = <T extends { world: WorldName }>(items: T[], world: WorldName) => items.filter((x) => x.world === world);
  const accounts = [
    ...makeAccounts(trade, inWorld(suppliers, 'train'), inWorld(organisations, 'train'), ACCOUNTS.train, WORLD_COUNTS.invoices - VALIDATION_COUNTS.invoices),
    ...makeAccounts(trade, inWorld(suppliers, 'validation'), inWorld(organisations, 'validation'), ACCOUNTS.validation, VALIDATION_COUNTS.invoices),
  ];
  const rowsPerInvoice = distribute(trade, WORLD_COUNTS.orderRows, WORLD_COUNTS.invoices, 1);

  const productsBySupplier = new Map<string, Product[]>();
  for (const p of products) productsBySupplier.set(p.supplierId, [...(productsBySupplier.get(p.supplierId) ?? []), p]);
  const productById = new Map(products.map((p) => [p.id, p]));

  const invoices: Invoice[] = [];
  const orderRows: OrderRow[] = [];
  const usedSubscriptionNos = new Set<number>();
  const usedInvoiceNos = new Set<string>();
  const usedSubscribers = new Set<string>();
  const freshSubscriber = (lang: Lang) => {
    for (let tries = 0; ; tries++) {
      const name = personName(trade, lang);
      if (!usedSubscribers.has(name) || tries > 30) {
        usedSubscribers.add(name);
        return name;
      }
    }
  };
  let rowCursor = 0;

  for (const account of accounts) {
    // Billing interval: yearly where the account's history fits in the four years, else shorter.
    const span = LAST_MONTH - FIRST_MONTH + 1;
    const intervals = [12, 6, 3].filter((m) => m * account.invoiceCount <= span);
    const interval = trade.pick(intervals.length > 0 ? intervals : [1]);
    const firstMonth = FIRST_MONTH + trade.int(0, span - interval * account.invoiceCount);
    type Subscription = { no: number; product: Product; departmentId: number; subscriber: string; quantity: number };
    let active: Subscription[] = [];

    for (let k = 0; k < account.invoiceCount; k++) {
      const periodStart = monthStart(firstMonth + k * interval);
      const periodEnd = addDays(monthStart(firstMonth + (k + 1) * interval), -1);
      const rowCount = rowsPerInvoice[rowCursor++]!;
      // Renew some of last period's subscriptions, start new ones for the rest.
      const renewed = active.filter(() => trade.chance(0.75)).slice(0, rowCount);
      const subs = [...renewed];
      while (subs.length < rowCount) {
        let no: number;
        do no = trade.int(10000, 99999);
        while (usedSubscriptionNos.has(no));
        usedSubscriptionNos.add(no);
        const subscriberLang: Lang = trade.chance(0.8) ? account.organisation.lang : account.organisation.lang === 'sv' ? 'en' : 'sv';
        subs.push({
          no,
          product: trade.pick(productsBySupplier.get(account.supplier.id)!),
          departmentId: trade.pick(account.organisation.departments).id,
          subscriber: freshSubscriber(subscriberLang),
          quantity: trade.chance(0.8) ? 1 : trade.int(2, 5),
        });
      }
      active = subs;

      let invoiceNo: string;
      do invoiceNo = String(trade.int(1000000, 9999999));
      while (usedInvoiceNos.has(invoiceNo));
      usedInvoiceNos.add(invoiceNo);
      const invoiceDate = addDays(periodStart, -trade.int(20, 45));
      const dueDate = addDays(invoiceDate, 30);
      const invoiceId = invoices.length + 1;
      const rows: OrderRow[] = subs.map((s) => ({
        id: trade.uuid(),
        subscriptionNo: s.no,
        productId: s.product.id,
        departmentId: s.departmentId,
        subscriber: s.subscriber,
        periodStart,
        periodEnd,
        quantity: s.quantity,
        amountOre: Math.round((productById.get(s.product.id)!.annualPriceOre * interval * s.quantity) / 12),
        invoiceId,
      }));
      const status = dueDate >= AS_OF ? 'unpaid' : trade.chance(0.08) ? 'overdue' : 'paid';
      invoices.push({ id: invoiceId, invoiceNo, supplierId: account.supplier.id, organisationId: account.organisation.id, invoiceDate, dueDate, status, rows });
      orderRows.push(...rows);
    }
  }
  return { seed, suppliers, products, organisations, corporations, invoices, orderRows };
}

const kronor = (ore: number) => ore / 100;

/** Write the world into an open database (schema + rows, one transaction). */
export function writeWorld(db: Database.Database, world: InvoiceWorld, rng: Rng = new Rng(`${world.seed}:storage`)): void {
  db.exec(SCHEMA);
  const insert = {
    supplier: db.prepare('INSERT INTO suppliers VALUES (?, ?, ?, ?, ?, ?, ?, ?)'),
    product: db.prepare('INSERT INTO products VALUES (?, ?, ?, ?, ?)'),
    corporation: db.prepare('INSERT INTO corporations VALUES (?, ?)'),
    organisation: db.prepare('INSERT INTO organisations VALUES (?, ?, ?)'),
    department: db.prepare('INSERT INTO departments VALUES (?, ?, ?)'),
    invoice: db.prepare('INSERT INTO invoices VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)'),
    orderRow: db.prepare('INSERT INTO order_rows VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)'),
    invoiceRow: db.prepare('INSERT INTO invoice_rows (invoice_id, order_row_id, line_no, amount, vat) VALUES (?, ?, ?, ?, ?)'),
  };
  db.transaction(() => {
    for (const s of world.suppliers) {
      // Registered the way production data is: IBANs sometimes grouped in fours, sometimes not.
      const iban = rng.chance(0.6) ? groupIban(s.iban) : s.iban;
      insert.supplier.run(s.id, s.name, fold(s.name), s.orgNumber, s.vatNumber, iban, s.bankgiro, s.postgiro);
    }
    for (const p of world.products) insert.product.run(p.id, p.supplierId, p.name, fold(p.name), kronor(p.annualPriceOre));
    for (const c of world.corporations) insert.corporation.run(c.id, c.name);
    for (const o of world.organisations) {
      insert.organisation.run(o.id, o.corporationId, o.name);
      for (const d of o.departments) insert.department.run(d.id, d.organisationId, d.name);
    }
    for (const inv of world.invoices) {
      const net = inv.rows.reduce((sum, r) => sum + r.amountOre, 0);
      const vat = inv.rows.reduce((sum, r) => sum + Math.round(r.amountOre * VAT_RATE), 0);
      insert.invoice.run(inv.id, inv.invoiceNo, inv.supplierId, inv.organisationId, inv.invoiceDate, inv.dueDate, kronor(net), kronor(vat), kronor(net + vat), inv.status);
      inv.rows.forEach((r, line) => {
        insert.orderRow.run(r.id, r.subscriptionNo, r.productId, r.departmentId, r.subscriber, fold(r.subscriber), r.periodStart, r.periodEnd, r.quantity, kronor(r.amountOre));
        insert.invoiceRow.run(inv.id, r.id, line + 1, kronor(r.amountOre), kronor(Math.round(r.amountOre * VAT_RATE)));
      });
    }
  })();
}

export interface BuiltDb {
  db: Database.Database;
  world: InvoiceWorld;
}

/**
 * Generate the world and build its database in memory, or into `path` (written to a temporary
 * file and renamed, so an existing database is never left half-written).
 */
export function buildInvoiceDb(options: { seed?: string; path?: string } = {}): BuiltDb {
  const world = generateWorld(options.seed ?? DEFAULT_SEED);
  if (!options.path) {
    const db = new Database(':memory:');
    writeWorld(db, world);
    return { db, world };
  }
  const tmp = `${options.path}.tmp-${process.pid}`;
  rmSync(tmp, { force: true });
  let db: Database.Database;
  try {
    db = new Database(tmp);
  } catch (err) {
    throw new InputError(`cannot create invoice database '${options.path}': ${(err as Error).message}`);
  }
  try {
    writeWorld(db, world);
    db.close();
    renameSync(tmp, options.path);
  } catch (err) {
    db.close();
    rmSync(tmp, { force: true });
    throw err;
  }
  return { db: new Database(options.path, { readonly: true }), world };
}

/** SHA-256 over every row of every table in a fixed order: equal hashes mean equal content. */
export function contentHash(db: Database.Database): string {
  const hash = createHash('sha256');
  for (const table of TABLES) {
    hash.update(`#${table}\n`);
    for (const row of db.prepare(`SELECT * FROM ${table} ORDER BY 1`).raw().iterate()) hash.update(JSON.stringify(row) + '\n');
  }
  return hash.digest('hex');
}
