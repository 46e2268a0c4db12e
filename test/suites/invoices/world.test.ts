import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../../src/errors.js';
import { ibanValid, luhnValid, normalizeIdentifier } from '../../../src/suites/invoices/bank.js';
import { buildInvoiceDb, contentHash, generateWorld, WORLD_COUNTS } from '../../../src/suites/invoices/generate.js';
import { Rng } from '../../../src/suites/invoices/prng.js';

const count = (db: Database.Database, table: string) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

describe('invoice world', () => {
  const { db, world } = buildInvoiceDb();

  it('has the seed shape: 149 suppliers, 597 products, 96 organisations, 1,329 order rows on 600 invoices', () => {
    expect(count(db, 'suppliers')).toBe(WORLD_COUNTS.suppliers);
    expect(WORLD_COUNTS).toEqual({ suppliers: 149, products: 597, organisations: 96, orderRows: 1329, invoices: 600 });
    expect(count(db, 'products')).toBe(597);
    expect(count(db, 'organisations')).toBe(96);
    expect(count(db, 'order_rows')).toBe(1329);
    expect(count(db, 'invoices')).toBe(600);
    // Every order row is on exactly one invoice row, and every invoice has at least one.
    expect(count(db, 'invoice_rows')).toBe(1329);
    expect(db.prepare('SELECT count(*) AS n FROM invoices i WHERE NOT EXISTS (SELECT 1 FROM invoice_rows r WHERE r.invoice_id = i.id)').get()).toEqual({ n: 0 });
    // Organisations have departments and parent corporations.
    expect(db.prepare('SELECT count(*) AS n FROM organisations o WHERE NOT EXISTS (SELECT 1 FROM departments d WHERE d.organisation_id = o.id)').get()).toEqual({ n: 0 });
    expect(db.prepare('SELECT count(*) AS n FROM organisations o LEFT JOIN corporations c ON c.id = o.corporation_id WHERE c.id IS NULL').get()).toEqual({ n: 0 });
  });

  it('invoice totals add up from their rows, with 6% VAT', () => {
    const bad = db
      .prepare(
        `SELECT i.invoice_no FROM invoices i JOIN invoice_rows r ON r.invoice_id = i.id
         GROUP BY i.id HAVING abs(sum(r.amount) - i.amount_excl_vat) > 0.005 OR abs(i.total - i.amount_excl_vat - i.vat) > 0.005`,
      )
      .all();
    expect(bad).toEqual([]);
  });

  it('is deterministic: the same seed gives the same content hash, another seed another', () => {
    const again = buildInvoiceDb();
    expect(contentHash(again.db)).toBe(contentHash(db));
    const other = buildInvoiceDb({ seed: 'another-seed' });
    expect(contentHash(other.db)).not.toBe(contentHash(db));
    expect(count(other.db, 'order_rows')).toBe(1329);
  });

  it('has Swedish and English names, and order rows with subscription numbers, subscribers and periods', () => {
    const names = world.suppliers.map((s) => s.name);
    expect(names.some((n) => n.endsWith(' AB'))).toBe(true);
    expect(names.some((n) => n.endsWith(' Ltd'))).toBe(true);
    expect(names.some((n) => /[åäö]/i.test(n))).toBe(true);
    const rows = db.prepare('SELECT subscription_no, subscriber_name, period_start, period_end FROM order_rows').all() as Record<string, string | number>[];
    for (const r of rows) {
      expect(String(r.subscription_no)).toMatch(/^\d{5}$/);
      expect(String(r.subscriber_name)).toMatch(/^\S+ \S+$/);
      expect(String(r.period_start) < String(r.period_end)).toBe(true);
    }
    // Subscriptions renew: some have several periods.
    expect((db.prepare('SELECT count(*) AS n FROM (SELECT 1 FROM order_rows GROUP BY subscription_no HAVING count(*) > 1)').get() as { n: number }).n).toBeGreaterThan(100);
  });

  it('supplier names are unique and none contains another, so a name search finds one supplier', () => {
    const folded = world.suppliers.map((s) => ({ full: s.name.toLocaleLowerCase('sv'), short: s.shortName.toLocaleLowerCase('sv') }));
    for (const [i, a] of folded.entries()) {
      for (const [j, b] of folded.entries()) if (i !== j) expect(b.full.includes(a.short), `${a.short} in ${b.full}`).toBe(false);
    }
  });

  it('bank details have valid check digits and Swedish formats', () => {
    const rows = db.prepare('SELECT id, iban, bankgiro, postgiro, vat_number, org_number FROM suppliers').all() as Record<string, string | null>[];
    for (const s of rows) {
      expect(s.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(ibanValid(s.iban!), s.iban!).toBe(true);
      expect(normalizeIdentifier(s.iban!)).toMatch(/^SE\d{22}$/);
      expect(s.bankgiro).toMatch(/^\d{3,4}-\d{4}$/);
      expect(luhnValid(normalizeIdentifier(s.bankgiro!))).toBe(true);
      if (s.postgiro !== null) {
        expect(s.postgiro).toMatch(/^\d{1,2}( \d\d)+-\d$/);
        expect(luhnValid(normalizeIdentifier(s.postgiro))).toBe(true);
      }
      expect(s.vat_number).toBe(`SE${s.org_number}01`);
      expect(luhnValid(s.org_number!)).toBe(true);
    }
    // Registered the way production data is: some IBANs grouped, some compact.
    expect(rows.some((s) => s.iban!.includes(' '))).toBe(true);
    expect(rows.some((s) => !s.iban!.includes(' '))).toBe(true);
  });

  it('check-digit helpers agree with published examples', () => {
    expect(ibanValid('SE45 5000 0000 0583 9825 7466')).toBe(true);
    expect(ibanValid('SE45 5000 0000 0583 9825 7467')).toBe(false);
    expect(ibanValid('GB82 WEST 1234 5698 7654 32')).toBe(true);
    expect(luhnValid('79927398713')).toBe(true);
    expect(luhnValid('79927398710')).toBe(false);
  });

  it('keeps the validation world apart: no invoice joins a validation supplier to a training organisation or back', () => {
    const supplierWorld = new Map(world.suppliers.map((s) => [s.id, s.world]));
    const orgWorld = new Map(world.organisations.map((o) => [o.id, o.world]));
    for (const inv of world.invoices) expect(supplierWorld.get(inv.supplierId)).toBe(orgWorld.get(inv.organisationId));
    expect(world.suppliers.filter((s) => s.world === 'validation').length).toBe(22);
    expect(world.organisations.filter((o) => o.world === 'validation').length).toBe(14);
  });

  it('the seeded PRNG repeats exactly for a seed', () => {
    const a = new Rng('x');
    const b = new Rng('x');
    const seqA = Array.from({ length: 50 }, () => a.next());
    expect(Array.from({ length: 50 }, () => b.next())).toEqual(seqA);
    expect(seqA.every((v) => v >= 0 && v < 1)).toBe(true);
    expect(generateWorld('x').orderRows.map((r) => r.id)).toEqual(generateWorld('x').orderRows.map((r) => r.id));
  });

  it('builds into a file through a temporary file, replacing an old one whole', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sleuth-invoices-'));
    const path = join(dir, 'invoices.sqlite');
    writeFileSync(path, 'not a database');
    const built = buildInvoiceDb({ path });
    expect(count(built.db, 'order_rows')).toBe(1329);
    expect(contentHash(built.db)).toBe(contentHash(db));
    built.db.close();
    expect(readdirSync(dir)).toEqual(['invoices.sqlite']);
    const reopened = new Database(path, { readonly: true });
    expect(count(reopened, 'suppliers')).toBe(149);
    reopened.close();
  });

  it('a path it cannot write is an InputError naming the path, and leaves nothing behind', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sleuth-invoices-'));
    const path = join(dir, 'no-such-dir', 'invoices.sqlite');
    expect(() => buildInvoiceDb({ path })).toThrow(InputError);
    expect(() => buildInvoiceDb({ path })).toThrow(/no-such-dir\/invoices\.sqlite/);
    expect(existsSync(join(dir, 'no-such-dir'))).toBe(false);
  });
});
