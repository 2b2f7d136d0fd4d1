/**
 * The configured pretrained model's vectors on every store backend (issue #18.5): the same ONNX
 * vectors are written, recorded under the model's id and dimension, searched and refused for
 * another model on SQLite, on PostgreSQL with pgvector (PGlite), on a real PostgreSQL server
 * without pgvector (Debian's: the exact `real[]` fallback) and on a real server with pgvector. The store conformance suite
 * itself (conformance.ts) runs unchanged in sqlite.test.ts and postgres.test.ts; this file adds
 * what only a real model shows: paraphrases found through vectors alone, and the first hits reranked
 * by the token signatures stored beside the vectors, on each backend alike.
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCairn } from '../../src/cairn.js';
import { createEmbedder, createHashEmbedder } from '../../src/embed/index.js';
import { BGE_SMALL_EN_V15_Q, KNOWN_ONNX_MODELS } from '../../src/embed/onnx-models.js';
import { onnxModelFolder } from '../../src/embed/onnx.js';
import { dot } from '../../src/embed/vector.js';
import { openPostgresStore, PostgresStore } from '../../src/store/postgres/store.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Embedder, Store } from '../../src/types.js';
import { tempDir } from '../helpers/cli.js';
import { dropTestSchemas, realPgSkipReason, realPgUrl, realPgvectorSkipReason, realPgvectorUrl, startPglite, withFreshSchema, type PgServer } from '../serve/pg.js';

/**
 * The model (an `onnx:<name>` spec), and whether its files are installed. bge-small rather than
 * DEFAULT_EMBEDDER_SPEC (all-MiniLM-L6-v2): MiniLM ranks "the build runs on Node 20" above "use
 * pnpm, never npm" for "which package manager do we use", and these cases test the stores.
 */
const SPEC = `onnx:${BGE_SMALL_EN_V15_Q.name}`;
const MODEL_NAME = SPEC.startsWith('onnx:') ? SPEC.slice('onnx:'.length) : null;
const FOLDER = MODEL_NAME && KNOWN_ONNX_MODELS[MODEL_NAME] ? onnxModelFolder(MODEL_NAME) : null;
const HAS_MODEL = FOLDER !== null && existsSync(join(FOLDER, 'model.onnx'));
const SKIP = HAS_MODEL ? '' : `${SPEC}: ${FOLDER ? `${FOLDER} is absent (run node scripts/fetch-model.mjs; .ci/run does)` : 'not a known ONNX model'}`;
if (SKIP) console.warn(`skipping the model-vector store tests: ${SKIP}`);

/** Paraphrase cases: no word of the query is in its answer, so only vectors can find it. */
const CASES: Array<[query: string, answer: string]> = [
  ['how the user likes articles written', 'prefers short paragraphs'],
  ['which package manager do we use', 'use pnpm, never npm'],
  ['how do releases reach production', 'deploys go through the staging cluster first'],
];
const DISTRACTORS = ['the build runs on Node 20', 'SQLite busy timeout is set to 5 seconds', 'tests live under test/'];

let embedder: Embedder;
let pglite: PgServer | null = null;
const dirs: string[] = [];

beforeAll(async () => {
  if (!HAS_MODEL) return;
  embedder = await createEmbedder(SPEC);
  pglite = await startPglite();
}, 60_000);
afterAll(async () => {
  await embedder?.close?.();
  await pglite?.stop();
  if (HAS_MODEL && realPgUrl) await dropTestSchemas(realPgUrl, 'mv');
  if (HAS_MODEL && realPgvectorUrl) await dropTestSchemas(realPgvectorUrl, 'mv');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Backend {
  name: string;
  /** The vector mode this backend must be in (a pgvector server found without it fails, not passes). */
  mode?: 'pgvector';
  open(): Promise<Store>;
  skip: string;
}

const backends: Backend[] = [
  {
    name: 'sqlite',
    skip: '',
    open: () => {
      const dir = tempDir('cairn-model-vectors-');
      dirs.push(dir);
      return openSqliteStore(join(dir, 'cairn.db'));
    },
  },
  { name: 'postgres (pglite + pgvector)', mode: 'pgvector', skip: '', open: () => openPostgresStore(withFreshSchema(pglite!.url, 'mv')) },
  { name: 'postgres (real server)', skip: realPgUrl ? '' : realPgSkipReason, open: () => openPostgresStore(withFreshSchema(realPgUrl!, 'mv')) },
  { name: 'postgres (real server + pgvector)', mode: 'pgvector', skip: realPgvectorUrl ? '' : realPgvectorSkipReason, open: () => openPostgresStore(withFreshSchema(realPgvectorUrl!, 'mv')) },
];

for (const backend of backends) {
  const reason = SKIP || backend.skip;
  describe.skipIf(reason !== '')(`${SPEC} vectors on ${backend.name}${reason ? ` — skipped: ${reason}` : ''}`, () => {
    it('stores the model vectors under its id and dimension, finds paraphrases by vector, refuses another model', async () => {
      const store = await backend.open();
      try {
        if (backend.mode) expect(store instanceof PostgresStore && store.vectorMode).toBe(backend.mode);
        const cairn = createCairn({ store, embedder, actor: 'test' });
        const ids = new Map<string, string>();
        for (const text of [...CASES.map(([, answer]) => answer), ...DISTRACTORS]) {
          ids.set(text, (await cairn.remember({ text, kind: 'fact', scope: 'user' })).memory.id);
        }
        const identity = { model: embedder.model, dimension: embedder.dimension };
        expect(await store.vectorModel()).toEqual(identity);
        expect((await store.stats()).vectors).toBe(ids.size);
        expect((await cairn.status()).recallMode).toBe('hybrid');
        if (store instanceof PostgresStore && store.vectorMode === 'pgvector') {
          const column = await store.db.query<{ type: string }>(
            "SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute WHERE attrelid = 'vectors'::regclass AND attname = 'embedding'",
          );
          expect(column.rows[0]?.type).toBe(`vector(${embedder.dimension})`);
          const index = await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_indexes WHERE indexname = 'vectors_hnsw'");
          expect(index.rows[0]?.n).toBe(1);
        }

        // The stored vectors are the model's own (not re-quantized or truncated by the backend).
        const stored = await store.getVectors([...ids.values()], identity);
        const fresh = await embedder.embed([...ids.keys()]);
        for (const [i, id] of [...ids.values()].entries()) expect(dot(stored.get(id)!, fresh[i]!)).toBeGreaterThan(0.9999);

        for (const [query, answer] of CASES) {
          const [q] = await embedder.embed([query]);
          const byVector = await store.searchVector(q!, identity, { limit: 3 });
          expect(byVector[0]?.id, query).toBe(ids.get(answer));
          const recalled = await cairn.recall({ query, k: 3, touch: false });
          expect(recalled.hits[0]?.memory.text, query).toBe(answer);
          // Every backend keeps the token signatures written with the vectors: the first hits are reranked.
          expect({ reranked: recalled.reranked, note: recalled.rerankNote }, query).toEqual({ reranked: true, note: undefined });
        }
        expect(await store.countMissingSignatures!(identity)).toBe(0);

        // Another model of the same dimension is refused, never mixed in.
        const other = createHashEmbedder({ dimension: embedder.dimension });
        const [v] = await other.embed(['prefers short paragraphs']);
        await expect(store.searchVector(v!, other, { limit: 3 })).rejects.toMatchObject({ code: 'EMBEDDER_MISMATCH' });
        await expect(store.putVectors(other, [{ id: ids.get(DISTRACTORS[0]!)!, vector: v! }])).rejects.toMatchObject({ code: 'EMBEDDER_MISMATCH' });
        expect(await store.vectorModel()).toEqual(identity);
      } finally {
        await store.close();
      }
    }, 120_000);
  });
}
