/**
 * Recall's opt-in rerank (`rerank: true`): the first hits compared with the query word by word.
 *
 * The vector search compares one pooled vector per text, so "When did Maria go to the beach?"
 * scores every turn of the beach exchange alike. Here the embedder's own model (the shipped
 * MiniLM) gives each word piece of the query and of each of the first {@link RERANK_DEPTH} hits its
 * contextual state; a hit scores the mean, over the query's content pieces (not function words,
 * not punctuation), of the best cosine with any of its own pieces (late interaction, as ColBERT
 * scores, without ColBERT's training). That order is blended with recall's own by weighted
 * reciprocal ranks, 1 / (k + recall's rank) + w / (k + this rank), so a hit recall put first stays
 * near the top unless the words disagree. Pinned and continuation memories stay first.
 *
 * Depth, k and w were chosen on the tuning halves (docs/EMBEDDINGS.md, "A cross-encoder
 * reranker: … a token-level rerank"): LoCoMo evidence recall@5 0.674 → 0.701 (report half
 * 0.635 → 0.656). It costs a model run per hit compared, which is why it is opt-in (the recall
 * budget is 15 ms p50).
 */
import type { Embedder, TokenStates } from '../types.js';
import { STOPWORDS } from './stopwords.js';

/** How many of recall's first hits are compared word by word. */
export const RERANK_DEPTH = 10;
/** The reciprocal-rank constant of the blend: small, so recall's first places weigh. */
export const RERANK_K = 5;
/** The word-level order's weight in the blend (recall's own order weighs 1). */
export const RERANK_WEIGHT = 1;

/**
 * Which word pieces of a text carry content: not an English function word, not punctuation. A
 * continuation piece (`##…`) follows the word it belongs to.
 */
export function contentPieces(tokens: readonly string[]): boolean[] {
  const out: boolean[] = [];
  for (const token of tokens) {
    if (token.startsWith('##') && out.length > 0) out.push(out[out.length - 1]!);
    else out.push(/[\p{L}\p{N}]/u.test(token) && !STOPWORDS.has(token.toLowerCase()));
  }
  return out;
}

/**
 * Late-interaction similarity: the mean over the query's content pieces (all pieces when it has
 * none) of the best cosine with any piece of the document. 0 when either side has no pieces.
 */
export function maxSim(query: TokenStates, document: TokenStates): number {
  if (query.states.length === 0 || document.states.length === 0) return 0;
  const content = contentPieces(query.tokens);
  const useAll = !content.some(Boolean);
  let sum = 0;
  let count = 0;
  query.states.forEach((q, i) => {
    if (!useAll && !content[i]) return;
    let best = -1;
    for (const d of document.states) {
      let dot = 0;
      for (let j = 0; j < q.length; j++) dot += q[j]! * d[j]!;
      if (dot > best) best = dot;
    }
    sum += best;
    count++;
  });
  return sum / count;
}

/**
 * The blended order of `head` (recall's order) given each item's word-level score: weighted
 * reciprocal ranks, ties kept in recall's order. Returns indexes into `head`.
 */
export function blendOrder(scores: readonly number[], k = RERANK_K, weight = RERANK_WEIGHT): number[] {
  const byScore = scores.map((s, i) => ({ i, s })).sort((a, b) => b.s - a.s || a.i - b.i);
  const wordRank = new Map(byScore.map((x, rank) => [x.i, rank + 1]));
  return scores
    .map((_, i) => ({ i, v: 1 / (k + i + 1) + weight / (k + wordRank.get(i)!) }))
    .sort((a, b) => b.v - a.v || a.i - b.i)
    .map((x) => x.i);
}

/**
 * `head` (recall's order, by precedence then score) in the blended order of its word-level
 * `scores`, items of higher `precedence` (pinned, continuation) still first.
 */
export function rerankHead<T>(head: readonly T[], scores: readonly number[], precedence: (item: T) => number): T[] {
  const reordered = blendOrder(scores).map((i) => head[i]!);
  // Stable: the blended order within each precedence.
  return reordered.sort((a, b) => precedence(b) - precedence(a));
}

/**
 * Word-level scores of `texts` against `query` with the embedder's model, or null when the
 * embedder cannot give token states (not a contextual model).
 */
export async function wordScores(embedder: Embedder, query: string, texts: readonly string[]): Promise<number[] | null> {
  if (!embedder.tokenStates || texts.length === 0) return null;
  const [q, ...documents] = await embedder.tokenStates([query, ...texts]);
  return documents.map((d) => maxSim(q!, d));
}
