import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { estimateTokens, forEachPiece, PIECE_COSTS, PIECE_TABLE_LENGTH, pieceCost } from '../../src/tokens.js';

/** The estimate as it was written before its walk was fused into one function: forEachPiece + pieceCost. */
function reference(text: string): number {
  let total = 0;
  forEachPiece(text, (kind, length) => {
    const costs = PIECE_COSTS[kind];
    total += length <= PIECE_TABLE_LENGTH ? (costs.byLength[length - 1] as number) : pieceCost(costs, length);
  });
  return Math.ceil(total);
}

const root = resolve(import.meta.dirname, '../..');

/** Source files of this repository: realistic code, prose in comments, long lines. */
function sourceTexts(): string[] {
  const out: string[] = [];
  for (const dir of ['src/context', 'src/hooks', 'src/store', 'docs']) {
    for (const name of readdirSync(join(root, dir))) {
      if (!/\.(ts|md)$/.test(name)) continue;
      out.push(readFileSync(join(root, dir, name), 'utf8'));
    }
  }
  return out;
}

// Every character class the walk tells apart, runs of them, and characters beyond ASCII and the BMP.
const piece = fc.oneof(
  fc.constantFrom(' ', '  ', '\t', '\n', '\r\n', ' \n ', ';\n', '{', '}', '(', '.', '_', '-', '->', '::', '/', '"', "'", '`', '#', '=', '$'),
  fc.constantFrom('a', 'Z', 'get', 'User', 'HTTPServer', 'getUserName', 'x1', '42', '2026', '0x1f', '123456789012345678901234'),
  fc.constantFrom('é', 'ü', 'ß', '日本語', '—', '→', '😀', '\u00a0', '\u2028', 'İ'),
  fc.string({ maxLength: 6 }),
  fc.string({ unit: 'binary', maxLength: 4 }),
);
const texts = fc.array(piece, { maxLength: 80 }).map((parts) => parts.join(''));

describe('estimateTokens equals the piece walk (forEachPiece) summed', () => {
  it('on thousands of random texts of every character class', () => {
    fc.assert(
      fc.property(texts, (text) => {
        expect(estimateTokens(text)).toBe(reference(text));
      }),
      { numRuns: 5000, seed: 15 },
    );
  });

  it('on this repository’s source and docs, whole, by line and by random slices', () => {
    const sources = sourceTexts();
    expect(sources.length).toBeGreaterThan(20);
    let checked = 0;
    for (const source of sources) {
      expect(estimateTokens(source)).toBe(reference(source));
      for (const line of source.split('\n')) {
        expect(estimateTokens(`${line}\n`)).toBe(reference(`${line}\n`));
        checked++;
      }
      for (let k = 0; k < 20; k++) {
        const from = (k * 7919) % Math.max(1, source.length);
        const slice = source.slice(from, from + 1 + ((k * 104729) % 3000));
        expect(estimateTokens(slice)).toBe(reference(slice));
      }
    }
    expect(checked).toBeGreaterThan(2000);
  });

  it('on short texts and texts ending mid-run, after a long one', () => {
    const long = 'wordWord '.repeat(5000);
    expect(estimateTokens(long)).toBe(reference(long));
    for (const short of ['', 'a', 'aB', ' x', 'x ', '.', '.a', ' .', '\n', '12', 'é', 'wordWord']) expect(estimateTokens(short)).toBe(reference(short));
  });
});
