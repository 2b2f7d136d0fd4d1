/**
 * The tokenizer's term writer is reused from call to call (src/store/tokenize.ts `writerFor`): the
 * terms must be exactly those of the tokenizer that made a new writer per call, whatever the order
 * of the texts — wide (UTF-16) after one-byte, long after short, compounds of more parts than the
 * part arrays first hold. The expected terms are pinned as digests, recorded with a copy of
 * src/store/tokenize.ts as of a63e38d (the last tokenizer with a writer per call); a change to the
 * terms any index holds fails here, and must bump TERMS_VERSION and these digests together.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandTranscriptPaths, readTranscript } from '../../src/ingest/index.js';
import { turnIndexSource } from '../../src/store/substrate-rows.js';
import { indexText, wordIndexText } from '../../src/store/tokenize.js';
import { repoRoot } from '../ingest/helpers.js';
import { mulberry32 } from '../helpers/prng.js';

/** Both term strings of each text, in order, hashed (16 hex digits). */
function termsDigest(texts: readonly string[]): string {
  const hash = createHash('sha256');
  for (const text of texts) hash.update(indexText(text)).update('\u0000').update(wordIndexText(text)).update('\u0001');
  return hash.digest('hex').slice(0, 16);
}

/** What a63e38d's tokenizer gave on each set below. */
const RECORDED = { edges: '141b1adf24fd807b', edgesReversed: 'a41a4690975a0051', random: 'ca4343bb2e44aa94', shared: '518dc4b89e88c55c', sharedTexts: 26_536 };

/** Pieces the tokenizer treats specially: joiners, case changes, Latin-1 and wider letters, CJK, emoji, lone surrogates, letters that change length when lower-cased. */
const PIECES = [
  'a', 'Z', 'q', '7', '_', '$', '.', '/', '\\', ':', '::', '#', '@', '-', '->', ' ', '\n', '\t', '"', '(', ')', ',',
  'foo', 'Bar', 'HTTPServer', 'fooBar', 'snake_case', 'x86', 'resolver.rs:214', '10:30', 'src/a/b.ts:12', 'İstanbul',
  'ß', 'é', 'Ω', 'Σίσυφος', 'не', 'ДОМ', 'ª', '²', '×', '÷', 'µ', 'ǅ', 'ﬀ', '数据库', '连接', 'カタカナ', '・', '한국어',
  '🚀', '✅', '\ud83d', '\ude80', '\u2190', '\u30a0', '\ufeff', '\ufffd', '\u00ff', '\u0100', 'A'.repeat(70), 'b'.repeat(65),
];

function fuzzText(next: () => number, maxPieces: number): string {
  const pieces = Math.floor(next() * maxPieces);
  let text = '';
  for (let k = 0; k < pieces; k++) text += PIECES[Math.floor(next() * PIECES.length)];
  return text;
}

describe('the reused term writer', () => {
  it('gives the recorded terms on edge cases, in an order that reuses a wide writer for narrow text and a long one for short', () => {
    const parts = Array.from({ length: 40 }, (_, i) => `p${i}`);
    const texts = [
      '',
      ' ',
      'a',
      'İ',
      'İstanbulCity_x/y.ts:3',
      '数据库连接 🚀 ok',
      'plain ascii words',
      'Ω wide then narrow',
      'narrow after wide',
      parts.join('_'), // 40 parts: the part arrays grow
      parts.join('/'),
      parts.join('.') + ':12',
      'short after many parts',
      'x'.repeat(200_000), // past the reused writer: its own
      'tiny',
      `${'word '.repeat(30_000)}Ω`, // widens late in a long text
      'after the long wide one',
      'ü'.repeat(50_000), // Latin-1 beyond ASCII, one byte each, long
      'snake_case_words and camelCaseWords',
    ];
    expect(termsDigest(texts)).toBe(RECORDED.edges);
    // The same texts again, in reverse: each one after a different writer state.
    expect(termsDigest([...texts].reverse())).toBe(RECORDED.edgesReversed);
  });

  it('gives the recorded terms on 20,000 random texts of tricky pieces (seeded)', () => {
    const next = mulberry32(1515);
    const texts = Array.from({ length: 20_000 }, (_, i) => fuzzText(next, i % 97 === 0 ? 3_000 : 40));
    expect(termsDigest(texts)).toBe(RECORDED.random);
  });

  const transcripts = join(repoRoot, '../shared/data/transcripts');
  it.skipIf(!existsSync(transcripts))('gives the recorded terms on every turn and fact text of ../shared/data/transcripts', () => {
    const texts: string[] = [];
    for (const file of expandTranscriptPaths([transcripts]).files) {
      const { batch } = readTranscript(file.path, null);
      for (const turn of batch.turns) texts.push(turnIndexSource(turn));
      for (const fact of batch.facts ?? []) texts.push(fact.text);
    }
    expect(texts.length).toBe(RECORDED.sharedTexts);
    expect(termsDigest(texts)).toBe(RECORDED.shared);
  });
});
