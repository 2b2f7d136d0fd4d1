import { describe, expect, it } from 'vitest';
import { CORPUS_VERSION, canonicalLine, defaultQueryCount, generateCorpus, type CorpusMemory } from '../../bench/src/corpus.js';
import { createRng } from '../../bench/src/prng.js';
import { percentile, summarize } from '../../bench/src/stats.js';
import { indexTerms } from '../../src/store/tokenize.js';
import { KINDS, SCOPES } from '../../src/types.js';

const corpus = (seed: number, size: number): CorpusMemory[] => [...generateCorpus({ seed, size })];

describe('synthetic corpus', () => {
  const memories = corpus(7, 5000);

  it('is deterministic for a seed and differs across seeds', () => {
    const again = corpus(7, 5000);
    expect(again.map(canonicalLine)).toEqual(memories.map(canonicalLine));
    expect(again.map((m) => m.query)).toEqual(memories.map((m) => m.query));
    const other = corpus(8, 5000);
    expect(other.map(canonicalLine)).not.toEqual(memories.map(canonicalLine));
    expect(CORPUS_VERSION).toMatch(/^corpus-v\d+$/);
  });

  it('has every kind and scope, several projects, and user scope exactly when there is no project', () => {
    expect(new Set(memories.map((m) => m.kind))).toEqual(new Set(KINDS));
    expect(new Set(memories.map((m) => m.scope))).toEqual(new Set(SCOPES));
    expect(new Set(memories.map((m) => m.project)).size).toBeGreaterThanOrEqual(6);
    for (const m of memories) expect(m.project === null).toBe(m.scope === 'user');
    const facts = memories.filter((m) => m.kind === 'fact').length / memories.length;
    const prefs = memories.filter((m) => m.kind === 'preference').length / memories.length;
    expect(facts).toBeGreaterThan(prefs); // realistic, skewed frequencies
  });

  it('looks like a coding agent: identifiers, path:line, signatures, commands, tags', () => {
    const texts = memories.map((m) => m.text);
    const share = (re: RegExp): number => texts.filter((t) => re.test(t)).length / texts.length;
    expect(share(/\b[\w/.-]+\.(ts|py|rs|go|java|rb):\d+\b/)).toBeGreaterThan(0.4);
    expect(share(/\b[a-z]+(?:[A-Z][a-z]+)+\b/)).toBeGreaterThan(0.2); // camelCase
    expect(share(/\b[a-z]+(?:_[a-z]+)+\b/)).toBeGreaterThan(0.2); // snake_case
    expect(share(/\b(def|fn|func|public) \w+\(|\w+\([^)]*\): /)).toBeGreaterThan(0.05);
    expect(share(/`[^`]*--?[a-z][\w-]*[^`]*`/)).toBeGreaterThan(0.05); // commands with flags
    const tagged = memories.filter((m) => m.tags.length > 0).length / memories.length;
    expect(tagged).toBeGreaterThan(0.4);
    expect(tagged).toBeLessThan(0.9);
  });

  it('has mostly 60–300 characters with a tail to about 1,500', () => {
    const lengths = memories.map((m) => m.text.length);
    const inBand = lengths.filter((l) => l >= 60 && l <= 300).length / lengths.length;
    expect(inBand).toBeGreaterThan(0.65);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(1600);
    expect(lengths.filter((l) => l > 700).length).toBeGreaterThan(0);
  });

  it('holds some revised and forgotten memories, never as known answers', () => {
    const revisions = memories.filter((m) => m.revises !== null);
    expect(revisions.length).toBeGreaterThan(0);
    for (const r of revisions) expect(r.revises as number).toBeLessThan(r.index);
    expect(memories.some((m) => m.forgotten)).toBe(true);
    const closed = new Set(revisions.map((r) => r.revises));
    for (const m of memories.filter((x) => x.query)) {
      expect(m.forgotten).toBe(false);
      expect(closed.has(m.index)).toBe(false);
      expect(m.revises).toBeNull();
    }
  });

  it('has queries whose known answer exists and shares its distinctive terms', () => {
    const queries = memories.flatMap((m) => (m.query ? [m.query] : []));
    expect(queries).toHaveLength(defaultQueryCount(5000));
    expect(new Set(queries.map((q) => q.type))).toEqual(new Set(['identifier', 'path-line', 'words']));
    expect([...queries.map((q) => q.order)].sort((a, b) => a - b)).toEqual(queries.map((_, i) => i));
    for (const q of queries) {
      const target = memories[q.target] as CorpusMemory;
      expect(target.query).toBe(q);
      expect(q.project).toBe(target.project ?? q.project);
      const own = new Set(indexTerms(target.text));
      const shared = new Set(indexTerms(q.text).filter((t) => own.has(t)));
      expect(shared.size, `${q.text} → ${target.text}`).toBeGreaterThanOrEqual(2);
      if (q.type === 'path-line') expect(target.text).toContain(q.text.split(' ').pop() as string);
    }
  });
});

describe('bench helpers', () => {
  it('seeded PRNG repeats its stream', () => {
    const a = createRng(123);
    const b = createRng(123);
    const xs = Array.from({ length: 5 }, () => a.next());
    expect(Array.from({ length: 5 }, () => b.next())).toEqual(xs);
    for (const x of xs) expect(x >= 0 && x < 1).toBe(true);
  });

  it('computes nearest-rank percentiles', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(sorted, 0.5)).toBe(50);
    expect(percentile(sorted, 0.95)).toBe(95);
    expect(summarize([3, 1, 2])).toMatchObject({ n: 3, p50: 2, min: 1, max: 3 });
  });
});
