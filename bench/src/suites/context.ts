/**
 * `context`: in-process build time of the injectable context on a corpus, with a query (the
 * known-answer queries) and without (session start). Cold = the first build after opening the
 * store; warm = the rest. SPEC §9 target: p50 ≤ 10 ms at 100K (anchor: weighted-compact 47 ms
 * cold / 23 ms warm).
 */
import { join } from 'node:path';
import { createCairn, openSqliteStore } from 'cairn-memory';
import { CORPUS_NOW } from '../corpus.js';
import { datasetOf, ensureCorpusDb, workingCopy } from '../dataset.js';
import { atMost, metric, sizeLabel } from '../metrics.js';
import { summarize } from '../stats.js';
import type { BenchContext, Dataset, Metric, Suite, SuiteOutcome } from '../types.js';

const TARGET_P50_MS = 10;
const ANCHOR = 'weighted-compact: 47 ms cold / 23 ms warm';

async function runSize(ctx: BenchContext, size: number, datasets: Dataset[], metrics: Metric[]): Promise<Record<string, unknown>> {
  const corpus = await ensureCorpusDb(ctx.cacheDir, { seed: ctx.seed, size }, ctx.log);
  datasets.push(datasetOf(corpus));
  const copy = workingCopy(corpus, join(ctx.cacheDir, 'work'));
  const label = `@${sizeLabel(size)}`;
  const queries = corpus.manifest.queries.slice(0, ctx.quick ? 30 : 200);
  const project = queries[0]?.project ?? null;
  const store = await openSqliteStore(copy.path);
  try {
    const cairn = createCairn({ store, clock: { now: () => CORPUS_NOW }, project, actor: 'bench' });
    const t0 = process.hrtime.bigint();
    await cairn.context({ budget: 2000 });
    const coldMs = Number(process.hrtime.bigint() - t0) / 1e6;
    const noQuery: number[] = [];
    const withQuery: number[] = [];
    let tokens = 0;
    for (const query of queries) {
      const cq = createCairn({ store, clock: { now: () => CORPUS_NOW }, project: query.project, actor: 'bench' });
      let start = process.hrtime.bigint();
      const result = await cq.context({ query: query.text, budget: 2000 });
      withQuery.push(Number(process.hrtime.bigint() - start) / 1e6);
      tokens += result.tokens;
      start = process.hrtime.bigint();
      await cq.context({ budget: 2000 });
      noQuery.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    const q = summarize(withQuery);
    const nq = summarize(noQuery);
    ctx.log(`context ${label}: query p50 ${q.p50.toFixed(2)} ms, no query p50 ${nq.p50.toFixed(2)} ms, cold ${coldMs.toFixed(1)} ms`);
    metrics.push(
      metric(`context p50 ${label} (query)`, q.p50, 'ms', { target: size >= 100_000 ? atMost(TARGET_P50_MS) : null, anchor: ANCHOR }),
      metric(`context p95 ${label} (query)`, q.p95, 'ms'),
      metric(`context p50 ${label} (session start, no query)`, nq.p50, 'ms', { target: size >= 100_000 ? atMost(TARGET_P50_MS) : null }),
      metric(`context cold ${label}`, coldMs, 'ms', { note: 'first build after opening the store' }),
    );
    return { size, withQuery: q, noQuery: nq, coldMs, meanTokens: tokens / Math.max(1, queries.length) };
  } finally {
    await store.close();
    copy.dispose();
  }
}

export const contextSuite: Suite = {
  name: 'context',
  description: 'context build latency in process (2,000-token budget), with and without a query',
  async run(ctx: BenchContext): Promise<SuiteOutcome> {
    const datasets: Dataset[] = [];
    const metrics: Metric[] = [];
    const perSize: Record<string, unknown>[] = [];
    for (const size of ctx.sizes) perSize.push(await runSize(ctx, size, datasets, metrics));
    return { status: 'ok', datasets, metrics, details: { perSize } };
  },
};
