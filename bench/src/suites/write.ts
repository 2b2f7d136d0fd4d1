/**
 * `write`: remember latency with no LLM on a store already holding a corpus, without an
 * embedder and with the hash embedder (the "plus embedding" part, with embedding alone timed
 * next to it). In-process, per call, warmup excluded. SPEC §9 target: p50 ≤ 2 ms plus embedding.
 */
import { join } from 'node:path';
import { type Embedder, type RememberInput, createCairn, openSqliteStore } from 'cairn-memory';
import { createHashEmbedder } from 'cairn-memory/testing';
import { CORPUS_NOW, generateCorpus } from '../corpus.js';
import { datasetOf, ensureCorpusDb, workingCopy } from '../dataset.js';
import { atMost, metric, sizedSuite, sizeLabel } from '../metrics.js';
import { suiteSpec } from '../spec.js';
import { summarize, timeEach, type LatencySummary } from '../stats.js';
import type { BenchContext, Dataset, Metric, Suite } from '../types.js';

const TARGET_P50_MS = 2;
const ANCHOR = suiteSpec('write')?.anchor ?? null;

/** New memories to write: same generator, another seed, so none repeats the corpus. */
function workload(seed: number, count: number): RememberInput[] {
  const out: RememberInput[] = [];
  for (const m of generateCorpus({ seed: seed + 1_000_003, size: count, queries: 0 })) {
    out.push({ text: m.text, kind: m.kind, scope: m.scope, project: m.project, session: m.session, tags: m.tags, source: m.source });
  }
  return out;
}

async function timeRemember(path: string, embedder: Embedder | null, inputs: RememberInput[], warmup: number): Promise<{ latency: LatencySummary; created: number }> {
  // The HNSW index of a copy with vectors is built in this process during the warm-up, not by a
  // detached builder that would compete for the CPU while the writes are timed.
  const store = await openSqliteStore(path, { vectorIndex: { build: 'inline' } });
  const cairn = createCairn({ store, embedder, clock: { now: () => CORPUS_NOW }, actor: 'bench' });
  let created = 0;
  try {
    const samples = await timeEach(
      inputs.slice(warmup),
      async (input) => {
        if ((await cairn.remember(input)).created) created++;
      },
      inputs.slice(0, warmup),
    );
    return { latency: summarize(samples), created };
  } finally {
    await store.close();
  }
}

async function runSize(ctx: BenchContext, size: number, datasets: Dataset[], metrics: Metric[]): Promise<Record<string, unknown>> {
  // remember's near-duplicate search grows with the corpus (~170 ms a call at 100K when this was
  // written), so the full run stays at 500 calls: enough for a stable p99, minutes not hours.
  const calls = ctx.quick ? 100 : 500;
  const warmup = ctx.quick ? 10 : 50;
  const label = `@${sizeLabel(size)}`;
  const workDir = join(ctx.cacheDir, 'work');
  const inputs = workload(ctx.seed, calls + warmup);

  const plain = await ensureCorpusDb(ctx.cacheDir, { seed: ctx.seed, size }, ctx.log);
  datasets.push(datasetOf(plain));
  ctx.log(`write ${label}: ${calls} remember calls, no embedder`);
  const copy = workingCopy(plain, workDir);
  let bm25: Awaited<ReturnType<typeof timeRemember>>;
  try {
    bm25 = await timeRemember(copy.path, null, inputs, warmup);
  } finally {
    copy.dispose();
  }

  const embedder = createHashEmbedder();
  const embedded = await ensureCorpusDb(ctx.cacheDir, { seed: ctx.seed, size, embedder }, ctx.log);
  datasets.push(datasetOf(embedded));
  const embedAlone = summarize(await timeEach(inputs.slice(warmup), (input) => embedder.embed([input.text]), inputs.slice(0, warmup)));
  ctx.log(`write ${label}: ${calls} remember calls, ${embedder.model}`);
  const copy2 = workingCopy(embedded, workDir);
  let hybrid: Awaited<ReturnType<typeof timeRemember>>;
  try {
    hybrid = await timeRemember(copy2.path, embedder, inputs, warmup);
  } finally {
    copy2.dispose();
  }

  const budget = TARGET_P50_MS + embedAlone.p50;
  metrics.push(
    metric(`remember p50 ${label} (no embedder)`, bm25.latency.p50, 'ms', { target: atMost(TARGET_P50_MS), anchor: ANCHOR }),
    metric(`remember p95 ${label} (no embedder)`, bm25.latency.p95, 'ms'),
    metric(`remember p99 ${label} (no embedder)`, bm25.latency.p99, 'ms'),
    metric(`embedding alone p50 ${label} (${embedder.model})`, embedAlone.p50, 'ms'),
    metric(`remember p50 ${label} (${embedder.model})`, hybrid.latency.p50, 'ms', {
      target: atMost(budget),
      anchor: ANCHOR,
      note: `target = ${TARGET_P50_MS} ms + embedding p50`,
    }),
    metric(`remember p95 ${label} (${embedder.model})`, hybrid.latency.p95, 'ms'),
  );
  return {
    calls,
    warmup,
    noEmbedder: { ...bm25.latency, created: bm25.created },
    embedder: { model: embedder.model, ...hybrid.latency, created: hybrid.created },
    embeddingAlone: embedAlone,
  };
}

export const writeSuite: Suite = sizedSuite('write', 'remember latency, no LLM: without an embedder and with the hash embedder, on a store pre-filled with the synthetic corpus', runSize);
