import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeTrainRun, XSS_CHUNK, XSS_TEXT, type TrainFixture } from './fixture.js';

/**
 * The explorer in Debian's Chromium, driven by playwright-core, against run directories made by
 * the real tools: two evals by `sleuth eval` (one also under a training run's evals/), training
 * runs written through src/runs/. The explorer itself is started as `sleuth explore`.
 * These tests drive the built CLI (dist/): run `npm run build` first (npm test does).
 */
const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'sleuth.js');
const ARTIFACTS = join(ROOT, 'test-artifacts', 'explorer');
const CHROMIUM = '/usr/bin/chromium';

let tmp: string;
let runs: string;
let grpoA: TrainFixture;
let server: ChildProcess;
let base: string;
let browser: BrowserContext;
let page: Page;
const pageErrors: string[] = [];
const dialogs: string[] = [];

function sleuth(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8' });
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
  sleuth(['eval', '--agent', 'baseline', '--tasks', 'default', '--split', 'eval', '--limit', '4', '--out', join(runs, 'grpo-a', 'evals', 'step-8')]);
  await writeTrainRun(runs, 'grpo-b', { steps: 3, groups: 6, groupSize: 4, seed: 2, done: false });
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
  it('lists the runs with kind, task set, model, steps and state', async () => {
    await open('#/');
    await page.waitForSelector('#runs tbody tr');
    const rows = await page.$$eval('#runs tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));
    const byId = new Map(rows.map((r) => [r[1], r]));
    expect([...byId.keys()].sort()).toEqual(['crashed', 'eval-baseline', 'eval-oracle', 'grpo-a', 'grpo-a/evals/step-8', 'grpo-b']);
    expect(byId.get('grpo-a')!.slice(2, 7)).toEqual(['train', expect.stringContaining('grpo-a-tasks'), 'base', '8', '96']);
    expect(byId.get('eval-oracle')!.slice(2, 5)).toEqual(['eval', 'default', 'oracle']);
    expect(byId.get('eval-oracle')![7]).toContain('reward 1');
    expect(byId.get('grpo-a')![9]).toBe('done');
    expect(byId.get('grpo-b')![9]).toBe('running');
    expect(byId.get('crashed')![10]).toContain('2');
    await page.screenshot({ path: join(ARTIFACTS, 'runs.png') });
  });

  it('opens a run: the seeds\' charts are drawn, with the eval table and intervals', async () => {
    await page.click('a.run-link:text-is("grpo-a")');
    await page.waitForFunction(() => location.hash === '#/run?runs=grpo-a');
    await waitRendered();
    const titles = await page.$$eval('figure.chart figcaption', (f) => f.map((x) => x.textContent));
    expect(titles).toEqual(expect.arrayContaining(['train reward', 'valid rollouts (curated ≥ 1)', 'entropy (nats / sampled token)', 'eval F1 / precision / recall', 'trajectory vs curated recall', 'turns per episode', 'curated documents']));
    const ink = await inkedCharts();
    expect(ink.length).toBeGreaterThanOrEqual(8);
    expect(ink.every((n) => n > 200)).toBe(true);
    const evalHead = await page.$$eval('#eval-table thead th', (th) => th.map((x) => x.textContent));
    expect(evalHead).toEqual(['metric', 'grpo-a/evals/step-8']);
    expect(await page.textContent('#eval-table tbody')).toMatch(/reward\d\.\d+ \[\d\.\d+, \d\.\d+\]/u);
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard.png'), fullPage: true });
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
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(ARTIFACTS, 'rollout.png'), fullPage: true, clip: { x: 0, y: 0, width: 1400, height: 2000 } });
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
    expect(await page.$$eval('#app img, #app script', (e) => e.length)).toBe(0);
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
    for (const [from, to] of [['dashboard.png', 'explorer-dashboard.png'], ['rollout.png', 'explorer-rollout.png']]) {
      expect(existsSync(join(ARTIFACTS, from!))).toBe(true);
      if (process.env['SLEUTH_UPDATE_SCREENSHOTS'] === '1') copyFileSync(join(ARTIFACTS, from!), join(ROOT, 'docs', 'img', to!));
    }
  });
});
