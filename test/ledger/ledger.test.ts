/**
 * The injection ledger (src/ledger/ledger.ts) on SQLite and on PostgreSQL (PGlite; the real
 * server too when CAIRN_TEST_PG_URL is set): windows, recording, what a window holds, use marks
 * and per-item totals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLedger, type Ledger } from '../../src/ledger/ledger.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Store } from '../../src/types.js';
import { dropTestSchemas, realPgUrl, startPglite, withFreshSchema, type PgServer } from '../serve/pg.js';

function ledgerSuite(name: string, open: () => Promise<Store>): void {
  describe(`injection ledger (${name})`, () => {
    let now = 1_000;
    const clock = { now: () => now };
    const withLedger = async (work: (ledger: Ledger, store: Store) => Promise<void>): Promise<void> => {
      const store = await open();
      try {
        await work(createLedger(store.ledger!, clock, 'proj'), store);
      } finally {
        await store.close();
      }
    };

    it('opens window 0 at startup, keeps it on resume, opens the next on compact and clear', () =>
      withLedger(async (ledger) => {
        expect((await ledger.startWindow('s1', 'startup')).window).toBe(0);
        expect((await ledger.startWindow('s1', 'resume')).window).toBe(0);
        expect((await ledger.startWindow('s1', 'compact')).window).toBe(1);
        expect((await ledger.startWindow('s1', 'clear')).window).toBe(2);
        // A resumed session the ledger never saw starts at window 0.
        expect(await ledger.startWindow('s2', 'resume')).toMatchObject({ window: 0, reason: 'resume' });
        expect((await ledger.get('s1'))?.windows.map((w) => w.reason)).toEqual(['startup', 'compact', 'clear']);
      }));

    it('records injections into the current window and says what it holds (context only, not summary guidance)', () =>
      withLedger(async (ledger) => {
        now = 2_000;
        const first = await ledger.record({ session: 's', via: 'hook', name: 'session-start', memories: ['m1', 'm2', 'm1'], facts: ['f1'], blocks: ['core:project'], tokens: 120.4 });
        expect(first).toMatchObject({ window: 0, at: 2_000, project: 'proj', memories: ['m1', 'm2'], facts: ['f1'], blocks: ['core:project'], tokens: 120, target: 'context' });
        expect(first.used).toBeUndefined();
        await ledger.record({ session: 's', via: 'hook', name: 'pre-compact', target: 'summary', memories: ['m9'], tokens: 30 });
        let seen = await ledger.seen('s');
        expect([...seen.memories].sort()).toEqual(['m1', 'm2']);
        expect([...seen.facts]).toEqual(['f1']);
        expect([...seen.blocks]).toEqual(['core:project']);
        await ledger.startWindow('s', 'compact');
        seen = await ledger.seen('s');
        expect(seen).toMatchObject({ window: 1 });
        expect(seen.memories.size).toBe(0);
        await ledger.record({ session: 's', via: 'mcp', name: 'recall', memories: ['m2'], tokens: 10 });
        expect([...(await ledger.seen('s')).memories]).toEqual(['m2']);
        expect((await ledger.injections('s', { window: 1 })).map((i) => i.name)).toEqual(['recall']);
        expect(await ledger.seen('unknown')).toMatchObject({ window: null });
      }));

    it('lists sessions newest first and gives the browser its shape', () =>
      withLedger(async (ledger) => {
        now = 10;
        await ledger.record({ session: 'old', via: 'hook', name: 'prompt', memories: ['a'], tokens: 5 });
        now = 20;
        await ledger.record({ session: 'new', via: 'mcp', name: 'get', memories: ['b'], tokens: 7, project: null });
        expect(await ledger.sessions({ limit: 5 })).toEqual([
          { session: 'new', project: null, lastAt: 20 },
          { session: 'old', project: 'proj', lastAt: 10 },
        ]);
        expect((await ledger.sessions({ project: 'proj' })).map((s) => s.session)).toEqual(['old']);
        const detail = await ledger.get('old');
        expect(detail).toMatchObject({ session: 'old', project: 'proj', window: 0, windows: [{ window: 0, reason: 'first-injection' }] });
        expect(detail?.injections[0]).toMatchObject({ via: 'hook', name: 'prompt', memories: ['a'], facts: [], tokens: 5, target: 'context' });
        expect(await ledger.get('none')).toBeNull();
      }));

    it('marks what was used afterwards and sums it per item', () =>
      withLedger(async (ledger) => {
        const a = await ledger.record({ session: 'u', via: 'hook', name: 'session-start', memories: ['m1', 'm2'], facts: ['f1'], tokens: 50 });
        await ledger.record({ session: 'u2', via: 'hook', name: 'session-start', memories: ['m1'], tokens: 20 });
        await ledger.markUsed(a.id, ['m1', 'f1']);
        const [marked] = await ledger.injections('u');
        expect(marked?.used?.sort()).toEqual(['f1', 'm1']);
        const stats = await ledger.itemStats();
        expect(stats.get('m1')).toMatchObject({ injected: 2, measured: 1, used: 1 });
        expect(stats.get('m2')).toMatchObject({ injected: 1, measured: 1, used: 0 });
        expect([...(await ledger.itemStats({ ids: ['f1'] })).keys()]).toEqual(['f1']);
        expect((await ledger.itemStats({ ids: [] })).size).toBe(0);
        expect((await ledger.itemStats({ project: 'other' })).size).toBe(0);
      }));

    it('keeps one outcome per window, replaced when measured again, filtered by session and project', () =>
      withLedger(async (ledger, store) => {
        const outcome = { session: 'o', window: 1, project: 'proj', reason: 'compact', measuredAt: 5, turnsAfter: 4, injected: 3, used: 1, needed: 6, missed: 2, missedFacts: ['f9'], kinds: { path: { injected: 2, used: 1, missed: 1 } }, learned: ['0123456789abcdef', 'fedcba9876543210'] };
        await store.ledger!.recordOutcome(outcome);
        await store.ledger!.recordOutcome({ ...outcome, session: 'p', project: null, measuredAt: 6 });
        await store.ledger!.recordOutcome({ ...outcome, turnsAfter: 9, used: 2, measuredAt: 7 });
        expect(await ledger.outcomes({ session: 'o' })).toEqual([{ ...outcome, turnsAfter: 9, used: 2, measuredAt: 7 }]);
        expect((await ledger.outcomes()).map((o) => o.session)).toEqual(['p', 'o']);
        expect((await ledger.outcomes({ project: null })).map((o) => o.session)).toEqual(['p']);
        expect((await ledger.outcomes({ project: 'proj' })).map((o) => o.session)).toEqual(['o']);
        // An outcome recorded without learned details (as before the column existed) reads back with none.
        const { learned: _, ...older } = outcome;
        await store.ledger!.recordOutcome({ ...older, session: 'q' });
        expect((await ledger.outcomes({ session: 'q' }))[0]?.learned).toEqual([]);
      }));

    it('returns the latest outcomes of one reason, oldest first (what learning from use reads)', () =>
      withLedger(async (ledger, store) => {
        const outcome = { window: 1, project: 'proj', turnsAfter: 4, injected: 3, used: 1, needed: 6, missed: 2, missedFacts: [], kinds: {} };
        for (let i = 0; i < 6; i++) await store.ledger!.recordOutcome({ ...outcome, session: `s${i}`, reason: i % 2 === 0 ? 'compact' : 'startup', measuredAt: 100 - i * 10 });
        await store.ledger!.recordOutcome({ ...outcome, session: 'elsewhere', project: 'other', reason: 'compact', measuredAt: 500 });
        // Compactions measured at 100 (s0), 80 (s2), 60 (s4): the latest two, oldest first.
        expect((await ledger.outcomes({ project: 'proj', reason: 'compact', last: 2 })).map((o) => o.session)).toEqual(['s2', 's0']);
        expect((await ledger.outcomes({ project: 'proj', reason: 'compact' })).map((o) => o.session)).toEqual(['s4', 's2', 's0']);
        expect((await ledger.outcomes({ project: 'proj', last: 3 })).map((o) => o.session)).toEqual(['s2', 's1', 's0']);
        expect(await ledger.outcomes({ project: 'proj', last: 0 })).toEqual([]);
      }));
  });
}

ledgerSuite('sqlite', () => openSqliteStore(':memory:'));

let pglite: PgServer | null = null;
beforeAll(async () => {
  pglite = await startPglite();
}, 60_000);
afterAll(async () => {
  await pglite?.stop();
});
ledgerSuite('postgres (pglite)', () => openPostgresStore(withFreshSchema(pglite!.url, 'l')));
if (realPgUrl) {
  const url = realPgUrl;
  afterAll(() => dropTestSchemas(url, 'l'));
  ledgerSuite('postgres (real server)', () => openPostgresStore(withFreshSchema(url, 'l')));
}
