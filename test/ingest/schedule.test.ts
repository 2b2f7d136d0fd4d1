import { describe, expect, it } from 'vitest';
import { WARM_MIN_BYTES, WORKERS_MIN_BYTES, gatheredWrites, startPool, warmUpHere } from '../../src/ingest/schedule.js';
import type { SubstrateBatch, SubstrateStore } from '../../src/types.js';

/** A substrate that records which batches were handed to it, call by call. */
function recorder() {
  const written: string[] = [];
  const substrate = {
    writeSubstrate: async (batch: SubstrateBatch) => {
      written.push(batch.sessions[0]?.id ?? '?');
      return { turnsAdded: batch.turns.length };
    },
  } as unknown as SubstrateStore;
  return { substrate, written };
}

const batch = (id: string, text = 'hello'): SubstrateBatch =>
  ({ sessions: [{ id }], turns: [{ text }], compactions: [], corrections: [], facts: [], cursor: null }) as unknown as SubstrateBatch;

describe('gatheredWrites', () => {
  it('holds batches while reads are under way and hands them over together when the time is up', async () => {
    const { substrate, written } = recorder();
    const write = gatheredWrites(substrate, 40, () => 1);
    const done = [write(batch('a')), write(batch('b'))];
    await new Promise((r) => setTimeout(r, 5));
    expect(written).toEqual([]);
    await Promise.all(done);
    expect(written).toEqual(['a', 'b']);
  });

  it('writes at once when nothing more is being read: the last file of a run never waits', async () => {
    const { substrate, written } = recorder();
    let pending = 2;
    // A window far longer than the test's timeout: only the idle check can release these.
    const write = gatheredWrites(substrate, 60_000, () => pending);
    const first = write(batch('a'));
    pending = 1;
    const second = write(batch('b'));
    expect(written).toEqual([]);
    pending = 0;
    const last = write(batch('c'));
    expect(written).toEqual(['a', 'b', 'c']);
    await expect(Promise.all([first, second, last])).resolves.toEqual([{ turnsAdded: 1 }, { turnsAdded: 1 }, { turnsAdded: 1 }]);
  });

  it('hands over at once past the gathered text limit', async () => {
    const { substrate, written } = recorder();
    const write = gatheredWrites(substrate, 60_000, () => 1);
    const big = write(batch('big', 'x'.repeat(4_000_000)));
    expect(written).toEqual(['big']);
    await big;
  });
});

describe('a run read in this thread', () => {
  it('warms the readers up only when it holds WARM_MIN_BYTES or more (a hook\'s one transcript does not pay for it)', () => {
    let calls = 0;
    const warmUp = () => calls++;
    expect(warmUpHere(0, undefined, warmUp)).toBe(false);
    expect(warmUpHere(WARM_MIN_BYTES - 1, undefined, warmUp)).toBe(false);
    expect(calls).toBe(0);
    expect(warmUpHere(WARM_MIN_BYTES, undefined, warmUp)).toBe(true);
    expect(warmUpHere(100, 50, warmUp)).toBe(true);
    expect(calls).toBe(2);
  });

  it('is every run below WORKERS_MIN_BYTES, which is above the warm-up threshold', () => {
    const logger = { debug() {}, info() {}, warn() {}, error() {} };
    expect(WORKERS_MIN_BYTES).toBeGreaterThan(WARM_MIN_BYTES);
    expect(startPool(undefined, logger, WORKERS_MIN_BYTES - 1, 100)).toBeNull();
    expect(startPool(false, logger, 10 * WORKERS_MIN_BYTES, 100)).toBeNull();
  });
});
