import { describe, expect, it } from 'vitest';
import { INGEST_FLAGS, INGEST_INLINING_BUDGET, tuneJitForIngest } from '../../src/ingest/inlining.js';

const INGEST = ['--max-inlined-bytecode-size-cumulative=200', '--always-sparkplug'];
const STANDARD = ['--max-inlined-bytecode-size-cumulative=920', '--no-always-sparkplug'];

describe('tuneJitForIngest', () => {
  it('sets the flags for the first run and puts V8 defaults back after the last one', () => {
    expect(INGEST_FLAGS.map((f) => f.ingest)).toEqual(INGEST);
    expect(INGEST[0]).toBe(`--max-inlined-bytecode-size-cumulative=${INGEST_INLINING_BUDGET}`);
    const set: string[] = [];
    const record = (flag: string): void => void set.push(flag);
    const first = tuneJitForIngest([], record);
    const second = tuneJitForIngest([], record);
    expect(set).toEqual(INGEST);
    first();
    first(); // idempotent: a second call does not end the other run's setting
    expect(set).toEqual(INGEST);
    second();
    expect(set).toEqual([...INGEST, ...STANDARD]);
  });

  it('leaves a flag given on the command line alone, and sets the others', () => {
    const set: string[] = [];
    const record = (flag: string): void => void set.push(flag);
    tuneJitForIngest(['--max-inlined-bytecode-size-cumulative=500'], record)();
    tuneJitForIngest(['--max_inlined_bytecode_size_cumulative=500', '--no-always-sparkplug'], record)();
    tuneJitForIngest(['--always_sparkplug'], record)();
    expect(set).toEqual([INGEST[1], STANDARD[1], INGEST[0], STANDARD[0]]);
  });

  it('changes the process flags without throwing (the default setter)', () => {
    const restore = tuneJitForIngest([]);
    expect(() => restore()).not.toThrow();
  });
});
