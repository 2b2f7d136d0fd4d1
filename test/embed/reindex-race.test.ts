/**
 * A model switch (`reindex` to another model) against a process still on the old embedder, on one
 * SQLite file through two connections. The switch builds the new vectors beside the old index, so
 * the old process keeps writing old-model vectors into the old index meanwhile (recall still
 * searches it); the switch embeds those memories too, swaps in one step, and from then on the old
 * process can no longer write an old-model vector (EMBEDDER_MISMATCH), and its remembers go in
 * without one. (Regression before staging: the cleared index was re-claimed by the old model.)
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
  it('old-model writes during the switch stay in the old index and get new vectors; after the swap they are refused, and the index holds only the new model', async () => {
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
      const running = reindex(newStore, held.embedder, { batchSize: 1 });
      await held.entered; // switch begun, first batch read, nothing staged yet
      // The old index is still the index: old-model writes go there, and recall searches it.
      await oldStore.putVectors(oldIdentity, [{ id: kept.memory.id, vector: (await oldEmbedder.embed(['x']))[0]! }]);
      const during = await old.remember({ text: 'written with the old embedder during the reindex' });
      expect((await oldStore.getVectors([during.memory.id], oldIdentity)).size).toBe(1);
      expect((await old.recall({ query: 'old embedder during', touch: false })).mode).toBe('hybrid');
      held.release();
      const summary = await running;

      expect(summary).toMatchObject({ cleared: true, staged: true, complete: true, remaining: 0, model: newEmbedder.model, dimension: 32 });
      expect(await newStore.vectorModel()).toEqual({ model: newEmbedder.model, dimension: 32 });
      await expect(oldStore.putVectors(oldIdentity, [{ id: kept.memory.id, vector: (await oldEmbedder.embed(['x']))[0]! }])).rejects.toMatchObject({
        code: 'EMBEDDER_MISMATCH',
      });
      const after = await old.remember({ text: 'written with the old embedder after the switch' });
      expect((await oldStore.getVectors([after.memory.id], oldIdentity)).size).toBe(0);
      const sizes = newStore.db.prepare('SELECT DISTINCT length(vector) FROM vectors').pluck().all();
      expect(sizes).toEqual([32 * 4]);
      // Every memory but the one written after the swap has the new model's vector.
      expect((await newStore.stats()).vectors).toBe((await newStore.stats()).memories - 1);
      expect((await newStore.missingVectors({ model: newEmbedder.model, dimension: 32 }, 10)).map((m) => m.id)).toEqual([after.memory.id]);
    } finally {
      await oldStore.close();
      await newStore.close();
    }
  });
});
