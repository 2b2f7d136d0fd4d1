import { readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import fc from 'fast-check';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, describe, expect, it } from 'vitest';
import { fitToBudget } from '../../src/cli/commands/context.js';
import { estimateTokens, forEachPiece, loadTokenCounter } from '../../src/tokens.js';
import { runCli, tempDir } from '../helpers/cli.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const root = resolve(import.meta.dirname, '../..');
/** Code-heavy and prose text that ships with the repository (not tuned on: the table comes from ../shared's transcripts). */
const code = ['src/hooks/run.ts', 'src/store/sqlite/database.ts', 'bin/setup.js'].map((f) => readFileSync(resolve(root, f), 'utf8')).join('\n');
const prose = ['README.md', 'docs/MCP.md', 'docs/RELIABILITY.md', 'docs/PRIVACY.md']
  .map((f) => readFileSync(resolve(root, f), 'utf8'))
  .join('\n')
  .split('\n')
  .filter((line) => /^(- )?[A-Za-z]/.test(line) && !/[|`*]/.test(line))
  .join('\n');

describe('token counting', () => {
  it('estimates o200k within 10% on code-heavy text and prose, where chars / 4 is further off on code', () => {
    for (const text of [code, prose]) expect(text.length).toBeGreaterThan(3000);
    const codeError = estimateTokens(code) / countTokens(code) - 1;
    const proseError = estimateTokens(prose) / countTokens(prose) - 1;
    console.log(`estimate vs o200k: code ${(codeError * 100).toFixed(1)}% (chars/4 ${((code.length / 4 / countTokens(code) - 1) * 100).toFixed(1)}%), prose ${(proseError * 100).toFixed(1)}% (chars/4 ${((prose.length / 4 / countTokens(prose) - 1) * 100).toFixed(1)}%)`);
    expect(Math.abs(codeError)).toBeLessThan(0.1);
    expect(Math.abs(proseError)).toBeLessThan(0.1);
    expect(Math.abs(code.length / 4 / countTokens(code) - 1)).toBeGreaterThan(Math.abs(codeError));
  });

  it('walks pieces that cover the text exactly, in order', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        let total = 0;
        forEachPiece(text, (_kind, length) => {
          expect(length).toBeGreaterThan(0);
          total += length;
        });
        expect(total).toBe(text.length);
      }),
    );
    const pieces: string[] = [];
    let at = 0;
    const text = 'const getUserName = (id) => users[id]?.name;\n  return 1234;';
    forEachPiece(text, (kind, length) => {
      pieces.push(`${kind}:${text.slice(at, at + length)}`);
      at += length;
    });
    expect(pieces.slice(0, 6)).toEqual(['word:const', 'spaceWord: get', 'word:User', 'word:Name', 'marks: =', 'marks: (']);
    expect(pieces).toContain('digits:1234');
    expect(estimateTokens('')).toBe(0);
  });

  it('loads the exact counter on demand (o200k_base)', async () => {
    const count = await loadTokenCounter();
    expect(count('hello world')).toBe(countTokens('hello world'));
  });

  it('packs again until the exact count fits, and stops at the smallest budget', async () => {
    const counts: number[] = [];
    const pack = async (budget: number): Promise<{ markdown: string }> => {
      counts.push(budget);
      return { markdown: 'x '.repeat(Math.round(budget * 1.3)) };
    };
    const fitted = await fitToBudget(await pack(1000), 1000, countTokens, pack);
    expect(fitted.tokens).toBeLessThanOrEqual(1000);
    expect(fitted.tokens).toBeGreaterThan(700);
    const stuck = await fitToBudget({ markdown: 'y '.repeat(500) }, 100, countTokens, async () => ({ markdown: 'y '.repeat(500) }));
    expect(stuck.tokens).toBeGreaterThan(100);
    expect(stuck.packings).toBeLessThanOrEqual(6);
  });

  it('cairn context --budget N gives at most N o200k tokens, on code-heavy memories', async () => {
    const home = tempDir('cairn-tokens-');
    dirs.push(home);
    for (let i = 0; i < 60; i++) {
      const text = `src/limiter/bucket${i}.ts:${40 + i} refill${i}(bucket: Bucket, now: number): number clamps to bucket.capacity; \`npx vitest run test/limiter/bucket${i}.test.ts\` failed: AssertionError: expected ${i + 12} to be ${i + 10} (0x${(i * 7919).toString(16)})`;
      const run = await runCli(['remember', '--kind', 'fact', text], { home });
      expect(run.code).toBe(0);
    }
    for (const budget of [150, 600, 1500]) {
      const run = await runCli(['context', '--budget', String(budget), '--json'], { home });
      expect(run.code).toBe(0);
      const result = run.json<{ markdown: string; tokens: number; budget: number; tokenizer: string }>();
      expect(result.tokenizer).toBe('o200k_base');
      expect(result.budget).toBe(budget);
      expect(result.tokens).toBe(countTokens(result.markdown));
      expect(result.tokens).toBeLessThanOrEqual(budget);
      expect(result.tokens).toBeGreaterThan(budget * 0.6);
    }
  }, 60_000);
});
