import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import type { EmbedderIdentity, MemoryEvent } from '../../src/types.js';
import { tempDir } from '../helpers/cli.js';
import { makeMemory } from './conformance.js';
import { clusteredVectors } from './vectors-fixture.js';

// A platform without a usearch binary: importing it fails.
vi.mock('usearch', () => {
  throw new Error('No native build was found for platform=test');
});

const dir = tempDir('cairn-ann-fallback-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MODEL: EmbedderIdentity = { model: 'test:fallback', dimension: 16 };

describe('SQLite store without usearch', { timeout: 60_000 }, () => {
  it('searches exactly above the threshold and says why in stats', async () => {
    const store = new SqliteStore({ path: join(dir, 'fallback.db'), vectorIndex: { annThreshold: 50 } });
    await store.open();
    const { vectors } = clusteredVectors({ seed: 3, count: 120, dimension: 16, clusters: 5, queries: 0 });
    const ids: string[] = [];
    for (const vector of vectors) {
      const memory = makeMemory();
      const event: MemoryEvent = { memoryId: memory.id, type: 'create', at: memory.createdAt, actor: 'test', data: {} };
      await store.writeMemory({ memory, events: [event], embedding: { model: MODEL, vector } });
      ids.push(memory.id);
    }
    const hits = await store.searchVector(vectors[77] as Float32Array, MODEL, { limit: 5 });
    expect(hits[0]?.id).toBe(ids[77]);
    expect(hits).toHaveLength(5);
    expect(store.capabilities.ann).toBe(false);
    const stats = await store.stats();
    expect(stats.warnings).toEqual([expect.stringMatching(/^vector index: usearch unavailable \(.+\); using exact search$/)]);
    await store.close();
  });
});
