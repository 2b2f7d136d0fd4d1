/**
 * Regression: the LLM spend ledger was read, added to and written back as separate calls, so a
 * second `cairn distill --llm` recording between another's read and write was lost (the budget
 * undercounted). Two SQLite stores on one file (two connections, as two processes); the other
 * run's record is placed before every state call of ours.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Deps } from '../../src/deps.js';
import { readSpend, recordSpend } from '../../src/distill/llm/budget.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Store } from '../../src/types.js';
import { tempDir } from '../helpers/cli.js';
import { everyInterleaving } from '../helpers/interleave.js';

const dir = tempDir('cairn-budget-races-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const AT = Date.UTC(2025, 0, 2, 12);
const depsOf = (store: Store): Deps => ({ store }) as Deps;
let n = 0;

describe('LLM spend ledger with two distill runs on one database', () => {
  it('a call recorded by another run at any point inside a record is counted', async () => {
    const steps = await everyInterleaving({
      open: async () => {
        const path = join(dir, `cairn-${++n}.db`);
        const a = await openSqliteStore(path);
        await recordSpend(depsOf(a), AT, 's1', { inputTokens: 1000, outputTokens: 100 });
        return [a, await openSqliteStore(path)];
      },
      a: (store) => recordSpend(depsOf(store), AT, 's1', { inputTokens: 100, outputTokens: 10 }),
      b: (store) => recordSpend(depsOf(store), AT, 's1', { inputTokens: 1, outputTokens: 1 }),
      check: async (a, b, step) => {
        const expected = { inputTokens: 1101, outputTokens: 111, calls: 3 };
        expect(await readSpend(depsOf(a), 'day', AT), `B's record before A's state call ${step}`).toEqual(expected);
        expect(await readSpend(depsOf(b), 'session', AT, 's1'), `B's record before A's state call ${step}`).toEqual(expected);
      },
    });
    expect(steps).toBeGreaterThan(0);
  });
});
