import { describe, expect, it } from 'vitest';
import { evaluateRetrieval, rankingMetrics } from '../../src/embed/evaluate.js';
import { createHashEmbedder } from '../../src/embed/hash.js';

describe('retrieval evaluation', () => {
  it('computes nDCG@10, recall and MRR for one ranking with linear gains', () => {
    const relevance = new Map([['a', 2], ['b', 1], ['z', 0]]);
    const metrics = rankingMetrics(['x', 'a', 'y', 'b'], relevance);
    const dcg = 2 / Math.log2(3) + 1 / Math.log2(5);
    const ideal = 2 / Math.log2(2) + 1 / Math.log2(3);
    expect(metrics.ndcgAt10).toBeCloseTo(dcg / ideal, 12);
    expect(metrics.recallAt10).toBe(1);
    expect(metrics.mrrAt10).toBe(0.5);
    expect(rankingMetrics(['a', 'b'], relevance).ndcgAt10).toBeCloseTo(1, 12);
    expect(rankingMetrics([...Array(10).keys()].map(String).concat('a'), relevance)).toMatchObject({ ndcgAt10: 0, recallAt10: 0, recallAt100: 0.5 });
  });

  it('ranks a corpus per query and averages over judged queries only', async () => {
    const corpus = [
      { id: 'd1', text: 'sqlite busy timeout in WAL mode' },
      { id: 'd2', text: 'the user prefers short paragraphs' },
      { id: 'd3', text: 'garbage collector finalizer ordering' },
    ];
    const queries = [
      { id: 'q1', text: 'busy timeout sqlite' },
      { id: 'q2', text: 'finalizer ordering of the garbage collector' },
      { id: 'q3', text: 'not judged' },
    ];
    const qrels = new Map([
      ['q1', new Map([['d1', 1]])],
      ['q2', new Map([['d3', 1]])],
    ]);
    const progress: number[] = [];
    const report = await evaluateRetrieval(createHashEmbedder({ dimension: 256 }), corpus, queries, qrels, {
      batchSize: 2,
      onProgress: (done) => progress.push(done),
    });
    expect(report).toMatchObject({ queries: 2, documents: 3, ndcgAt10: 1, recallAt100: 1, mrrAt10: 1 });
    expect(progress).toEqual([2, 3, 5]);
  });

  it('never retrieves a document with the query id (BEIR default)', async () => {
    const corpus = [{ id: 'same', text: 'alpha beta' }, { id: 'other', text: 'alpha beta gamma' }];
    const qrels = new Map([['same', new Map([['other', 1]])]]);
    const report = await evaluateRetrieval(createHashEmbedder({ dimension: 256 }), corpus, [{ id: 'same', text: 'alpha beta' }], qrels);
    expect(report.mrrAt10).toBe(1);
  });
});
