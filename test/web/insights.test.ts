/**
 * The overview's readers of the cairn home: the latest bench result per suite (as `cairn bench`
 * saves it) and the hook log (as the hooks write it). A regression test: a half-written results
 * file or a foreign log line must not break the overview. And the injection ledger as the overview
 * reads it: sessions, context windows, items and whether the agent used them.
 */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { benchQuality, hookActivity, injections } from '../../src/web/insights.js';
import { createFixture, PROJECT, SESSION_ID } from './fixture.js';

let home: string;
afterEach(() => rmSync(home, { recursive: true, force: true }));

describe('recall quality from the bench results', () => {
  it('says which commands make a result when there is none', () => {
    home = mkdtempSync(join(tmpdir(), 'cairn-insights-'));
    const q = benchQuality(home);
    expect(q.results).toEqual([]);
    expect(q.commands[0]).toMatch(/^cairn bench beir/);
    expect(benchQuality(null).results).toEqual([]);
  });

  it('reads what `cairn bench` saved: only quality figures, skipping unreadable files', async () => {
    home = mkdtempSync(join(tmpdir(), 'cairn-insights-'));
    // A real (quick) run of a suite that needs no data: it is saved, but has no quality figures.
    const run = await runCli(['bench', 'context', '--quick', '--sizes', '200', '--json'], { home, cwd: home });
    expect(run.code).toBe(0);
    const dir = join(home, 'bench', 'results');
    expect(benchQuality(home).results).toEqual([]);
    writeFileSync(join(dir, 'broken.json'), '{"schema": "cairn-bench/1", "resu');
    const saved = JSON.parse(run.stdout) as { env: unknown; options: unknown; results: Array<Record<string, unknown>> };
    const result = saved.results[0] as Record<string, unknown>;
    writeFileSync(
      join(dir, 'locomo.json'),
      JSON.stringify({
        ...saved,
        results: [
          {
            ...result,
            suite: 'locomo',
            metrics: [
              { name: 'LoCoMo recall@5 (bm25)', value: 0.61, unit: 'share', target: { op: '>=', value: 0.6 }, anchor: null, pass: true },
              { name: 'recall p50', value: 4, unit: 'ms', target: null, anchor: null, pass: null },
              { name: 'LoCoMo recall@5 (vector)', value: null, unit: 'share', target: null, anchor: null, pass: null },
            ],
          },
        ],
      }),
    );
    const q = benchQuality(home);
    expect(q.results).toHaveLength(1);
    expect(q.results[0]).toMatchObject({ suite: 'locomo', quick: true, metrics: [{ name: 'LoCoMo recall@5 (bm25)', value: 0.61, pass: true }] });
    expect(q.results[0]?.command).toMatch(/^cairn bench context --quick/);
  });
});

describe('hook runs from the hook log', () => {
  it('groups runs by session, newest session first, and passes over lines it does not know', () => {
    home = mkdtempSync(join(tmpdir(), 'cairn-insights-'));
    expect(hookActivity(home).sessions).toEqual([]);
    mkdirSync(join(home, 'logs'));
    const log = join(home, 'logs', 'hooks.log');
    const line = (t: string, data: Record<string, unknown>) => appendFileSync(log, `${JSON.stringify({ t, level: 'info', ...data })}\n`);
    line('2026-03-01T10:00:00.000Z', { message: 'hook', event: 'session-start', session: 'a', output: 'json', ms: 80 });
    appendFileSync(log, 'not json at all\n');
    line('2026-03-01T10:01:00.000Z', { message: 'ingested', path: '/x', turns: 3 });
    line('2026-03-01T10:02:00.000Z', { message: 'hook', event: 'prompt', session: 'a', output: 'none', ms: 40 });
    line('2026-03-01T11:00:00.000Z', { level: 'error', message: 'hook failed', event: 'pre-compact', error: 'disk full' });
    line('2026-03-01T12:00:00.000Z', { message: 'hook', event: 'session-start', session: 'b', output: 'json', ms: 70 });
    const activity = hookActivity(home);
    expect(activity.sessions.map((s) => s.session)).toEqual(['b', null, 'a']);
    expect(activity.sessions[2]?.runs.map((r) => [r.event, r.output])).toEqual([
      ['session-start', 'json'],
      ['prompt', 'none'],
    ]);
    expect(activity.sessions[1]?.runs[0]).toMatchObject({ event: 'pre-compact', error: 'disk full' });
  });
});

describe('what the hooks and tools injected, from the ledger', () => {
  it('reads sessions, windows, items and their use; falls back to the hook log while the ledger is empty', async () => {
    home = mkdtempSync(join(tmpdir(), 'cairn-insights-'));
    const fx = await createFixture();
    try {
      mkdirSync(join(home, 'logs'));
      appendFileSync(join(home, 'logs', 'hooks.log'), `${JSON.stringify({ t: '2026-03-01T10:00:00.000Z', level: 'info', message: 'hook', event: 'session-start', session: 'old', output: 'json', ms: 80 })}\n`);
      const empty = await injections(fx.cairn, home);
      expect(empty).toMatchObject({ source: 'ledger', ledger: [], use: [] });
      expect(empty.hookLog.sessions.map((s) => s.session)).toEqual(['old']);

      const ledger = fx.cairn.ledger!;
      await ledger.startWindow('s1', 'startup');
      const first = await ledger.record({ session: 's1', via: 'hook', name: 'session-start', memories: [fx.ids.pnpm, 'gone-id'], facts: ['f1'], blocks: ['working-set'], tokens: 500 });
      fx.clock.advance(60_000);
      await ledger.startWindow('s1', 'compact');
      await ledger.record({ session: 's1', via: 'mcp', name: 'recall', memories: [fx.ids.lock], tokens: 120 });
      await ledger.markUsed(first.id, [fx.ids.pnpm]);
      const { source, ledger: sessions } = await injections(fx.cairn, home);
      expect(source).toBe('ledger');
      expect(sessions).toHaveLength(1);
      const s1 = sessions[0]!;
      expect(s1).toMatchObject({ session: 's1', project: PROJECT, tokens: 620, injectionCount: 2, usageKnown: true, ingested: false });
      expect(s1.windows.map((w) => w.reason)).toEqual(['startup', 'compact']);
      expect(s1.injections.map((i) => [i.window, i.via, i.name])).toEqual([
        [0, 'hook', 'session-start'],
        [1, 'mcp', 'recall'],
      ]);
      expect(s1.injections[0]!.items).toEqual([
        { id: fx.ids.pnpm, kind: 'memory', text: 'Use pnpm, never npm, in this repository', used: true },
        { id: 'gone-id', kind: 'memory', text: null, used: false },
        { id: 'f1', kind: 'fact', text: null, used: false },
        { id: 'working-set', kind: 'block', text: null, used: null },
      ]);
      // A session whose transcript is ingested can be opened in the browser.
      fx.clock.advance(60_000);
      await ledger.record({ session: SESSION_ID, via: 'hook', name: 'prompt', memories: [fx.ids.lock], tokens: 40 });
      expect((await injections(fx.cairn, home)).ledger.map((s) => [s.session, s.ingested])).toEqual([
        [SESSION_ID, true],
        ['s1', false],
      ]);
      // Learn from use, per project (what ingest measured after each window).
      await fx.cairn.deps.store.ledger!.recordOutcome({ session: 's1', window: 1, project: PROJECT, reason: 'compact', measuredAt: 9, turnsAfter: 3, injected: 4, used: 1, needed: 5, missed: 2, missedFacts: [], kinds: {} });
      expect((await injections(fx.cairn, home)).use).toEqual([
        { project: PROJECT, compactions: 1, windows: 1, injected: 4, used: 1, usedShare: 0.25, needed: 5, missed: 2, lastMeasuredAt: 9, learned: { compactions: 1, weights: {}, details: 0 } },
      ]);
      // From the second measured compaction on, what learning changed: symbols used more than usual, paths less.
      await fx.cairn.deps.store.ledger!.recordOutcome({ session: 's2', window: 1, project: PROJECT, reason: 'compact', measuredAt: 10, turnsAfter: 3, injected: 40, used: 21, needed: 30, missed: 4, missedFacts: [], kinds: { symbol: { injected: 20, used: 20, missed: 0 }, path: { injected: 20, used: 1, missed: 4 } } });
      const learned = (await injections(fx.cairn, home)).use[0]!.learned;
      expect(learned.compactions).toBe(2);
      expect(learned.weights.symbol).toBeGreaterThan(0);
      expect(learned.weights.path).toBeLessThan(0);
      // Not measured yet: neither used nor unused.
      expect(s1.injections[1]!.items[0]).toMatchObject({ id: fx.ids.lock, used: null });
    } finally {
      await fx.close();
    }
  });
});
