/**
 * `write`: remember latency with no LLM on a store already holding a corpus, without an
 * embedder, with the hash embedder and (full runs, stores below the HNSW threshold, model
 * installed) with the default MiniLM — the "plus embedding" part: each embedded row also gives
 * remember minus the time its own embed calls took, per call, and embedding alone timed next to
 * it. In-process, per call, warmup excluded. SPEC §9 target: p50 ≤ 2 ms plus embedding.
 */
import { join } from 'node:path';
import { type Embedder, type RememberInput, createCairn, openSqliteStore } from 'cairn-memory';
import { createEmbedder, createHashEmbedder, DEFAULT_EMBEDDER_SPEC } from 'cairn-memory/testing';
import { CORPUS_NOW, generateCorpus } from '../corpus.js';
import { datasetOf, ensureCorpusDb, workingCopy } from '../dataset.js';
import { atMost, metric, sizedSuite, sizeLabel } from '../metrics.js';
import { suiteSpec } from '../spec.js';
import { summarize, timeEach, type LatencySummary } from '../stats.js';
import type { BenchContext, Dataset, Metric, Suite } from '../types.js';
import { hybridUnavailable } from './recall-hybrid.js';

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

/** `embedder` with the time its `embed` and `embedSigned` calls take added to `spent.ms` (every other member is the embedder's own). */
function timedEmbedder(embedder: Embedder, spent: { ms: number }): Embedder {
  const timed = Object.create(embedder) as Embedder;
  timed.embed = async (texts, options) => {
    const start = process.hrtime.bigint();
    try {
      return await embedder.embed(texts, options);
    } finally {
      spent.ms += Number(process.hrtime.bigint() - start) / 1e6;
    }
  };
  // remember embeds through embedSigned when the model gives token signatures (one run, both).
  if (embedder.embedSigned) {
    timed.embedSigned = async (texts, signed) => {
      const start = process.hrtime.bigint();
      try {
        return await embedder.embedSigned!(texts, signed);
      } finally {
        spent.ms += Number(process.hrtime.bigint() - start) / 1e6;
      }
    };
  }
  return timed;
}

interface RememberTiming {
  latency: LatencySummary;
  /** Each call's time less what its own embed calls took. */
  withoutEmbedding: LatencySummary;
  created: number;
}

async function timeRemember(path: string, embedder: Embedder | null, inputs: RememberInput[], warmup: number): Promise<RememberTiming> {
  // The HNSW index of a copy with vectors is built in this process during the warm-up, not by a
  // detached builder that would compete for the CPU while the writes are timed.
  const store = await openSqliteStore(path, { vectorIndex: { build: 'inline' } });
  const spent = { ms: 0 };
  const cairn = createCairn({ store, embedder: embedder && timedEmbedder(embedder, spent), clock: { now: () => CORPUS_NOW }, actor: 'bench' });
  let created = 0;
  const embedding: number[] = [];
  try {
    const samples = await timeEach(
      inputs.slice(warmup),
      async (input) => {
        spent.ms = 0;
        if ((await cairn.remember(input)).created) created++;
        embedding.push(spent.ms);
      },
      inputs.slice(0, warmup),
    );
    // The warm-up calls pushed too; the timed calls are the last samples.length entries.
    const own = embedding.slice(-samples.length);
    return { latency: summarize(samples), withoutEmbedding: summarize(samples.map((ms, i) => ms - (own[i] ?? 0))), created };
  } finally {
    await store.close();
  }
}

/** Remember through `embedder` on a copy of the corpus embedded with it, and embedding alone on the same inputs. */
async function timeEmbedded(
  ctx: BenchContext,
  size: number,
  embedder: Embedder,
  corpusEmbedder: Embedder,
  inputs: RememberInput[],
  warmup: number,
  datasets: Dataset[],
): Promise<{ timing: RememberTiming; embedAlone: LatencySummary }> {
  const corpus = await ensureCorpusDb(ctx.cacheDir, { seed: ctx.seed, size, embedder: corpusEmbedder }, ctx.log);
  datasets.push(datasetOf(corpus));
  const embedAlone = summarize(await timeEach(inputs.slice(warmup), (input) => embedder.embed([input.text]), inputs.slice(0, warmup)));
  ctx.log(`write @${sizeLabel(size)}: ${inputs.length - warmup} remember calls, ${embedder.model}`);
  const copy = workingCopy(corpus, join(ctx.cacheDir, 'work'));
  try {
    return { timing: await timeRemember(copy.path, embedder, inputs, warmup), embedAlone };
  } finally {
    copy.dispose();
  }
}

/** Below this many vectors the store searches them exactly; above, a MiniLM row would first build an HNSW index of the whole corpus. */
const MINILM_MAX_SIZE = 20_000;

/** Why the MiniLM row is not run at `size`, or null. */
async function miniLmSkipped(ctx: BenchContext, size: number): Promise<string | null> {
  if (ctx.quick) return 'quick run';
  if (size >= MINILM_MAX_SIZE) return `${size} vectors need an HNSW build of the whole corpus per run (bench recall times MiniLM at this size)`;
  return hybridUnavailable();
}

function embeddedMetrics(label: string, model: string, timing: RememberTiming, embedAlone: LatencySummary, note: string): Metric[] {
  return [
    metric(`embedding alone p50 ${label} (${model})`, embedAlone.p50, 'ms'),
    metric(`remember p50 ${label} (${model})`, timing.latency.p50, 'ms', {
      target: atMost(TARGET_P50_MS + embedAlone.p50),
      anchor: ANCHOR,
      note: `target = ${TARGET_P50_MS} ms + embedding p50${note}`,
    }),
    metric(`remember p95 ${label} (${model})`, timing.latency.p95, 'ms'),
    metric(`remember minus its embedding p50 ${label} (${model})`, timing.withoutEmbedding.p50, 'ms', {
      target: atMost(TARGET_P50_MS),
      note: "per call: the call's time less its own embed calls",
    }),
  ];
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
  let bm25: RememberTiming;
  try {
    bm25 = await timeRemember(copy.path, null, inputs, warmup);
  } finally {
    copy.dispose();
  }
  metrics.push(
    metric(`remember p50 ${label} (no embedder)`, bm25.latency.p50, 'ms', { target: atMost(TARGET_P50_MS), anchor: ANCHOR }),
    metric(`remember p95 ${label} (no embedder)`, bm25.latency.p95, 'ms'),
    metric(`remember p99 ${label} (no embedder)`, bm25.latency.p99, 'ms'),
  );

  const hash = createHashEmbedder();
  const hashed = await timeEmbedded(ctx, size, hash, hash, inputs, warmup, datasets);
  metrics.push(...embeddedMetrics(label, hash.model, hashed.timing, hashed.embedAlone, ''));
  const out: Record<string, unknown> = {
    calls,
    warmup,
    noEmbedder: { ...bm25.latency, created: bm25.created },
    embedder: { model: hash.model, ...hashed.timing.latency, created: hashed.timing.created, withoutEmbedding: hashed.timing.withoutEmbedding },
    embeddingAlone: hashed.embedAlone,
  };

  const skipped = await miniLmSkipped(ctx, size);
  if (skipped !== null) {
    ctx.log(`write ${label}: no ${DEFAULT_EMBEDDER_SPEC} row (${skipped})`);
    return { ...out, minilm: { skipped } };
  }
  // The corpus is embedded once by the worker pool; the timed remembers embed in this thread, as the CLI and MCP server do.
  const pool = await createEmbedder(DEFAULT_EMBEDDER_SPEC, { workers: 2 });
  const minilm = await createEmbedder(DEFAULT_EMBEDDER_SPEC);
  try {
    const embedded = await timeEmbedded(ctx, size, minilm, pool, inputs, warmup, datasets);
    metrics.push(...embeddedMetrics(label, 'MiniLM', embedded.timing, embedded.embedAlone, '; the model runs in this thread'));
    return { ...out, minilm: { model: minilm.model, ...embedded.timing.latency, created: embedded.timing.created, withoutEmbedding: embedded.timing.withoutEmbedding, embeddingAlone: embedded.embedAlone } };
  } finally {
    await pool.close?.();
    await minilm.close?.();
  }
}

export const writeSuite: Suite = sizedSuite(
  'write',
  'remember latency, no LLM: without an embedder, with the hash embedder and with MiniLM (full runs below 20K), each embedded row also less its own embedding, on a store pre-filled with the synthetic corpus',
  runSize,
);
