/**
 * `embed`: what an embedder costs and whether it finds paraphrases, each spec in a fresh process
 * (`$CAIRN_BENCH_EMBEDDERS`, default the product default `onnx:bge-small-en-v1.5-q`): time to
 * build the embedder and to load its model on the first text, RSS before and after the load, the
 * p50 time to embed one query and one memory-sized document, and the five paraphrase cases of
 * docs/EMBEDDINGS.md (the right memory must have the highest cosine among four).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEFAULT_EMBEDDER_SPEC } from 'cairn-memory/testing';
import { PACKAGE_ROOT } from '../env.js';
import { atLeast, atMost, metric } from '../metrics.js';
import type { Metric, Suite, SuiteOutcome } from '../types.js';
import { benchEmbedderSpecs } from './beir.js';

/** Query → the memory it means, among three unrelated ones (docs/EMBEDDINGS.md). */
export const PARAPHRASES: ReadonlyArray<readonly [string, string]> = [
  ['how the user likes articles written', 'prefers short paragraphs'],
  ['which package manager do we use', 'use pnpm, never npm'],
  ['database locked errors', 'SQLite busy timeout is set to 5 seconds to avoid SQLITE_BUSY'],
  ['how do releases reach production', 'deploys go through the staging cluster first'],
  ['memory leak when objects are destroyed', 'the garbage collector frees objects in finalizer order'],
];
const UNRELATED = ['the CI runs on Node 20 and 22', 'tests live under test/ and use vitest', 'the logo is a stack of stones'];

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

const CHILD = `
const [url, spec, payload] = process.argv.slice(1);
const { queries, docs, paraphrases, unrelated } = JSON.parse(payload);
const mb = () => process.memoryUsage().rss / 1e6;
const rssStart = mb();
let t = performance.now();
const { createEmbedder } = await import(url);
const embedder = await createEmbedder(spec);
const buildMs = performance.now() - t;
const rssBuilt = mb();
t = performance.now();
await embedder.embed(['warm up']);
const loadMs = performance.now() - t;
const rssLoaded = mb();
const time = async (texts) => { const out = []; for (const text of texts) { const s = performance.now(); await embedder.embed([text]); out.push(performance.now() - s); } return out; };
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
let c = cpu();
const queryMs = [...(await time(queries)), ...(await time(queries.map((q) => q + '?')))];
const queryCpuMs = (cpu() - c) / queryMs.length;
c = cpu();
const docMs = [...(await time(docs)), ...(await time(docs.map((d) => d + ' (again)')))];
const docCpuMs = (cpu() - c) / docMs.length;
let found = 0;
const cases = [];
for (const [query, answer] of paraphrases) {
  const [q, ...rest] = await embedder.embed([query, answer, ...unrelated]);
  const scores = rest.map((v) => v.reduce((s, x, i) => s + x * q[i], 0));
  const ok = scores.indexOf(Math.max(...scores)) === 0;
  if (ok) found++;
  cases.push({ query, answer, ok, cosine: scores[0] });
}
await embedder.close?.();
console.log(JSON.stringify({ model: embedder.model, dimension: embedder.dimension, buildMs, loadMs, rssStart, rssBuilt, rssLoaded, rssEnd: mb(), queryMs, docMs, queryCpuMs, docCpuMs, found, cases }));
`;

interface ChildResult {
  model: string;
  dimension: number;
  buildMs: number;
  loadMs: number;
  rssStart: number;
  rssBuilt: number;
  rssLoaded: number;
  rssEnd: number;
  queryMs: number[];
  docMs: number[];
  /** CPU time (all threads) per text: what the wall time would approach on idle cores. */
  queryCpuMs: number;
  docCpuMs: number;
  found: number;
  cases: Array<{ query: string; answer: string; ok: boolean; cosine: number }>;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

export const embedSuite: Suite = {
  name: 'embed',
  description: 'embedder cost (build, model load on first use, RSS, query and document embed p50) and the five paraphrase cases, each spec in a fresh process',
  async run(ctx): Promise<SuiteOutcome> {
    const specs = benchEmbedderSpecs();
    const url = pathToFileURL(join(PACKAGE_ROOT, 'dist', 'testing.js')).href;
    const metrics: Metric[] = [];
    const details: Record<string, unknown> = {};
    for (const spec of specs.length > 0 ? specs : [DEFAULT_EMBEDDER_SPEC]) {
      ctx.log(`embed: ${spec} in a fresh process`);
      const payload = JSON.stringify({ queries: QUERIES, docs: DOCS, paraphrases: PARAPHRASES, unrelated: UNRELATED });
      const run = spawnSync(process.execPath, ['--input-type=module', '-e', CHILD, url, spec, payload], { encoding: 'utf8' });
      if (run.status !== 0) {
        const reason = run.stderr.trim().split('\n').find((l) => l.includes('cairn') || l.includes('Error')) ?? run.stderr.trim().split('\n')[0];
        details[spec] = { failed: reason };
        metrics.push(metric(`paraphrase cases (${spec})`, null, 'of 5', { note: `could not run: ${reason}` }));
        continue;
      }
      const r = JSON.parse(run.stdout.trim().split('\n').at(-1) as string) as ChildResult;
      details[spec] = r;
      const label = r.model;
      const docP50 = median(r.docMs);
      metrics.push(
        metric(`paraphrase cases (${label})`, r.found, 'of 5', { target: atLeast(5) }),
        metric(`build embedder (${label})`, r.buildMs, 'ms', { note: 'import + create, model not loaded' }),
        metric(`RSS growth before first use (${label})`, r.rssBuilt - r.rssStart, 'MB', { note: 'what an idle MCP server pays' }),
        metric(`model load on first use (${label})`, r.loadMs, 'ms', { note: 'checksums, runtime import, session' }),
        metric(`RSS growth after load (${label})`, r.rssLoaded - r.rssStart, 'MB', { target: atMost(200) }),
        metric(`query embed p50 (${label})`, median(r.queryMs), 'ms', { target: atMost(10), note: `${r.queryMs.length} short queries, one a call` }),
        metric(`query embed CPU time (${label})`, r.queryCpuMs, 'ms', { note: 'mean CPU (all threads) per query: near the wall time on idle cores' }),
        metric(`memory embed p50 (${label})`, docP50, 'ms', { note: `${r.docMs.length} memory-sized texts (20–30 words), one a call` }),
        metric(`memory embed CPU time (${label})`, r.docCpuMs, 'ms', { note: 'mean CPU (all threads) per memory' }),
        metric(`100K memories, estimated (${label})`, (docP50 * 100_000) / 60_000, 'min', { target: atMost(10), note: 'memory embed p50 × 100K, one text a call' }),
        metric(`100K memories at CPU time, estimated (${label})`, (r.docCpuMs * 100_000) / 60_000 / 2, 'min', { target: atMost(10), note: 'memory embed CPU × 100K over 2 idle cores' }),
      );
    }
    return { status: 'ok', datasets: [], metrics, details };
  },
};
