import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import type { EmbedderIdentity, MemoryEvent } from '../../src/types.js';
import { tempDir } from '../helpers/cli.js';
import { makeMemory } from './conformance.js';
import { clusteredVectors } from './vectors-fixture.js';

// The background builder is a script on disk: this runs the built package (`npm run build`).
const dist = resolve(import.meta.dirname, '../../dist/index.js');
const dir = tempDir('cairn-ann-builder-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeAll(() => {
  if (!existsSync(dist)) throw new Error(`${dist} is missing: run \`npm run build\` (npm test does it first)`);
});

const MODEL: EmbedderIdentity = { model: 'test:builder', dimension: 24 };

describe('background HNSW build', { timeout: 120_000 }, () => {
  it('answers exactly at once, and uses the copy a detached builder saved once it appears', async () => {
    const path = join(dir, 'bg.db');
    const { vectors } = clusteredVectors({ seed: 5, count: 1_500, dimension: 24, clusters: 20, queries: 0 });
    const writer = new SqliteStore({ path, vectorIndex: { annThreshold: Infinity } });
    await writer.open();
    const ids: string[] = [];
    for (const vector of vectors) {
      const memory = makeMemory();
      const event: MemoryEvent = { memoryId: memory.id, type: 'create', at: memory.createdAt, actor: 'test', data: {} };
      await writer.writeMemory({ memory, events: [event], embedding: { model: MODEL, vector } });
      ids.push(memory.id);
    }
    await writer.close();

    const { openSqliteStore } = (await import(dist)) as typeof import('../../src/index.js');
    const store = await openSqliteStore(path, { vectorIndex: { annThreshold: 1_000 } });
    expect((await store.searchVector(vectors[10] as Float32Array, MODEL, { limit: 1 }))[0]?.id).toBe(ids[10]);
    // Not built here: the builder (a new node process) holds the lock while it works.
    expect(existsSync(`${path}.vectors.lock`)).toBe(true);
    for (let i = 0; i < 600 && !existsSync(`${path}.vectors.json`); i++) await new Promise((done) => setTimeout(done, 100));
    expect(existsSync(`${path}.vectors.json`)).toBe(true);
    for (let i = 0; i < 100 && existsSync(`${path}.vectors.lock`); i++) await new Promise((done) => setTimeout(done, 100));
    expect(existsSync(`${path}.vectors.lock`)).toBe(false);
    expect((await store.searchVector(vectors[11] as Float32Array, MODEL, { limit: 1 }))[0]?.id).toBe(ids[11]);
    expect(store.capabilities.ann).toBe(true);
    await store.close();
  });
});
