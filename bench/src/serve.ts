/**
 * The team benchmark: `cairn serve` over HTTP on SQLite, PostgreSQL on PGlite (pgvector) and a
 * real PostgreSQL server, in one run on one machine. For each store: load N memories of the
 * bench corpus (hash embeddings), start a `cairn serve` process, then measure
 *   - recall latency over HTTP (one client, sequential POST /api/recall), p50 / p95;
 *   - writes per second with C concurrent clients (POST /api/remember, new texts).
 *
 * A program that prints figures (tests never assert on time):
 *   npm run build && node bench/dist/serve.js --memories 100000 [--pg postgres://…] [--json]
 * PGlite runs in a child process of this program (its dev dependencies must be installed).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateCorpus, type CorpusMemory } from './corpus.js';
import { type Embedder, type Memory, type Store, contentHash, openPostgresStore, openSqliteStore } from 'cairn-memory';
import { KIND_IMPORTANCE, PgDatabase, createEmbedder, memoryValues } from 'cairn-memory/testing';

const BIN = fileURLToPath(new URL('../../bin/cairn.js', import.meta.url)); // bench/src or bench/dist → the repository's bin/
const EMBEDDER = 'hash';

interface Args {
  memories: number;
  queries: number;
  clients: number;
  writes: number;
  pg: string | null;
  json: boolean;
  only: string[] | null;
}

function parseArgs(argv: string[]): Args {
  const value = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  return {
    memories: Number(value('memories') ?? 100_000),
    queries: Number(value('queries') ?? 300),
    clients: Number(value('clients') ?? 8),
    writes: Number(value('writes') ?? 250),
    pg: value('pg') ?? process.env.CAIRN_TEST_PG_URL ?? null,
    json: argv.includes('--json'),
    only: value('only')?.split(',') ?? null,
  };
}

function toMemory(c: CorpusMemory): Memory {
  const at = c.createdAt;
  return {
    id: `B${String(c.index).padStart(9, '0')}`,
    text: c.text,
    kind: c.kind,
    scope: c.scope,
    project: c.project,
    session: c.session,
    tags: c.tags,
    importance: c.importance ?? KIND_IMPORTANCE[c.kind],
    source: c.source,
    provenance: null,
    context: null,
    files: [],
    createdAt: at,
    updatedAt: at,
    validFrom: at,
    validTo: null,
    supersedes: null,
    accessCount: 0,
    lastAccessedAt: null,
    lastRecalledAt: null,
    pinned: c.pinned,
    deletedAt: c.forgotten ? at : null,
    contentHash: contentHash(c.text),
    meta: {},
  };
}

export async function load(store: Store, corpus: CorpusMemory[], embedder: Embedder): Promise<void> {
  const model = { model: embedder.model, dimension: embedder.dimension };
  const seen = new Set<string>();
  const memories = corpus.map(toMemory).filter((m) => {
    const key = `${m.project ?? ''}\u0000${m.contentHash}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const batch = 500;
  const pg = 'db' in store && store.name === 'postgres' ? (store as Awaited<ReturnType<typeof openPostgresStore>>) : null;
  for (let i = 0; i < memories.length; i += batch) {
    const slice = memories.slice(i, i + batch);
    const vectors = await embedder.embed(slice.map((m) => m.text));
    if (pg) {
      const width = memoryValues(slice[0] as Memory).length;
      const rows = slice.map((_, r) => `(${Array.from({ length: width }, (_, c) => `$${r * width + c + 1}${c === width - 1 ? '::tsvector' : ''}`).join(', ')})`);
      await pg.db.query(
        `INSERT INTO memories (id, text, kind, scope, project, session, tags, importance, source, provenance, files, created_at, updated_at, valid_from,
           valid_to, supersedes, access_count, last_accessed_at, last_recalled_at, pinned, deleted_at, content_hash, meta, terms)
         VALUES ${rows.join(', ')} ON CONFLICT DO NOTHING`,
        slice.flatMap(memoryValues),
      );
      await store.putVectors(model, slice.map((m, k) => ({ id: m.id, vector: vectors[k] as Float32Array })));
    } else {
      for (const [k, memory] of slice.entries()) {
        await store.writeMemory({ memory, events: [], embedding: { model, vector: vectors[k] as Float32Array } });
      }
    }
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

function startServe(store: string, home: string): Promise<{ child: ChildProcess; url: string; token: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, '--home', home, '--store', store, 'serve', '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CAIRN_EMBEDDER: EMBEDDER },
    });
    let out = '';
    let err = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      const token = /one-off admin token: (\S+)/.exec(out)?.[1];
      if (url && token) resolve({ child, url, token });
    });
    child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('exit', (code) => reject(new Error(`cairn serve exited with ${code}: ${err}`)));
  });
}

async function request(url: string, token: string, path: string, body: unknown, project: string | null): Promise<number> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', ...(project ? { 'X-Cairn-Project': project } : {}) },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  if (res.status >= 300) throw new Error(`${path}: HTTP ${res.status}`);
  return res.status;
}

interface Result {
  store: string;
  memories: number;
  loadSeconds: number;
  recallP50: number;
  recallP95: number;
  writesPerSecond: number;
}

async function measure(name: string, spec: string, open: () => Promise<Store>, corpus: CorpusMemory[], args: Args, embedder: Embedder): Promise<Result> {
  const started = performance.now();
  const store = await open();
  await load(store, corpus, embedder);
  const count = await store.countMemories({ includeDeleted: true, includeSuperseded: true });
  await store.close();
  const loadSeconds = (performance.now() - started) / 1000;
  process.stderr.write(`${name}: loaded ${count} memories in ${loadSeconds.toFixed(0)} s\n`);
  const home = mkdtempSync(join(tmpdir(), 'cairn-bench-serve-'));
  const server = await startServe(spec, home);
  try {
    const queries = corpus.flatMap((m) => (m.query ? [m.query] : [])).sort((a, b) => a.order - b.order);
    const ask = (i: number) => {
      const q = queries[i % queries.length] as (typeof queries)[number];
      return request(server.url, server.token, '/api/recall', { query: q.text, k: 10 }, q.project);
    };
    for (let i = 0; i < 20; i++) await ask(i);
    const times: number[] = [];
    for (let i = 0; i < args.queries; i++) {
      const t = performance.now();
      await ask(i + 20);
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    process.stderr.write(`${name}: recall p50 ${percentile(times, 50).toFixed(1)} ms, p95 ${percentile(times, 95).toFixed(1)} ms; measuring writes…\n`);
    const project = queries[0]?.project ?? null;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: args.clients }, async (_, c) => {
        for (let j = 0; j < args.writes; j++) {
          await request(server.url, server.token, '/api/remember', { text: `bench client ${c} write ${j}: retry_budget_${j % 97} in src/net/retry_${c}.ts:${j}` }, project);
        }
      }),
    );
    const writesPerSecond = (args.clients * args.writes) / ((performance.now() - t0) / 1000);
    const result = { store: name, memories: count, loadSeconds, recallP50: percentile(times, 50), recallP95: percentile(times, 95), writesPerSecond };
    process.stderr.write(`${JSON.stringify(result)}\n`);
    return result;
  } finally {
    server.child.kill('SIGTERM');
    rmSync(home, { recursive: true, force: true });
  }
}

/** Child mode: PGlite with pgvector served over the wire protocol until killed. */
async function pgliteServer(): Promise<void> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { vector } = await import('@electric-sql/pglite-pgvector');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const db = await PGlite.create({ extensions: { vector } });
  const server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1', maxConnections: 100 });
  await server.start();
  process.stdout.write(`postgres://postgres@${server.getServerConn()}/postgres\n`);
  await new Promise(() => {});
}

function startPgliteChild(): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--pglite-server'], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout?.on('data', (chunk: Buffer) => {
      const url = /postgres:\/\/\S+/.exec(chunk.toString())?.[0];
      if (url) resolve({ child, url });
    });
    child.on('exit', (code) => reject(new Error(`pglite server exited with ${code}`)));
  });
}

export async function main(argv: string[]): Promise<void> {
  if (argv.includes('--pglite-server')) return pgliteServer();
  const args = parseArgs(argv);
  const corpus = [...generateCorpus({ seed: 1, size: args.memories })];
  const embedder = await createEmbedder(EMBEDDER);
  const results: Result[] = [];
  const want = (name: string) => args.only === null || args.only.includes(name);
  const dir = mkdtempSync(join(tmpdir(), 'cairn-bench-'));
  const children: ChildProcess[] = [];
  try {
    if (want('sqlite')) {
      const path = join(dir, 'bench.db');
      results.push(await measure('sqlite', `sqlite:${path}`, () => openSqliteStore(path), corpus, args, embedder));
    }
    if (want('pglite')) {
      const pglite = await startPgliteChild();
      children.push(pglite.child);
      const url = `${pglite.url}?schema=bench`;
      results.push(await measure('postgres (PGlite 0.5, pgvector HNSW)', url, () => openPostgresStore(url), corpus, args, embedder));
    }
    if (want('pg') && args.pg) {
      const url = `${args.pg}${args.pg.includes('?') ? '&' : '?'}schema=bench_${Date.now().toString(36)}`;
      results.push(await measure('postgres (server, exact vectors)', url, () => openPostgresStore(url), corpus, args, embedder));
      const db = await PgDatabase.connect(args.pg);
      await db.query(`DROP SCHEMA IF EXISTS "${new URL(url).searchParams.get('schema')}" CASCADE`);
      await db.close();
    }
  } finally {
    for (const child of children) child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
  if (args.json) {
    process.stdout.write(`${JSON.stringify({ memories: args.memories, queries: args.queries, clients: args.clients, writesPerClient: args.writes, results }, null, 2)}\n`);
    return;
  }
  process.stdout.write(`cairn serve over HTTP — ${args.memories} memories (${EMBEDDER} embeddings), ${args.queries} recalls, ${args.clients} clients × ${args.writes} writes\n`);
  process.stdout.write('store                                   | load s | recall p50 ms | recall p95 ms | writes/s\n');
  for (const r of results) {
    process.stdout.write(
      `${r.store.padEnd(40)}| ${r.loadSeconds.toFixed(0).padStart(6)} | ${r.recallP50.toFixed(1).padStart(13)} | ${r.recallP95.toFixed(1).padStart(13)} | ${r.writesPerSecond.toFixed(0).padStart(8)}\n`,
    );
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  });
}
