/**
 * Property-based fuzzing of `importJsonl` with fast-check: any mix of valid lines, JSON of the
 * wrong shape, broken JSON, lone surrogates, control characters, huge values and planted secrets
 * never throws; every non-empty line is counted once (imported, duplicate or failed with its line
 * number); nothing it stores holds a planted secret; the store stays consistent.
 */
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCairn, type Cairn } from '../../src/cairn.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/store.js';
import { tempDir } from '../helpers/cli.js';
import { PLANTED } from '../privacy/corpus.js';

const RUNS = 200;

let store: SqliteStore;
let cairn: Cairn;
let fuzzed = 0;

beforeAll(async () => {
  store = await openSqliteStore(join(tempDir('cairn-fuzz-import-'), 'cairn.db'));
  cairn = createCairn({ store, project: 'fuzz', actor: 'test' });
});

afterAll(async () => {
  await cairn?.close();
});

const text = fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 80 }), fc.constantFrom('\ud800', 'a\udfffb', '\u0000', '\u001b[31mred\u001b[0m', '  ', ''));
const secret = fc.constantFrom(...PLANTED.map((p) => p.text));
const goodLine = fc.record(
  {
    text: fc.oneof(text, secret),
    kind: fc.constantFrom('note', 'fact', 'decision', 'bogus'),
    tags: fc.array(fc.oneof(text, secret), { maxLength: 4 }),
    scope: fc.constantFrom('project', 'user', 'session', 'galaxy'),
    importance: fc.oneof(fc.double(), fc.integer()),
    createdAt: fc.oneof(fc.string({ maxLength: 30 }), fc.integer(), fc.constant('2026-01-02T03:04:05Z')),
    meta: fc.dictionary(fc.oneof(text, fc.constantFrom('apiKey', 'password', 'token')), fc.oneof(text, secret, fc.integer(), fc.constant(null)), { maxKeys: 3 }),
  },
  { requiredKeys: [] },
).map((o) => JSON.stringify(o));
const line = fc.oneof(
  { weight: 5, arbitrary: goodLine },
  { weight: 1, arbitrary: fc.json() },
  { weight: 1, arbitrary: text },
  { weight: 1, arbitrary: goodLine.map((l) => l.slice(0, Math.max(1, l.length - 3))) },
);

describe('fuzz: cairn import', () => {
  it(`never throws and accounts for every line (${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(line, { minLength: 20, maxLength: 60 }), async (lines) => {
        const input = lines.map((l) => l.replaceAll('\n', ' '));
        const nonEmpty = input.filter((l) => l.trim().length > 0).length;
        const result = await cairn.importJsonl(input);
        fuzzed += input.length;
        expect(result.lines).toBe(nonEmpty);
        expect(result.imported + result.duplicates + result.failed.length).toBe(nonEmpty);
        for (const problem of result.failed) {
          expect(problem.line).toBeGreaterThanOrEqual(1);
          expect(problem.line).toBeLessThanOrEqual(input.length);
          expect(problem.error.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: RUNS, seed: 20261126 },
    );
    const stored: string[] = [];
    for await (const l of cairn.exportJsonl({ allProjects: true })) stored.push(l);
    const all = stored.join('\n');
    for (const p of PLANTED) expect(all.includes(p.secret), p.kind).toBe(false);
    expect(await store.integrityCheck()).toEqual([]);
    console.log(`fuzz import: ${RUNS} runs, ${fuzzed} lines, ${stored.length} memories stored, 0 crashes, 0 planted secrets stored`);
  }, 240_000);
});
