import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHUNKS, TASKS, writeTrainRun, XSS_CHUNK, XSS_TEXT, type TrainFixture } from './fixture.js';

/**
 * The explorer in Debian's Chromium, driven by playwright-core, against run directories made by
 * the real tools: a quick `sleuth demo` under its default timestamped name, evals by `sleuth eval`
 * (three under a training run's evals/), training runs written through src/runs/. The explorer
 * itself is started as `sleuth explore`.
 * These tests drive the built CLI (dist/): run `npm run build` first (npm test does).
 */
const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'sleuth.js');
const ARTIFACTS = join(ROOT, 'test-artifacts', 'explorer');
const CHROMIUM = '/usr/bin/chromium';
/** The folder name `sleuth demo` gives a run without --out (runs/demo-<toISOString with ':' and '.' made '-'>). */
const DEMO = 'demo-2026-12-03T07-04-31-361Z';

let tmp: string;
let runs: string;
let grpoA: TrainFixture;
let server: ChildProcess;
let base: string;
let browser: BrowserContext;
let page: Page;
const pageErrors: string[] = [];
const dialogs: string[] = [];

function sleuth(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', env });
  if (r.status !== 0) throw new Error(`sleuth ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r;
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not at ${CHROMIUM}: npm test's pretest step installs it (node scripts/pretest.mjs says how when it cannot)`);
  // The front end is built by `npm run build`; build it here too so these tests see the current one.
  const vite = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', 'src/explorer/web/vite.config.mjs'], { cwd: ROOT, encoding: 'utf8' });
  if (vite.status !== 0) throw new Error(`vite build failed: ${vite.stderr}`);
  tmp = mkdtempSync(join(tmpdir(), 'sleuth-explore-ui-'));
  runs = join(tmp, 'runs');
  mkdirSync(runs);
  sleuth(['eval', '--agent', 'baseline', '--tasks', 'default', '--split', 'eval', '--limit', '6', '--samples', '2', '--out', join(runs, 'eval-baseline')]);
  sleuth(['eval', '--agent', 'oracle', '--tasks', 'default', '--split', 'eval', '--limit', '6', '--samples', '2', '--out', join(runs, 'eval-oracle')]);
  grpoA = await writeTrainRun(runs, 'grpo-a', { steps: 8, groups: 3, groupSize: 4, seed: 1 });
  // Eval points that sort differently as text (0, 16, 8) and as numbers (0, 8, 16).
  for (const step of [0, 8, 16]) sleuth(['eval', '--agent', 'baseline', '--tasks', 'default', '--split', 'eval', '--limit', '4', '--out', join(runs, 'grpo-a', 'evals', `step-${step}`)]);
  // Its own SLEUTH_HOME: the base model it builds is not raced for with other test files building it.
  sleuth(['demo', '--quick', '--out', join(runs, DEMO)], { ...process.env, SLEUTH_HOME: join(tmp, 'sleuth-home') });
  await writeTrainRun(runs, 'grpo-b', { steps: 3, groups: 6, groupSize: 4, seed: 2, done: false });
  // A run written by something newer than this page: a multi-hop task (meta.hops, its facts the
  // hops in order) and fields of the rollout record the page does not know.
  const later = await writeTrainRun(runs, 'later', { steps: 1, groups: 1, groupSize: 2, seed: 4 });
  writeFileSync(join(later.tasksDir, 'tasks.jsonl'), TASKS.map((t) => JSON.stringify({ split: 'train', ...t, ...(t.facts.length > 1 ? { meta: { hops: t.facts.length } } : {}) })).join('\n') + '\n');
  writeFileSync(join(later.dir, 'rollouts.jsonl'), later.rollouts.map((r) => JSON.stringify({ ...r, unknown_numbers: { first: 0.5, second: 1 }, unknown_note: 'written later' })).join('\n') + '\n');
  // A run cut by a crash: a malformed line, then a last line without its end.
  await writeTrainRun(runs, 'crashed', { steps: 1, groups: 1, groupSize: 2, seed: 3, done: false });
  const cut = readFileSync(join(runs, 'crashed', 'rollouts.jsonl'), 'utf8').split('\n')[0]!;
  appendFileSync(join(runs, 'crashed', 'rollouts.jsonl'), '{"id": "broken", \n' + cut.slice(0, 200));

  server = spawn(process.execPath, [BIN, 'explore', runs, '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  base = await new Promise<string>((resolve, reject) => {
    let out = '';
    server.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/u.exec(out);
      if (m) resolve(m[1]!);
    });
    server.stderr!.on('data', (d) => (out += d));
    server.on('exit', (code) => reject(new Error(`sleuth explore exited ${code}: ${out}`)));
  });

  mkdirSync(ARTIFACTS, { recursive: true });
  // A fresh profile directory per run (playwright passes it as --user-data-dir).
  browser = await chromium.launchPersistentContext(join(tmp, 'chromium-profile'), {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    viewport: { width: 1400, height: 1000 },
  });
  page = browser.pages()[0] ?? (await browser.newPage());
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
});

afterAll(async () => {
  await browser?.close();
  server?.kill('SIGTERM');
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** Go to a page of the app and wait until it is drawn (the app marks the hash it rendered). */
async function open(hash: string): Promise<void> {
  await page.goto(`${base}?poll=500${hash}`);
  await waitRendered();
}

async function waitRendered(): Promise<void> {
  await page.waitForFunction(() => document.body.dataset['rendered'] === location.hash);
}

/** Non-transparent pixels in a chart's canvas: uPlot drew lines, not just an empty frame. */
async function inkedCharts(): Promise<number[]> {
  return page.$$eval('figure.chart canvas', (canvases) =>
    (canvases as HTMLCanvasElement[]).map((c) => {
      const data = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      let ink = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) ink++;
      return ink;
    }),
  );
}

describe('sleuth explore in Chromium', () => {
  /** Every row of the runs table: its run id (or group), and its cells' text. */
  const runRows = () => page.$$eval('#runs tbody tr', (trs) => trs.map((tr) => ({ run: (tr as HTMLElement).dataset['run'] ?? null, group: (tr as HTMLElement).dataset['group'] ?? null, inGroup: (tr as HTMLElement).dataset['inGroup'] ?? null, cells: [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '') })));

  /** Run names on one line each, and every run's state inside the window (no sideways scrolling to find it). */
  async function expectReadable(width: number): Promise<void> {
    const names = await page.$$eval('#runs a.run-link', (as) => as.map((a) => ({ text: a.textContent, lines: a.getClientRects().length, height: a.getBoundingClientRect().height })));
    expect(names.length).toBeGreaterThan(0);
    for (const n of names) {
      expect(n.lines, String(n.text)).toBe(1);
      expect(n.height, String(n.text)).toBeLessThan(24);
    }
    const states = await page.$$eval('#runs td .state', (ss) => ss.map((x) => ({ text: x.textContent, right: x.getBoundingClientRect().right, width: x.getBoundingClientRect().width })));
    for (const st of states) {
      expect(st.width, String(st.text)).toBeGreaterThan(0);
      expect(st.right, String(st.text)).toBeLessThanOrEqual(width);
    }
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    // No column is hidden past the table's right edge either.
    const scroller = await page.$eval('.table-scroll', (el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
    expect(scroller.scroll).toBeLessThanOrEqual(scroller.client);
  }

  it('lists the runs as a tree: a demo as one group, a training run with its eval points in step order, short names', async () => {
    await open('#/');
    await page.waitForSelector('#runs tbody tr');
    const rows = await runRows();
    const byId = new Map(rows.filter((r) => r.run).map((r) => [r.run!, r.cells]));
    // Eval points are links on their run's row, not rows of their own.
    expect([...byId.keys()].sort()).toEqual(['crashed', `${DEMO}/base`, `${DEMO}/baseline`, `${DEMO}/grpo`, `${DEMO}/grpo/test`, `${DEMO}/sft`, `${DEMO}/sft/test`, 'eval-baseline', 'eval-oracle', 'grpo-a', 'grpo-b', 'later']);
    expect(byId.get('grpo-a')!.slice(1, 8)).toEqual([expect.stringMatching(/^grpo-aevals · step: 0 8 16$/u), 'done', 'train', expect.stringContaining('grpo-a-tasks'), 'base', '8', '96']);
    expect(await page.$$eval('tr[data-run="grpo-a"] a.eval-link', (as) => as.map((a) => (a as HTMLElement).dataset['run']))).toEqual([0, 8, 16].map((s) => `grpo-a/evals/step-${s}`));
    expect(byId.get('eval-oracle')!.slice(2, 6)).toEqual(['done', 'eval', 'default', 'oracle']);
    expect(byId.get('eval-oracle')![8]).toContain('reward 1');
    expect(byId.get('grpo-b')![2]).toBe('running');
    expect(byId.get('crashed')![10]).toContain('2');
    // The demo: one group row, its runs under it, each named by its own folder; sub-runs under their run.
    // The eval points the demo wrote, in numeric order (read from its directory, not assumed).
    const points = (run: string, word: string) => readdirSync(join(runs, DEMO, run, 'evals')).map((d) => Number(d.slice(word.length + 1))).sort((a, b) => a - b);
    const steps = points('grpo', 'step');
    const epochs = points('sft', 'epoch');
    const group = rows.find((r) => r.group === DEMO)!;
    expect(group.cells[1]).toBe(`demo 2026-12-03 07:046 runs, ${steps.length + epochs.length} eval points`);
    expect(group.cells[2]).toBe('done');
    expect(rows.filter((r) => r.inGroup === DEMO).map((r) => [r.run, r.cells[1]])).toEqual([
      [`${DEMO}/base`, 'base'],
      [`${DEMO}/baseline`, 'baseline'],
      [`${DEMO}/grpo`, `grpoevals · step: ${steps.join(' ')}`],
      [`${DEMO}/grpo/test`, 'test'],
      [`${DEMO}/sft`, `sftevals · epoch: ${epochs.join(' ')}`],
      [`${DEMO}/sft/test`, 'test'],
    ]);
    // Model paths are cut to their file name (the whole path is the cell's title).
    const agent = (JSON.parse(readFileSync(join(runs, DEMO, 'sft', 'test', 'config.json'), 'utf8')) as { agent: string }).agent;
    expect(agent).toMatch(/^local:\//u);
    expect(byId.get(`${DEMO}/sft/test`)![5]).toBe(`local:…/${basename(agent)}`);
    expect(await page.getAttribute(`tr[data-run="${DEMO}/sft/test"] td.model`, 'title')).toBe(agent);
    await expectReadable(1400);
    await page.screenshot({ path: join(ARTIFACTS, 'runs.png'), fullPage: true });
    // Folded, the demo is one row; unfolded again, its runs come back.
    await page.click(`tr[data-group="${DEMO}"] button.toggle`);
    await page.waitForFunction((g) => document.querySelectorAll(`tr[data-in-group="${g}"]`).length === 0, DEMO);
    expect((await runRows()).filter((r) => r.group === DEMO)).toHaveLength(1);
    await page.click(`tr[data-group="${DEMO}"] button.toggle`);
    await page.waitForFunction((g) => document.querySelectorAll(`tr[data-in-group="${g}"]`).length === 6, DEMO);
  });

  it('keeps the runs table readable in a narrow window', async () => {
    await page.setViewportSize({ width: 820, height: 1000 });
    try {
      await open('#/');
      await page.waitForSelector('#runs tbody tr');
      await expectReadable(820);
      await page.screenshot({ path: join(ARTIFACTS, 'runs-narrow.png'), fullPage: true });
    } finally {
      await page.setViewportSize({ width: 1400, height: 1000 });
    }
  });

  it('opens an eval point from its run\'s row', async () => {
    await open('#/');
    await page.click('tr[data-run="grpo-a"] a.eval-link[data-run="grpo-a/evals/step-16"]');
    await page.waitForFunction(() => location.hash === '#/run?runs=grpo-a%2Fevals%2Fstep-16');
    await waitRendered();
    expect(await page.textContent('.run-head h1')).toContain('grpo-a/evals/step-16');
    await open('#/');
    await page.click('a.run-link:text-is("grpo-a")');
    await page.waitForFunction(() => location.hash === '#/run?runs=grpo-a');
  });

  it('opens a run: each training seed\'s charts are drawn, with the eval table in step order and intervals', async () => {
    await waitRendered();
    const titles = await page.$$eval('figure.chart figcaption', (f) => f.map((x) => x.textContent));
    expect(titles).toEqual(expect.arrayContaining(['train reward', 'valid rollouts (curated ≥ 1)', 'entropy (nats / sampled token)', 'eval F1 / precision / recall', 'trajectory vs curated recall', 'turns per episode', 'curated documents']));
    const ink = await inkedCharts();
    expect(ink.length).toBeGreaterThanOrEqual(8);
    expect(ink.every((n) => n > 200)).toBe(true);
    const evalHead = await page.$$eval('#eval-table thead th', (th) => th.map((x) => x.textContent));
    expect(evalHead).toEqual(['metric', 'evals/step-0', 'evals/step-8', 'evals/step-16']);
    expect(await page.textContent('#eval-table tbody')).toMatch(/reward\d\.\d+ \[\d\.\d+, \d\.\d+\]/u);
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard.png'), fullPage: true });
    // Any other number the run logs can be charted: its metrics.jsonl's 'groups' per train step.
    const options = await page.$$eval('#more-metric option', (o) => o.map((x) => (x as HTMLOptionElement).value));
    expect(options).toContain('train:groups');
    expect(options).not.toContain('train:reward');
    await page.selectOption('#more-metric', 'train:groups');
    await page.waitForFunction(() => location.hash.includes('more=train%3Agroups'));
    await waitRendered();
    expect((await page.$$eval('figure[data-chart="train groups"] canvas', (c) => c.length))).toBe(1);
    expect((await inkedCharts()).every((n) => n > 200)).toBe(true);
    expect(await page.$$eval('#more-metric option', (o) => o.map((x) => (x as HTMLOptionElement).value))).not.toContain('train:groups');
  });

  it('overlays runs, against step and against prompts seen', async () => {
    await open('#/run?runs=grpo-a,grpo-b');
    await page.waitForSelector('figure.chart canvas');
    const legend = await page.$$eval('figure[data-chart="train reward"] .u-legend .u-series', (s) => s.map((x) => x.textContent?.trim()));
    expect(legend.join(' ')).toContain('grpo-a reward');
    expect(legend.join(' ')).toContain('grpo-b reward');
    await page.click('#x-toggle');
    await page.waitForFunction(() => location.hash.includes('x=prompts'));
    await waitRendered();
    expect(await page.textContent('figure[data-chart="train reward"]')).toContain('prompts seen');
    expect((await inkedCharts()).every((n) => n > 200)).toBe(true);
  });

  it('compares eval runs with paired intervals', async () => {
    await open('#/run?runs=eval-baseline,eval-oracle');
    await page.waitForSelector('#compare-table tbody tr');
    const text = await page.textContent('#compare-table');
    expect(text).toContain('eval-oracle (Δ vs first)');
    expect(text).toMatch(/precision.*\+0\.\d+ \[/su);
  });

  it('filters, sorts and pages the rollouts table', async () => {
    await open('#/rollouts?run=grpo-a&pageSize=10');
    await page.waitForSelector('#rollouts tbody tr');
    expect(await page.textContent('#page-info')).toContain('page 1 of 10 · 96 rollouts');
    await page.fill('input[name=step]', '2');
    await page.selectOption('select[name=offform]', 'no');
    await page.click('#filters button[type=submit]');
    await page.waitForFunction(() => location.hash.includes('step=2'));
    await waitRendered();
    const rows = await page.$$eval('#rollouts tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));
    const expected = grpoA.rollouts.filter((r) => r.step === 2 && !r.turns.some((t) => t.calls.some((c) => c.status === 'off_form')));
    expect(rows).toHaveLength(Math.min(10, expected.length));
    expect(rows.every((r) => r[2] === '2' && r[8] === '0')).toBe(true);
    await page.click('th[data-sort=reward]');
    await page.waitForFunction(() => location.hash.includes('sort=reward'));
    await waitRendered();
    expect(await page.textContent('th[data-sort=reward]')).toBe('reward ▲');
    await page.click('th[data-sort=reward]');
    await page.waitForFunction(() => location.hash.includes('desc=1'));
    await waitRendered();
    const rewards = await page.$$eval('#rollouts tbody tr td:nth-child(6)', (tds) => tds.map((td) => Number(td.textContent)));
    expect(rewards).toEqual([...rewards].sort((a, b) => b - a));
    expect(rewards[0]).toBeCloseTo(Math.max(...expected.map((r) => r.reward!.total)), 3);
  });

  it('opens a rollout: facts, turns, calls with parse status and raw tokens, results, reward parts, token view', async () => {
    const n = grpoA.rollouts.findIndex((r) => r.turns.some((t) => t.calls.some((c) => c.status === 'off_form')) && r.curated.length > 0);
    const r = grpoA.rollouts[n]!;
    await open(`#/rollouts?run=grpo-a&pageSize=100`);
    await page.click(`#rollouts tr[data-n="${n}"] a.rollout-link`);
    await page.waitForFunction(() => location.hash.startsWith('#/rollout?'));
    await waitRendered();
    expect(await page.$$eval('section.turn', (s) => s.length)).toBe(r.turns.length);
    expect(await page.$$eval('.facts li', (li) => li.map((x) => x.className))).toEqual(
      (await import('./fixture.js')).TASKS.find((t) => t.id === r.taskId)!.facts.map((f) => (f.chunkIds.some((id) => r.curated.includes(id)) ? 'covered' : 'missed')),
    );
    const badges = await page.$$eval('.call .badge', (b) => b.map((x) => x.textContent));
    expect(badges).toEqual(r.turns.flatMap((t) => t.calls.map((c) => c.status)));
    const off = page.locator('.call.status-off_form').first();
    expect(await off.locator('code.raw').textContent()).toContain('"arguments": "{');
    expect(await off.locator('.raw-tokens .tok').count()).toBeGreaterThan(5);
    expect(await page.$$eval('#reward-parts tbody tr', (tr) => tr.length)).toBe(Object.keys(r.reward!.parts).length + 1);
    expect(Number((await page.textContent('#reward-parts tr.total td:last-child'))!)).toBeCloseTo(r.reward!.total, 3);
    // Token view: every inserted and sampled token, decoded with the run's Qwen3 tokenizer.
    const turn1 = page.locator('section.turn[data-turn="1"]');
    await turn1.locator('details.token-view > summary').click();
    expect(await turn1.locator('.tokens.inserted .tok').count()).toBe(r.turns[1]!.insertedTokens.length);
    expect(await turn1.locator('.tokens.sampled .tok').count()).toBe(r.turns[1]!.sampledTokens.length);
    expect(await turn1.locator('.tokens.inserted').textContent()).toContain('<tool_response>');
    const shades = await turn1.locator('.tokens.sampled .tok').evaluateAll((s) => s.map((x) => (x as HTMLElement).style.backgroundColor));
    expect(new Set(shades).size).toBeGreaterThan(3);
    await page.locator('section.turn[data-turn="0"] details.token-view > summary').click();
    expect(await page.locator('section.turn[data-turn="0"] details.inserted-fold .tok').count()).toBe(r.turns[0]!.insertedTokens.length);
    // Tool results: the first search's hits as rows (number in the episode, title, id, snippet, facts).
    const task = TASKS.find((t) => t.id === r.taskId)!;
    const factsOf = (id: string) => task.facts.flatMap((f, i) => (f.chunkIds.includes(id) ? [`F${i + 1}`] : [])).join(' ');
    const hits = await page.$$eval('section.turn[data-turn="0"] table.hits tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim())));
    const searched = r.turns[0]!.calls[0]!.result.chunkIds;
    expect(hits).toEqual(searched.map((id) => [String(r.trajectory.indexOf(id) + 1), CHUNKS[id]!.title, id, CHUNKS[id]!.text, factsOf(id) || '—']));
    // The curated set: each chunk's title and the facts it covers.
    const curatedRows = await page.$$eval('#curated tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim())));
    expect(curatedRows.map((row) => row.slice(0, 3))).toEqual([...new Set(r.curated)].map((id) => [String(r.trajectory.indexOf(id) + 1), CHUNKS[id]!.title, id]));
    expect(curatedRows.map((row) => row[3]!.split(' ')[0])).toEqual([...new Set(r.curated)].map((id) => factsOf(id).split(' ')[0] || '—'));
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(ARTIFACTS, 'rollout.png'), fullPage: true, clip: { x: 0, y: 0, width: 1400, height: 2000 } });
  });

  it('shows a real search\'s hits and the curated set with titles on a demo rollout', async () => {
    const rollouts = readFileSync(join(runs, DEMO, 'baseline', 'rollouts.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as TrainFixture['rollouts'][number]);
    const r = rollouts[0]!;
    const search = r.turns[0]!.calls[0]!;
    expect(search.name).toBe('bm25_search');
    const shown = (JSON.parse(search.result.content) as { hits: { id: string; title: string; score: number; snippet: string }[] }).hits;
    await open(`#/rollout?run=${encodeURIComponent(`${DEMO}/baseline`)}&n=0`);
    const hits = await page.$$eval('section.turn[data-turn="0"] table.hits tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 5).map((td) => td.textContent?.trim())));
    expect(hits.map((row) => [row[0], row[1], row[2], Number(row[3]), row[4]])).toEqual(shown.map((x, i) => [String(i + 1), x.title, x.id, x.score, x.snippet]));
    expect(await page.textContent('section.turn[data-turn="0"] details.result > summary')).toMatch(/seen \d+ · curated 0/u);
    const titles = await page.$$eval('#curated tbody tr td:nth-child(2)', (tds) => tds.map((td) => td.textContent));
    const titleOf = new Map(shown.map((x) => [x.id, x.title]));
    expect(titles).toEqual([...new Set(r.curated)].map((id) => titleOf.get(id)));
    await page.screenshot({ path: join(ARTIFACTS, 'rollout-demo.png'), fullPage: true, clip: { x: 0, y: 0, width: 1400, height: 1600 } });
    // In a narrow window the page still fits: hits, snippets and a call's long arguments wrap.
    await page.setViewportSize({ width: 820, height: 1000 });
    try {
      await open(`#/rollout?run=${encodeURIComponent(`${DEMO}/baseline`)}&n=0`);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(820);
      await page.screenshot({ path: join(ARTIFACTS, 'rollout-demo-narrow.png'), fullPage: true });
    } finally {
      await page.setViewportSize({ width: 1400, height: 1000 });
    }
  });

  it('names a multi-hop task\'s facts by hop and shows the record\'s fields it does not know', async () => {
    await open('#/rollout?run=later&n=0');
    expect(await page.$$eval('.facts li', (li) => li.map((x) => x.textContent!.slice(2, 13)))).toEqual(['F1 · hop 1 ', 'F2 · hop 2 ']);
    const more = await page.$$eval('#more-fields tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    expect(more).toEqual([['unknown_numbers', 'first 0.500second 1'], ['unknown_note', 'written later']]);
    // A task whose facts are not a chain keeps plain labels.
    await open('#/rollout?run=grpo-a&n=' + grpoA.rollouts.findIndex((r) => r.taskId === 'q-nixon'));
    expect(await page.$$eval('.facts li', (li) => li.map((x) => x.textContent!.slice(2, 5)))).toEqual(['F1 ', 'F2 ']);
    expect(await page.$('#more-fields')).toBeNull();
  });

  it('opens a group and the reward-shape lab moves the advantages when a weight changes', async () => {
    // A group whose members differ in off-form calls, so that penalising them reorders advantages.
    const groups = new Map<number, typeof grpoA.rollouts>();
    for (const r of grpoA.rollouts) groups.set(r.group!, [...(groups.get(r.group!) ?? []), r]);
    const [gid, members] = [...groups].find(([, m]) => new Set(m.map((r) => r.turns.some((t) => t.calls.some((c) => c.status === 'off_form')))).size === 2)!;
    await open(`#/rollout?run=grpo-a&n=${grpoA.rollouts.indexOf(members[0]!)}`);
    await page.click('#open-group');
    await page.waitForFunction(() => location.hash.startsWith('#/group?'));
    await waitRendered();
    expect(await page.textContent('h1')).toBe(`Group ${gid} of step ${members[0]!.step}`);
    expect(await page.$$eval('.group-cards .card', (c) => c.length)).toBe(4);
    // Each card's curated set by title, as on the rollout page.
    const cards = await page.$$eval('.group-cards .card', (cs) => cs.map((c) => [...c.querySelectorAll('ul.curated-titles li')].map((li) => [li.getAttribute('data-id'), li.textContent])));
    expect(cards.map((c) => c.map(([id]) => id))).toEqual(members.map((m) => [...new Set(m.curated)]));
    cards.flat().forEach(([id, text]) => expect(text).toContain(CHUNKS[id!]!.title));
    const before = await page.$$eval('#lab-table td.lab-adv', (td) => td.map((x) => Number(x.textContent)));
    members.forEach((m, i) => expect(before[i]).toBeCloseTo(m.advantage!, 3));
    expect(await page.textContent('#lab-note')).toContain('scoreRollout');
    await page.fill('input[data-part=offform]', '-0.5');
    await page.waitForFunction(() => document.querySelectorAll('#lab-table td.lab-adv.moved').length > 0);
    const after = await page.$$eval('#lab-table td.lab-adv', (td) => td.map((x) => Number(x.textContent)));
    expect(after).not.toEqual(before);
    // Off-form members lose against the others.
    members.forEach((m, i) => {
      const off = m.turns.some((t) => t.calls.some((c) => c.status === 'off_form'));
      if (off) expect(after[i]!).toBeLessThan(before[i]!);
    });
    await page.screenshot({ path: join(ARTIFACTS, 'group.png'), fullPage: true });
  });

  it('shows model and corpus text as text: no script in a chunk or a turn runs', async () => {
    const n = grpoA.rollouts.findIndex((r) => r.turns.some((t) => t.text.includes('<script>')) && r.trajectory.includes('c-xss'));
    expect(n).toBeGreaterThanOrEqual(0);
    await open(`#/rollout?run=grpo-a&n=${n}`);
    // Every fold open: the tool results and the decoded tokens (where the chunk's markup is, too).
    await page.evaluate(() => document.querySelectorAll('details').forEach((d) => (d.open = true)));
    const r = grpoA.rollouts[n]!;
    await open(`#/group?run=grpo-a&step=${r.step}&group=${r.group}`);
    await page.waitForSelector('.group-cards .card');
    await open(`#/rollout?run=grpo-a&n=${n}`);
    await page.waitForSelector('section.turn');
    await page.waitForTimeout(300);
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
    expect(await page.$$eval('#app img, #app script, #app b, #app i', (e) => e.length)).toBe(0);
    const text = (await page.textContent('#app'))!;
    expect(text).toContain(XSS_TEXT);
    expect(text).toContain(XSS_CHUNK.slice(0, 40));
    expect(text).toContain('<script>window.__xss=5</script>');
    expect(dialogs).toEqual([]);
    expect(pageErrors).toEqual([]);
  });

  it('shows a malformed or half-written JSONL line as a visible warning, not a crash', async () => {
    await open('#/rollouts?run=crashed');
    await page.waitForSelector('#rollouts tbody tr');
    expect(await page.$$eval('#rollouts tbody tr', (tr) => tr.length)).toBe(2);
    const warn = await page.textContent('.warnings[role=alert]');
    expect(warn).toContain('line 3: not JSON');
    expect(warn).toContain('line 4: last line is incomplete');
  });

  it('follows a run that is still training: new steps and rollouts appear without a reload', async () => {
    await open('#/rollouts?run=grpo-b&pageSize=10');
    expect(await page.textContent('#page-info')).toContain('72 rollouts');
    const marker = await page.evaluate(() => ((window as unknown as { __same: number }).__same = 1));
    await writeTrainRun(runs, 'grpo-b', { steps: 4, groups: 6, groupSize: 4, seed: 2, fromStep: 3, done: false });
    await page.waitForFunction(() => document.querySelector('#page-info')?.textContent?.includes('96 rollouts'), undefined, { timeout: 15_000 });
    await open('#/run?runs=grpo-b');
    await page.waitForSelector('figure.chart canvas');
    const steps = grpoA.rollouts.length;
    expect(steps).toBe(96);
    await writeTrainRun(runs, 'grpo-b', { steps: 5, groups: 6, groupSize: 4, seed: 2, fromStep: 4, done: false });
    await page.waitForFunction(() => document.querySelector('.run-head .muted')?.textContent?.includes('5 steps'), undefined, { timeout: 15_000 });
    // The same page (no navigation) redrew itself.
    expect(await page.evaluate(() => (window as unknown as { __same?: number }).__same)).toBe(marker);
  });

  it('copies the README screenshots', () => {
    mkdirSync(join(ROOT, 'docs', 'img'), { recursive: true });
    for (const [from, to] of [['runs.png', 'explorer-runs.png'], ['dashboard.png', 'explorer-dashboard.png'], ['rollout-demo.png', 'explorer-rollout.png']]) {
      expect(existsSync(join(ARTIFACTS, from!))).toBe(true);
      if (process.env['SLEUTH_UPDATE_SCREENSHOTS'] === '1') copyFileSync(join(ARTIFACTS, from!), join(ROOT, 'docs', 'img', to!));
    }
  });
});
