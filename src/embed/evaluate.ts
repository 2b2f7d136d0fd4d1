/**
 * Retrieval quality of an embedder on a BEIR-style set (corpus, queries, graded relevance
 * judgements), by exact cosine search: nDCG@10, recall@10/@100 and MRR@10, computed as BEIR
 * does (linear gains, queries without judgements skipped, a document never retrieved for a query
 * of the same id).
 */
import type { Embedder } from '../types.js';

export interface RetrievalItem {
  id: string;
  text: string;
}

/** Query id → document id → graded relevance (> 0 means relevant). */
export type Qrels = ReadonlyMap<string, ReadonlyMap<string, number>>;

export interface RankingMetrics {
  ndcgAt10: number;
  recallAt10: number;
  recallAt100: number;
  mrrAt10: number;
}

export interface RetrievalEvaluation extends RankingMetrics {
  /** Queries evaluated (those with at least one relevant document). */
  queries: number;
  documents: number;
  /** Wall time spent embedding the corpus and the queries. */
  corpusEmbedMs: number;
  queryEmbedMs: number;
}

export interface EvaluateRetrievalOptions {
  /**
   * Texts per `embed` call.
   * @default 64
   */
  batchSize?: number;
  /**
   * Drop a retrieved document whose id equals the query id (BEIR's default).
   * @default true
   */
  ignoreIdenticalIds?: boolean;
  /** Called after every batch with texts embedded so far and the total. */
  onProgress?(done: number, total: number): void;
}

/** The metrics of one ranked list of document ids against its judgements. */
export function rankingMetrics(ranked: readonly string[], relevance: ReadonlyMap<string, number>): RankingMetrics {
  const relevant = [...relevance.values()].filter((grade) => grade > 0);
  if (relevant.length === 0) return { ndcgAt10: 0, recallAt10: 0, recallAt100: 0, mrrAt10: 0 };
  let dcg = 0;
  let mrr = 0;
  let found10 = 0;
  let found100 = 0;
  ranked.slice(0, 100).forEach((id, rank) => {
    const grade = relevance.get(id) ?? 0;
    if (grade <= 0) return;
    if (rank < 10) {
      dcg += grade / Math.log2(rank + 2);
      found10++;
      if (mrr === 0) mrr = 1 / (rank + 1);
    }
    found100++;
  });
  const ideal = relevant.sort((a, b) => b - a).slice(0, 10).reduce((sum, grade, rank) => sum + grade / Math.log2(rank + 2), 0);
  return { ndcgAt10: dcg / ideal, recallAt10: found10 / relevant.length, recallAt100: found100 / relevant.length, mrrAt10: mrr };
}

async function embedAll(embedder: Embedder, texts: string[], batchSize: number, progress: (n: number) => void): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let start = 0; start < texts.length; start += batchSize) {
    out.push(...(await embedder.embed(texts.slice(start, start + batchSize))));
    progress(Math.min(texts.length, start + batchSize));
  }
  return out;
}

/**
 * Embed `corpus` and the judged `queries` with `embedder`, rank the corpus for each query by
 * cosine similarity (exact search) and average the metrics over the queries.
 *
 * @example
 * const report = await evaluateRetrieval(embedder, corpus, queries, qrels);
 * console.log(report.ndcgAt10.toFixed(3));
 */
export async function evaluateRetrieval(
  embedder: Embedder,
  corpus: readonly RetrievalItem[],
  queries: readonly RetrievalItem[],
  qrels: Qrels,
  options: EvaluateRetrievalOptions = {},
): Promise<RetrievalEvaluation> {
  const batchSize = options.batchSize ?? 64;
  const ignoreIdentical = options.ignoreIdenticalIds ?? true;
  const judged = queries.filter((query) => [...(qrels.get(query.id)?.values() ?? [])].some((grade) => grade > 0));
  const total = corpus.length + judged.length;

  let started = performance.now();
  const docVectors = await embedAll(embedder, corpus.map((doc) => doc.text), batchSize, (n) => options.onProgress?.(n, total));
  const corpusEmbedMs = performance.now() - started;
  started = performance.now();
  const queryVectors = await embedAll(embedder, judged.map((query) => query.text), batchSize, (n) => options.onProgress?.(corpus.length + n, total));
  const queryEmbedMs = performance.now() - started;

  const dimension = docVectors[0]?.length ?? 0;
  const matrix = new Float32Array(corpus.length * dimension);
  docVectors.forEach((vector, i) => matrix.set(vector, i * dimension));
  const scores = new Float64Array(corpus.length);
  const order = corpus.map((_, i) => i);
  const sums: RankingMetrics = { ndcgAt10: 0, recallAt10: 0, recallAt100: 0, mrrAt10: 0 };

  judged.forEach((query, q) => {
    const vector = queryVectors[q]!;
    for (let doc = 0; doc < corpus.length; doc++) {
      let score = 0;
      const offset = doc * dimension;
      for (let d = 0; d < dimension; d++) score += vector[d]! * matrix[offset + d]!;
      scores[doc] = score;
    }
    // Ties broken by document id, so results do not depend on corpus order.
    order.sort((a, b) => scores[b]! - scores[a]! || (corpus[a]!.id < corpus[b]!.id ? 1 : -1));
    const ranked: string[] = [];
    for (const index of order) {
      const id = corpus[index]!.id;
      if (ignoreIdentical && id === query.id) continue;
      ranked.push(id);
      if (ranked.length === 100) break;
    }
    const metrics = rankingMetrics(ranked, qrels.get(query.id)!);
    for (const key of Object.keys(sums) as Array<keyof RankingMetrics>) sums[key] += metrics[key];
  });

  const n = Math.max(1, judged.length);
  return {
    ndcgAt10: sums.ndcgAt10 / n,
    recallAt10: sums.recallAt10 / n,
    recallAt100: sums.recallAt100 / n,
    mrrAt10: sums.mrrAt10 / n,
    queries: judged.length,
    documents: corpus.length,
    corpusEmbedMs,
    queryEmbedMs,
  };
}
