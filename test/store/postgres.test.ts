import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/store.js';
import { dropTestSchemas, realPgSkipReason, realPgUrl, startPglite, withFreshSchema, type PgServer } from '../serve/pg.js';
import { storeConformance } from './conformance.js';

let pglite: PgServer;
beforeAll(async () => {
  pglite = await startPglite();
}, 60_000);
afterAll(async () => {
  await pglite?.stop();
});

storeConformance('postgres (pglite + pgvector)', () => openPostgresStore(withFreshSchema(pglite.url)));

describe('postgres (pglite + pgvector) specifics', () => {
  it('uses pgvector with an HNSW index once a model claims the index', async () => {
    const store: PostgresStore = await openPostgresStore(withFreshSchema(pglite.url));
    try {
      expect(store.vectorMode).toBe('pgvector');
      expect(store.capabilities.ann).toBe(true);
      expect((await store.stats()).warnings).toBeUndefined();
    } finally {
      await store.close();
    }
  });
});

if (realPgUrl) {
  const url = realPgUrl;
  afterAll(() => dropTestSchemas(url));
  storeConformance('postgres (real server, exact vectors)', () => openPostgresStore(withFreshSchema(url)));
} else {
  describe.skip(`postgres (real server): ${realPgSkipReason}`, () => {
    it('runs the conformance suite', () => {});
  });
}
