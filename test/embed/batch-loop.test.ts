import { describe, expect, it } from 'vitest';
import { CairnError } from '../../src/errors.js';
import { embedMissing, type VectorTarget } from '../../src/embed/batch-loop.js';
import type { HeldLease } from '../../src/embed/fill-lease.js';
import { createHashEmbedder } from '../../src/embed/index.js';
import type { Memory } from '../../src/types.js';

const lease: HeldLease = { renew: async () => true, release: async () => {} } as unknown as HeldLease;

function memory(id: string): Memory {
  return { id, text: `memory ${id}` } as Memory;
}

describe('embedMissing', () => {
  it('writes the rest of a batch one by one when a memory vanished before its write, and counts it skipped', async () => {
    const waiting = [memory('a'), memory('b'), memory('c')];
    const written: string[] = [];
    const puts: number[] = [];
    const target: VectorTarget = {
      // Read with b still there; b is forgotten before the write, so later reads no longer list it.
      missing: async (_model, limit) => waiting.filter((m) => !written.includes(m.id) && (puts.length === 0 || m.id !== 'b')).slice(0, limit),
      put: async (_model, items) => {
        puts.push(items.length);
        if (items.some((item) => item.id === 'b')) throw new CairnError('NOT_FOUND', 'memory b was forgotten');
        written.push(...items.map((item) => item.id));
      },
    };
    const result = await embedMissing(target, createHashEmbedder(), lease, { total: 3 });
    expect(written.sort()).toEqual(['a', 'c']);
    // The batch of three failed, then each alone: b's failure is a skip, not an error.
    expect(puts.slice(0, 4)).toEqual([3, 1, 1, 1]);
    expect(result).toMatchObject({ embedded: 3, skipped: 1, complete: true });
  });

  it('does not swallow any other failure of the write', async () => {
    const target: VectorTarget = {
      missing: async () => [memory('a')],
      put: async () => {
        throw new CairnError('STORE_FAILED', 'disk full');
      },
    };
    await expect(embedMissing(target, createHashEmbedder(), lease, { total: 1 })).rejects.toMatchObject({ code: 'STORE_FAILED' });
  });
});
