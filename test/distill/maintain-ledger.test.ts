import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { LedgerStore, Store } from '../../src/types.js';
import { startPglite, withFreshSchema, type PgServer } from '../serve/pg.js';
import { createCairn } from '../../src/cairn.js';
import { DAY, FakeClock } from './helpers.js';

const NOW = 1_800_000_000_000;

/** Three sessions: one idle for 200 days, one that started 200 days ago and is still used, one from today. */
async function fill(ledger: LedgerStore): Promise<void> {
  const inject = (session: string, at: number, memories: string[]) =>
    ledger.record({ session, project: 'acme/app', via: 'hook', name: 'session-start', target: 'context', memories, facts: ['f1'], tokens: 50, at });
  await ledger.openWindow('old', 'startup', NOW - 200 * DAY);
  await inject('old', NOW - 200 * DAY, ['m1', 'm2']);
  await ledger.openWindow('old', 'compact', NOW - 199 * DAY);
  await inject('old', NOW - 199 * DAY, ['m3']);
  await ledger.openWindow('long', 'startup', NOW - 200 * DAY);
  await inject('long', NOW - 200 * DAY, ['m1']);
  await ledger.openWindow('long', 'compact', NOW - 2 * DAY);
  await inject('long', NOW - 2 * DAY, ['m2']);
  await inject('new', NOW, ['m4']);
  const outcome = { project: 'acme/app', reason: 'compact', turnsAfter: 3, injected: 2, used: 1, needed: 2, missed: 1, missedFacts: [], kinds: {} };
  await ledger.recordOutcome({ ...outcome, session: 'old', window: 1, measuredAt: NOW - 400 * DAY });
  await ledger.recordOutcome({ ...outcome, session: 'long', window: 1, measuredAt: NOW - 2 * DAY });
}

function suite(name: string, open: () => Promise<Store>): void {
  describe(`maintain: injection ledger retention (${name})`, () => {
    it('drops the ledger of sessions idle past the cut and old outcomes; a session still in use keeps all of it; dry run changes nothing', async () => {
      const store = await open();
      try {
        await fill(store.ledger!);
        const clock = new FakeClock(NOW);
        const cairn = createCairn({ store, clock, actor: 'test', project: 'acme/app', workspaceRoot: null });
        const dry = await cairn.maintain({ dryRun: true, vacuum: false });
        expect(dry.ledger).toEqual({ sessions: 1, windows: 2, injections: 2, items: 5, outcomes: 1, days: 90, outcomeDays: 365 });
        expect(await store.ledger!.injections('old')).toHaveLength(2);

        const report = await cairn.maintain({ vacuum: false });
        expect(report.ledger).toMatchObject({ sessions: 1, injections: 2, items: 5, outcomes: 1 });
        expect(await store.ledger!.injections('old')).toEqual([]);
        expect(await store.ledger!.windows('old')).toEqual([]);
        // started long ago but used two days ago: every window kept, so its numbering goes on
        expect((await store.ledger!.windows('long')).map((w) => w.window)).toEqual([0, 1]);
        expect(await store.ledger!.injections('long')).toHaveLength(2);
        expect(await store.ledger!.injections('new')).toHaveLength(1);
        expect((await store.ledger!.outcomes()).map((o) => o.session)).toEqual(['long']);
        expect((await store.ledger!.itemStats()).get('m3')).toBeUndefined();
        // nothing more to drop the second time
        expect((await cairn.maintain({ vacuum: false })).ledger).toMatchObject({ sessions: 0, injections: 0, items: 0, outcomes: 0 });
        // a shorter retention reaches the long session too
        expect((await cairn.maintain({ vacuum: false, ledgerDays: 1, outcomeDays: 1 })).ledger).toMatchObject({ sessions: 1, injections: 2, outcomes: 1 });
        expect(await store.ledger!.injections('new')).toHaveLength(1);
      } finally {
        await store.close();
      }
    });
  });
}

let pglite: PgServer;
beforeAll(async () => {
  pglite = await startPglite();
}, 60_000);
afterAll(async () => {
  await pglite?.stop();
});

suite('SQLite', () => openSqliteStore(':memory:'));
suite('PostgreSQL (pglite)', () => openPostgresStore(withFreshSchema(pglite.url, 'ml')));
