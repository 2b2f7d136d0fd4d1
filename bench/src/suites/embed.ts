/**
 * `embed`: what each embedder costs and whether it finds paraphrases, each spec in a fresh process
 * (`$CAIRN_BENCH_EMBEDDERS`, default every known ONNX model, `onnx:<name>`): time to build the
 * embedder and to load its model on the first text, RSS before and after the load, the p50 wall
 * and CPU time to embed one recall query, the wall and CPU time per memory when a reindex embeds
 * hundreds of them, and the five paraphrase cases of docs/EMBEDDINGS.md (the right memory must
 * have the highest cosine among four). With the LoCoMo data present (`--data`), the queries are
 * LoCoMo questions and the memories its turns; else built-in ones. Then the MCP server with the
 * embedder configured: idle RSS (model not loaded), RSS once loaded (embed-mcp.ts). `$CAIRN_BENCH_ONNX_THREADS`
 * sets ONNX Runtime's intra-op threads (default: cairn's, 2 on this machine). For ONNX specs, the
 * real bulk path too: `reindex` over a store of 1,000 distinct LoCoMo turns (96 with `--quick`)
 * with one session, then with the worker pool `cairn reindex` uses, and the lowest cosine of the
 * pool's vectors against the same texts embedded alone (`$CAIRN_BENCH_EMBED_BULK=0` skips it).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { KNOWN_ONNX_MODELS } from 'cairn-memory/testing';
import { PACKAGE_ROOT } from '../env.js';
import { atLeast, atMost, metric } from '../metrics.js';
import type { Metric, Suite, SuiteOutcome } from '../types.js';
import { benchEmbedderSpecs } from './beir.js';
import { measureMcpWithEmbedder } from './embed-mcp.js';

/** Query → the memory it means, among three unrelated ones (docs/EMBEDDINGS.md). */
export const PARAPHRASES: ReadonlyArray<readonly [string, string]> = [
  ['how the user likes articles written', 'prefers short paragraphs'],
  ['which package manager do we use', 'use pnpm, never npm'],
  ['database locked errors', 'SQLite busy timeout is set to 5 seconds to avoid SQLITE_BUSY'],
  ['how do releases reach production', 'deploys go through the staging cluster first'],
  ['memory leak when objects are destroyed', 'the garbage collector frees objects in finalizer order'],
];
/** The unrelated memories each paraphrase's answer is ranked against. */
export const UNRELATED = ['the CI runs on Node 20 and 22', 'tests live under test/ and use vitest', 'the logo is a stack of stones'];

const QUERIES = [
  'where is the config parsed',
  'why did the build fail yesterday',
  'what did Caroline say about the adoption agency',
  'how do we run the integration tests',
  'which port does the dev server use',
  'when did Melanie go camping with her family',
  'what is the retry policy for flaky tests',
  'who owns the billing service',
];
const DOCS = [
  'parse_config(path) in src/config.py reads TOML and falls back to defaults when the file is missing; the CLI passes --config to override it.',
  'Caroline (8 May 2023): I went to the LGBTQ support group yesterday and it was so powerful, hearing the stories made me feel accepted.',
  'The integration tests need a running PostgreSQL: .ci/run starts one on port 5433 and exports CAIRN_TEST_PG_URL before npm test.',
  'Decision: we keep SQLite as the default store and put PostgreSQL behind the same Store interface for teams; the conformance suite runs on both.',
  'The flaky network test retries three times with exponential backoff before failing; see test/net/retry.test.ts:42 for the helper.',
  'Melanie (20 July 2023): we took the kids camping at the lake last weekend, roasted marshmallows and watched the meteor shower.',
  'npm run build compiles TypeScript to dist/ and bundles the hooks with esbuild; the bundle keeps better-sqlite3 and usearch external.',
  'The dev server listens on 127.0.0.1:7077 by default; cairn ui --port 8080 changes it and refuses request bodies over 1 MiB.',
];

/** Queries and memories to time: LoCoMo questions and turns when the data is there, else the lists above. */
export function timingTexts(dataDir: string, quick: boolean): { queries: string[]; docs: string[]; bulk: string[]; source: string } {
  const path = join(dataDir, 'locomo', 'locomo-dev.json');
  const wanted = { queries: quick ? 16 : 60, docs: quick ? 48 : 400, bulk: quick ? 96 : 1000 };
  if (!existsSync(path)) return { queries: QUERIES, docs: DOCS, bulk: Array.from({ length: 12 }, (_, i) => DOCS.map((d) => `${d} (${i})`)).flat(), source: 'built-in texts (no LoCoMo data)' };
  const raw = JSON.parse(readFileSync(path, 'utf8')) as Array<{ qa?: Array<{ question?: unknown }>; conversation?: Record<string, unknown> }>;
  const questions: string[] = [];
  const turns: string[] = [];
  for (const sample of raw) {
    for (const qa of sample.qa ?? []) if (typeof qa.question === 'string') questions.push(qa.question);
    for (const value of Object.values(sample.conversation ?? {})) {
      if (!Array.isArray(value)) continue;
      for (const turn of value as Array<{ speaker?: unknown; text?: unknown }>) if (typeof turn.text === 'string') turns.push(`${String(turn.speaker)}: ${turn.text}`);
    }
  }
  // Evenly spaced picks: every conversation and every part of one is represented.
  const spread = (all: string[], n: number) => Array.from({ length: Math.min(n, all.length) }, (_, i) => all[Math.floor((i * all.length) / Math.min(n, all.length))]!);
  const unique = [...new Set(turns)];
  return {
    queries: spread(questions, wanted.queries),
    docs: spread(turns, wanted.docs),
    bulk: spread(unique, wanted.bulk),
    source: `LoCoMo (${wanted.queries} questions, ${wanted.docs} turns; ${Math.min(wanted.bulk, unique.length)} distinct turns for the reindex runs)`,
  };
}

const CHILD = `
const [url, spec, threadsArg] = process.argv.slice(1);
// The texts come on stdin: a thousand of them would pass the 128 KB limit of one argument.
const payload = (await import('node:fs')).readFileSync(0, 'utf8');
const { queries, docs, bulk: bulkDocs, paraphrases, unrelated } = JSON.parse(payload);
const mb = () => process.memoryUsage().rss / 1e6;
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const rssStart = mb();
let t = performance.now();
const cairn = await import(url);
const threads = Number(threadsArg) || undefined;
const embedder = spec.startsWith('onnx:') && threads ? cairn.loadOnnxEmbedder(spec.slice(5), { threads }) : await cairn.createEmbedder(spec);
const buildMs = performance.now() - t;
const rssBuilt = mb();
t = performance.now();
await embedder.embed(['warm up']);
const loadMs = performance.now() - t;
const rssLoaded = mb();
const queryMs = [], queryCpu = [];
for (const query of queries) {
  const c = cpu(), s = performance.now();
  await embedder.embed([query], { purpose: 'query' });
  queryMs.push(performance.now() - s);
  queryCpu.push(cpu() - c);
}
// A reindex hands the embedder batches of memories: time that path, per memory.
let c = cpu(), s = performance.now();
await embedder.embed(docs);
const docWallMs = (performance.now() - s) / docs.length, docCpuMs = (cpu() - c) / docs.length;
const rssAfterDocs = mb();
let found = 0;
const cases = [];
for (const [query, answer] of paraphrases) {
  const [q] = await embedder.embed([query], { purpose: 'query' });
  const rest = await embedder.embed([answer, ...unrelated]);
  const scores = rest.map((v) => v.reduce((sum, x, i) => sum + x * q[i], 0));
  const ok = scores.indexOf(Math.max(...scores)) === 0;
  if (ok) found++;
  cases.push({ query, answer, ok, cosine: scores[0] });
}
// The real bulk path: \`reindex\` over a store of memories, first with this one session (as before),
// then with the worker pool \`cairn reindex\` uses (one session per worker); same texts, same run.
let bulk = null;
if (spec.startsWith('onnx:') && bulkDocs.length > 0) {
  const lib = await import(url.replace(/testing\.js$/, 'index.js'));
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const dir = mkdtempSync(join(tmpdir(), 'cairn-bench-bulk-'));
  const timed = async (name, bulkEmbedder) => {
    const store = await lib.openSqliteStore(join(dir, name + '.db'));
    const plain = lib.createCairn({ store, project: 'bench' });
    for (const text of bulkDocs) await plain.remember({ text });
    const memories = (await store.stats()).memories;
    await bulkEmbedder.embed(['warm up']);
    const c = cpu(), s = performance.now();
    await cairn.reindex(store, bulkEmbedder);
    const wall = performance.now() - s, used = cpu() - c;
    const ids = (await store.listMemories({ project: 'bench', limit: 40 })).map((m) => m.id);
    const vectors = await store.getVectors(ids, bulkEmbedder);
    const texts = new Map((await store.getMemories(ids)).map((m) => [m.id, m.text]));
    await store.close();
    return { memories, wallMs: wall / memories, cpuMs: used / memories, vectors, texts };
  };
  const one = await timed('one', embedder);
  const pool = await cairn.createEmbedder(spec, { workers: 2 });
  const two = await timed('pool', pool);
  await pool.close?.();
  // Every sampled vector against the same text embedded alone, one call each (the recall path).
  let minCosine = 1, compared = 0;
  for (const [id, vector] of two.vectors) {
    const [alone] = await embedder.embed([two.texts.get(id)]);
    minCosine = Math.min(minCosine, vector.reduce((sum, x, i) => sum + x * alone[i], 0));
    compared++;
  }
  rmSync(dir, { recursive: true, force: true });
  bulk = { memories: one.memories, oneWallMs: one.wallMs, oneCpuMs: one.cpuMs, poolWallMs: two.wallMs, poolCpuMs: two.cpuMs, workers: pool.workers ?? 1, minCosine, compared };
}
await embedder.close?.();
console.log(JSON.stringify({ model: embedder.model, dimension: embedder.dimension, buildMs, loadMs, rssStart, rssBuilt, rssLoaded, rssAfterDocs, queryMs, queryCpu, docWallMs, docCpuMs, found, cases, bulk }));
`;

interface ChildResult {
  model: string;
  dimension: number;
  buildMs: number;
  loadMs: number;
  rssStart: number;
  rssBuilt: number;
  rssLoaded: number;
  rssAfterDocs: number;
  queryMs: number[];
  /** CPU time (all threads) per query: what the wall time approaches on idle cores at one thread. */
  queryCpu: number[];
  docWallMs: number;
  docCpuMs: number;
  found: number;
  cases: Array<{ query: string; answer: string; ok: boolean; cosine: number }>;
  /** `reindex` over a store: one session vs the worker pool (ONNX specs only). */
  bulk: { memories: number; oneWallMs: number; oneCpuMs: number; poolWallMs: number; poolCpuMs: number; workers: number; minCosine: number; compared: number } | null;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

/** The specs `cairn bench embed` measures when `$CAIRN_BENCH_EMBEDDERS` names none: every known ONNX model. */
export function defaultEmbedSpecs(): string[] {
  return Object.keys(KNOWN_ONNX_MODELS).map((name) => `onnx:${name}`);
}

export const embedSuite: Suite = {
  name: 'embed',
  description: 'embedder cost (build, model load on first use, RSS, query embed p50 wall and CPU, memory embed throughput) and the five paraphrase cases, each spec in a fresh process',
  async run(ctx): Promise<SuiteOutcome> {
    const specs = benchEmbedderSpecs();
    const url = pathToFileURL(join(PACKAGE_ROOT, 'dist', 'testing.js')).href;
    const threads = process.env.CAIRN_BENCH_ONNX_THREADS ?? '';
    const texts = timingTexts(ctx.dataDir, ctx.quick);
    const metrics: Metric[] = [];
    const details: Record<string, unknown> = { texts: texts.source, threads: threads || 'default' };
    const floor = await measureMcpWithEmbedder(null).catch((error: unknown) => ({ idleMb: Number.NaN, loadedMb: Number.NaN, firstWriteMs: Number.NaN, failed: (error as Error).message }));
    details.mcpBm25 = floor;
    metrics.push(metric('MCP server idle RSS (no embedder)', floor.idleMb, 'MB', { target: atMost(80), note: 'after status and one recall' }));
    for (const spec of specs.length > 0 ? specs : defaultEmbedSpecs()) {
      ctx.log(`embed: ${spec} in a fresh process`);
      const payload = JSON.stringify({ queries: texts.queries, docs: texts.docs, bulk: process.env.CAIRN_BENCH_EMBED_BULK === '0' ? [] : texts.bulk, paraphrases: PARAPHRASES, unrelated: UNRELATED });
      const run = spawnSync(process.execPath, ['--input-type=module', '-e', CHILD, url, spec, threads], { input: payload, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
      if (run.status !== 0) {
        const reason = run.stderr.trim().split('\n').find((l) => l.includes('cairn') || l.includes('Error')) ?? run.stderr.trim().split('\n')[0];
        details[spec] = { failed: reason, stderr: run.stderr.slice(-3000) };
        metrics.push(metric(`paraphrase cases (${spec})`, null, 'of 5', { note: `could not run: ${reason}` }));
        continue;
      }
      const r = JSON.parse(run.stdout.trim().split('\n').at(-1) as string) as ChildResult;
      const mcp = await measureMcpWithEmbedder(spec).catch((error: unknown) => ({ idleMb: Number.NaN, loadedMb: Number.NaN, firstWriteMs: Number.NaN, failed: (error as Error).message }));
      details[spec] = { ...r, mcp };
      const label = r.model;
      metrics.push(
        metric(`paraphrase cases (${label})`, r.found, 'of 5', { target: atLeast(5) }),
        metric(`build embedder (${label})`, r.buildMs, 'ms', { note: 'import + create, model not loaded' }),
        metric(`RSS before first use (${label})`, r.rssBuilt, 'MB', { target: atMost(80), note: `an idle process with the embedder built (+${(r.rssBuilt - r.rssStart).toFixed(0)} MB); the MCP server adds its own` }),
        metric(`MCP server idle RSS, embedder configured (${label})`, mcp.idleMb, 'MB', { target: atMost(80), note: 'after status and one recall on an empty index: the model is not loaded' }),
        metric(`MCP server RSS growth once the model is loaded (${label})`, mcp.loadedMb - mcp.idleMb, 'MB', { target: atMost(200), note: 'after the first remember and a recall' }),
        metric(`MCP first remember, model load included (${label})`, mcp.firstWriteMs, 'ms'),
        metric(`model load on first use (${label})`, r.loadMs, 'ms', { note: 'checksums, runtime import, session' }),
        metric(`RSS growth after load (${label})`, r.rssLoaded - r.rssStart, 'MB', { target: atMost(200) }),
        metric(`RSS growth after embedding memories (${label})`, r.rssAfterDocs - r.rssStart, 'MB', { target: atMost(200) }),
        metric(`query embed p50 (${label})`, median(r.queryMs), 'ms', { target: atMost(10), note: `${r.queryMs.length} queries, one a call (${texts.source})` }),
        metric(`query embed CPU p50 (${label})`, median(r.queryCpu), 'ms', { note: 'CPU of all threads per query' }),
        metric(`memory embed, wall per memory (${label})`, r.docWallMs, 'ms', { note: `${texts.docs.length} memories in one embed call, as a reindex does` }),
        metric(`memory embed, CPU per memory (${label})`, r.docCpuMs, 'ms', { note: 'CPU of all threads per memory' }),
        metric(`100K memories at this wall time (${label})`, (r.docWallMs * 100_000) / 60_000, 'min', { target: atMost(10), note: 'wall per memory × 100K: the real figure on an idle machine' }),
        metric(`100K memories, CPU over 2 cores (${label})`, (r.docCpuMs * 100_000) / 60_000 / 2, 'min', { target: atMost(10), note: 'CPU per memory × 100K ÷ 2: a lower bound when the machine is loaded' }),
      );
      if (r.bulk) {
        const b = r.bulk;
        metrics.push(
          metric(`reindex wall per memory, one session (${label})`, b.oneWallMs, 'ms', { note: `reindex of ${b.memories} memories, one ONNX session (the path before the pool)` }),
          metric(`reindex wall per memory, ${b.workers} workers (${label})`, b.poolWallMs, 'ms', { note: `the same memories through cairn reindex's worker pool, one session per worker` }),
          metric(`reindex CPU per memory, one session / ${b.workers} workers (${label})`, b.poolCpuMs, 'ms', { note: `one session: ${b.oneCpuMs.toFixed(2)} ms` }),
          metric(`reindex cores busy, ${b.workers} workers (${label})`, b.poolCpuMs / b.poolWallMs, 'cores', { note: `CPU ÷ wall; one session: ${(b.oneCpuMs / b.oneWallMs).toFixed(2)} cores` }),
          metric(`100K memories by reindex, one session (${label})`, (b.oneWallMs * 100_000) / 60_000, 'min', { target: atMost(10), note: 'measured reindex wall per memory × 100K' }),
          metric(`100K memories by reindex, ${b.workers} workers (${label})`, (b.poolWallMs * 100_000) / 60_000, 'min', { target: atMost(10), note: 'measured reindex wall per memory × 100K: what cairn reindex does' }),
          metric(`pool vectors vs one at a time, lowest cosine (${label})`, b.minCosine, '', { target: atLeast(0.999999), note: `${b.compared} sampled memories against the same text embedded alone` }),
        );
      }
    }
    return { status: 'ok', datasets: [], metrics, details };
  },
};
