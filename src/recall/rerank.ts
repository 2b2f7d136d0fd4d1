/**
 * Recall's rerank: the first hits compared with the query word by word. On by default with a
 * contextual embedder (`onnx:`); `rerank: false` turns it off.
 *
 * The vector search compares one pooled vector per text, so "When did Maria go to the beach?"
 * scores every turn of the beach exchange alike. Here the embedder's own model (the shipped
 * MiniLM) gives each word piece of the query and of each of the first {@link RERANK_DEPTH} hits its
 * contextual state; a hit scores the mean, over the query's content pieces (not function words,
 * not punctuation), of the best match with any of its own pieces (late interaction, as ColBERT
 * scores, without ColBERT's training). That order is blended with recall's own by weighted
 * reciprocal ranks, 1 / (k + recall's rank) + w / (k + this rank), so a hit recall put first stays
 * near the top unless the words disagree. Pinned and continuation memories stay first.
 *
 * A hit's side is its token signature, stored with its vector at write time from the same model
 * run (src/embed/token-signature.ts: the signs of its text's pieces' states); the query's side
 * comes from the query embedding's own run. So the rerank costs no model run (about 1 ms of CPU
 * for 10 hits) where it cost one per hit when it ran the model on the hits' texts (~57 ms).
 *
 * Depth, k and w were chosen on the tuning halves (docs/EMBEDDINGS.md, "A cross-encoder
 * reranker: … a token-level rerank"; the signature form in "Token signatures"): LoCoMo evidence
 * recall@5 0.674 → 0.706 offline with signatures (report half 0.635 → 0.666).
 */
import type { Deps } from '../deps.js';
import { isCairnError } from '../errors.js';
import { embeddingText } from '../embed/embedding-text.js';
import { decodeSignature, queryTables, signatureScore, type TokenSignature } from '../embed/token-signature.js';
import type { EmbedderIdentity, Memory, TokenStates } from '../types.js';
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

/** The query's content pieces' states (all its pieces when none carries content). */
export function queryPieces(query: TokenStates): Float32Array[] {
  const content = contentPieces(query.tokens);
  const useAll = !content.some(Boolean);
  return query.states.filter((_, i) => useAll || content[i]);
}

/**
 * Indexes into `scores` (recall's order) reordered by {@link blendOrder} among the items that have
 * a score; items without one (null) keep their place.
 */
export function blendPartial(scores: ReadonlyArray<number | null>): number[] {
  const scored = scores.flatMap((s, i) => (s === null ? [] : [i]));
  const order = blendOrder(scored.map((i) => scores[i]!));
  const out = scores.map((_, i) => i);
  scored.forEach((position, j) => (out[position] = scored[order[j]!]!));
  return out;
}

/** What became of one hit in the rerank (`why.rerank`). */
export type RerankMark = 'compared' | 'no signature' | 'unreadable signature';

/** The outcome of {@link rerankBySignatures}: the new order of the head, or why there is none. */
export interface SignatureRerank {
  /** Indexes into the head, in the new order; null when nothing was reranked. */
  order: number[] | null;
  /** Per head item. */
  marks: RerankMark[];
  /** Why the head was not reranked (or only partly): one line for the caller to show. */
  note?: string;
}

/**
 * The default rerank: the first hits' stored token signatures (src/embed/token-signature.ts)
 * against the query's own pieces, which the query embedding's model run already gave. No model
 * run for the hits; the query's states come from that run (a run of its own when the query vector
 * came from the embedding cache). Hits without a signature (written before signatures, not filled
 * yet) keep recall's place; with `live`, their signatures are computed now instead (one model run
 * each, the opt-in `rerank: true`). A signature that cannot be read (truncated, corrupt) is one
 * warning and that hit keeps its place; nothing stored changes.
 */
export async function rerankBySignatures(deps: Deps, query: string, head: readonly Memory[], live: boolean): Promise<SignatureRerank> {
  const embedder = deps.embedder;
  const marks: RerankMark[] = head.map(() => 'no signature');
  if (!embedder?.tokenStates || !embedder.embedSigned) return { order: null, marks, note: 'needs an onnx: embedder' };
  if (!deps.store.getSignatures) return { order: null, marks, note: `the ${deps.store.name} store keeps no token signatures` };
  const identity: EmbedderIdentity = { model: embedder.model, dimension: embedder.dimension };
  const stored = await deps.store.getSignatures(head.map((m) => m.id), identity);
  const signatures: Array<TokenSignature | null> = head.map((memory, i) => {
    const blob = stored.get(memory.id);
    if (!blob) return null;
    const decoded = decodeSignature(blob, embedder.dimension);
    if (typeof decoded === 'string') {
      marks[i] = 'unreadable signature';
      return null;
    }
    return decoded;
  });
  const unreadable = head.filter((_, i) => marks[i] === 'unreadable signature');
  if (unreadable.length > 0) {
    const first = stored.get(unreadable[0]!.id)!;
    deps.logger.warn(`recall: ${unreadable.length} token signature(s) cannot be read (memory ${unreadable[0]!.id}: ${decodeSignature(first, embedder.dimension) as string}); those hits keep recall's order`);
  }
  try {
    const missing = head.flatMap((memory, i) => (signatures[i] === null && marks[i] === 'no signature' ? [i] : []));
    if (live && missing.length > 0) {
      const runs = await embedder.embedSigned(missing.map((i) => embeddingText(head[i]!)), missing.map((i) => head[i]!.text));
      missing.forEach((i, k) => {
        const decoded = decodeSignature(runs[k]!.signature, embedder.dimension);
        if (typeof decoded !== 'string') signatures[i] = decoded;
      });
    }
    const count = signatures.filter((s) => s !== null).length;
    if (count === 0) return { order: null, marks, note: 'no token signatures for these hits yet (`cairn reindex` writes them)' };
    const [states] = await embedder.tokenStates([query]);
    const tables = queryTables(queryPieces(states!), embedder.dimension);
    const scores = signatures.map((signature, i) => {
      if (!signature) return null;
      marks[i] = 'compared';
      return signatureScore(tables, signature);
    });
    const kept = head.length - count;
    return { order: blendPartial(scores), marks, ...(kept > 0 ? { note: `${kept} of the first ${head.length} hits have no token signature yet and keep recall's order` } : {}) };
  } catch (error) {
    if (!isCairnError(error) || error.code !== 'EMBEDDER_UNAVAILABLE') throw error;
    deps.logger.warn(`recall is not reranked: ${error.message}`);
    return { order: null, marks: head.map(() => 'no signature'), note: `the model is unavailable: ${error.message}` };
  }
}
