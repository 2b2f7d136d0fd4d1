import { describe, expect, it } from 'vitest';
import { INGEST_INLINING_BUDGET, limitInliningForIngest } from '../../src/ingest/inlining.js';

describe('limitInliningForIngest', () => {
  it('lowers the budget for the first run and puts the default back after the last one', () => {
    const set: number[] = [];
    const record = (bytes: number): void => void set.push(bytes);
    const first = limitInliningForIngest([], record);
    const second = limitInliningForIngest([], record);
    expect(set).toEqual([INGEST_INLINING_BUDGET]);
    first();
    first(); // idempotent: a second call does not end the other run's budget
    expect(set).toEqual([INGEST_INLINING_BUDGET]);
    second();
    expect(set).toEqual([INGEST_INLINING_BUDGET, 920]);
  });

  it('leaves a budget given on the command line alone', () => {
    const set: number[] = [];
    const restore = limitInliningForIngest(['--max-inlined-bytecode-size-cumulative=500'], (bytes) => void set.push(bytes));
    restore();
    const snake = limitInliningForIngest(['--max_inlined_bytecode_size_cumulative=500'], (bytes) => void set.push(bytes));
    snake();
    expect(set).toEqual([]);
  });

  it('changes the process flag without throwing (the default setter)', () => {
    const restore = limitInliningForIngest([]);
    expect(() => restore()).not.toThrow();
  });
});
