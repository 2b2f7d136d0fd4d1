/**
 * The `recall` suite's hybrid half (issue #18: recall p50 @100K with vectors ≤ 15 ms): the whole
 * `cairn.recall` call through cairn's own SQLite store with the default embedder (all-MiniLM-L6-v2)
 * — query embedding in this thread, the vector search over the stored MiniLM vectors (HNSW, or an
 * exact int8 scan of the query's project once the store has read its copies), BM25, fusion and scoring —
 * on a corpus whose every memory carries its MiniLM vector (built once with the reindex worker
 * pool and cached). Beside it, the parts on the same store and queries: the query embedding alone,
 * the vector search alone, and recall without an embedder (BM25 only).
 *
 * The HNSW index is built (and saved beside the working copy) before the timed store opens, so the
 * measured store maps the saved index as a hook or a fresh CLI process does; the open and the
 * first recall (model load included) are reported apart.
 */
import { readdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { createCairn, openSqliteStore, type Embedder } from 'cairn-memory';
import { createEmbedder, DEFAULT_EMBEDDER_SPEC, reindex } from 'cairn-memory/testing';
import { CORPUS_NOW } from '../corpus.js';
import { datasetOf, ensureCorpusDb, workingCopy, type KnownAnswerQuery } from '../dataset.js';
import { atMost, metric, sizeLabel } from '../metrics.js';
import { summarize, timeEach, type LatencySummary } from '../stats.js';
import type { BenchContext, Dataset, Metric } from '../types.js';

const K = 10;
const SPEC = DEFAULT_EMBEDDER_SPEC;

/** Why the hybrid half cannot run here (the default model's files are missing), or null. */
export async function hybridUnavailable(): Promise<string | null> {
  const embedder = await createEmbedder(SPEC);
  try {
    const health = embedder.availability ? await embedder.availability() : { ok: true as const };
    return health.ok ? null : `${SPEC} is not installed: ${health.reason}`;
  } finally {
    await embedder.close?.();
  }
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

export async function runHybrid(
  ctx: BenchContext,
  size: number,
  counts: { queries: number; warmup: number },
  datasets: Dataset[],
  metrics: Metric[],
): Promise<Record<string, unknown>> {
  const label = `@${sizeLabel(size)}`;
  // Building the corpus embeds every memory: the reindex worker pool (src/embed/onnx-pool.ts).
  const pool = await createEmbedder(SPEC, { workers: 2 });
  let corpus;
  let signMs: number | null = null;
  try {
    corpus = await ensureCorpusDb(ctx.cacheDir, { seed: ctx.seed, size, embedder: pool }, ctx.log);
    // The rerank's token signatures (src/embed/token-signature.ts): a corpus cached before them is
    // signed once, in place, as `cairn reindex` signs an existing store (one model run a memory).
    const signer = await openSqliteStore(corpus.path);
    try {
      const waiting = (await signer.countMissingSignatures?.(pool)) ?? 0;
      if (waiting > 0) {
        const started = performance.now();
        const summary = await reindex(signer, pool);
        signMs = performance.now() - started;
        ctx.log(`recall ${label} hybrid: ${summary.signed.toLocaleString('en-US')} memories signed in ${seconds(signMs)} (reindex worker pool)`);
      }
    } finally {
      await signer.close();
    }
  } finally {
    await pool.close?.();
  }
  datasets.push(datasetOf(corpus));
  const all = corpus.manifest.queries;
  const queries = all.slice(0, counts.queries);
  const warmup = all.slice(counts.queries, counts.queries + counts.warmup);
  const copy = workingCopy(corpus, join(ctx.cacheDir, 'work'));
  const embedder: Embedder = await createEmbedder(SPEC);
  try {
    // The HNSW index, built from the table and saved beside the copy (what the background builder does).
    let started = performance.now();
    const builder = await openSqliteStore(copy.path, { vectorIndex: { build: 'inline' } });
    const [probe] = await embedder.embed(['warm up the model'], { purpose: 'query' });
    await builder.searchVector(probe as Float32Array, embedder, { limit: K });
    const buildMs = performance.now() - started;
    await builder.close();
    ctx.log(`recall ${label} hybrid: HNSW over ${corpus.manifest.rows.inserted.toLocaleString('en-US')} MiniLM vectors built and saved in ${seconds(buildMs)}`);

    started = performance.now();
    // As the MCP server and `cairn serve` open it: a hybrid recall's BM25 runs in a worker thread
    // beside the query embedding and vector search (SqliteStore `textSearch: 'worker'`).
    const store = await openSqliteStore(copy.path, { textSearch: 'worker' });
    const openMs = performance.now() - started;
    // The same store searched all in this thread (a one-shot CLI recall).
    const inlineStore = await openSqliteStore(copy.path);
    try {
      const cairn = createCairn({ store, embedder, clock: { now: () => CORPUS_NOW }, actor: 'bench' });
      const bm25 = createCairn({ store, clock: { now: () => CORPUS_NOW }, actor: 'bench' });
      started = performance.now();
      const first = await cairn.recall({ query: queries[0]?.text ?? 'first', k: K, touch: false });
      const firstMs = performance.now() - started;
      if (first.mode !== 'hybrid') throw new Error(`recall ran in ${first.mode} mode, not hybrid: the MiniLM index is not in use`);
      // The store searches exactly below 10K vectors (SqliteVectorIndexOptions.annThreshold), HNSW from there.
      // From the second project-filtered search on, the store also reads int8 copies of the vectors by
      // project and scans the query's project exactly once they are read (src/store/sqlite/vectors.ts).
      const index =
        size >= 10_000
          ? store.capabilities.ann
            ? "HNSW mapped from its saved file; project-filtered searches scan the project's int8 copies once read"
            : 'usearch unavailable: exact'
          : 'exact (below the HNSW threshold of 10K)';
      if (size >= 10_000 && !store.capabilities.ann) ctx.log(`recall ${label} hybrid: usearch unavailable, vector search is exact`);

      // Hit rates count the measured queries only, not the warm-up ones.
      const measured = new Set(queries);
      let hits = 0;
      let hybridRuns = 0;
      const run = (touch: boolean) => async (q: KnownAnswerQuery) => {
        const result = await cairn.recall({ query: q.text, k: K, project: q.project, touch });
        if (result.mode === 'hybrid') hybridRuns++;
        if (touch && measured.has(q) && result.hits.slice(0, K).some((h) => h.memory.id === q.targetId)) hits++;
      };
      const noTouch = summarize(await timeEach(queries, run(false), warmup));
      const inline = createCairn({ store: inlineStore, embedder, clock: { now: () => CORPUS_NOW }, actor: 'bench' });
      const noTouchInline = summarize(await timeEach(queries, async (q) => void (await inline.recall({ query: q.text, k: K, project: q.project, touch: false })), warmup));
      // The default rerank against recall without it, same store and queries, alternating per query
      // (which goes first alternates too), so the machine's drift falls on both.
      const withRerank: number[] = [];
      const withoutRerank: number[] = [];
      let rerankedRuns = 0;
      for (const [i, q] of [...warmup, ...queries].entries()) {
        for (const rerank of i % 2 === 0 ? [true, false] : [false, true]) {
          const t = performance.now();
          const result = await cairn.recall({ query: q.text, k: K, project: q.project, touch: false, ...(rerank ? {} : { rerank: false }) });
          const ms = performance.now() - t;
          if (i < warmup.length) continue;
          (rerank ? withRerank : withoutRerank).push(ms);
          if (rerank && result.reranked === true && !result.rerankNote) rerankedRuns++;
        }
      }
      const rerankOn = summarize(withRerank);
      const rerankOff = summarize(withoutRerank);
      hybridRuns = 0;
      const touch = summarize(await timeEach(queries, run(true), warmup));
      const allHybrid = hybridRuns === queries.length + warmup.length;

      // The parts, same queries and store.
      const vectors = new Map<string, Float32Array>();
      const embedOnly = summarize(
        await timeEach(
          queries,
          async (q) => vectors.set(q.text, (await embedder.embed([q.text], { purpose: 'query' }))[0] as Float32Array),
          warmup,
        ),
      );
      const searchOnly = summarize(
        await timeEach(queries, async (q) => store.searchVector(vectors.get(q.text) as Float32Array, embedder, { project: q.project, limit: 50 })),
      );
      let bm25Hits = 0;
      const bm25Only = summarize(
        await timeEach(
          queries,
          async (q) => {
            const result = await bm25.recall({ query: q.text, k: K, project: q.project, touch: false });
            if (measured.has(q) && result.hits.slice(0, K).some((h) => h.memory.id === q.targetId)) bm25Hits++;
          },
          warmup,
        ),
      );
      const hitRate = queries.length > 0 ? hits / queries.length : 0;
      const note = `${queries.length} queries, ${SPEC} in this thread, BM25 in a worker thread (as the MCP server and cairn serve), vector index: ${index}`;
      metrics.push(
        metric(`recall p50 ${label} (hybrid, MiniLM, touch)`, touch.p50, 'ms', { target: size === 100_000 ? atMost(15) : null, note }),
        metric(`recall p95 ${label} (hybrid, MiniLM, touch)`, touch.p95, 'ms'),
        metric(`recall p50 ${label} (hybrid, MiniLM, no touch)`, noTouch.p50, 'ms', { target: size === 100_000 ? atMost(15) : null }),
        metric(`recall p50 ${label} (hybrid, MiniLM, no touch, all in one thread)`, noTouchInline.p50, 'ms', { note: 'BM25 in the calling thread too, as a one-shot CLI recall' }),
        metric(`recall p50 ${label} (hybrid, MiniLM, no touch, reranked) A/B`, rerankOn.p50, 'ms', { note: `the default: ${rerankedRuns} of ${queries.length} recalls reranked every first hit by its stored token signature; alternating per query with the row below` }),
        metric(`recall p50 ${label} (hybrid, MiniLM, no touch, rerank off) A/B`, rerankOff.p50, 'ms', { note: '`rerank: false`, same queries and store' }),
        ...(signMs !== null ? [metric(`token signatures for ${label} cached memories (reindex pool)`, signMs, 'ms', { note: 'once per cached corpus: one model run a memory, 2 worker threads' })] : []),
        metric(`recall hit@${K} ${label} (hybrid, MiniLM, known answers)`, hitRate, 'share', { note: `BM25 alone on the same store: ${(queries.length > 0 ? bm25Hits / queries.length : 0).toFixed(3)}` }),
        metric(`part: query embedding p50 ${label} (MiniLM)`, embedOnly.p50, 'ms', { note: 'one query a call, in this thread' }),
        metric(`part: vector search p50 ${label} (MiniLM vectors)`, searchOnly.p50, 'ms', { note: `store.searchVector, project filter, 50 candidates; ${index}` }),
        metric(`part: recall p50 ${label} without an embedder (BM25, same store)`, bm25Only.p50, 'ms'),
        metric(`hnsw build + save ${label} (MiniLM vectors)`, buildMs, 'ms', { note: 'once per store, by the detached builder' }),
        metric(`first hybrid recall ${label} in a new store handle`, firstMs, 'ms', { note: `model load + mapped HNSW; the store opened in ${openMs.toFixed(1)} ms` }),
      );
      if (!allHybrid) ctx.log(`recall ${label} hybrid: some recalls fell back to BM25`);
      const out = (l: LatencySummary) => ({ ...l });
      return { spec: SPEC, index, queries: queries.length, allHybrid, signMs, rerankedRuns, rerankOn: out(rerankOn), rerankOff: out(rerankOff), buildMs, openMs, firstMs, touch: out(touch), noTouch: out(noTouch), noTouchInline: out(noTouchInline), hitRate, bm25HitRate: bm25Hits / Math.max(1, queries.length), embedOnly: out(embedOnly), searchOnly: out(searchOnly), bm25Only: out(bm25Only) };
    } finally {
      await inlineStore.close();
      await store.close();
    }
  } finally {
    await embedder.close?.();
    copy.dispose();
    const prefix = `${basename(copy.path)}.vectors.`;
    for (const name of readdirSync(dirname(copy.path))) if (name.startsWith(prefix)) rmSync(join(dirname(copy.path), name), { force: true });
  }
}
