import { CairnError } from '../errors.js';
import { compositeScore, recencyOf } from '../recall/score.js';
import type { Memory } from '../types.js';

/** A memory offered to the context builder, with whatever retrieval said about it. */
export interface Candidate {
  memory: Memory;
  /** 1-based BM25 rank for the query, or null (no query, or not matched). */
  bm25Rank: number | null;
  bm25: number | null;
  vectorRank: number | null;
  cosine: number | null;
  /** Reciprocal-rank-fusion score (0 without a query). */
  rrf: number;
  coverage: number;
}

export interface RankContext {
  now: number;
  /** Whether a query drove retrieval (rankers may weigh relevance only then). */
  hasQuery: boolean;
  maxRrf: number;
  /** Best BM25 score among the candidates (0 without a query). */
  bm25Max: number;
  /** The candidates' cosine range when vectors took part (null otherwise). */
  cosineMax?: number | null;
  /** The cosine's share in the relevance signal (recall's, by embedder: `fusionWeights`). */
  vectorSignalShare?: number;
  session: string | null;
  /** Deterministic seed for the random ranker. */
  seed: number;
}

/** Scores candidates for packing: higher is more worth its tokens. */
export type Ranker = (candidate: Candidate, context: RankContext) => number;

function hash32(text: string, seed: number): number {
  let h = seed ^ 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) / 0xffffffff;
}

const builtins: Record<string, Ranker> = {
  /** The recall composite score (relevance, recency by kind, importance, usage, scope). */
  composite: (c, ctx) =>
    compositeScore({
      memory: c.memory,
      now: ctx.now,
      rrf: c.rrf,
      maxRrf: ctx.maxRrf,
      bm25Max: ctx.bm25Max,
      coverage: c.coverage,
      bm25Rank: c.bm25Rank,
      bm25: c.bm25,
      vectorRank: c.vectorRank,
      cosine: c.cosine,
      cosineMax: ctx.cosineMax ?? null,
      ...(ctx.vectorSignalShare !== undefined ? { vectorSignalShare: ctx.vectorSignalShare } : {}),
      boostTags: [],
      session: ctx.session,
      diversify: true,
    }).score,
  /** Newest first (weighted-compact found plain recency hard to beat). */
  recency: (c, ctx) => recencyOf(c.memory, ctx.now) + c.memory.updatedAt / 1e15,
  importance: (c) => c.memory.importance,
  /** Full-text rank only. */
  bm25: (c) => (c.bm25Rank === null ? 0 : 1 / c.bm25Rank),
  /** Vector similarity only. */
  cosine: (c) => c.cosine ?? 0,
  /** A seeded shuffle: the floor any ranker must beat. */
  random: (c, ctx) => hash32(c.memory.id, ctx.seed),
};

/** The ranker registry: built-ins plus any registered from the library API. */
export class RankerRegistry {
  private readonly rankers = new Map<string, Ranker>(Object.entries(builtins));

  register(name: string, ranker: Ranker): void {
    this.rankers.set(name, ranker);
  }

  get(name: string): Ranker {
    const ranker = this.rankers.get(name);
    if (!ranker) {
      throw new CairnError('INVALID_INPUT', `unknown ranker "${name}" (known: ${this.names().join(', ')})`, { field: 'ranker' });
    }
    return ranker;
  }

  names(): string[] {
    return [...this.rankers.keys()];
  }
}

export const RANKER_NAMES = Object.keys(builtins);
