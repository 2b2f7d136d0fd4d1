/**
 * The memory browser end to end in real headless Chromium (Debian's `chromium` driven by
 * playwright-core): each test does what a user does with the keyboard and mouse, checks what is
 * on screen, and saves a screenshot under test-artifacts/screenshots/ (CI keeps that folder).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUi, type RunningUi } from '../../src/web/server.js';
import { createFixture, SESSION_ID, XSS, type Fixture } from './fixture.js';
import { oneCpuHeavyFileAtATime } from '../helpers/cpu-heavy.js';

await oneCpuHeavyFileAtATime(); // test/helpers/cpu-heavy.ts

const CHROMIUM = process.env.CAIRN_CHROMIUM ?? '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const SHOTS = fileURLToPath(new URL('../../test-artifacts/screenshots/', import.meta.url));
const REASON = `skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CAIRN_CHROMIUM)`;
if (!HAVE_CHROMIUM) console.warn(`[test/web/browser] ${REASON}`);

describe.skipIf(!HAVE_CHROMIUM)(HAVE_CHROMIUM ? 'the memory browser in headless Chromium' : `the memory browser in headless Chromium — ${REASON}`, () => {
  let fx: Fixture;
  let ui: RunningUi;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const errors: string[] = [];
  const dialogs: string[] = [];

  async function shot(name: string, target: Page = page): Promise<void> {
    await target.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false });
  }

  async function open(hash = ''): Promise<void> {
    await page.goto(`http://127.0.0.1:${ui.port}/${hash}`);
    await page.waitForSelector('.view');
  }

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    fx = await createFixture({ extraMemories: 60 });
    ui = await startUi(fx.cairn);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync'],
    });
    context = await browser.newContext({ viewport: { width: 1440, height: 900 }, colorScheme: 'light' });
    page = await context.newPage();
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    page.on('dialog', async (d) => {
      dialogs.push(d.message());
      await d.dismiss();
    });
    // The printed URL: the token goes into a cookie and leaves the address bar.
    await page.goto(ui.url);
    await page.waitForSelector('.list .row');
  });

  afterAll(async () => {
    await browser?.close();
    await ui?.close();
    await fx?.close();
  });

  it('opens from the printed URL, keeps the token out of the address bar, and lists memories', async () => {
    expect(page.url()).toBe(`http://127.0.0.1:${ui.port}/`);
    const cookies = await context.cookies();
    expect(cookies.find((c) => c.name === `cairn_token_${ui.port}`)).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    await expect.poll(() => page.locator('.list .row').count()).toBe(50);
    await expect.poll(() => page.locator('.rh-title').innerText()).toMatch(/of 7\d memories/);
    await page.waitForSelector('.chip-fact .chip-n');
    await shot('01-memories-list');
    expect(errors).toEqual([]);
  });

  it('shows a script tag in a memory as text and never runs it', async () => {
    await open('#/memories?tags=security');
    const row = page.locator('.row', { hasText: '<script>alert(1)</script>' });
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.locator('.row-text').innerText()).toBe(XSS);
    await row.click();
    await page.waitForSelector('.d-text');
    expect(await page.locator('.d-text').innerText()).toBe(XSS);
    expect(await page.locator('.d-text script').count()).toBe(0);
    expect(dialogs).toEqual([]);
    await shot('02-script-tag-as-text');
  });

  it('searches from the keyboard and reads the why breakdown', async () => {
    await open();
    await page.keyboard.press('/');
    await page.keyboard.type('parse_config signature');
    await page.keyboard.press('Enter');
    // Enter in the search box selects the first result.
    await page.waitForSelector('.list .row.selected .why-mini');
    const first = page.locator('.list .row').first();
    expect(await first.innerText()).toContain('parse_config(path: Path');
    await expect.poll(() => first.locator('.badge.stale').innerText()).toBe('file changed');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.why-row');
    const parts = await page.locator('.why-row .why-label').allInnerTexts();
    expect(parts).toEqual(['Relevance', 'Importance', 'Recency', 'Usage']);
    expect(await page.locator('.why-total').innerText()).toMatch(/Score \d\.\d{3}/);
    expect(await page.locator('.why-signals').innerText()).toMatch(/BM25 #\d/);
    expect(await page.locator('.files').innerText()).toContain('src/config.py:42');
    await shot('03-search-why-breakdown');
  });

  it('edits a memory with e, keeping the old text as a version', async () => {
    await open(`#/memories?open=${fx.ids.pnpm}`);
    await page.waitForSelector('.d-text');
    await page.keyboard.press('e');
    const editor = page.locator('.editor-text');
    await editor.fill('Use pnpm (v9), never npm or yarn, in this repository');
    await shot('04-edit-memory-editor');
    await page.keyboard.press('Control+Enter');
    await page.waitForSelector('.versions');
    expect(await page.locator('.d-text').innerText()).toBe('Use pnpm (v9), never npm or yarn, in this repository');
    expect(await page.locator('.versions li').count()).toBe(2);
    expect(page.url()).not.toContain(fx.ids.pnpm);
    await shot('04-edit-memory-saved');
  });

  it('an e pressed while the last memory is still shown edits the one being opened', async () => {
    await open(`#/memories?tags=config&open=${fx.ids.parseConfig}`);
    await page.locator('.d-text', { hasText: 'parse_config(path: Path' }).waitFor();
    // The list reloads before the detail does: hold its answer so the old detail stays on screen.
    let held = 0;
    await page.route(/\/api\/memories\?/, async (route) => {
      held++;
      await new Promise((resolve) => setTimeout(resolve, 400));
      await route.continue();
    });
    try {
      await page.evaluate((id) => (location.hash = `#/memories?tags=workspace&open=${id}`), fx.ids.lock);
      await expect.poll(() => held).toBeGreaterThan(0);
      expect(await page.locator('.d-text').innerText()).toContain('parse_config(path: Path');
      await page.keyboard.press('e');
      await expect.poll(() => page.locator('.editor-text').inputValue()).toMatch(/^acquire_lock\(\) must run before/);
      await page.keyboard.press('Escape');
    } finally {
      await page.unroute(/\/api\/memories\?/);
    }
  });

  it('forgets with # and undoes with u', async () => {
    await open('#/memories?kinds=procedure');
    await page.waitForSelector('.list .row');
    const text = 'cargo test -p ws runs the workspace tests (48 tests, ~3 s)';
    expect(await page.locator('.list .row').first().innerText()).toContain(text);
    await page.keyboard.press('j');
    await page.keyboard.press('#');
    await page.locator('.toast', { hasText: 'Forgotten' }).waitFor();
    await expect.poll(() => page.locator('.list .row', { hasText: text }).count()).toBe(0);
    expect((await fx.cairn.deps.store.getMemory(fx.ids.retry))?.deletedAt).not.toBeNull();
    await shot('05-forgotten-with-undo-toast');
    await page.keyboard.press('u');
    await expect.poll(() => page.locator('.list .row', { hasText: text }).count()).toBe(1);
    expect((await fx.cairn.deps.store.getMemory(fx.ids.retry))?.deletedAt).toBeNull();
    await page.locator('.toast', { hasText: /Undid the forget/ }).waitFor();
    await shot('05-forget-undone');
  });

  it('diffs two snapshots picked on the timeline', async () => {
    await open('#/snapshots');
    await page.waitForSelector('.tl-point');
    await page.locator('.tl-point', { hasText: 'before-cleanup' }).locator('.tl-dot').click();
    await page.waitForSelector('.diff-summary');
    await page.locator('.tl-point', { hasText: 'after-cleanup' }).locator('.tl-dot').click();
    await expect.poll(() => page.locator('.diff-summary').innerText()).toMatch(/before-cleanup\s*→\s*after-cleanup/);
    const summary = await page.locator('.diff-summary').innerText();
    expect(summary).toMatch(/−1 removed/);
    expect(summary).toMatch(/~1 changed/);
    // The changed memory is shown once, its words struck and inserted (test/web/first-hour.test.ts goes further).
    const revised = page.locator('.diff-row.revised');
    expect((await revised.locator('del').allInnerTexts()).map((t) => t.trim())).toEqual(['the', 'branch']);
    expect((await revised.locator('ins').allInnerTexts()).join('')).toContain('/* branches');
    expect(await page.locator('.diff-row.removed').innerText()).toContain('staging database is on port 5433');
    await shot('06-snapshot-diff');
  });

  it('follows a memory back to the session turn it came from: a correction', async () => {
    await open(`#/memories?open=${fx.ids.corrected}`);
    await page.locator('a', { hasText: 'Open the session at this turn' }).click();
    await page.waitForSelector('.turn.focus');
    expect(page.url()).toContain(`#/session/${SESSION_ID}`);
    const focused = page.locator('.turn.focus');
    expect(await focused.locator('.badge.correction').innerText()).toMatch(/correction · pushback/);
    expect(await focused.innerText()).toContain("don't add retries");
    expect(await page.locator('.turn.is-premise').innerText()).toContain('retry with a sleep');
    expect(await page.locator('.compaction-marker').innerText()).toMatch(/Compacted \(manual\) · 91,000 tokens before/);
    expect(await page.locator('.session-side').textContent()).toContain('Memories from this session (2)');
    await shot('07-session-at-correction');
  });

  it('lists sessions and resolves a stale memory in the review queue', async () => {
    await open('#/sessions');
    await page.waitForSelector('.session-row');
    expect(await page.locator('.session-row').count()).toBe(2);
    await shot('08-sessions');
    await page.locator('.history-search input').fill('sleep retry');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.hit-row');
    expect(await page.locator('.hit-row').first().innerText()).toContain('retry with a sleep');
    await shot('08-sessions-turn-search');
    await page.locator('.hit-row').first().click();
    await page.waitForSelector('.turn.focus');
    expect(await page.locator('.turn.focus').innerText()).toContain('retry with a sleep');
    await open('#/review?kind=stale');
    await page.locator('button', { hasText: 'Scan recent memories' }).click();
    await page.waitForSelector('.rv-item');
    expect(await page.locator('.rv-item').count()).toBe(2);
    await shot('09-review-stale');
    await page.locator('.rv-item', { hasText: 'Config defaults are set' }).locator('button', { hasText: 'Forget' }).click();
    await expect.poll(() => page.locator('.rv-item').count()).toBe(1);
    await page.locator('[role=tab]', { hasText: 'Near-duplicates' }).click();
    await page.waitForSelector('.rv-near-duplicate');
    const pair = page.locator('.rv-near-duplicate').first();
    expect(await pair.locator('.rv-memory').count()).toBe(2);
    const [kept, dropped] = await pair.locator('.rv-memory').evaluateAll((els) => els.map((el) => (el as HTMLElement).dataset.id as string));
    await shot('09-review-near-duplicates');
    await pair.locator('button', { hasText: 'Keep this one' }).first().click();
    await page.locator('.toast', { hasText: 'Kept one' }).waitFor();
    expect((await fx.cairn.deps.store.getMemory(kept as string))?.deletedAt).toBeNull();
    expect((await fx.cairn.deps.store.getMemory(dropped as string))?.deletedAt).not.toBeNull();
  });

  it('draws the overview charts, in light and dark', async () => {
    await open('#/overview');
    await page.waitForSelector('svg.growth');
    expect(await page.locator('svg.growth rect.bar').count()).toBeGreaterThan(2);
    expect(await page.locator('.donut').count()).toBe(2);
    expect(await page.locator('.barlist li').count()).toBeGreaterThan(3);
    await shot('10-overview-light');
    await page.keyboard.press('t');
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(bg).toBe('rgb(19, 19, 18)');
    await shot('10-overview-dark');
    await open('#/memories?q=workspace%20race');
    await page.waitForSelector('.why-mini');
    await page.keyboard.press('j');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.why-row');
    await shot('11-search-dark');
    await page.keyboard.press('t');
  });

  it('lists the keyboard shortcuts with ?', async () => {
    await open('#/memories');
    await page.keyboard.press('?');
    await page.waitForSelector('dialog.help[open]');
    expect(await page.locator('dialog.help').innerText()).toContain('undo the last change');
    await shot('13-keyboard-help');
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('dialog.help[open]').count()).toBe(0);
  });

  it('fits a phone screen', async () => {
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(`http://127.0.0.1:${ui.port}/#/memories`);
    await phone.waitForSelector('.list .row');
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await shot('12-phone-list', phone);
    await phone.locator('.list .row').first().click();
    await phone.waitForSelector('.d-text');
    await shot('12-phone-detail', phone);
    await phone.close();
    expect(errors).toEqual([]);
  });
});
