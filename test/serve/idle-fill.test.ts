/**
 * `cairn serve`'s vectors (src/embed/server-fill.ts wired into the serve app): the idle fill runs
 * once a request loaded the model and no request but `/health` came for a moment, and during a
 * model switch recall searches the old index with the old model, loaded once for all requests.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TokenStore } from '../../src/auth/tokens.js';
import { createCairn } from '../../src/cairn.js';
import { withCache } from '../../src/embed/cache.js';
import type { FillSummary } from '../../src/embed/fill.js';
import { createHashEmbedder } from '../../src/embed/hash.js';
import { reindex } from '../../src/embed/reindex.js';
import { serverVectors } from '../../src/embed/server-fill.js';
import { systemClock, ulidSource } from '../../src/runtime.js';
import { startServe } from '../../src/serve/server.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Embedder } from '../../src/types.js';
import { tempDir } from '../helpers/cli.js';
import { until as poll } from '../helpers/until.js';

const dir = tempDir('cairn-serve-fill-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A hash embedder that reports `loaded` once it embedded something, like the ONNX one. */
function lazy(dimension: number): Embedder & { calls: number } {
  const base = createHashEmbedder({ dimension });
  const state = { loaded: false, calls: 0 };
  const inner = {
    model: base.model,
    dimension: base.dimension,
    get loaded() {
      return state.loaded;
    },
    embed: async (texts: string[]) => {
      state.loaded = true;
      state.calls++;
      return base.embed(texts);
    },
  };
  const cached = withCache(inner);
  return Object.assign(cached, { get calls() { return state.calls; } }) as Embedder & { calls: number };
}

const until = (check: () => boolean | Promise<boolean>, ms = 10_000) => poll(check, ms, 20);

describe('cairn serve: idle fill and model switch', () => {
  it('fills after a request loaded the model and the server went quiet, finishing a model switch; recall used the old model meanwhile', async () => {
    const store = await openSqliteStore(join(dir, 'cairn.db'));
    const plain = createCairn({ store, project: 'p' });
    for (let i = 0; i < 30; i++) await plain.remember({ text: `served memory ${i} about module m${i} and flag f${i % 4}` });
    const old = lazy(16);
    await reindex(store, createHashEmbedder({ dimension: 16 }));
    const embedder = lazy(32);
    const fills: FillSummary[] = [];
    let oldLoads = 0;
    const vectors = serverVectors({
      store,
      embedder,
      loadIndexEmbedder: async (index) => (oldLoads++, index.model === old.model ? old : null),
      timing: { idleMs: 300, intervalMs: 20, onFill: (s) => fills.push(s) },
    });
    const server = await startServe({
      store,
      embedder,
      indexEmbedder: vectors.indexEmbedder,
      onActivity: vectors.onActivity,
      tokens: new TokenStore(store, { clock: systemClock, ids: ulidSource() }),
      version: 'test',
      port: 0,
    });
    const auth = { Authorization: `Bearer ${server.localToken}`, 'Content-Type': 'application/json', 'X-Cairn-Project': 'p' };
    try {
      // Not loaded yet: no fill, however quiet the server is.
      await new Promise((r) => setTimeout(r, 500));
      expect(fills).toEqual([]);
      // Two recalls during the switch: hybrid over the old index, the old model built once.
      for (let i = 0; i < 2; i++) {
        const recall = await fetch(`${server.url}/api/recall`, { method: 'POST', headers: auth, body: JSON.stringify({ query: 'module m3 flag' }) });
        expect(recall.status).toBe(200);
        expect(((await recall.json()) as { mode: string }).mode).toBe('hybrid');
      }
      expect(oldLoads).toBe(1);
      // A write goes in without a vector (the index holds the old model) and loads nothing.
      const remember = await fetch(`${server.url}/api/remember`, { method: 'POST', headers: auth, body: JSON.stringify({ text: 'written through serve during the switch' }) });
      expect(remember.status).toBe(201);
      expect(embedder.calls).toBe(0);
      // The old model is loaded: once quiet (health checks are not activity) the fill loads the
      // new one, continues the switch and completes it.
      const health = setInterval(() => void fetch(`${server.url}/health`).catch(() => {}), 50);
      try {
        await until(async () => (await store.vectorModel())?.model === embedder.model);
      } finally {
        clearInterval(health);
      }
      expect(fills.some((f) => f.switching?.committed)).toBe(true);
      expect(JSON.parse((await store.getState('vector_fill')) ?? 'null')).toBeNull();
      expect((await store.stats()).vectors).toBe(31);
      const after = await fetch(`${server.url}/api/recall`, { method: 'POST', headers: auth, body: JSON.stringify({ query: 'module m3 flag' }) });
      expect(((await after.json()) as { mode: string }).mode).toBe('hybrid');
    } finally {
      await server.close();
      await vectors.stop();
      await store.close();
    }
  }, 60_000);
});
