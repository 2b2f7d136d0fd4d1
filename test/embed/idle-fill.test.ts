/**
 * The MCP server's idle fill: nothing while the model is not loaded (it never loads a model to
 * fill), fills when the client is quiet, stops at the next request, and leaves the work to the
 * filler that holds the lease.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createCairn } from '../../src/cairn.js';
import { withCache } from '../../src/embed/cache.js';
import { acquireFillLease } from '../../src/embed/fill-lease.js';
import type { FillSummary } from '../../src/embed/fill.js';
import { createHashEmbedder } from '../../src/embed/hash.js';
import { startIdleFill } from '../../src/embed/idle-fill.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Embedder } from '../../src/types.js';
import { tempDir } from '../helpers/cli.js';
import { until } from '../helpers/until.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function seeded(count: number) {
  const dir = tempDir('cairn-idle-fill-');
  dirs.push(dir);
  const store = await openSqliteStore(join(dir, 'cairn.db'));
  const plain = createCairn({ store, project: 'p' });
  for (let i = 0; i < count; i++) await plain.remember({ text: `idle memory ${i} about module m${i}` });
  return store;
}

/** A hash embedder that reports `loaded` like the ONNX one, seen through the cache wrapper. */
function lazy(): { embedder: Embedder; state: { loaded: boolean; calls: number } } {
  const base = createHashEmbedder({ dimension: 32 });
  const state = { loaded: false, calls: 0 };
  const inner = {
    model: base.model,
    dimension: base.dimension,
    get loaded() {
      return state.loaded;
    },
    embed: async (texts: string[]) => (state.calls++, base.embed(texts)),
  };
  return { embedder: withCache(inner), state };
}


describe('idle fill (MCP server)', () => {
  it('waits for the model to be loaded, then fills while quiet', async () => {
    const store = await seeded(30);
    const { embedder, state } = lazy();
    const fills: FillSummary[] = [];
    const stop = startIdleFill({ store, embedder, lastActivity: () => 0, idleMs: 0, intervalMs: 10, onFill: (s) => fills.push(s) });
    await new Promise((r) => setTimeout(r, 100));
    expect(state.calls).toBe(0);
    state.loaded = true;
    await until(async () => (await store.stats()).vectors === 30);
    await stop();
    expect(fills.at(-1)).toMatchObject({ outcome: 'done', remaining: 0 });
    await store.close();
  });

  it('stops at the next request and does not start while requests keep coming', async () => {
    const store = await seeded(40);
    const { embedder, state } = lazy();
    state.loaded = true;
    let last = 0;
    const fills: FillSummary[] = [];
    // A request arrives during the first batch.
    const slow: Embedder = { ...embedder, model: embedder.model, dimension: embedder.dimension, loaded: true, embed: async (t) => ((last = Date.now()), embedder.embed(t)) } as Embedder;
    const stop = startIdleFill({ store, embedder: slow, lastActivity: () => last, idleMs: 60_000, intervalMs: 10, onFill: (s) => fills.push(s) });
    await new Promise((r) => setTimeout(r, 50));
    expect(fills).toHaveLength(1);
    expect(fills[0]).toMatchObject({ outcome: 'stopped', embedded: 8, remaining: 32 });
    await stop();
    await store.close();
  });

  it('leaves the work to another filler that holds the lease', async () => {
    const store = await seeded(5);
    const { embedder, state } = lazy();
    state.loaded = true;
    await acquireFillLease(store, embedder.model, 'ingest');
    const fills: FillSummary[] = [];
    const stop = startIdleFill({ store, embedder, lastActivity: () => 0, idleMs: 0, intervalMs: 10, onFill: (s) => fills.push(s) });
    await until(() => fills.length > 0);
    await stop();
    expect(fills[0]).toMatchObject({ outcome: 'busy', holder: { by: 'ingest', pid: process.pid } });
    expect((await store.stats()).vectors).toBe(0);
    await store.close();
  });
});
