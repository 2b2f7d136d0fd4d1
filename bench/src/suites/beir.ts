/**
 * `beir`: retrieval quality of cairn's own store and recall on BEIR-format sets (SciFact, CoSQA
 * from `<data>/beir/`). Each corpus goes into a fresh cairn SQLite store through cairn's write
 * path (title + text as the memory text, the document id in `meta.docId`); every judged test
 * query is then answered in each mode, k = 100, without touching:
 *
 * - `bm25`: `cairn.recall` with no embedder (FTS5 BM25 + composite score);
 * - `vector (<model>)`: the store's vector search alone (exact cosine, no floor);
 * - `hybrid (<model>)`: `cairn.recall` with the embedder (BM25 + vectors, RRF, composite score).
 *
 * Metrics are BEIR's (nDCG@10, recall@100, MRR@10; a document whose id equals the query id is
 * never counted), on all judged queries and on each half of them (tuning / report: sha256 of
 * `<set>:<query id>`, halves.ts). Fusion weights may be tuned on the tuning half only
 * (`$CAIRN_BENCH_FUSION` measures a grid beside recall's defaults); both halves are reported.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type RankingMetrics, cachedEmbedder, createEmbedder, loadStaticEmbedder, prepareMemory, rankingMetrics, reindex } from 'cairn-memory/testing';
import { type Cairn, type Embedder, type MemoryEvent, type Provenance, type Store, createCairn, openSqliteStore } from 'cairn-memory';
import { atLeast, metric } from '../metrics.js';
import type { BenchContext, Dataset, Metric, Suite, SuiteOutcome } from '../types.js';
import { assignHalves, type Half } from './halves.js';

/** A fixed clock: every memory has the same age, so recency never reorders hits. */
export const BENCH_NOW = Date.UTC(2025, 0, 1);
const K = 100;
const HASH_SPEC = 'hash:1024';
const QUICK_QUERIES = 30;
const QUICK_EXTRA_DOCS = 500;

/* ------------------------------------------------------------------ shared helpers */

export interface BenchStore {
  store: Store;
  dir: string;
  dispose(): Promise<void>;
}

/** A fresh SQLite store in a throwaway folder under the bench cache. */
export async function freshStore(cacheDir: string, prefix: string): Promise<BenchStore> {
  const parent = join(cacheDir, 'work');
  mkdirSync(parent, { recursive: true });
  const dir = mkdtempSync(join(parent, `${prefix}-`));
  const store = await openSqliteStore(join(dir, 'cairn.db'));
  return {
    store,
    dir,
    async dispose() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function benchCairn(store: Store, embedder: Embedder | null, fusion?: BenchFusion): Cairn {
  return createCairn({ store, embedder, clock: { now: () => BENCH_NOW }, actor: 'bench', ...(fusion ? { fusion } : {}) });
}

/** Hybrid fusion weights to try: vector weight in the rank fusion and the cosine's share in the signal. */
export interface BenchFusion {
  vectorRankWeight: number;
  vectorSignalShare: number;
  /** The k of reciprocal rank fusion (recall's default when absent). */
  rrfK?: number;
  /** Vector pseudo-relevance feedback share (`FusionWeights.feedback`; off when absent). */
  feedback?: number;
  /** BM25 part over the candidates' range (`FusionWeights.bm25Range`); a grid point sets it always, false unless its fifth field is 1. */
  bm25Range?: boolean;
}

/** The mode label of a grid point: `rank <w> share <s>[ k <k>][ feedback <f>][ range]`. */
export function fusionLabel(fusion: BenchFusion): string {
  return `rank ${fusion.vectorRankWeight} share ${fusion.vectorSignalShare}${fusion.rrfK !== undefined ? ` k ${fusion.rrfK}` : ''}${fusion.feedback !== undefined ? ` feedback ${fusion.feedback}` : ''}${fusion.bm25Range ? ' range' : ''}`;
}

/**
 * `$CAIRN_BENCH_FUSION`: fusion weights to measure besides the defaults, as `rank:share` pairs,
 * `rank:share:k` triples (k of the rank fusion), `rank:share:k:feedback` (vector pseudo-relevance
 * feedback share) or `rank:share:k:feedback:range` (range 1: the BM25 part min–max normalised over
 * the candidates, `FusionWeights.bm25Range`; 0 or absent: relative to the best, as before it
 * existed), comma-separated (e.g. `0.5:0.5,1:1,1:1:20,2:2:10:0.5,2.5:1.5:8:0:1`).
 * Tune on the tuning half only; both halves are reported.
 */
export function benchFusionGrid(): BenchFusion[] {
  return (process.env.CAIRN_BENCH_FUSION ?? '')
    .split(',')
    .map((pair) => pair.trim())
    .filter(Boolean)
    .map((pair) => {
      const [rank, share, k, feedback, range, ...rest] = pair.split(':').map(Number);
      const badFeedback = feedback !== undefined && !(Number.isFinite(feedback) && feedback >= 0);
      const badRange = range !== undefined && range !== 0 && range !== 1;
      if (!Number.isFinite(rank) || !Number.isFinite(share) || (k !== undefined && !(Number.isFinite(k) && k > 0)) || badFeedback || badRange || rest.length > 0) {
        throw new Error(`$CAIRN_BENCH_FUSION: "${pair}" is not rank:share, rank:share:k, rank:share:k:feedback or rank:share:k:feedback:range`);
      }
      return {
        vectorRankWeight: rank!,
        vectorSignalShare: share!,
        ...(k !== undefined ? { rrfK: k } : {}),
        ...(feedback !== undefined ? { feedback } : {}),
        bm25Range: range === 1,
      };
    });
}

export interface BulkItem {
  key: string;
  text: string;
  project: string;
  meta: Record<string, unknown>;
  /** Where the item came from (LoCoMo: its conversation session and turn, for conversation neighbours). */
  provenance?: Provenance;
  /** The words the item answers (`Memory.context`; LoCoMo: the turn before, as `cairn import` gives it). */
  context?: string | null;
}

/**
 * Store items through cairn's write path (validate, redact, content hash, one transaction per
 * memory with its create event), without embedding. Identical texts in one project become one
 * memory: the result maps each memory id to every key it stands for.
 */
export async function bulkRemember(
  cairn: Cairn,
  items: Iterable<BulkItem>,
): Promise<{ keysOf: Map<string, string[]>; written: number; merged: number; rejected: number; rejectedBy: Record<string, number> }> {
  const keysOf = new Map<string, string[]>();
  let written = 0;
  let merged = 0;
  let rejected = 0;
  const rejectedBy: Record<string, number> = {};
  for (const item of items) {
    let prepared;
    try {
      prepared = prepareMemory(cairn.deps, { text: item.text, kind: 'fact', project: item.project, source: 'import', meta: item.meta, ...(item.provenance ? { provenance: item.provenance } : {}), ...(item.context ? { context: item.context } : {}) });
    } catch (error) {
      // What cairn refuses to store (e.g. TEXT_TOO_LONG) is counted: it stays a miss in the metrics.
      const code = (error as { code?: string }).code ?? 'ERROR';
      rejectedBy[code] = (rejectedBy[code] ?? 0) + 1;
      rejected++;
      continue;
    }
    const { memory } = prepared;
    const events: MemoryEvent[] = [{ memoryId: memory.id, type: 'create', at: memory.createdAt, actor: 'bench', data: { source: 'import', kind: memory.kind } }];
    const result = await cairn.deps.store.writeMemory({ memory, events });
    if (result.inserted) written++;
    else merged++;
    const keys = keysOf.get(result.memory.id);
    if (keys) keys.push(item.key);
    else keysOf.set(result.memory.id, [item.key]);
  }
  return { keysOf, written, merged, rejected, rejectedBy };
}

/** The static model to measure: `$CAIRN_BENCH_STATIC`, else `<home>/models/potion-base-8M` when present. */
export function staticModelFolder(ctx: BenchContext): string | null {
  const fromEnv = process.env.CAIRN_BENCH_STATIC;
  if (fromEnv) return fromEnv;
  const inHome = join(dirname(ctx.cacheDir), 'models', 'potion-base-8M');
  return existsSync(join(inHome, 'model.safetensors')) ? inHome : null;
}

/**
 * Embedder specs the quality suites measure by default: the hash embedder, and unless `--quick`
 * cairn's default embedder, all-MiniLM-L6-v2 (skipped with a note when its files are not installed).
 */
export function defaultEmbedderSpecs(quick: boolean): string[] {
  return quick ? [HASH_SPEC] : [HASH_SPEC, 'onnx:all-minilm-l6-v2-q'];
}

let embedCache: Promise<Store> | null = null;

/**
 * Build the embedder of `spec` with the embedding cache in front of it, persisted in
 * `<cacheDir>/embed-cache.db`: a slow embedder (USE-lite: ~0.2 s an abstract) pays for each text
 * once, and later runs of the suites read the vectors back.
 */
export async function benchEmbedder(cacheDir: string, spec: string): Promise<Embedder> {
  const embedder = await createEmbedder(spec);
  embedCache ??= (async () => {
    mkdirSync(cacheDir, { recursive: true });
    return openSqliteStore(join(cacheDir, 'embed-cache.db'));
  })();
  return cachedEmbedder(embedder, spec, await embedCache);
}

/** `$CAIRN_BENCH_EMBEDDERS`: embedder specs the quality suites measure instead of their defaults. */
export function benchEmbedderSpecs(): string[] {
  return (process.env.CAIRN_BENCH_EMBEDDERS ?? '')
    .split(',')
    .map((spec) => spec.trim())
    .filter(Boolean);
}

/**
 * Where an on-disk dataset came from: the `Source:` line of the PROVENANCE.md in `dir` (repository,
 * commit, file), or undefined when there is none.
 */
export function dataSource(dir: string): string | undefined {
  const file = join(dir, 'PROVENANCE.md');
  if (!existsSync(file)) return undefined;
  // The line up to its first sentence end (LoCoMo's goes on with the licence).
  const line = /^Source:\s*(.+)$/m.exec(readFileSync(file, 'utf8'))?.[1]?.split(/\.\s/)[0]?.trim();
  return line ? `source: ${line}` : undefined;
}

export function sha256Files(paths: string[]): string {
  const hash = createHash('sha256');
  for (const path of paths) hash.update(readFileSync(path));
  return hash.digest('hex');
}

/* ------------------------------------------------------------------ BEIR loading */

export interface BeirDoc {
  id: string;
  text: string;
}

export interface BeirSet {
  name: string;
  corpus: BeirDoc[];
  /** Judged test queries only, in file order. */
  queries: BeirDoc[];
  qrels: Map<string, Map<string, number>>;
  files: string[];
  /**
   * Each judged query's half, over the full set's queries (sha256 of `<set>:<query id>`, see
   * halves.ts), so a query keeps its half in `--quick` subsets too. Tune on `tuning` only.
   */
  halves: Map<string, Half>;
}

function readJsonl(path: string): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // a malformed line is passed over
    }
  }
  return out;
}

/** Read a BEIR folder: corpus.jsonl, queries.jsonl or queries_test.jsonl, qrels/test.tsv. Null when absent. */
export function loadBeir(dir: string, name: string): BeirSet | null {
  const corpusPath = join(dir, 'corpus.jsonl');
  const qrelsPath = join(dir, 'qrels', 'test.tsv');
  const queriesPath = [join(dir, 'queries_test.jsonl'), join(dir, 'queries.jsonl')].find((p) => existsSync(p));
  if (!existsSync(corpusPath) || !existsSync(qrelsPath) || !queriesPath) return null;
  const qrels = new Map<string, Map<string, number>>();
  for (const line of readFileSync(qrelsPath, 'utf8').split('\n')) {
    const [query, doc, score] = line.trim().split('\t');
    if (!query || !doc || score === undefined || query === 'query-id') continue;
    const grade = Number(score);
    if (!Number.isFinite(grade)) continue;
    let judged = qrels.get(query);
    if (!judged) qrels.set(query, (judged = new Map()));
    judged.set(doc, grade);
  }
  const corpus = readJsonl(corpusPath).map((d) => ({
    id: String(d._id),
    text: [d.title, d.text].filter((s) => typeof s === 'string' && s.trim() !== '').join('\n'),
  }));
  const queries = readJsonl(queriesPath)
    .map((q) => ({ id: String(q._id), text: String(q.text ?? '') }))
    .filter((q) => q.text.trim() !== '' && [...(qrels.get(q.id)?.values() ?? [])].some((g) => g > 0));
  return { name, corpus, queries, qrels, files: [corpusPath, queriesPath, qrelsPath], halves: assignHalves(queries.map((q) => q.id), name) };
}

/** `--quick`: the first queries, the documents they judge and a fixed slice of the others. */
export function quickSubset(set: BeirSet, queries = QUICK_QUERIES, extra = QUICK_EXTRA_DOCS): BeirSet {
  const kept = set.queries.slice(0, queries);
  const needed = new Set(kept.flatMap((q) => [...(set.qrels.get(q.id)?.keys() ?? [])]));
  let others = 0;
  const corpus = set.corpus.filter((d) => needed.has(d.id) || (others < extra && ++others > 0));
  return { ...set, corpus, queries: kept };
}

/* ------------------------------------------------------------------ evaluation */

type Ranker = (query: BeirDoc) => Promise<string[]>;

interface SplitMetrics extends RankingMetrics {
  queries: number;
}

interface ModeResult extends SplitMetrics {
  queryMs: number;
  /** The same metrics on each half of the queries (`assignHalves` over query ids): tune on `tuning` only. */
  splits: Record<Half, SplitMetrics>;
}

function averaged(sums: RankingMetrics, queries: number): SplitMetrics {
  const n = Math.max(1, queries);
  return { ndcgAt10: sums.ndcgAt10 / n, recallAt10: sums.recallAt10 / n, recallAt100: sums.recallAt100 / n, mrrAt10: sums.mrrAt10 / n, queries };
}

async function evaluate(set: BeirSet, rank: Ranker): Promise<ModeResult> {
  const zero = (): RankingMetrics => ({ ndcgAt10: 0, recallAt10: 0, recallAt100: 0, mrrAt10: 0 });
  const sums = zero();
  const halfSums: Record<Half, RankingMetrics> = { tuning: zero(), report: zero() };
  const halfCounts: Record<Half, number> = { tuning: 0, report: 0 };
  const halves = set.halves;
  const started = performance.now();
  for (const query of set.queries) {
    const ranked = (await rank(query)).filter((id) => id !== query.id);
    const m = rankingMetrics(ranked, set.qrels.get(query.id) ?? new Map());
    const half = halves.get(query.id) ?? 'report';
    halfCounts[half]++;
    for (const key of Object.keys(sums) as Array<keyof RankingMetrics>) {
      sums[key] += m[key];
      halfSums[half][key] += m[key];
    }
  }
  return {
    ...averaged(sums, set.queries.length),
    queryMs: (performance.now() - started) / Math.max(1, set.queries.length),
    splits: { tuning: averaged(halfSums.tuning, halfCounts.tuning), report: averaged(halfSums.report, halfCounts.report) },
  };
}

/** Memory ids → document ids, in order, a merged duplicate standing for all its documents. */
function docIds(memoryIds: Iterable<string>, keysOf: Map<string, string[]>): string[] {
  const out: string[] = [];
  for (const id of memoryIds) out.push(...(keysOf.get(id) ?? []));
  return out;
}

export interface BeirRunOptions {
  project: string;
  hashSpec?: string;
  staticFolder?: string | null;
  /**
   * Embedder specs to measure (`builtin`, `use-lite`, `static:<folder>` …) instead of the hash and
   * static defaults; the suite takes them from `$CAIRN_BENCH_EMBEDDERS` (comma-separated).
   */
  embedderSpecs?: string[];
  /** Specs measured when `embedderSpecs` is empty. @default [hash:1024] */
  defaultSpecs?: string[];
  log?(line: string): void;
}

export interface BeirSetResult {
  documents: number;
  memories: number;
  merged: number;
  rejected: number;
  rejectedBy: Record<string, number>;
  queries: number;
  loadMs: number;
  modes: Record<string, ModeResult & { embedder: string | null; indexMs?: number }>;
  notes: string[];
}

/** Load `set` into a fresh store and measure every mode. */
export async function runBeirSet(cacheDir: string, set: BeirSet, options: BeirRunOptions): Promise<BeirSetResult> {
  const log = options.log ?? (() => {});
  const work = await freshStore(cacheDir, `beir-${set.name}`);
  try {
    const { store } = work;
    const bm25 = benchCairn(store, null);
    let started = performance.now();
    const loaded = await bulkRemember(
      bm25,
      set.corpus.map((d) => ({ key: d.id, text: d.text, project: options.project, meta: { docId: d.id, dataset: set.name } })),
    );
    const loadMs = performance.now() - started;
    log(`beir ${set.name}: ${loaded.written} memories from ${set.corpus.length} documents in ${(loadMs / 1000).toFixed(1)} s; ${set.queries.length} queries`);
    const modes: BeirSetResult['modes'] = {};
    const notes: string[] = [];
    const recallRanker = (cairn: Cairn): Ranker => async (q) =>
      docIds((await cairn.recall({ query: q.text, k: K, project: options.project, touch: false, checkFiles: false })).hits.map((h) => h.memory.id), loaded.keysOf);

    modes.bm25 = { ...(await evaluate(set, recallRanker(bm25))), embedder: null };

    const specs = options.embedderSpecs?.length ? options.embedderSpecs : (options.defaultSpecs ?? [HASH_SPEC]);
    const embedders: Array<{ label: string; load: () => Promise<Embedder> }> = specs.map((spec) => ({ label: spec, load: () => benchEmbedder(cacheDir, spec) }));
    if (options.embedderSpecs?.length) {
      // the listed specs replace the defaults
    } else if (options.staticFolder) {
      const folder = options.staticFolder;
      embedders.push({ label: 'static', load: () => loadStaticEmbedder(folder) });
    } else {
      notes.push('static embedder skipped: no model folder (set CAIRN_BENCH_STATIC=<folder> or put potion-base-8M in <home>/models/)');
    }
    for (const { label, load } of embedders) {
      let embedder: Embedder;
      try {
        embedder = await load();
        await embedder.embed(['probe']); // a lazily loaded model (ONNX) fails here when its files are missing
      } catch (error) {
        notes.push(`${label} embedder skipped: ${(error as Error).message}`);
        continue;
      }
      started = performance.now();
      await reindex(store, embedder, { batchSize: 256 });
      const indexMs = performance.now() - started;
      log(`beir ${set.name}: vectors with ${embedder.model} in ${(indexMs / 1000).toFixed(1)} s`);
      const vectorRanker: Ranker = async (q) => {
        const [vector] = await embedder.embed([q.text], { purpose: 'query' });
        const hits = await store.searchVector(vector as Float32Array, embedder, { project: options.project, limit: K });
        return docIds(hits.map((h) => h.id), loaded.keysOf);
      };
      modes[`vector ${embedder.model}`] = { ...(await evaluate(set, vectorRanker)), embedder: embedder.model, indexMs };
      modes[`hybrid ${embedder.model}`] = { ...(await evaluate(set, recallRanker(benchCairn(store, embedder)))), embedder: embedder.model };
      for (const fusion of benchFusionGrid()) {
        const mode = `hybrid ${embedder.model} ${fusionLabel(fusion)}`;
        modes[mode] = { ...(await evaluate(set, recallRanker(benchCairn(store, embedder, fusion)))), embedder: embedder.model };
      }
      await embedder.close?.();
    }
    return {
      documents: set.corpus.length,
      memories: loaded.written,
      merged: loaded.merged,
      rejected: loaded.rejected,
      rejectedBy: loaded.rejectedBy,
      queries: set.queries.length,
      loadMs,
      modes,
      notes,
    };
  } finally {
    await work.dispose();
  }
}

/* ------------------------------------------------------------------ the suite */

const SETS: Array<{ name: string; folder: string; mrr: boolean }> = [
  { name: 'scifact', folder: 'scifact', mrr: false },
  { name: 'cosqa', folder: 'cosqa', mrr: true },
];

export const beirSuite: Suite = {
  name: 'beir',
  description: 'retrieval quality on BEIR sets (SciFact, CoSQA) through cairn\'s store and recall: nDCG@10, recall@100 (MRR@10 for CoSQA) for BM25, vectors and hybrid',
  async run(ctx): Promise<SuiteOutcome> {
    const datasets: Dataset[] = [];
    const metrics: Metric[] = [];
    const details: Record<string, unknown> = { k: K, touch: false, quick: ctx.quick };
    const staticFolder = staticModelFolder(ctx);
    const missing: string[] = [];
    for (const spec of SETS) {
      const dir = join(ctx.dataDir, 'beir', spec.folder);
      const full = loadBeir(dir, spec.name);
      if (!full) {
        missing.push(dir);
        continue;
      }
      const set = ctx.quick ? quickSubset(full) : full;
      const result = await runBeirSet(ctx.cacheDir, set, {
        project: `beir-${spec.name}`,
        staticFolder,
        embedderSpecs: benchEmbedderSpecs(),
        defaultSpecs: defaultEmbedderSpecs(ctx.quick),
        log: ctx.log,
      });
      const source = dataSource(dir);
      datasets.push({ name: `beir/${spec.name}${ctx.quick ? ' (quick subset)' : ''}`, sha256: sha256Files(full.files), generator: null, ...(source ? { source } : {}), buildMs: result.loadMs, cachedBuildMs: null });
      details[spec.name] = result;
      const label = spec.name === 'scifact' ? 'SciFact' : 'CoSQA';
      const refused = Object.entries(result.rejectedBy).map(([code, n]) => `${n} ${code}`).join(', ');
      const sizeNote = `${result.queries} queries, ${result.documents} docs${ctx.quick ? ' (quick)' : ''}${refused ? `; not stored (counted as misses): ${refused}` : ''}`;
      for (const [mode, r] of Object.entries(result.modes)) {
        const scifactTarget = spec.name === 'scifact';
        metrics.push(
          metric(`${label} nDCG@10 (${mode})`, r.ndcgAt10, 'share', {
            ...(scifactTarget ? { target: atLeast(0.7), anchor: 'BM25 0.665; ColBERTv2 0.693' } : {}),
            note: sizeNote,
          }),
          metric(`${label} recall@100 (${mode})`, r.recallAt100, 'share'),
        );
        if (spec.mrr) metrics.push(metric(`${label} MRR@10 (${mode})`, r.mrrAt10, 'share', { anchor: 'BM25 ≈ 0.30' }));
        const headline = spec.mrr ? 'MRR@10' : 'nDCG@10';
        for (const half of ['tuning', 'report'] as const) {
          const part = r.splits[half];
          metrics.push(metric(`${label} ${headline}, ${half} half (${mode})`, spec.mrr ? part.mrrAt10 : part.ndcgAt10, 'share', { note: `${part.queries} queries (sha256 of query id)` }));
        }
      }
      if (!staticFolder && benchEmbedderSpecs().length === 0) metrics.push(metric(`${label} nDCG@10 (vector, static)`, null, 'share', { note: result.notes[0] ?? 'skipped' }));
    }
    if (datasets.length === 0) {
      return { status: 'skipped', reason: `no BEIR data: ${missing.join(', ')} not found (pass --data <shared data folder>)` };
    }
    if (missing.length > 0) details.missing = missing;
    return { status: 'ok', datasets, metrics, details };
  },
};
