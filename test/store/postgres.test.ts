import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPgMigrations, migrationStatus } from '../../src/store/postgres/migrate.js';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/store.js';
import { dropTestSchemas, realPgSkipReason, realPgUrl, startPglite, withFreshSchema, type PgServer } from '../serve/pg.js';
import { makeMemory, storeConformance } from './conformance.js';

let pglite: PgServer;
beforeAll(async () => {
  pglite = await startPglite();
}, 60_000);
afterAll(async () => {
  await pglite?.stop();
});

storeConformance('postgres (pglite + pgvector)', () => openPostgresStore(withFreshSchema(pglite.url)));

const MODEL = { model: 'test:v1', dimension: 3 };

function migrationTests(name: string, url: () => string): void {
  describe(`postgres migrations (${name})`, () => {
    it('migrates once when several stores open a new schema at the same time', async () => {
      const target = withFreshSchema(url());
      const stores = await Promise.all([1, 2, 3, 4].map(() => openPostgresStore(target)));
      try {
        const status = await migrationStatus(stores[0]!.db);
        expect(status.applied.map((m) => m.version)).toEqual(loadPgMigrations().map((m) => m.version));
        expect(status.pending).toEqual([]);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    });

    it('refuses a schema newer than this cairn, with a clear message', async () => {
      const target = withFreshSchema(url());
      const store = await openPostgresStore(target);
      await store.db.query("INSERT INTO cairn_schema (version, name, applied_at) VALUES (999, 'future', 0)");
      await store.close();
      await expect(openPostgresStore(target)).rejects.toMatchObject({ code: 'SCHEMA_TOO_NEW', message: expect.stringMatching(/schema version 999, newer than this cairn understands/) });
    });
  });
}
migrationTests('pglite', () => pglite.url);

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
  migrationTests('real server', () => url);

  describe('postgres (real server) without pgvector', () => {
    it('falls back to exact search over real[] and says so in stats, never failing', async () => {
      const target = withFreshSchema(url);
      const writer = await openPostgresStore(target);
      const reader = await openPostgresStore(target);
      try {
        expect(reader.vectorMode).toBe('exact');
        expect(reader.capabilities.ann).toBe(false);
        expect((await reader.stats()).warnings?.[0]).toMatch(/pgvector is not installed/);
        const memory = (text: string, n: number) => makeMemory({ text, id: `V${n}` });
        const a = memory('first vector', 1);
        await writer.writeMemory({ memory: a, events: [], embedding: { model: MODEL, vector: new Float32Array([1, 0, 0]) } });
        expect((await reader.searchVector(new Float32Array([1, 0, 0]), MODEL, { limit: 5 })).map((h) => h.id)).toEqual(['V1']);
        // A vector written by another process after the reader built its index is found too.
        const b = memory('second vector', 2);
        await writer.writeMemory({ memory: b, events: [], embedding: { model: MODEL, vector: new Float32Array([0, 1, 0]) } });
        expect((await reader.searchVector(new Float32Array([0, 1, 0]), MODEL, { limit: 1 })).map((h) => h.id)).toEqual(['V2']);
      } finally {
        await writer.close();
        await reader.close();
      }
    });
  });
} else {
  describe.skip(`postgres (real server): ${realPgSkipReason}`, () => {
    it('runs the conformance suite', () => {});
  });
}
