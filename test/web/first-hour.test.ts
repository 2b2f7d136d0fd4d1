/**
 * A newcomer's first look at the memory browser, end to end in real headless Chromium (Debian's
 * `chromium` driven by playwright-core), at phone (360 px) and desktop (1280 px) width, light and
 * dark: the list with each memory labelled by where it belongs, a memory's full project name, the
 * overview's pictures (memories over time per project, what the hooks did, recall quality), the
 * review queue opening on the tab that has items, a snapshot diff shown as the memories with their
 * words changed — by keyboard, with focus visible and nothing wider than the screen. Screenshots go
 * to test-artifacts/screenshots/first-hour/.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BenchReport } from '../../src/bench-report.js';
import { streamLogger } from '../../src/runtime.js';
import { startUi, type RunningUi } from '../../src/web/server.js';
import { createFixture, OTHER_PROJECT, PROJECT, type Fixture } from './fixture.js';
import { oneCpuHeavyFileAtATime } from '../helpers/cpu-heavy.js';

await oneCpuHeavyFileAtATime(); // test/helpers/cpu-heavy.ts

const CHROMIUM = process.env.CAIRN_CHROMIUM ?? '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const SHOTS = fileURLToPath(new URL('../../test-artifacts/screenshots/first-hour/', import.meta.url));
const REASON = `skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CAIRN_CHROMIUM)`;
if (!HAVE_CHROMIUM) console.warn(`[test/web/first-hour] ${REASON}`);

const LONG_PROJECT = 'github.com/acme/monorepo-worktrees/monorepo-';

const VIEWPORTS = [
  { width: 360, height: 780 },
  { width: 1280, height: 860 },
] as const;
const SCHEMES = ['light', 'dark'] as const;

/** A hook log as the hooks write it (the same logger, the same lines). */
function writeHookLog(home: string, at: number): void {
  mkdirSync(join(home, 'logs'), { recursive: true });
  const lines: string[] = [];
  const log = streamLogger((line) => lines.push(line), 'info');
  const runs: Array<[string, string, string]> = [
    ['sess-7f3a', 'session-start', 'json'],
    ['sess-7f3a', 'prompt', 'none'],
    ['sess-7f3a', 'prompt', 'json'],
    ['sess-7f3a', 'pre-compact', 'text'],
    ['sess-7f3a', 'session-start', 'json'],
    ['sess-infra-1', 'session-start', 'none'],
  ];
  for (const [session, event, output] of runs) log.info('hook', { event, session, output, ms: 60 });
  // The logger stamps the wall clock; place the runs at the fixture's time instead.
  const stamped = lines.map((line, i) => line.replace(/"t":"[^"]+"/, `"t":"${new Date(at + i * 60_000).toISOString()}"`));
  writeFileSync(join(home, 'logs', 'hooks.log'), stamped.join(''));
}

/**
 * What the hooks and tools gave the agent, recorded in the store's injection ledger as they
 * record it: sess-7f3a starts, gets a prompt's memories, is compacted (guidance for the summary,
 * then a new window) and recalls over MCP; learn-from-use has marked the first injection's use.
 */
async function recordInjections(fx: Fixture, at: number): Promise<void> {
  const ledger = fx.cairn.ledger;
  if (!ledger) throw new Error('the SQLite store has an injection ledger');
  const minute = 60_000;
  fx.clock.t = at;
  await ledger.startWindow('sess-7f3a', 'startup');
  const start = await ledger.record({ session: 'sess-7f3a', via: 'hook', name: 'session-start', memories: [fx.ids.pnpm, fx.ids.retry, fx.ids.lock], blocks: ['core:persona', 'working-set'], tokens: 820, project: PROJECT, at });
  await ledger.record({ session: 'sess-7f3a', via: 'hook', name: 'prompt', memories: [fx.ids.parseConfig], tokens: 140, project: PROJECT, at: at + 2 * minute });
  await ledger.record({ session: 'sess-7f3a', via: 'hook', name: 'pre-compact', target: 'summary', memories: [fx.ids.lock], tokens: 300, project: PROJECT, at: at + 30 * minute });
  fx.clock.t = at + 31 * minute;
  await ledger.startWindow('sess-7f3a', 'compact');
  await ledger.record({ session: 'sess-7f3a', via: 'hook', name: 'session-start', memories: [fx.ids.pnpm], tokens: 610, project: PROJECT, at: at + 31 * minute });
  await ledger.record({ session: 'sess-7f3a', via: 'mcp', name: 'recall', memories: [fx.ids.corrected, fx.ids.stale], tokens: 260, project: PROJECT, at: at + 40 * minute });
  await ledger.markUsed(start.id, [fx.ids.pnpm, fx.ids.lock]);
  // What ingest measured after the /compact (src/context/use.ts): one outcome per window.
  await fx.cairn.deps.store.ledger?.recordOutcome({ session: 'sess-7f3a', window: 1, project: PROJECT, reason: 'compact', measuredAt: at + 45 * minute, turnsAfter: 12, injected: 3, used: 1, needed: 8, missed: 5, missedFacts: [], kinds: {} });
  // Another project with two measured compactions: learning has moved its weights (symbols up, paths down).
  for (const window of [1, 2]) {
    await fx.cairn.deps.store.ledger?.recordOutcome({ session: `sess-infra-0${window}`, window, project: OTHER_PROJECT, reason: 'compact', measuredAt: at + window * minute, turnsAfter: 9, injected: 40, used: 21, needed: 30, missed: 4, missedFacts: [], kinds: { symbol: { injected: 20, used: 20, missed: 0 }, path: { injected: 20, used: 1, missed: 4 } } });
  }
  fx.clock.t = at + 50 * minute;
  await ledger.startWindow('sess-infra-1', 'startup');
  await ledger.record({ session: 'sess-infra-1', via: 'hook', name: 'session-start', memories: [fx.ids.infra], tokens: 95, project: OTHER_PROJECT, at: at + 50 * minute });
  fx.clock.t = at + 24 * 3_600_000;
}

/** A bench result file as `cairn bench beir` saves it under the home. */
function writeBenchResult(home: string): void {
  const env = { command: 'cairn bench beir --data ../shared/data', commit: '0123456789abcdef', dirty: false, machine: { cpu: 'test', cores: 2, memoryBytes: 1, platform: 'linux', arch: 'x64', loadAverage: [1.2, 1, 1] }, node: 'v20', date: '2026-03-01T10:00:00.000Z' };
  const metric = (name: string, value: number, target: number | null) => ({ name, value, unit: 'share', target: target === null ? null : { op: '>=' as const, value: target }, anchor: 'BM25 0.665', pass: target === null ? null : value >= target });
  const report: BenchReport = {
    schema: 'cairn-bench/1',
    env,
    options: { suites: ['beir'], quick: false, seed: 42, sizes: [], data: '../shared/data' },
    results: [
      {
        suite: 'beir',
        description: 'retrieval quality on BEIR sets',
        status: 'ok',
        reason: null,
        env,
        datasets: [],
        metrics: [metric('SciFact nDCG@10 (bm25)', 0.664, 0.6), metric('SciFact nDCG@10 (hybrid)', 0.694, 0.7), { ...metric('CoSQA MRR@10 (bm25)', 0.3, null), unit: 'share' }, { ...metric('recall p50', 3, null), unit: 'ms' }],
        details: {},
        durationMs: 1000,
        load: { start: 1.2, end: 1.1 },
      },
    ],
  };
  mkdirSync(join(home, 'bench', 'results'), { recursive: true });
  writeFileSync(join(home, 'bench', 'results', 'beir.json'), JSON.stringify(report));
}

describe.skipIf(!HAVE_CHROMIUM)(HAVE_CHROMIUM ? "a newcomer's first look at the memory browser" : `a newcomer's first look at the memory browser — ${REASON}`, () => {
  let fx: Fixture;
  let ui: RunningUi;
  let browser: Browser;
  let home: string;
  let noProjectId: string;
  const errors: string[] = [];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    fx = await createFixture({ extraMemories: 12 });
    home = mkdtempSync(join(tmpdir(), 'cairn-ui-home-'));
    // A memory of a session whose folder was unknown: not user scope, and in no project.
    noProjectId = (await fx.cairn.remember({ text: 'The build cache lives in /var/cache/build (from a session without a folder)', kind: 'fact', project: null, scope: 'session', session: 'sess-unknown' })).memory.id;
    // Two projects whose names differ only at their end (worktrees of one repository).
    for (const wt of ['feature-alpha', 'feature-beta']) await fx.cairn.remember({ text: `The ${wt} worktree builds with make ${wt}`, kind: 'procedure', project: `${LONG_PROJECT}${wt}` });
    // Only stale items wait: the review must open on the Stale tab, not the empty first one.
    const stale = await fx.cairn.deps.store.getMemory(fx.ids.stale);
    await fx.cairn.deps.store.queueReview([
      { id: fx.cairn.deps.ids.next(), kind: 'stale', key: `stale:${fx.ids.stale}:t`, project: stale?.project ?? null, memoryIds: [fx.ids.stale], reason: 'its files changed since it was written (src/config.py:42 file-changed): revise or forget it', data: {}, createdAt: fx.clock.now(), resolvedAt: null, resolution: null },
    ]);
    writeHookLog(home, fx.clock.now() - 3_600_000);
    const now = fx.clock.now();
    await recordInjections(fx, now - 3_600_000);
    fx.clock.t = now;
    writeBenchResult(home);
    ui = await startUi(fx.cairn, { home });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  });

  afterAll(async () => {
    await browser?.close();
    await ui?.close();
    await fx?.close();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  /**
   * Nothing is wider than the screen: not the page, not the tabs, and no visible element past the
   * right edge even where a container clips it (a cut figure is as broken as a scrollbar).
   */
  async function noOverflow(page: Page, where: string): Promise<void> {
    const widths = await page.evaluate(() => {
      const tabs = document.querySelector('.tabs') as HTMLElement;
      // A tab whose label is cut (ellipsis) does not fit either.
      const cut = [...tabs.querySelectorAll('a')].filter((a) => a.scrollWidth > a.clientWidth).map((a) => `${a.textContent} ${a.scrollWidth}/${a.clientWidth} of ${tabs.clientWidth}`);
      // Inside something that scrolls sideways on purpose (a code block), past the edge is fine.
      const scrolls = (el: Element): boolean => {
        for (let p = el.parentElement; p; p = p.parentElement) if (['auto', 'scroll'].includes(getComputedStyle(p).overflowX) && p !== document.documentElement && p !== document.body) return true;
        return false;
      };
      const past = [...document.querySelectorAll('main *, header *')]
        .filter((el) => {
          const r = el.getBoundingClientRect();
          return r.width > 0 && r.height > 0 && r.right > window.innerWidth + 0.5 && getComputedStyle(el).visibility !== 'hidden' && !scrolls(el);
        })
        .slice(0, 5)
        .map((el) => `${el.tagName.toLowerCase()}.${[...el.classList].join('.')} right=${Math.round(el.getBoundingClientRect().right)}`);
      return { page: document.documentElement.scrollWidth - window.innerWidth, tabs: tabs.scrollWidth - tabs.clientWidth, cut, past };
    });
    expect(widths.cut, `${where}: tab labels cut`).toEqual([]);
    expect(widths.past, `${where}: past the right edge of a ${await page.evaluate(() => window.innerWidth)} px screen`).toEqual([]);
    expect(widths.page, `${where}: page wider than the screen`).toBeLessThanOrEqual(0);
    expect(widths.tabs, `${where}: tabs overflow`).toBeLessThanOrEqual(0);
  }

  /** The focused element and whether its focus shows (an outline or a focus shadow). */
  async function focused(page: Page): Promise<{ tag: string; cls: string; text: string; visible: boolean }> {
    return page.evaluate(() => {
      const el = document.activeElement as HTMLElement;
      const ring = (node: Element): boolean => {
        const style = getComputedStyle(node);
        return (style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0) || style.boxShadow !== 'none';
      };
      // A text box may show its focus on the box around it (the search field's :focus-within).
      const visible = ring(el) || (el.tagName === 'INPUT' && el.parentElement !== null && ring(el.parentElement));
      const name = el.getAttribute('aria-label') ?? el.getAttribute('placeholder') ?? el.textContent ?? '';
      return { tag: el.tagName, cls: el.className, text: name.slice(0, 80), visible };
    });
  }

  for (const viewport of VIEWPORTS) {
    for (const scheme of SCHEMES) {
      const tag = `${viewport.width}-${scheme}`;
      it(`walks the first look at ${viewport.width} px, ${scheme}`, async () => {
        const context = await browser.newContext({ viewport, colorScheme: scheme });
        const page = await context.newPage();
        page.on('pageerror', (e) => errors.push(`${tag}: ${e.message}`));
        page.on('console', (m) => m.type() === 'error' && errors.push(`${tag}: ${m.text()}`));
        const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${tag}-${name}.png`), fullPage: name.startsWith('overview') });

        // 1. The printed URL opens the list; every memory says where it belongs.
        await page.goto(ui.url);
        await page.waitForSelector('.list .row');
        // The filters' counts arrive after the rows: let the page settle before using the keyboard.
        await page.waitForLoadState('networkidle');
        await noOverflow(page, 'memories');
        const where = await page.locator('.list .row .where').evaluateAll((els) => els.map((el) => ({ text: el.textContent, title: el.getAttribute('title') })));
        expect(where).toContainEqual({ text: 'user-wide', title: 'user scope: recalled in every project' });
        expect(where.find((w) => w.text === 'no project')?.title).toMatch(/session scope without a project/);
        expect(where).toContainEqual({ text: 'acme/app', title: PROJECT });
        expect(where.some((w) => w.text === 'user scope')).toBe(false);
        await shot('01-memories');

        // 2. Keyboard: Tab reaches the controls with a visible focus ring; the list is one tab
        //    stop, the arrow keys move in it, Enter opens, Escape closes and comes back to the row.
        // Every stop on the way to the list shows its focus.
        const unseen: string[] = [];
        let stops = 0;
        do {
          await page.keyboard.press('Tab');
          const at = await focused(page);
          if (!at.visible) unseen.push(`${at.tag}.${at.cls} "${at.text.trim().slice(0, 30)}"`);
        } while (!(await focused(page)).cls.includes('row') && stops++ < 80);
        expect(unseen, 'Tab stops without a visible focus').toEqual([]);
        const firstRow = await focused(page);
        expect(firstRow.visible, 'a focused row shows its focus').toBe(true);
        expect(await page.evaluate(() => (document.activeElement as HTMLElement).dataset.id)).toBe(await page.locator('.list .row').first().getAttribute('data-id'));
        await page.keyboard.press('ArrowDown');
        await page.keyboard.press('ArrowDown');
        const third = await page.locator('.list .row').nth(2).getAttribute('data-id');
        expect(await page.evaluate(() => (document.activeElement as HTMLElement).dataset.id)).toBe(third);
        expect(await page.locator('.list .row.selected').getAttribute('data-id')).toBe(third);
        await page.keyboard.press('Enter');
        await page.waitForSelector('.d-text');
        expect(page.url()).toContain(`open=${third}`);
        await page.keyboard.press('Tab');
        expect((await focused(page)).tag, 'Tab goes on into the open memory').toBe('BUTTON');
        await page.keyboard.press('Escape');
        await expect.poll(() => page.url()).not.toContain('open=');
        await expect.poll(() => page.evaluate(() => (document.activeElement as HTMLElement).dataset.id), 'Esc brings the focus back to the row').toBe(third);
        await page.keyboard.press('/');
        await page.keyboard.type('Terraform state bucket');
        await page.keyboard.press('Enter');
        // The search's first hit is selected (the row selected before it is gone with its list).
        await expect.poll(() => page.locator('.list .row.selected').innerText().catch(() => '')).toContain('acme-tf-state');
        await page.keyboard.press('Enter');
        await page.waitForSelector('.d-text');
        // 3. The detail view gives the full project name.
        expect(await page.locator('.facts dd.full-name').innerText()).toBe(OTHER_PROJECT);
        await noOverflow(page, 'detail');
        await shot('02-detail-full-project');
        await page.keyboard.press('Escape');

        // 4. The overview: memories over time per project, what the hooks did, recall quality.
        await page.goto(`http://127.0.0.1:${ui.port}/#/overview`);
        await page.waitForSelector('#by-project svg.lines', { timeout: 15_000 });
        expect(await page.locator('#by-project .series').count()).toBeGreaterThanOrEqual(3);
        const legend = await page.locator('#by-project .series-legend li').evaluateAll((els) => els.map((el) => el.getAttribute('title')));
        expect(legend).toContain(PROJECT);
        expect(legend).toContain(OTHER_PROJECT);
        // User-wide memories and those without a project are two lines, named as in the list.
        const names = await page.locator('#by-project .series-legend .lg-label').allInnerTexts();
        expect(names).toEqual(expect.arrayContaining(['acme/app', 'acme/infra', 'user-wide', 'no project']));
        // Every control of the overview is reached by Tab and shows its focus.
        const overviewUnseen: string[] = [];
        await page.locator('body').click({ position: { x: 1, y: 200 } });
        for (let i = 0; i < 70; i++) {
          await page.keyboard.press('Tab');
          const at = await focused(page);
          if (at.tag === 'BODY') break;
          if (!at.visible) overviewUnseen.push(`${at.tag}.${at.cls} "${at.text.trim().slice(0, 30)}"`);
        }
        expect(overviewUnseen, 'overview: Tab stops without a visible focus').toEqual([]);

        // What the hooks and tools gave the agent, from the ledger: newest session first, a bar
        // per injection, a line where /compact opened a new window, items used or not.
        const sessions = page.locator('#hooks .hook-session');
        expect(await sessions.count()).toBe(2);
        expect(await sessions.first().locator('.hs-head').innerText()).toMatch(/sess-infra-1\s+acme\/infra\s+95 tokens · 1 item · 1 window/);
        const head = await sessions.nth(1).locator('.hs-head').innerText();
        expect(head).toMatch(/sess-7f3a\s+acme\/app\s+2,130 tokens · 10 items · 2 used afterwards · 2 windows/);
        const rows = sessions.nth(1).locator('.injections > li');
        expect(await rows.allInnerTexts().then((t) => t.map((x) => x.split('\n')[0]))).toEqual(['session start', 'prompt', 'before /compact', 'new context window — after /compact', 'session start', 'recall (MCP)']);
        // An ingested session links to its page (test/web/insights.test.ts: one not ingested does not).
        expect(await sessions.nth(1).locator('.hs-head a.full-name').getAttribute('href')).toBe('#/session/sess-7f3a');
        const first = sessions.nth(1).locator('.inj').first();
        expect(await first.locator('.inj-n').innerText()).toBe('820 tok · 5 items · 2 used');
        expect(await first.locator('.inj-item.used').count()).toBe(2);
        // The two blocks (core memory, the working set) are never measured: neither used nor unused.
        expect(await first.locator('.inj-item.unused').count()).toBe(1);
        // Learn from use per project, above the bars.
        expect(await page.locator('#hooks .use-summary').innerText()).toMatch(/acme\/app\s*: 1 compaction · 3 items injected · 33% used afterwards · 5 of 8 needed details missed/);
        expect(await page.locator('#hooks .use-summary').innerText()).toMatch(/acme\/infra\s*: 2 compactions · 80 items injected · \d+% used afterwards · 8 of 60 needed details missed · learned: symbol \+0\.\d\d, path −0\.\d\d/);
        expect(await page.locator('#hooks .use-summary').innerText()).not.toMatch(/acme\/app[^\n]*learned/);
        expect(await sessions.nth(1).locator('.inj.inj-summary').count()).toBe(1);
        expect(await page.locator('#hooks .quality-key').innerText()).toMatch(/used afterwards\s+not used\s+not measured yet/);
        // Open an injection from the keyboard: its items, each marked, the memories linked.
        await first.locator('summary').focus();
        await page.keyboard.press('Enter');
        const items = first.locator('.inj-items li');
        await expect.poll(() => items.count()).toBe(5);
        expect(await items.nth(0).innerText()).toMatch(/✓\s*Use pnpm, never npm/);
        expect(await items.nth(1).innerText()).toMatch(/·\s*cargo test -p ws/);
        expect(await items.nth(3).innerText()).toMatch(/core memory: persona/);
        expect(await items.nth(4).innerText()).toMatch(/the working set/);
        expect(await first.locator('.inj-items a').first().getAttribute('href')).toBe(`#/memories?open=${fx.ids.pnpm}`);
        // Recall quality: one small chart per figure, a bar per method, so the methods compare at a glance.
        expect(await page.locator('#quality .metric-group h4').allInnerTexts()).toEqual(['SciFact nDCG@10', 'CoSQA MRR@10']);
        const scifact = page.locator('#quality .metric-group').first().locator('.shares li');
        expect(await scifact.locator('.bl-label').allInnerTexts()).toEqual(['bm25', 'hybrid']);
        expect(await scifact.first().innerText()).toMatch(/bm25\s*0\.664/);
        expect(await scifact.nth(1).getAttribute('title')).toBe('SciFact nDCG@10 (hybrid): 0.694 (target >= 0.7) — BM25 0.665');
        expect(await page.locator('#quality .bl-fill.miss').count()).toBe(1);
        expect(await page.locator('#quality .bl-fill.pass').count()).toBe(1);
        expect(await page.locator('#quality .quality-key').innerText()).toMatch(/score from 0 to 1\s+the target\s+meets it\s+misses it/);
        // Whole names, at any width.
        for (const label of await page.locator('#quality .bl-label, #quality h4').all()) expect(await label.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
        expect(await page.locator('#quality').innerText()).toContain('cairn bench beir --data ../shared/data');
        const projects = await page.locator('.barlist li.clickable .bl-label').allInnerTexts();
        expect(projects).toEqual(expect.arrayContaining(['acme/app', 'acme/infra', 'user-wide', 'no project']));
        // Long project names that differ at their end: cut at the start, so their ends (what tells
        // them apart) stay in view; the full name on hover.
        for (const wt of ['feature-alpha', 'feature-beta']) {
          for (const label of [page.locator(`.barlist li[title="${LONG_PROJECT}${wt}"] .bl-label`), page.locator(`#by-project .series-legend li[title="${LONG_PROJECT}${wt}"] .lg-label`)]) {
            const edges = await label.evaluate((el) => ({ label: el.getBoundingClientRect().right, text: (el.firstElementChild as HTMLElement).getBoundingClientRect().right }));
            expect(edges.text, `${wt}: the end of its name is in view`).toBeLessThanOrEqual(edges.label + 1);
          }
        }
        await noOverflow(page, 'overview');
        // A full-page picture from the top (scrolled, the sticky header would be drawn mid-page).
        await page.evaluate(() => window.scrollTo(0, 0));
        await shot('overview');
        for (const card of ['by-project', 'projects', 'hooks', 'quality']) await page.locator(`#${card}`).screenshot({ path: join(SHOTS, `${tag}-overview-${card}.png`) });
        await noOverflow(page, 'overview, an injection open');

        // 5. g r: the review opens on the tab that has items.
        await page.locator('body').press('g');
        await page.keyboard.press('r');
        await page.waitForSelector('.rv-item');
        expect(await page.locator('[role=tab][aria-selected=true]').innerText()).toMatch(/Stale\s*1/);
        expect(await page.locator('.rv-item').innerText()).toContain('Config defaults are set');
        await noOverflow(page, 'review');
        await shot('03-review-opens-on-stale');

        // 5b. Sessions: the list and a session, by keyboard, full project names on hover.
        await page.locator('body').press('g');
        await page.keyboard.press('s');
        await page.waitForSelector('.session-row');
        // A new page opens at its top (the review was scrolled).
        expect(await page.evaluate(() => window.scrollY)).toBe(0);
        await noOverflow(page, 'sessions');
        await shot('05-sessions');
        await page.keyboard.press('ArrowDown');
        await page.keyboard.press('Enter');
        await page.waitForSelector('.turn');
        await noOverflow(page, 'a session');
        await shot('05-session');

        // 6. A snapshot diff is the memories themselves: added, changed word by word, removed.
        await page.goto(`http://127.0.0.1:${ui.port}/#/snapshots?from=before-cleanup&to=after-cleanup`);
        await page.waitForSelector('.diff-row.revised');
        const changed = page.locator('.diff-row.revised');
        expect((await changed.locator('del').allInnerTexts()).map((t) => t.trim())).toEqual(['the', 'branch']);
        expect((await changed.locator('ins').allInnerTexts()).join('')).toContain('/* branches');
        expect(await changed.locator('.row-text').innerText()).toMatch(/^Deploys go through .*never .*main$/);
        expect(await changed.locator('.where').innerText()).toBe('acme/app');
        const removed = page.locator('.diff-row.removed');
        expect(await removed.locator('.row-text').innerText()).toBe('The staging database is on port 5433');
        expect(await page.locator('.diff-row.added').count()).toBeGreaterThan(0);
        expect(await page.locator('.diff-list').innerText()).not.toMatch(/\b01[0-9A-HJKMNP-TV-Z]{24}\b/);
        await noOverflow(page, 'changes');
        await changed.scrollIntoViewIfNeeded();
        await shot('04-snapshot-diff');

        await context.close();
        expect(errors).toEqual([]);
      });
    }
  }

  it('labels the memory without a project as what it is in its detail view', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    await page.goto(ui.url);
    await page.goto(`http://127.0.0.1:${ui.port}/#/memories?open=${noProjectId}`);
    await page.waitForSelector('.d-text');
    const facts = await page.locator('.facts').innerText();
    expect(facts).toMatch(/Scope\s*session — recalled in its session only/);
    expect(facts).toMatch(/Project\s*session scope without a project/);
    await context.close();
  });
});
