import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPgMigrations, migrationStatus } from '../../src/store/postgres/migrate.js';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/store.js';
import { dropTestSchemas, realPgSkipReason, realPgUrl, realPgvectorSkipReason, realPgvectorUrl, startPglite, withFreshSchema, type PgServer } from '../serve/pg.js';
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

    it('adds Memory.context to a schema from before migration 009, keeping the rows', async () => {
      const target = withFreshSchema(url());
      let store = await openPostgresStore(target);
      const old = makeMemory({ text: 'written before the context column' });
      await store.writeMemory({ memory: old, events: [] });
      // Undo 010 (token signatures: its trigger reads the column) and 009.
      await store.db.query('DROP TABLE token_signatures');
      await store.db.query('DROP FUNCTION token_signatures_follow_text() CASCADE');
      await store.db.query('ALTER TABLE memories DROP COLUMN context');
      await store.db.query('DELETE FROM cairn_schema WHERE version >= 9');
      await store.close();
      store = await openPostgresStore(target);
      try {
        expect(await store.getMemory(old.id)).toEqual(old);
        const reply = makeMemory({ text: 'Five years already!', context: 'How long have you been married?' });
        await store.writeMemory({ memory: reply, events: [] });
        expect((await store.searchText('married', { limit: 5 })).map((h) => h.id)).toEqual([reply.id]);
        // 010 ran again after 009: the signatures' table and its trigger are back.
        await store.putVectors({ model: 'test:v1', dimension: 2 }, [{ id: reply.id, vector: Float32Array.of(1, 0), signature: Uint8Array.of(5) }]);
        expect([...((await store.getSignatures([reply.id], { model: 'test:v1', dimension: 2 })).get(reply.id) ?? [])]).toEqual([5]);
      } finally {
        await store.close();
      }
    });

    it('migration 011 drops memories_hash; the exact-duplicate check keeps memories_active_hash', async () => {
      const store = await openPostgresStore(withFreshSchema(url()));
      try {
        const indexes = (await store.db.query<{ indexname: string }>("SELECT indexname FROM pg_indexes WHERE tablename = 'memories' AND schemaname = current_schema()")).rows.map((r) => r.indexname);
        expect(indexes).toContain('memories_active_hash');
        expect(indexes).not.toContain('memories_hash');
        // The exact-duplicate check still finds an active memory by its hash, per project.
        const first = makeMemory({ text: 'use pnpm, not npm', project: 'p' });
        await store.writeMemory({ memory: first, events: [] });
        expect((await store.findByContentHash(first.contentHash, 'p'))?.id).toBe(first.id);
        expect(await store.findByContentHash(first.contentHash, 'q')).toBeNull();
        // A second active row with that hash in that project is refused by the unique index.
        await expect(store.db.query("INSERT INTO memories SELECT * FROM memories WHERE id = $1", [first.id])).rejects.toThrow();
      } finally {
        await store.close();
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

describe('postgres store errors', () => {
  it('says which database it cannot reach, without the password', async () => {
    const attempt = openPostgresStore('postgres://cairn:hunter2@127.0.0.1:1/cairn');
    await expect(attempt).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/cannot use the PostgreSQL database at postgres:\/\/cairn:\*\*\*@127\.0\.0\.1:1\/cairn/) });
    await expect(attempt).rejects.not.toMatchObject({ message: expect.stringContaining('hunter2') });
  });

  it('refuses a schema name that is not a plain identifier', async () => {
    await expect(openPostgresStore(`${pglite.url}?schema=x;drop`)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });
});

describe('postgres full text at scale', () => {
  it('selects candidates by the selective terms (from ANALYZE statistics) and still fills the limit', async () => {
    const store = await openPostgresStore(withFreshSchema(pglite.url));
    try {
      for (let i = 0; i < 400; i++) {
        const m = makeMemory({ text: `src common helper number ${i}${i % 200 === 0 ? ' needle_in_haystack' : ''}` });
        await store.writeMemory({ memory: m, events: [] });
      }
      await store.db.query('ANALYZE memories');
      const needles = await store.searchText('src needle_in_haystack', { limit: 2 });
      expect(needles).toHaveLength(2);
      expect((await store.getMemories(needles.map((h) => h.id))).every((m) => m.text.includes('needle_in_haystack'))).toBe(true);
      // fewer selective matches than asked for: the common terms fill the rest
      const filled = await store.searchText('src needle_in_haystack', { limit: 5 });
      expect(filled).toHaveLength(5);
      expect((await store.getMemories(filled.slice(0, 2).map((h) => h.id))).every((m) => m.text.includes('needle'))).toBe(true);
      expect(await store.searchText('common', { limit: 3 })).toHaveLength(3);
    } finally {
      await store.close();
    }
  }, 60_000);
});

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

if (realPgvectorUrl) {
  const url = realPgvectorUrl;
  afterAll(() => dropTestSchemas(url));
  storeConformance('postgres (real server + pgvector)', () => openPostgresStore(withFreshSchema(url)));
  migrationTests('real server + pgvector', () => url);

  describe('postgres (real server) with pgvector', () => {
    it('types the column vector(<dimension>) with an HNSW index when a model claims it, and searches in SQL', async () => {
      const store = await openPostgresStore(withFreshSchema(url));
      try {
        expect(store.vectorMode).toBe('pgvector');
        expect(store.capabilities.ann).toBe(true);
        expect((await store.stats()).warnings).toBeUndefined();
        await store.writeMemory({ memory: makeMemory({ text: 'first vector', id: 'P1' }), events: [], embedding: { model: MODEL, vector: new Float32Array([1, 0, 0]) } });
        await store.writeMemory({ memory: makeMemory({ text: 'second vector', id: 'P2' }), events: [], embedding: { model: MODEL, vector: new Float32Array([0, 1, 0]) } });
        const column = await store.db.query<{ type: string }>("SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute WHERE attrelid = 'vectors'::regclass AND attname = 'embedding'");
        expect(column.rows[0]?.type).toBe('vector(3)');
        expect((await store.searchVector(new Float32Array([0, 1, 0]), MODEL, { limit: 1 })).map((h) => h.id)).toEqual(['P2']);
      } finally {
        await store.close();
      }
    });
  });
} else {
  describe.skip(`postgres (real server + pgvector): ${realPgvectorSkipReason}`, () => {
    it('runs the conformance suite', () => {});
  });
}
