/**
 * `recall`: in-process `cairn.recall` latency at each corpus size, BM25 only (no embedder), then
 * hybrid with the default embedder's vectors (./recall-hybrid.ts; not with --quick),
 * without touching (`touch: false`) and on the real path (touch), with the hit rate of the
 * known answers @10 beside it. Two baselines on the same database and terms show what cairn
 * adds on top of SQLite: a bare FTS5 `MATCH` and the store's `searchText` (the filtered join).
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createCairn, openSqliteStore, queryTerms } from 'cairn-memory';
import { CORPUS_NOW } from '../corpus.js';
import { datasetOf, ensureCorpusDb, workingCopy, type KnownAnswerQuery } from '../dataset.js';
import { hybridUnavailable, runHybrid } from './recall-hybrid.js';
import { atMost, metric, sizedSuite, sizeLabel } from '../metrics.js';
import { suiteSpec } from '../spec.js';
import { summarize, timeEach, type LatencySummary } from '../stats.js';
import type { BenchContext, Dataset, Metric, Suite, Target } from '../types.js';

const K = 10;
/** recall's default candidate count per retriever (max(50, 5k)); the baselines fetch as many. */
const CANDIDATES = 50;
const ANCHOR = suiteSpec('recall')?.anchor ?? null;

/** SPEC §9 targets by corpus size. */
function targets(size: number): { p50: Target | null; p95: Target | null } {
  if (size === 100_000) return { p50: atMost(5), p95: atMost(15) };
  if (size === 1_000_000) return { p50: null, p95: atMost(50) };
  return { p50: null, p95: null };
}

/** The FTS5 expression the SQLite store builds: OR of the quoted code-aware query terms. */
function matchExpression(query: string): string | null {
  const terms = queryTerms(query);
  return terms.length === 0 ? null : terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(' OR ');
}

interface ModeResult {
  latency: LatencySummary;
  hitRate: number;
}

async function measure(queries: KnownAnswerQuery[], warmup: KnownAnswerQuery[], search: (q: KnownAnswerQuery) => Promise<boolean>): Promise<ModeResult> {
  for (const q of warmup) await search(q);
  let hits = 0;
  const samples = await timeEach(queries, async (q) => {
    if (await search(q)) hits++;
  });
  return { latency: summarize(samples), hitRate: queries.length > 0 ? hits / queries.length : 0 };
}

async function runSize(ctx: BenchContext, size: number, datasets: Dataset[], metrics: Metric[]): Promise<Record<string, unknown>> {
  const corpus = await ensureCorpusDb(ctx.cacheDir, { seed: ctx.seed, size }, ctx.log);
  datasets.push(datasetOf(corpus));
  const all = corpus.manifest.queries;
  const count = Math.min(ctx.quick ? 50 : 1000, Math.max(1, all.length - 10));
  const queries = all.slice(0, count);
  const warmup = all.slice(count, count + (ctx.quick ? 10 : 50));
  const label = `@${sizeLabel(size)}`;
  ctx.log(`recall ${label}: ${queries.length} known-answer queries`);

  const copy = workingCopy(corpus, join(ctx.cacheDir, 'work'));
  const store = await openSqliteStore(copy.path);
  const raw = new Database(copy.path, { readonly: true });
  try {
    const cairn = createCairn({ store, clock: { now: () => CORPUS_NOW }, actor: 'bench' });
    const rowidOf = raw.prepare('SELECT rowid FROM memories WHERE id = ?').pluck();
    const targetRowid = new Map(all.map((q) => [q.targetId, rowidOf.get(q.targetId) as number]));
    const bare = raw.prepare('SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank LIMIT ?').pluck();
    const hitOf = (ids: readonly unknown[], target: unknown): boolean => ids.slice(0, K).includes(target);

    const fts = await measure(queries, warmup, async (q) => {
      const match = matchExpression(q.text);
      return match !== null && hitOf(bare.all(match, CANDIDATES), targetRowid.get(q.targetId));
    });
    const searchText = await measure(queries, warmup, async (q) => {
      const found = await store.searchText(q.text, { project: q.project, limit: CANDIDATES });
      return hitOf(found.map((f) => f.id), q.targetId);
    });
    const recallWith = (touch: boolean) => async (q: KnownAnswerQuery) => {
      const result = await cairn.recall({ query: q.text, k: K, project: q.project, touch });
      return hitOf(result.hits.map((h) => h.memory.id), q.targetId);
    };
    const noTouch = await measure(queries, warmup, recallWith(false));
    const touch = await measure(queries, warmup, recallWith(true));

    const t = targets(size);
    metrics.push(
      metric(`recall p50 ${label} (bm25, touch)`, touch.latency.p50, 'ms', { target: t.p50, anchor: ANCHOR }),
      metric(`recall p95 ${label} (bm25, touch)`, touch.latency.p95, 'ms', { target: t.p95 }),
      metric(`recall p50 ${label} (bm25, no touch)`, noTouch.latency.p50, 'ms', { target: t.p50 }),
      metric(`recall p95 ${label} (bm25, no touch)`, noTouch.latency.p95, 'ms', { target: t.p95 }),
      metric(`recall hit@${K} ${label} (known answers)`, touch.hitRate, 'share', { note: `${queries.length} queries` }),
      metric(`baseline: bare FTS5 MATCH p50 ${label}`, fts.latency.p50, 'ms', { note: `hit@${K} ${fts.hitRate.toFixed(3)}` }),
      metric(`baseline: store.searchText p50 ${label}`, searchText.latency.p50, 'ms', { note: `hit@${K} ${searchText.hitRate.toFixed(3)}` }),
      metric(`recall p50 / bare FTS5 p50 ${label}`, noTouch.latency.p50 / fts.latency.p50, '×', { note: 'cost cairn adds on top of SQLite' }),
    );
    // With the default embedder's vectors (issue #18: ≤ 15 ms @100K); not in --quick runs, whose
    // CI machine would spend minutes embedding the corpus.
    let hybrid: Record<string, unknown> | { skipped: string };
    const missing = ctx.quick ? 'skipped in --quick runs (building the corpus embeds every memory)' : await hybridUnavailable();
    if (missing) {
      hybrid = { skipped: missing };
      ctx.log(`recall ${label} hybrid: ${missing}`);
    } else hybrid = await runHybrid(ctx, size, { queries: queries.length, warmup: warmup.length }, datasets, metrics);
    return {
      hybrid,
      queries: queries.length,
      warmup: warmup.length,
      byType: countBy(queries.map((q) => q.type)),
      recallTouch: { ...touch.latency, hitRate: touch.hitRate },
      recallNoTouch: { ...noTouch.latency, hitRate: noTouch.hitRate },
      bareFts: { ...fts.latency, hitRate: fts.hitRate },
      storeSearchText: { ...searchText.latency, hitRate: searchText.hitRate },
    };
  } finally {
    raw.close();
    await store.close();
    copy.dispose();
  }
}

function countBy(values: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

export const recallSuite: Suite = sizedSuite(
  'recall',
  'in-process recall latency (BM25 only, with and without touch; then hybrid with MiniLM vectors, whole call and parts) and known-answer hit rate @10, against a bare FTS5 baseline',
  runSize,
);
