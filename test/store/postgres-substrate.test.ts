/**
 * The substrate conformance suite (test/store/substrate-conformance.ts) on the PostgreSQL store,
 * on PGlite and, when CAIRN_TEST_PG_URL is set, on a real server; plus PostgreSQL-only cases.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { dropTestSchemas, realPgSkipReason, realPgUrl, startPglite, withFreshSchema, type PgServer } from '../serve/pg.js';
import { batch, session, substrateConformance, turn, type OpenedSubstrate } from './substrate-conformance.js';

async function openPg(url: string): Promise<OpenedSubstrate> {
  const store = await openPostgresStore(url);
  return { substrate: store.substrate, close: () => store.close() };
}

let pglite: PgServer;
beforeAll(async () => {
  pglite = await startPglite();
}, 60_000);
afterAll(async () => {
  await pglite?.stop();
});
substrateConformance('postgres (pglite)', () => openPg(withFreshSchema(pglite.url, 's')));

if (realPgUrl) {
  const url = realPgUrl;
  afterAll(() => dropTestSchemas(url, 's'));
  substrateConformance('postgres (real server)', () => openPg(withFreshSchema(url, 's')));
} else {
  describe.skip(`PostgreSQL substrate (real server): ${realPgSkipReason}`, () => {
    it('runs the substrate tests', () => {});
  });
}

describe('PostgreSQL substrate: NUL characters', () => {
  it('stores a turn whose text holds U+0000 (PostgreSQL text cannot) instead of failing the batch', async () => {
    const store = await openPostgresStore(withFreshSchema(pglite.url, 's'));
    try {
      const t = turn('n1', 'r', 'tool_result', 'binary \0 output', { toolName: 'Bash' });
      expect(await store.substrate.writeSubstrate(batch({ sessions: [session('n1')], turns: [t] }))).toEqual({ turnsAdded: 1 });
      expect((await store.substrate.getTurns('n1'))[0]?.text).toBe('binary \uFFFD output');
    } finally {
      await store.close();
    }
  });

  it('counts a turn repeated within one batch once, keeping its longest text', async () => {
    const store = await openPostgresStore(withFreshSchema(pglite.url, 's'));
    try {
      const a = turn('d1', 'a', 'assistant', 'first part');
      const grown = { ...a, text: 'first part and the rest' };
      expect(await store.substrate.writeSubstrate(batch({ sessions: [session('d1')], turns: [a, grown] }))).toEqual({ turnsAdded: 1 });
      expect((await store.substrate.getTurns('d1')).map((x) => x.text)).toEqual(['first part and the rest']);
    } finally {
      await store.close();
    }
  });
});
