import { invalid } from '../errors.js';
import type { Deps } from '../deps.js';
import { indexTerms } from '../store/tokenize.js';
import { KINDS, SCOPES, type Kind, type Memory, type MemoryFilter, type Scope } from '../types.js';
import { checkStaleness, FileReader, type FileStatus } from '../workspace/files.js';
import { compositeScore, precedence, type ScoreInput, type Why } from './score.js';
import { admissible } from './isolation.js';
import { retrieve } from './retrieve.js';
import { neighbourLifts } from './neighbours.js';
import { RERANK_DEPTH, rerankBySignatures } from './rerank.js';

export interface RecallInput {
  query: string;
  /** Number of hits. @default 10 */
  k?: number;
  /** Only memories carrying at least one of these tags; each matching tag also adds 10%. */
  tags?: string[];
  kinds?: Kind[];
  scopes?: Scope[];
  /** Project to search (plus user-scope memories). @default the instance's project */
  project?: string | null;
  /** Search every project. */
  allProjects?: boolean;
  /** Recall over the memory set sealed in this snapshot (id or label). */
  asOf?: string;
  /** Count this recall as an access (usage; the recently-recalled penalty when diversifying). @default true */
  touch?: boolean;
  /**
   * Push down memories recalled in the last ten minutes (RECENT_RECALL_PENALTY), for callers that
   * want variety across repeated calls. Off by default: the same question gets the same answer.
   * @default false
   */
  diversify?: boolean;
  /** Candidates taken from each retriever before fusion. @default max(50, 5k) */
  candidates?: number;
  /** Check file references against the workspace. @default true */
  checkFiles?: boolean;
  /** Vector hits below this cosine are noise, not candidates. @default 0.25 */
  minCosine?: number;
  /**
   * Compare the first RERANK_DEPTH hits with the query word by word, through the token signatures
   * stored with their vectors, and blend that order with recall's (src/recall/rerank.ts). On by
   * default with a contextual embedder (`onnx:`); `false` turns it off. `true` also computes the
   * signatures of hits that have none yet (one model run each). Without such an embedder recall is
   * as usual (`reranked` false when asked).
   * @default true
   */
  rerank?: boolean;
}

export { DEFAULT_MIN_COSINE } from './retrieve.js';

export type StaleReason = 'file-missing' | 'file-changed' | 'line-moved' | 'superseded' | 'forgotten';

export interface Staleness {
  stale: boolean;
  reasons: StaleReason[];
  files: FileStatus[];
}

export interface RecallHit {
  memory: Memory;
  score: number;
  why: Why;
  staleness: Staleness;
}

export interface RecallResult {
  query: string;
  /** Which retrievers ran: `hybrid` (BM25 + vectors), `bm25`, or `vector`. */
  mode: 'hybrid' | 'bm25' | 'vector';
  hits: RecallHit[];
  /** Candidates considered before the cut to k. */
  considered: number;
  /**
   * Whether the first hits were reranked word by word: present when the embedder is contextual
   * (the default rerank) or `rerank: true` was asked; absent with `rerank: false`.
   */
  reranked?: boolean;
  /** Why the hits were not reranked, or only some of them (one line); absent when all were. */
  rerankNote?: string;
}

function checkList<T extends string>(values: T[] | undefined, allowed: readonly T[], field: string): void {
  for (const value of values ?? []) {
    if (!allowed.includes(value)) throw invalid(`${field} must be among ${allowed.join(', ')} (got "${value}")`, field);
  }
}

/** Share of distinct query terms present in the memory's text and tags (exact index terms). */
export function termCoverage(terms: readonly string[], memory: Memory): number {
  if (terms.length === 0) return 0;
  const own = new Set(indexTerms(`${memory.text} ${memory.tags.join(' ')}`));
  let hit = 0;
  for (const term of terms) if (own.has(term)) hit++;
  return hit / terms.length;
}

/**
 * The same share by substring, without tokenising: used past the first candidates, where an exact
 * figure would cost a tokenisation of every long memory for every query and rarely changes the top k.
 */
export function roughCoverage(terms: readonly string[], memory: Memory): number {
  if (terms.length === 0) return 0;
  const haystack = `${memory.text} ${memory.tags.join(' ')}`.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '_');
  let hit = 0;
  for (const term of terms) if (haystack.includes(term)) hit++;
  return hit / terms.length;
}

/** Candidates (in fused order) whose coverage is computed exactly. */
const EXACT_COVERAGE_FOR = (k: number): number => Math.max(50, 3 * k);

/**
 * Whether a memory is superseded, forgotten, or points at files that changed. `files` shares file
 * reads between the memories of one call (see {@link FileReader}).
 */
export function stalenessOf(deps: Deps, memory: Memory, checkFiles = true, reader?: FileReader): Staleness {
  const reasons = new Set<StaleReason>();
  if (memory.validTo !== null) reasons.add('superseded');
  if (memory.deletedAt !== null) reasons.add('forgotten');
  let files: FileStatus[] = [];
  const local = deps.workspaceRoot !== null && (memory.project === deps.project || memory.project === null);
  if (checkFiles && local && memory.files.length > 0) {
    files = checkStaleness(memory.files, deps.workspaceRoot as string, reader);
    for (const file of files) {
      if (file.status === 'file-missing' || file.status === 'file-changed' || file.status === 'line-moved') reasons.add(file.status);
    }
  }
  return { stale: reasons.size > 0, reasons: [...reasons], files };
}

/**
 * Hybrid recall: BM25 and vector candidates fused by reciprocal rank (weights by embedder:
 * `fusionWeights`), re-scored by the
 * composite score (relevance, recency by kind, importance, usage, tag boost, scope; the
 * recently-recalled penalty only with `diversify`), with adjacent turns of one conversation lending
 * each other relevance (`neighbourLifts`), pinned and continuation first, each hit with `why` and staleness.
 */
export async function recall(deps: Deps, input: RecallInput): Promise<RecallResult> {
  if (typeof input.query !== 'string' || input.query.trim().length === 0) throw invalid('query is empty', 'query');
  const k = input.k ?? 10;
  if (!Number.isInteger(k) || k < 1 || k > 1000) throw invalid(`k must be an integer from 1 to 1000 (got ${k})`, 'k');
  checkList(input.kinds, KINDS, 'kind');
  checkList(input.scopes, SCOPES, 'scope');
  // Tags are redacted as stored ones were: the redaction rules load only when a recall names tags.
  const tags = input.tags !== undefined && input.tags.length > 0 ? (await import('../memory/normalize.js')).normalizeTags(input.tags) : [];
  const filter: MemoryFilter = {};
  if (!input.allProjects) {
    const project = input.project !== undefined ? input.project : deps.project;
    filter.project = project;
  }
  if (input.kinds?.length) filter.kinds = input.kinds;
  if (input.scopes?.length) filter.scopes = input.scopes;
  if (tags.length > 0) filter.anyTags = tags;
  if (input.asOf !== undefined) filter.snapshotId = (await (await import('../memory/lifecycle.js')).resolveSnapshot(deps, input.asOf)).id;

  const candidates = input.candidates ?? Math.max(50, k * 5);
  const { mode, fused, maxRrf, bm25Max, bm25Min, terms, cosines, cosineMax, weights } = await retrieve(deps, { query: input.query, filter, limit: candidates, minCosine: input.minCosine });
  const memories = new Map((await deps.store.getMemories(fused.map((f) => f.id))).map((m) => [m.id, m]));
  const now = deps.clock.now();
  const scored: Array<{ memory: Memory; why: Why; input: ScoreInput }> = [];
  const exactFor = EXACT_COVERAGE_FOR(k);
  for (const [position, hit] of fused.entries()) {
    const memory = memories.get(hit.id);
    if (!memory) continue;
    // Projects stay apart: the store's project filter also lets every project-less memory through.
    // A query (unlike an injected context) also sees the user-wide memories the user stored.
    const userWide = memory.project === null && memory.scope === 'user';
    if (!input.allProjects && !userWide && !admissible(memory, filter.project ?? null)) continue;
    const scoreInput: ScoreInput = {
      memory,
      now,
      rrf: hit.rrf,
      maxRrf,
      bm25Max,
      ...(weights.bm25Range ? { bm25Min } : {}),
      coverage: position < exactFor ? termCoverage(terms, memory) : roughCoverage(terms, memory),
      bm25Rank: hit.ranks[0] ?? null,
      bm25: hit.scores[0] ?? null,
      vectorRank: hit.ranks[1] ?? null,
      cosine: cosines.get(hit.id) ?? null,
      cosineMax,
      boostTags: tags,
      session: deps.session,
      diversify: input.diversify === true,
      vectorSignalShare: weights.vectorSignalShare,
    };
    scored.push({ memory, why: compositeScore(scoreInput), input: scoreInput });
  }
  // Adjacent turns of one conversation lend each other relevance (from their own, before lending).
  const lifts = neighbourLifts(scored.map(({ memory, why }) => ({ memory, relevance: why.relevance })));
  for (const entry of scored) {
    const lift = lifts.get(entry.memory.id);
    if (lift !== undefined) entry.why = compositeScore({ ...entry.input, neighbour: lift });
  }
  scored.sort((a, b) => precedence(b.memory, deps.session) - precedence(a.memory, deps.session) || b.why.score - a.why.score);
  // The default rerank with a contextual embedder: stored token signatures, no model run per hit.
  const contextual = deps.embedder?.tokenStates !== undefined;
  const rerankAsked = input.rerank === true || (input.rerank !== false && contextual);
  let reranked = false;
  let rerankNote: string | undefined;
  if (rerankAsked && scored.length > 0) {
    const head = scored.slice(0, RERANK_DEPTH);
    const outcome = await rerankBySignatures(deps, input.query, head.map((e) => e.memory), input.rerank === true);
    rerankNote = outcome.note;
    if (outcome.order) {
      const marked = head.map((e, i) => ({ ...e, why: { ...e.why, rerank: outcome.marks[i]! } }));
      // Pinned and continuation memories stay first: the blended order within each precedence.
      const reordered = outcome.order.map((i) => marked[i]!).sort((a, b) => precedence(b.memory, deps.session) - precedence(a.memory, deps.session));
      scored.splice(0, head.length, ...reordered);
      reranked = true;
    }
  }
  const top = scored.slice(0, k);
  const files = new FileReader();
  const hits: RecallHit[] = top.map(({ memory, why }) => ({
    memory,
    score: why.score,
    why,
    staleness: stalenessOf(deps, memory, input.checkFiles !== false, files),
  }));
  if (input.touch !== false && hits.length > 0) {
    await deps.store.touch(hits.map((h) => h.memory.id), now, true);
  }
  return { query: input.query, mode, hits, considered: fused.length, ...(rerankAsked ? { reranked, ...(rerankNote ? { rerankNote } : {}) } : {}) };
}
