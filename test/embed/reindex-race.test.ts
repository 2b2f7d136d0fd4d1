/**
 * Regression: `reindex` cleared the vectors of the old model and only claimed the index for the
 * new one at its first write, after embedding a batch. A process still on the old embedder that
 * wrote in between claimed the emptied index for the old model again, and the reindex then failed
 * with EMBEDDER_MISMATCH. Two SQLite stores on one file; the old-model writes are made while the
 * reindex is held inside its first `embed` call.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createCairn } from '../../src/cairn.js';
import { createHashEmbedder } from '../../src/embed/hash.js';
import { reindex } from '../../src/embed/reindex.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Embedder } from '../../src/types.js';
import { tempDir } from '../helpers/cli.js';

const dir = tempDir('cairn-reindex-race-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `embedder` whose first `embed` call waits for `release()`; `entered` resolves when it is waiting. */
function heldEmbedder(embedder: Embedder): { embedder: Embedder; entered: Promise<void>; release(): void } {
  let enter!: () => void;
  let release!: () => void;
  const entered = new Promise<void>((done) => (enter = done));
  const released = new Promise<void>((done) => (release = done));
  let first = true;
  const held: Embedder = {
    ...embedder,
    async embed(texts) {
      if (first) {
        first = false;
        enter();
        await released;
      }
      return embedder.embed(texts);
    },
  };
  return { embedder: held, entered, release };
}

describe('reindex against a process still on the old embedder', () => {
  it('old-model vector writes after the clear fail with EMBEDDER_MISMATCH, old-model remembers go in without a vector, and the index holds only the new model', async () => {
    const path = join(dir, 'cairn.db');
    const oldEmbedder = createHashEmbedder({ dimension: 16 });
    const newEmbedder = createHashEmbedder({ dimension: 32 });
    const oldStore = await openSqliteStore(path);
    const newStore = await openSqliteStore(path);
    try {
      const old = createCairn({ store: oldStore, embedder: oldEmbedder, project: 'p' });
      const kept = await old.remember({ text: 'written with the old embedder before the reindex' });
      const oldIdentity = { model: oldEmbedder.model, dimension: oldEmbedder.dimension };

      const held = heldEmbedder(newEmbedder);
      const running = reindex(newStore, held.embedder);
      await held.entered; // vectors cleared, first batch read, nothing written yet
      await expect(oldStore.putVectors(oldIdentity, [{ id: kept.memory.id, vector: (await oldEmbedder.embed(['x']))[0]! }])).rejects.toMatchObject({
        code: 'EMBEDDER_MISMATCH',
      });
      // Through cairn, a process still on the old embedder writes without a vector (never mixed)
      // and the running reindex embeds that memory with the new model.
      await old.remember({ text: 'written with the old embedder during the reindex' });
      held.release();
      const summary = await running;

      expect(summary).toMatchObject({ cleared: true, complete: true, remaining: 0, model: newEmbedder.model, dimension: 32 });
      expect(await newStore.vectorModel()).toEqual({ model: newEmbedder.model, dimension: 32 });
      const sizes = newStore.db.prepare('SELECT DISTINCT length(vector) FROM vectors').pluck().all();
      expect(sizes).toEqual([32 * 4]);
      expect((await newStore.stats()).vectors).toBe((await newStore.stats()).memories);
    } finally {
      await oldStore.close();
      await newStore.close();
    }
  });
});
