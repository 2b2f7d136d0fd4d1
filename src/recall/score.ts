import type { Kind, Memory, Scope } from '../types.js';

const DAY = 86_400_000;

/**
 * Recency half-life per kind, in days. Durable knowledge (facts, preferences, decisions,
 * corrections, procedures) fades slowly; operational context (continuation) halves in a week.
 */
export const HALF_LIFE_DAYS: Record<Kind, number> = {
  fact: 180,
  decision: 180,
  preference: 365,
  correction: 365,
  procedure: 365,
  entity: 180,
  note: 30,
  continuation: 7,
};

/**
 * Weights of the composite score's parts (they sum to 1 before boosts and penalties). Relevance
 * leads: importance, recency and usage order memories that match about equally well, they do not
 * lift a weak match over a strong one.
 */
export const WEIGHTS = { relevance: 0.7, importance: 0.12, recency: 0.1, usage: 0.08 } as const;
/** How relevance is made: fused rank, the raw signal (BM25 over the best BM25, blended with cosine), and query-term coverage. */
export const RELEVANCE_MIX = { rank: 0.35, signal: 0.4, coverage: 0.25 } as const;
/**
 * The cosine's share in the signal next to BM25's 1, each taken relative to the best among the
 * candidates (raw cosines of different embedders are not on BM25's scale). Measured with USE-lite
 * against BM25 alone: SciFact nDCG@10 0.686 → 0.696, LoCoMo recall@5 0.571 → 0.578, CoSQA MRR@10
 * 0.325 → 0.323. Taking the larger of the two raw signals instead (the first design) let a weak
 * embedder push weak matches up (SciFact 0.666); min–max normalising the cosines scored 0.700 on
 * SciFact but turned a hair's difference between two candidates into the whole range.
 */
export const VECTOR_SIGNAL_SHARE = 0.5;
/**
 * With `diversify` (context building), a memory recalled within this window is pushed down, so the
 * same few do not crowd every context. Recall leaves it out: asking the same LoCoMo questions
 * again (touching what they return) cut recall@5 0.634 → 0.553 with the penalty on.
 */
export const RECENT_RECALL_WINDOW_MS = 10 * 60_000;
export const RECENT_RECALL_PENALTY = 0.25;
export const TAG_BOOST = 0.1;
export const SCOPE_FACTOR = { sameSession: 1.15, otherSession: 0.85, project: 1.0, user: 0.95 } as const;

/** The score broken down: every recall hit carries one. */
export interface Why {
  /** 1-based rank in the BM25 list, or null when full-text did not find it. */
  bm25Rank: number | null;
  bm25: number | null;
  vectorRank: number | null;
  cosine: number | null;
  /** Reciprocal-rank-fusion score (weights and k by embedder: `fusionWeights`). */
  rrf: number;
  /** Share of the query's terms the memory contains, 0..1. */
  coverage: number;
  /**
   * Fused rank, the strongest raw signal and coverage, blended (RELEVANCE_MIX, 0..1), plus what
   * conversation neighbours lend (`neighbour`).
   */
  relevance: number;
  /** Relevance lent by the adjacent turns of the same conversation among the candidates (src/recall/neighbours.ts); 0 when none. */
  neighbour: number;
  recency: number;
  halfLifeDays: number;
  importance: number;
  usage: number;
  recentlyRecalledPenalty: number;
  matchedTags: string[];
  /** Multiplier: 1 + 0.1 per matching tag. */
  tagBoost: number;
  scope: Scope;
  scopeFactor: number;
  pinned: boolean;
  score: number;
  /**
   * The first hits when recall reranked them word by word (src/recall/rerank.ts): `compared` (its
   * token signature was compared with the query), `no signature` or `unreadable signature` (kept
   * recall's place). Absent past the reranked depth or when no rerank ran.
   */
  rerank?: 'compared' | 'no signature' | 'unreadable signature';
}

export interface ScoreInput {
  memory: Memory;
  now: number;
  rrf: number;
  /** The largest rrf achievable with the lists used (a hit ranked first in every list). */
  maxRrf: number;
  /** The best BM25 score among the candidates, to normalise this one's. */
  bm25Max?: number;
  /**
   * The lowest BM25 score among the candidates: when given, the BM25 part is min–max normalised
   * over [bm25Min, bm25Max] (`FusionWeights.bm25Range`); absent, it is bm25 / bm25Max.
   */
  bm25Min?: number;
  coverage: number;
  bm25Rank: number | null;
  bm25: number | null;
  vectorRank: number | null;
  cosine: number | null;
  /** The best cosine among the candidates in hybrid mode (null: no vectors took part). */
  cosineMax?: number | null;
  boostTags: readonly string[];
  session: string | null;
  /** The cosine's share in the signal. @default VECTOR_SIGNAL_SHARE */
  vectorSignalShare?: number;
  /** Relevance lent by conversation neighbours (`neighbourLifts`). @default 0 */
  neighbour?: number;
  /**
   * Push down memories recalled in the last ten minutes, so the same few do not crowd every
   * answer. Context building asks for it; recall does not (asking again must not demote the right
   * answer; the hooks' injection ledger keeps a session's injections apart).
   * @default false
   */
  diversify?: boolean;
}

/** The BM25 score scaled to 0..1: relative to the best, or over the candidates' range when `min` is given. */
export function bm25PartOf(bm25: number | null, max: number | undefined, min: number | undefined): number {
  if (bm25 === null || !max || max <= 0) return 0;
  if (min === undefined) return Math.max(0, bm25 / max);
  if (max <= min) return 1;
  return Math.min(1, Math.max(0, (bm25 - min) / (max - min)));
}

/** BM25 part and cosine part blended (hybrid), or the BM25 part alone. */
function signalOf(bm25Part: number, cosine: number | null, cosineMax: number | null | undefined, share: number): number {
  if (cosineMax === null || cosineMax === undefined) return bm25Part;
  const cosinePart = cosine === null || cosineMax <= 0 ? 0 : Math.min(1, Math.max(0, cosine / cosineMax));
  return (bm25Part + share * cosinePart) / (1 + share);
}

export function recencyOf(memory: Memory, now: number): number {
  const ageDays = Math.max(0, now - memory.updatedAt) / DAY;
  return Math.pow(0.5, ageDays / HALF_LIFE_DAYS[memory.kind]);
}

export function usageOf(memory: Memory): number {
  return Math.min(1, Math.log1p(memory.accessCount) / Math.log1p(50));
}

function scopeFactorOf(memory: Memory, session: string | null): number {
  if (memory.scope === 'session') {
    return session !== null && memory.session === session ? SCOPE_FACTOR.sameSession : SCOPE_FACTOR.otherSession;
  }
  return memory.scope === 'project' ? SCOPE_FACTOR.project : SCOPE_FACTOR.user;
}

/** The composite score of SPEC §4, with its breakdown. */
export function compositeScore(input: ScoreInput): Why {
  const { memory, now } = input;
  const rankPart = input.maxRrf > 0 ? input.rrf / input.maxRrf : 0;
  const bm25Part = bm25PartOf(input.bm25, input.bm25Max, input.bm25Min);
  const signal = signalOf(bm25Part, input.cosine, input.cosineMax, input.vectorSignalShare ?? VECTOR_SIGNAL_SHARE);
  const neighbour = input.neighbour ?? 0;
  const relevance = RELEVANCE_MIX.rank * rankPart + RELEVANCE_MIX.signal * signal + RELEVANCE_MIX.coverage * input.coverage + neighbour;
  const recency = recencyOf(memory, now);
  const usage = usageOf(memory);
  let penalty = 0;
  if (input.diversify && memory.lastRecalledAt !== null) {
    const elapsed = now - memory.lastRecalledAt;
    if (elapsed >= 0 && elapsed < RECENT_RECALL_WINDOW_MS) penalty = RECENT_RECALL_PENALTY * (1 - elapsed / RECENT_RECALL_WINDOW_MS);
  }
  const matchedTags = input.boostTags.filter((tag) => memory.tags.includes(tag));
  const tagBoost = 1 + TAG_BOOST * matchedTags.length;
  const scopeFactor = scopeFactorOf(memory, input.session);
  const base =
    WEIGHTS.relevance * relevance + WEIGHTS.importance * memory.importance + WEIGHTS.recency * recency + WEIGHTS.usage * usage - penalty;
  const score = Math.max(0, base) * tagBoost * scopeFactor;
  return {
    bm25Rank: input.bm25Rank,
    bm25: input.bm25,
    vectorRank: input.vectorRank,
    cosine: input.cosine,
    rrf: input.rrf,
    coverage: input.coverage,
    relevance,
    neighbour,
    recency,
    halfLifeDays: HALF_LIFE_DAYS[memory.kind],
    importance: memory.importance,
    usage,
    recentlyRecalledPenalty: penalty,
    matchedTags,
    tagBoost,
    scope: memory.scope,
    scopeFactor,
    pinned: memory.pinned,
    score,
  };
}

/**
 * Pinned memories come first, then the continuation state of the session being worked in; then
 * by score. Another session's continuation competes on score like anything else (it decays in days).
 */
export function precedence(memory: Memory, session: string | null = null): number {
  if (memory.pinned) return 2;
  if (memory.kind === 'continuation' && session !== null && memory.session === session) return 1;
  return 0;
}
