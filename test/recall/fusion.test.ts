import { describe, expect, it } from 'vitest';
import { DEFAULT_FUSION, ENCODER_FUSION, fusionWeights, reciprocalRankFusion } from '../../src/recall/fusion.js';
import { compositeScore, VECTOR_SIGNAL_SHARE } from '../../src/recall/score.js';
import type { Memory } from '../../src/types.js';

const memory = { id: 'm', kind: 'fact', scope: 'project', importance: 0.5, accessCount: 0, lastRecalledAt: null, updatedAt: 0, tags: [], pinned: false, session: null } as unknown as Memory;
const base = { memory, now: 0, rrf: 0, maxRrf: 1, bm25Max: 10, coverage: 0, bm25Rank: null, vectorRank: null, boostTags: [], session: null };

describe('weighted reciprocal rank fusion', () => {
  it('scales each list by its weight', () => {
    const keyword = [{ id: 'a', score: 9 }, { id: 'b', score: 8 }];
    const fused = reciprocalRankFusion([keyword, [{ id: 'b', score: 0.9 }]], 60, [1, 0.2]);
    expect(fused.find((f) => f.id === 'b')!.rrf).toBeCloseTo(1 / 62 + 0.2 / 61, 12);
    expect(fused.find((f) => f.id === 'a')!.rrf).toBeCloseTo(1 / 61, 12);
    // A list of weight 0 changes nothing; without weights each list counts fully.
    expect(reciprocalRankFusion([keyword, [{ id: 'b', score: 0.9 }]], 60, [1, 0]).map((f) => f.id)).toEqual(['a', 'b']);
    expect(reciprocalRankFusion([keyword, [{ id: 'b', score: 0.9 }]])[0]!.rrf).toBeCloseTo(1 / 62 + 1 / 61, 12);
  });
});

describe('the relevance signal', () => {
  it('is the BM25 part alone when no vectors took part', () => {
    const why = compositeScore({ ...base, bm25: 5, cosine: null, cosineMax: null });
    expect(why.relevance).toBeCloseTo(0.4 * 0.5, 12);
  });

  it('blends BM25 and cosine, each relative to the best candidate', () => {
    const keywordOnly = compositeScore({ ...base, bm25: 10, cosine: 0.2, cosineMax: 0.8 });
    expect(keywordOnly.relevance).toBeCloseTo((0.4 * (1 + VECTOR_SIGNAL_SHARE * 0.25)) / (1 + VECTOR_SIGNAL_SHARE), 12);
    const meaningOnly = compositeScore({ ...base, bm25: null, cosine: 0.8, cosineMax: 0.8 });
    expect(meaningOnly.relevance).toBeCloseTo((0.4 * VECTOR_SIGNAL_SHARE) / (1 + VECTOR_SIGNAL_SHARE), 12);
    // A strong keyword match is not overtaken by a semantic neighbour without the words.
    expect(keywordOnly.score).toBeGreaterThan(meaningOnly.score);
  });

  it('keeps a near-tie in cosine a near-tie (no stretching of small differences)', () => {
    const a = compositeScore({ ...base, bm25: 10, cosine: 0.80, cosineMax: 0.80 });
    const b = compositeScore({ ...base, bm25: 10, cosine: 0.79, cosineMax: 0.80 });
    expect(a.score - b.score).toBeLessThan(0.01);
    expect(a.score).toBeGreaterThan(b.score);
  });
});

describe('the BM25 part over the candidates\' range (bm25Range)', () => {
  it('maps the best candidate to 1 and the last one retrieved to 0, and changes nothing without a minimum', async () => {
    const { bm25PartOf } = await import('../../src/recall/score.js');
    expect(bm25PartOf(10, 10, 4)).toBe(1);
    expect(bm25PartOf(4, 10, 4)).toBe(0);
    expect(bm25PartOf(7, 10, 4)).toBeCloseTo(0.5, 12);
    // Relative to the best, the last candidate still keeps 0.4 of the part.
    expect(bm25PartOf(4, 10, undefined)).toBeCloseTo(0.4, 12);
    // One candidate, or all tied: each is the best.
    expect(bm25PartOf(5, 5, 5)).toBe(1);
    expect(bm25PartOf(null, 10, 4)).toBe(0);
    const low = compositeScore({ ...base, bm25: 4, bm25Min: 4, cosine: null, cosineMax: null });
    const high = compositeScore({ ...base, bm25: 10, bm25Min: 4, cosine: null, cosineMax: null });
    expect(low.relevance).toBe(0);
    expect(high.relevance).toBeCloseTo(0.4, 12);
  });
});

describe('fusion weights by embedder', () => {
  it('gives pretrained ONNX encoders their own weights and keeps the old ones for BM25 and other embedders', () => {
    expect(fusionWeights('onnx:all-minilm-l6-v2-q')).toEqual(ENCODER_FUSION);
    expect(fusionWeights(null)).toEqual(DEFAULT_FUSION);
    for (const model of ['use-lite:512', 'hash:v1:1024', 'static:potion-base-8M', 'ollama:nomic-embed-text']) expect(fusionWeights(model)).toEqual(DEFAULT_FUSION);
    expect(DEFAULT_FUSION).toEqual({ vectorRankWeight: 0.2, vectorSignalShare: 0.5, rrfK: 60 });
    expect(ENCODER_FUSION.vectorRankWeight).toBeGreaterThan(DEFAULT_FUSION.vectorRankWeight);
    expect(ENCODER_FUSION.bm25Range).toBe(true);
    expect(DEFAULT_FUSION.bm25Range).toBeUndefined();
  });

  it('lets overrides win field by field', () => {
    expect(fusionWeights('onnx:x', { rrfK: 60 })).toEqual({ ...ENCODER_FUSION, rrfK: 60 });
    expect(fusionWeights(null, { vectorRankWeight: 1 })).toEqual({ ...DEFAULT_FUSION, vectorRankWeight: 1 });
  });

  it('a smaller k lets the first ranks count more against the rest', () => {
    const bm25 = [{ id: 'a', score: 9 }, { id: 'b', score: 8 }, { id: 'x', score: 7 }, { id: 'c', score: 6 }];
    const vectors = [{ id: 'c', score: 0.9 }, { id: 'b', score: 0.8 }];
    // At k = 60 the document both lists rank second (b) leads; at k = 1 c's first place outweighs its fourth.
    expect(reciprocalRankFusion([bm25, vectors], 60, [1, 1])[0]!.id).toBe('b');
    expect(reciprocalRankFusion([bm25, vectors], 1, [1, 1])[0]!.id).toBe('c');
  });
});

describe('vector pseudo-relevance feedback', () => {
  it('moves the query toward the mean of the first hits, at unit length, and is off without hits or share', async () => {
    const { withFeedback } = await import('../../src/recall/retrieve.js');
    const query = Float32Array.from([1, 0]);
    const moved = withFeedback(query, [Float32Array.from([0, 1]), Float32Array.from([0, 1])], 1)!;
    expect(moved[0]).toBeCloseTo(Math.SQRT1_2, 6);
    expect(moved[1]).toBeCloseTo(Math.SQRT1_2, 6);
    expect(withFeedback(query, [], 1)).toBeNull();
    expect(withFeedback(query, [Float32Array.from([0, 1])], 0)).toBeNull();
  });
});
