import { describe, expect, it } from 'vitest';
import { loadInvoiceSuite, runGoldSql } from '../../../src/suites/invoices/index.js';
import { buildInvoiceDb } from '../../../src/suites/invoices/generate.js';
import { containsGoldValue } from '../../../src/suites/invoices/score.js';
import { generateInvoiceTasks, ONE_CALL_TYPES, type InvoiceTask } from '../../../src/suites/invoices/tasks.js';
import { InvoiceTools } from '../../../src/suites/invoices/tools.js';
import { TaskSchema } from '../../../src/tasks/task.js';

const suite = loadInvoiceSuite();
const tasks = suite.invoiceTasks;
const db = suite.built.db;
const share = (pred: (t: InvoiceTask) => boolean, list = tasks) => list.filter(pred).length / list.length;

describe('invoice tasks', () => {
  it('are 2,000: tasks 0–1799 train, 1800–1999 validation', () => {
    expect(tasks).toHaveLength(2000);
    tasks.forEach((t, i) => {
      expect(t.index).toBe(i);
      expect(t.split).toBe(i < 1800 ? 'train' : 'validation');
    });
    expect(suite.tasks('train')).toHaveLength(1800);
    expect(suite.tasks('validation')).toHaveLength(200);
    expect(suite.tasks('eval').map((t) => t.id)).toEqual(suite.tasks('validation').map((t) => t.id));
    // dev and test halve validation: disjoint, together all of it.
    const dev = suite.tasks('dev').map((t) => t.id), test = suite.tasks('test').map((t) => t.id);
    expect(dev).toHaveLength(100);
    expect(test.filter((id) => dev.includes(id))).toEqual([]);
    expect(new Set([...dev, ...test])).toEqual(new Set(suite.tasks('validation').map((t) => t.id)));
    expect(() => suite.tasks('holdout')).toThrow(/--split holdout/);
  });

  it('mix five question types: 58% need one call, the rest SearchSupplier first', () => {
    expect(new Set(tasks.map((t) => t.type)).size).toBe(5);
    expect(share((t) => ONE_CALL_TYPES.includes(t.type))).toBe(0.58);
    for (const split of ['train', 'validation'] as const) {
      expect(share((t) => ONE_CALL_TYPES.includes(t.type), tasks.filter((t) => t.split === split))).toBeCloseTo(0.58, 2);
    }
    for (const t of tasks) {
      if (ONE_CALL_TYPES.includes(t.type)) expect(t.route.steps.map((s) => s.name)).toEqual(['GetOrderBySubscription']);
      else expect(t.route.steps.map((s) => s.name)).toEqual(['SearchSupplier', 'LookupOrderRows']);
    }
  });

  it('are half Swedish, half English; 85% from client staff, 15% from end customers', () => {
    expect(share((t) => t.lang === 'sv')).toBe(0.5);
    expect(share((t) => t.sender === 'end_customer')).toBe(0.15);
    for (const split of ['train', 'validation'] as const) {
      const list = tasks.filter((t) => t.split === split);
      expect(share((t) => t.lang === 'sv', list)).toBe(0.5);
      expect(share((t) => t.sender === 'end_customer', list)).toBe(0.15);
    }
    // Swedish emails are written in Swedish, English ones in English.
    expect(tasks.filter((t) => t.lang === 'sv').every((t) => /(?<!\p{L})(och|jag|vi|på|för|vilken|vilket)(?!\p{L})/iu.test(t.question))).toBe(true);
    expect(tasks.filter((t) => t.lang === 'en').every((t) => /(?<!\p{L})(and|the|which|what|we|I)(?!\p{L})/iu.test(t.question))).toBe(true);
  });

  it('no two emails are the same, and no two of a type share a template combination', () => {
    expect(new Set(tasks.map((t) => t.question)).size).toBe(2000);
    expect(new Set(tasks.map((t) => t.template)).size).toBe(2000);
    // Templates vary in every slot: many distinct bodies, greetings and closings per type and language.
    for (const type of new Set(tasks.map((t) => t.type))) {
      const bodies = new Set(tasks.filter((t) => t.type === type).map((t) => /b(\d+)/.exec(t.template)![1] + t.lang));
      expect(bodies.size, type).toBeGreaterThanOrEqual(10);
    }
  });

  it('never leak a gold value into the email', () => {
    const leaks = tasks.filter((t) => t.gold_values.some((g) => containsGoldValue(t.question, g)));
    expect(leaks.map((t) => t.id)).toEqual([]);
  });

  it('gold values are what the gold SQL returns against the database', () => {
    for (const t of tasks) {
      expect(runGoldSql(db, t.gold_sql)).toEqual(t.gold_values);
      expect(t.gold_values.length).toBeGreaterThanOrEqual(2);
      expect(t.gold_values.every((v) => v.trim() !== '')).toBe(true);
    }
  });

  it('mention the facts their route needs (subscription number, supplier, identifier, subscriber)', () => {
    for (const t of tasks) {
      for (const step of t.route.steps) {
        for (const [key, value] of Object.entries(step.arguments)) {
          if (key === 'supplier_id' || key.startsWith('period_')) continue;
          expect(t.question, `${t.id} ${key}`).toContain(String(value));
        }
      }
    }
  });

  it('share no supplier or organisation between validation and training', () => {
    // Read each task's suppliers and organisations from the database, through its gold rows.
    const owners = db.prepare(
      `SELECT p.supplier_id AS supplier, d.organisation_id AS organisation FROM order_rows o
       JOIN products p ON p.id = o.product_id JOIN departments d ON d.id = o.department_id WHERE o.id = ?`,
    );
    const seen = { train: { suppliers: new Set<string>(), orgs: new Set<number>() }, validation: { suppliers: new Set<string>(), orgs: new Set<number>() } };
    for (const t of tasks) {
      expect(t.gold_row_ids.length).toBeGreaterThan(0);
      for (const rowId of t.gold_row_ids) {
        const o = owners.get(rowId.replace(/^order_row:/, '')) as { supplier: string; organisation: number };
        seen[t.split].suppliers.add(o.supplier);
        seen[t.split].orgs.add(o.organisation);
      }
    }
    expect([...seen.validation.suppliers].filter((s) => seen.train.suppliers.has(s))).toEqual([]);
    expect([...seen.validation.orgs].filter((o) => seen.train.orgs.has(o))).toEqual([]);
    // Nor does a training email name a validation supplier or organisation.
    const valNames = db
      .prepare('SELECT name FROM suppliers WHERE id IN (SELECT value FROM json_each(?))')
      .pluck()
      .all(JSON.stringify([...seen.validation.suppliers])) as string[];
    const valOrgs = db.prepare('SELECT name FROM organisations WHERE id IN (SELECT value FROM json_each(?))').pluck().all(JSON.stringify([...seen.validation.orgs])) as string[];
    const train = tasks.filter((t) => t.split === 'train');
    for (const name of [...valNames, ...valOrgs]) expect(train.some((t) => t.question.includes(name)), name).toBe(false);
  });

  it('map onto the shared Task shape with gold values as answers and the route in meta', () => {
    const shared = suite.tasks('all');
    for (const [i, t] of shared.entries()) {
      expect(TaskSchema.safeParse(t).success).toBe(true);
      expect(t.query).toBe(tasks[i]!.question);
      expect(t.answers).toEqual(tasks[i]!.gold_values);
      expect(t.meta).toMatchObject({ env: 'invoices', split: tasks[i]!.split, gold_sql: tasks[i]!.gold_sql, route: tasks[i]!.route });
    }
  });

  it('are the same on every generation from the same seed', () => {
    const built = buildInvoiceDb();
    const again = generateInvoiceTasks(built, new InvoiceTools(built.db));
    expect(again).toEqual(tasks);
  });
});
