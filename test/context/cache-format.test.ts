import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { asciiJson, readCachedContext, writeCachedContext, type ContextCacheKey } from '../../src/context/cache.js';
import type { PreparedContext } from '../../src/context/prepare.js';
import { tempDir } from '../helpers/cli.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const key: ContextCacheKey = { kind: 'startup', project: 'p', workspaceRoot: '/w', budget: 100, code: 'c' };
function entryPath(): string {
  const dir = tempDir('cairn-ctx-format-');
  dirs.push(dir);
  return join(dir, 'startup.json');
}
const prepared = (): PreparedContext =>
  ({
    candidates: [{ memory: { id: 'A1', text: 'use pnpm — not npm' } }, { memory: { id: 'B2', text: 'x' } }, { memory: { id: 'C3', text: 'y' } }],
    maxRrf: 0,
    bm25Max: 0,
    cosineMax: null,
    items: {
      A1: { note: '', missing: false, tokens: 9, terms: 'use pnpm not npm café' },
      B2: { note: ' (file changed since — verify)', missing: true, tokens: 3, terms: '' },
      C3: { note: '', missing: false, tokens: 2 },
    },
  }) as unknown as PreparedContext;

describe('the precomputed context file format', () => {
  it('keeps the items\' terms out of the parsed body and gives each back on demand', () => {
    const path = entryPath();
    writeCachedContext(path, { key, generation: 'g', files: [], builtAt: 1, prepared: prepared() });
    const lines = readFileSync(path, 'utf8').split('\n');
    expect(JSON.parse(lines[0]!).format).toBe(4);
    // The body has no terms; they follow it, one line per item that has them.
    expect(lines[1]).not.toContain('terms');
    expect(lines.slice(2)).toEqual(['A1\tuse pnpm not npm caf\u00e9', 'B2\t', '']);
    const lookup = readCachedContext(path, key, 'g');
    expect(lookup.hit).toBe(true);
    if (!lookup.hit) return;
    const { termsOf, ...body } = lookup.prepared;
    const expected = prepared();
    for (const item of Object.values(expected.items)) delete item.terms;
    expect(body).toEqual(expected);
    expect(termsOf?.('A1')).toBe('use pnpm not npm café');
    expect(termsOf?.('B2')).toBe('');
    expect(termsOf?.('C3')).toBeUndefined();
    expect(termsOf?.('nope')).toBeUndefined();
  });

  it('still serves an entry written by an earlier version (format 3: terms inside the items)', () => {
    const path = entryPath();
    writeFileSync(path, `${asciiJson({ format: 3, key, generation: 'g', files: [], builtAt: 1 })}\n${asciiJson(prepared())}`);
    const lookup = readCachedContext(path, key, 'g');
    expect(lookup.hit).toBe(true);
    if (!lookup.hit) return;
    expect(lookup.prepared.items['A1']!.terms).toBe('use pnpm not npm café');
    expect(lookup.prepared.termsOf).toBeUndefined();
  });

  it('reads a cut or unknown entry as a miss, never a crash', () => {
    const path = entryPath();
    writeCachedContext(path, { key, generation: 'g', files: [], builtAt: 1, prepared: prepared() });
    const whole = readFileSync(path, 'utf8');
    const cut = whole.indexOf('\n', whole.indexOf('\n') + 1) - 5;
    writeFileSync(path, whole.slice(0, cut));
    expect(readCachedContext(path, key, 'g')).toEqual({ hit: false, reason: 'unreadable entry' });
    // Cut inside the terms lines: each line would still parse.
    writeFileSync(path, whole.slice(0, -4));
    expect(readCachedContext(path, key, 'g')).toEqual({ hit: false, reason: 'unreadable entry' });
    writeFileSync(path, `${whole}C3\tz\n`);
    expect(readCachedContext(path, key, 'g')).toEqual({ hit: false, reason: 'unreadable entry' });
    writeFileSync(path, whole.replace('"format":4', '"format":99'));
    expect(readCachedContext(path, key, 'g')).toEqual({ hit: false, reason: 'unreadable entry' });
    writeFileSync(path, whole.replace('"generation":"g"', '"generation":"h"'));
    expect(readCachedContext(path, key, 'g')).toEqual({ hit: false, reason: 'store changed' });
  });
});
