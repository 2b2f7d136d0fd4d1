import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { asciiJson, writeCachedContext } from '../../src/context/cache.js';
import { tempDir } from '../helpers/cli.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('the precomputed context is written as ASCII-only JSON', () => {
  it('parses back to the same value, whatever the characters', () => {
    const value = { text: 'use pnpm — not npm; café, 日本語, emoji 🙂, lone \ud800 surrogate, tab\t, quote "x" \\ back', list: ['é', 'ascii', '\u2028\u2029'], n: 1.5, nested: { k: '€' } };
    const json = asciiJson(value);
    expect(json).toMatch(/^[\x00-\x7f]*$/);
    expect(JSON.parse(json)).toEqual(value);
  });

  it('writes entries a reader decodes into one-byte strings', () => {
    const dir = tempDir('cairn-ctx-ascii-');
    dirs.push(dir);
    const path = join(dir, 'startup.json');
    const entry = { key: { kind: 'startup', project: 'p', workspaceRoot: '/w', budget: 1, code: 'c' }, generation: 'g', files: [], prepared: { candidates: [{ text: 'prefers short paragraphs — always' }], items: {} } };
    writeCachedContext(path, entry as unknown as Parameters<typeof writeCachedContext>[1]);
    const text = readFileSync(path, 'utf8');
    expect(text).toMatch(/^[\x00-\x7f]*$/);
    expect(JSON.parse(text.slice(text.indexOf('\n') + 1))).toEqual(entry.prepared);
  });
});
