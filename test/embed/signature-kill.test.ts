/**
 * Token signatures for a store embedded before them (src/embed/token-signature.ts), written by a
 * real `cairn reindex` process that is killed with SIGKILL part-way: the signatures written stay,
 * the vectors are untouched, and the next run signs only the rest.
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ALL_MINILM_L6_V2_Q } from '../../src/embed/onnx-models.js';
import { createOnnxEmbedder, onnxModelFolder } from '../../src/embed/onnx.js';
import { reindex } from '../../src/embed/reindex.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Embedder } from '../../src/types.js';
import { tempDir } from '../helpers/cli.js';
import { fillMemories, killAfterFirstVectors } from '../helpers/kill-embedding.js';

const BUILT = existsSync(join(process.cwd(), 'dist', 'cli', 'main.js'));
const MINILM = onnxModelFolder(ALL_MINILM_L6_V2_Q.name);
const MODEL = existsSync(join(MINILM, 'model.onnx'));
if (!BUILT || !MODEL) console.warn('skipping the signature kill -9 test: needs dist/ built and the MiniLM model files');

const dir = tempDir('cairn-signature-kill-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const MEMORIES = 120;

describe.skipIf(!BUILT || !MODEL)('token signatures: cairn reindex after kill -9', () => {
  it('keeps the signatures written, never touches the vectors, and signs only the rest on the next run', async () => {
    const store = await openSqliteStore(join(dir, 'cairn.db'));
    await fillMemories(store, MEMORIES);
    const model = createOnnxEmbedder(MINILM, ALL_MINILM_L6_V2_Q, { threads: 1 });
    // Vectors of the same model from a writer without signatures (an older cairn).
    const unsigned: Embedder = { model: model.model, dimension: model.dimension, embed: (texts, options) => model.embed(texts, options) };
    expect(await reindex(store, unsigned)).toMatchObject({ embedded: MEMORIES, signed: 0 });
    const identity = { model: model.model, dimension: model.dimension };
    expect(await store.countMissingSignatures(identity)).toBe(MEMORIES);
    const db = (store as unknown as { db: import('better-sqlite3').Database }).db;
    const vectors = () => db.prepare('SELECT memory_rowid, hex(vector) AS v, seq FROM vectors ORDER BY memory_rowid').all();
    const before = vectors();
    const signatures = async () => MEMORIES - (await store.countMissingSignatures(identity));
    const { vectors: signed } = await killAfterFirstVectors(store, dir, ['reindex', '--embedder', model.model, '--batch', '1'], {}, MEMORIES, signatures);
    expect(vectors()).toEqual(before);
    const summary = await reindex(store, model, { batchSize: 16 });
    expect(summary).toMatchObject({ embedded: 0, signed: MEMORIES - signed, complete: true, remaining: 0 });
    expect(await store.countMissingSignatures(identity)).toBe(0);
    expect(vectors()).toEqual(before);
    // What the killed process wrote is what a run of its own writes.
    const ids = (await store.listMemories({ limit: MEMORIES } as never)).map((m) => m.id);
    const stored = await store.getSignatures(ids, identity);
    const fresh = await model.embedSigned!(
      (await store.getMemories(ids)).map((m) => m.text),
      (await store.getMemories(ids)).map((m) => m.text),
    );
    (await store.getMemories(ids)).forEach((m, i) => expect(Buffer.from(stored.get(m.id)!).equals(Buffer.from(fresh[i]!.signature))).toBe(true));
    await model.close!();
    await store.close();
  }, 240_000);
});
