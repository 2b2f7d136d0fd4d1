/**
 * `peers`: the same workloads through cairn and through peer tools installed from npm as dev
 * dependencies, each driven through its own public interface, in one run and one table.
 *
 * Peers:
 * - `@modelcontextprotocol/server-memory` — the MCP reference memory server, spawned through its
 *   bin with node and spoken to over MCP stdio (the SDK client). Writes: `create_entities` (one
 *   entity per memory, the text as its observation); recall: `search_nodes` (its only search: a
 *   case-insensitive substring match of the whole query, unranked). Its JSONL file lives in a
 *   temp folder (MEMORY_FILE_PATH).
 * - `vectra` — `LocalIndex` (a JSON file on disk), vector query with cairn's feature-hashing
 *   embedder (`hash:v1:256`, computed here: no model download). vectra's BM25 exists only as the
 *   hybrid half of `LocalDocumentIndex` (documents, chunking, an embeddings model), so it is not used.
 * - `minisearch` — a plain in-memory BM25 library (`addAll` / `add` / `search`, default options).
 * - cairn — in-process `remember` / `recall`, BM25 only (no embedder).
 *
 * Workloads:
 * (a) synthetic: the corpus generator's memories (10K; quick 1K) loaded once, then recall p50 and
 *     hit@10 on its known-answer queries, then write p50 of new memories (the write suite's
 *     workload: same generator, another seed) one call at a time on the filled index.
 * (b) LoCoMo dev retrieval: each conversation indexed separately (one document per turn, the
 *     speaker's name before the text, an image caption appended), questions of categories 1–4,
 *     turn-level evidence recall@5 / @10 per question (share of its evidence turns in the top k),
 *     averaged over questions.
 * A peer that cannot be loaded, or whose interface cannot do a workload, gets a row that says so.
 *
 * The semantic table (peers-semantic.ts) adds memory servers that embed with a real model — cairn's
 * MCP server with its ONNX encoders, and from PyPI mcp-memory-service and basic-memory (the
 * bench-only venvs of `bench/peers/setup.sh`, fed cairn's model files) — on a smaller workload
 * (the Python servers store about one memory a second here): the paraphrase cases, the first
 * LoCoMo conversation(s), a small synthetic corpus, and each server's resident memory.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ConversationContext, createCairn, openSqliteStore } from 'cairn-memory';
import { DEFAULT_EMBEDDER_SPEC, createHashEmbedder } from 'cairn-memory/testing';
import { CORPUS_NOW, defaultQueryCount, generateCorpus } from '../corpus.js';
import { datasetOf, ensureCorpusDb, workingCopy } from '../dataset.js';
import { metric, sizeLabel } from '../metrics.js';
import { summarize, timeEach } from '../stats.js';
import type { BenchContext, Dataset, Metric, Suite, SuiteOutcome } from '../types.js';
import { basicMemoryPeer, cairnMcpPeer, mcpMemoryServicePeer } from './peers-mcp.js';
import { runSemantic, semanticMetrics, type SemanticRow, type SemanticWorkload } from './peers-semantic.js';
import { dataSource } from './beir.js';

const K = 10;
const require = createRequire(import.meta.url);

/** One document as every peer sees it. */
export interface Doc {
  id: string;
  text: string;
  /**
   * Where a conversation turn sits (LoCoMo: session `<conversation>/D<n>`, line = its place in
   * the session), as a conversation import records it; peers without such a notion ignore it.
   */
  provenance?: { sessionId: string; line: number };
}

/** What the suite needs from a peer: load, write one, search. */
export interface PeerIndex {
  /** Load many documents (not timed). */
  load(docs: Doc[]): Promise<void>;
  /** Write one document, the way a user of the tool would (timed). */
  write(doc: Doc): Promise<void>;
  /** Ids of the best `k` documents for `query`, best first. */
  search(query: string, k: number): Promise<string[]>;
  close(): Promise<void>;
}

export interface Peer {
  name: string;
  /** The installed version, or null when it is not installed. */
  version: string | null;
  /** How it is driven, in words (shown in the table). */
  how: string;
  /** A fresh, empty index in `dir`. */
  open(dir: string): Promise<PeerIndex>;
}

/** The folder of an installed npm package (found through node's resolution paths), or null. */
export function packageDir(pkg: string): string | null {
  for (const base of require.resolve.paths(pkg) ?? []) {
    const dir = join(base, pkg);
    if (existsSync(join(dir, 'package.json'))) return dir;
  }
  return null;
}

/** The installed version of an npm package, or null when it is not installed. */
export function installedVersion(pkg: string): string | null {
  const dir = packageDir(pkg);
  if (dir === null) return null;
  try {
    return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: string }).version ?? null;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------- the peers

const SERVER_MEMORY = '@modelcontextprotocol/server-memory';

function serverMemoryPeer(): Peer {
  const version = installedVersion(SERVER_MEMORY);
  return {
    name: 'mcp server-memory',
    version,
    how: 'MCP stdio: create_entities / search_nodes (substring match, unranked)',
    async open(dir) {
      const pkgDir = packageDir(SERVER_MEMORY);
      if (pkgDir === null) throw new Error(`${SERVER_MEMORY} is not installed`);
      const manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { bin?: string | Record<string, string> };
      const binPath = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin ?? {})[0];
      if (!binPath) throw new Error(`${SERVER_MEMORY} declares no bin`);
      const bin = join(pkgDir, binPath);
      const env: Record<string, string> = {};
      for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
      env.MEMORY_FILE_PATH = join(dir, 'memory.jsonl');
      const transport = new StdioClientTransport({ command: process.execPath, args: [bin], env, cwd: dir, stderr: 'ignore' });
      const client = new Client({ name: 'cairn-bench-peers', version: '1.0.0' });
      await client.connect(transport);
      const create = async (docs: Doc[]): Promise<void> => {
        const r = await client.callTool({ name: 'create_entities', arguments: { entities: docs.map((d) => ({ name: d.id, entityType: 'memory', observations: [d.text] })) } });
        if (r.isError) throw new Error(`server-memory create_entities failed: ${JSON.stringify(r.content).slice(0, 200)}`);
      };
      return {
        async load(docs) {
          for (let i = 0; i < docs.length; i += 500) await create(docs.slice(i, i + 500));
        },
        write: (doc) => create([doc]),
        async search(query, k) {
          const r = await client.callTool({ name: 'search_nodes', arguments: { query } });
          const graph = (r.structuredContent ?? {}) as { entities?: { name: string }[] };
          return (graph.entities ?? []).slice(0, k).map((e) => e.name);
        },
        close: () => client.close(),
      };
    },
  };
}

const VECTRA_DIM = 256;

function vectraPeer(): Peer {
  const version = installedVersion('vectra');
  const embedder = createHashEmbedder({ dimension: VECTRA_DIM });
  const vector = async (text: string): Promise<number[]> => Array.from((await embedder.embed([text]))[0] ?? []);
  return {
    name: 'vectra',
    version,
    how: `LocalIndex vector query, ${embedder.model} embedding computed by the bench (no model)`,
    async open(dir) {
      const { LocalIndex } = (await import('vectra')) as typeof import('vectra');
      const index = new LocalIndex(join(dir, 'vectra'));
      await index.createIndex({ version: 1, deleteIfExists: true });
      return {
        async load(docs) {
          await index.beginUpdate();
          for (const d of docs) await index.insertItem({ id: d.id, vector: await vector(d.text), metadata: { text: d.text } });
          await index.endUpdate();
        },
        async write(doc) {
          await index.insertItem({ id: doc.id, vector: await vector(doc.text), metadata: { text: doc.text } });
        },
        async search(query, k) {
          const results = await index.queryItems(await vector(query), query, k);
          return results.map((r) => r.item.id);
        },
        close: async () => {},
      };
    },
  };
}

function minisearchPeer(): Peer {
  const version = installedVersion('minisearch');
  return {
    name: 'minisearch',
    version,
    how: 'in-memory BM25 (default options), addAll / add / search',
    async open() {
      const { default: MiniSearch } = (await import('minisearch')) as typeof import('minisearch');
      const index = new MiniSearch<Doc>({ fields: ['text'], idField: 'id' });
      return {
        async load(docs) {
          index.addAll(docs);
        },
        async write(doc) {
          index.add(doc);
        },
        async search(query, k) {
          return index.search(query).slice(0, k).map((r) => String(r.id));
        },
        close: async () => {},
      };
    },
  };
}

/** cairn through its library API on a fresh SQLite store, BM25 only. */
function cairnPeer(): Peer {
  return {
    name: 'cairn',
    version: installedVersion('cairn-memory'),
    how: 'in-process remember / recall, BM25 only (no embedder); synthetic recall on the real path (touch), LoCoMo with touch off, each turn stored as `cairn import` stores a conversation (provenance session + line, the turn it answers as context)',
    async open(dir) {
      const store = await openSqliteStore(join(dir, 'cairn.db'));
      const cairn = createCairn({ store, clock: { now: () => CORPUS_NOW }, actor: 'bench' });
      /** memory id → the documents it holds (remember folds an exact repeat into the earlier memory). */
      const docsOf = new Map<string, string[]>();
      const conversation = new ConversationContext();
      const write = async (doc: Doc): Promise<void> => {
        const context = conversation.next(doc.provenance, doc.text);
        const r = await cairn.remember({
          text: doc.text,
          kind: 'note',
          scope: 'user',
          source: 'import',
          ...(doc.provenance ? { provenance: doc.provenance } : {}),
          ...(context !== null ? { context } : {}),
        });
        const list = docsOf.get(r.memory.id) ?? [];
        list.push(doc.id);
        docsOf.set(r.memory.id, list);
      };
      return {
        async load(docs) {
          for (const d of docs) await write(d);
        },
        write,
        async search(query, k) {
          const r = await cairn.recall({ query, k, touch: false });
          return r.hits.flatMap((h) => docsOf.get(h.memory.id) ?? []).slice(0, k);
        },
        close: () => store.close(),
      };
    },
  };
}

export function defaultPeers(): Peer[] {
  return [serverMemoryPeer(), vectraPeer(), minisearchPeer()];
}

// ---------------------------------------------------------------- workloads

export interface SyntheticRow {
  status: 'ok' | 'unavailable' | 'failed';
  reason: string | null;
  writeP50Ms: number | null;
  recallP50Ms: number | null;
  hitAt10: number | null;
  writes: number;
  queries: number;
}

export interface LocomoRow {
  status: 'ok' | 'unavailable' | 'failed' | 'skipped';
  reason: string | null;
  recallAt5: number | null;
  recallAt10: number | null;
  questions: number;
}

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e)).split('\n')[0]?.slice(0, 200) ?? '';

async function withDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-bench-peer-'));
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface SyntheticWorkload {
  docs: Doc[];
  queries: { text: string; target: string }[];
  writes: Doc[];
}

function syntheticWorkload(seed: number, size: number, queryCount: number, writeCount: number): SyntheticWorkload {
  const docs: Doc[] = [];
  const queries: { text: string; target: string; order: number }[] = [];
  for (const m of generateCorpus({ seed, size, queries: defaultQueryCount(size) })) {
    if (m.forgotten) continue;
    docs.push({ id: `m${m.index}`, text: m.text });
    if (m.query) queries.push({ text: m.query.text, target: `m${m.query.target}`, order: m.query.order });
  }
  queries.sort((a, b) => a.order - b.order);
  const writes: Doc[] = [];
  for (const m of generateCorpus({ seed: seed + 1_000_003, size: writeCount, queries: 0 })) writes.push({ id: `w${m.index}`, text: m.text });
  return { docs, queries: queries.slice(0, queryCount), writes };
}

async function runSynthetic(peer: Peer, work: SyntheticWorkload): Promise<SyntheticRow> {
  const empty = { writeP50Ms: null, recallP50Ms: null, hitAt10: null, writes: 0, queries: 0 };
  if (peer.version === null) return { status: 'unavailable', reason: 'not installed (npm install -D)', ...empty };
  try {
    return await withDir(async (dir) => {
      const index = await peer.open(dir);
      try {
        await index.load(work.docs);
        for (const q of work.queries.slice(0, 5)) await index.search(q.text, K);
        let hits = 0;
        const recall = summarize(
          await timeEach(work.queries, async (q) => {
            if ((await index.search(q.text, K)).includes(q.target)) hits++;
          }),
        );
        const write = summarize(await timeEach(work.writes.slice(5), (d) => index.write(d), work.writes.slice(0, 5)));
        return { status: 'ok', reason: null, writeP50Ms: write.p50, recallP50Ms: recall.p50, hitAt10: hits / work.queries.length, writes: write.n, queries: work.queries.length };
      } finally {
        await index.close();
      }
    });
  } catch (e) {
    return { status: 'failed', reason: errorText(e), ...empty };
  }
}

/** cairn on the cached corpus database (the same generated memories, written as `remember` stores them). */
async function runSyntheticCairn(ctx: BenchContext, size: number, queryCount: number, work: SyntheticWorkload, datasets: Dataset[]): Promise<SyntheticRow> {
  const corpus = await ensureCorpusDb(ctx.cacheDir, { seed: ctx.seed, size }, ctx.log);
  datasets.push(datasetOf(corpus));
  const copy = workingCopy(corpus, join(ctx.cacheDir, 'work'));
  const store = await openSqliteStore(copy.path);
  try {
    const cairn = createCairn({ store, clock: { now: () => CORPUS_NOW }, actor: 'bench' });
    const queries = corpus.manifest.queries.slice(0, queryCount);
    const warm = corpus.manifest.queries.slice(queryCount, queryCount + 5);
    for (const q of warm) await cairn.recall({ query: q.text, k: K, project: q.project });
    let hits = 0;
    const recall = summarize(
      await timeEach(queries, async (q) => {
        const r = await cairn.recall({ query: q.text, k: K, project: q.project });
        if (r.hits.slice(0, K).some((h) => h.memory.id === q.targetId)) hits++;
      }),
    );
    const inputs = [...generateCorpus({ seed: ctx.seed + 1_000_003, size: work.writes.length, queries: 0 })];
    const write = summarize(
      await timeEach(
        inputs.slice(5),
        (m) => cairn.remember({ text: m.text, kind: m.kind, scope: m.scope, project: m.project, session: m.session, tags: m.tags, source: m.source }),
        inputs.slice(0, 5),
      ),
    );
    return { status: 'ok', reason: null, writeP50Ms: write.p50, recallP50Ms: recall.p50, hitAt10: hits / queries.length, writes: write.n, queries: queries.length };
  } finally {
    await store.close();
    copy.dispose();
  }
}

// ---------------------------------------------------------------- LoCoMo

interface LocomoTurn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}

interface LocomoSample {
  sample_id?: string;
  conversation: Record<string, unknown>;
  qa: { question: string; evidence?: string[]; category: number }[];
}

export interface LocomoConversation {
  id: string;
  turns: Doc[];
  questions: { question: string; evidence: string[]; category: number }[];
}

/** `D3:7`-style ids from LoCoMo's evidence lists, repairing the known malformed forms; null when hopeless. */
export function normalizeEvidence(raw: string): string[] {
  const out: string[] = [];
  for (const part of raw.split(/[;,]/)) {
    const m = /^\s*D\s*:?\s*(\d+)\s*:\s*(\d+)\s*$/.exec(part);
    if (m) out.push(`D${Number(m[1])}:${Number(m[2])}`);
  }
  return out;
}

/** Sessions of the semantic table's LoCoMo conversation in a quick run. */
export const QUICK_SEMANTIC_SESSIONS = 5;

/** `conv` cut to its first `sessions` sessions (D1…Dn) and the questions whose evidence all lies there. */
export function firstSessions(conv: LocomoConversation, sessions: number): LocomoConversation {
  const kept = (id: string) => Number(/^D(\d+):/.exec(id)?.[1] ?? Number.POSITIVE_INFINITY) <= sessions;
  return { id: conv.id, turns: conv.turns.filter((t) => kept(t.id)), questions: conv.questions.filter((q) => q.evidence.every(kept)) };
}

export function loadLocomo(file: string): { conversations: LocomoConversation[]; malformed: number } {
  const samples = JSON.parse(readFileSync(file, 'utf8')) as LocomoSample[];
  let malformed = 0;
  const conversations = samples.map((s, i) => {
    const turns: Doc[] = [];
    for (const [key, value] of Object.entries(s.conversation)) {
      if (!/^session_\d+$/.test(key) || !Array.isArray(value)) continue;
      for (const t of value as LocomoTurn[]) {
        const caption = t.blip_caption ? ` [image: ${t.blip_caption}]` : '';
        const session = Number(/^D(\d+)/.exec(t.dia_id)?.[1] ?? 0);
        const line = Number(/:(\d+)$/.exec(t.dia_id)?.[1] ?? 0);
        turns.push({ id: `D${session}:${line}`, text: `${t.speaker}: ${t.text}${caption}`, provenance: { sessionId: `${s.sample_id ?? `conv-${i}`}/D${session}`, line } });
      }
    }
    const known = new Set(turns.map((t) => t.id));
    const questions = s.qa
      .filter((q) => q.category >= 1 && q.category <= 4)
      .map((q) => {
        const evidence = [...new Set((q.evidence ?? []).flatMap(normalizeEvidence))].filter((e) => known.has(e));
        if (evidence.length < (q.evidence ?? []).length) malformed++;
        return { question: q.question, evidence, category: q.category };
      })
      .filter((q) => q.evidence.length > 0);
    return { id: s.sample_id ?? `conv-${i}`, turns, questions };
  });
  return { conversations, malformed };
}

async function runLocomo(peer: Peer, conversations: LocomoConversation[]): Promise<LocomoRow> {
  if (peer.version === null && peer.name !== 'cairn') return { status: 'unavailable', reason: 'not installed (npm install -D)', recallAt5: null, recallAt10: null, questions: 0 };
  let r5 = 0;
  let r10 = 0;
  let n = 0;
  try {
    for (const conv of conversations) {
      await withDir(async (dir) => {
        const index = await peer.open(dir);
        try {
          await index.load(conv.turns);
          for (const q of conv.questions) {
            const top = await index.search(q.question, 10);
            const share = (k: number): number => q.evidence.filter((e) => top.slice(0, k).includes(e)).length / q.evidence.length;
            r5 += share(5);
            r10 += share(10);
            n++;
          }
        } finally {
          await index.close();
        }
      });
    }
  } catch (e) {
    return { status: 'failed', reason: errorText(e), recallAt5: null, recallAt10: null, questions: n };
  }
  return { status: 'ok', reason: null, recallAt5: n > 0 ? r5 / n : null, recallAt10: n > 0 ? r10 / n : null, questions: n };
}

// ---------------------------------------------------------------- suite

export interface PeersOptions {
  peers?: Peer[];
  /** Include cairn's own row (default true). */
  cairn?: boolean;
  /** Synthetic corpus size. @default 10,000 (quick: 1,000) */
  size?: number;
  /** Known-answer queries timed. @default 200 (quick: 50) */
  queries?: number;
  /** Writes timed (plus 5 warmup). @default 200 (quick: 50) */
  writes?: number;
  /** LoCoMo conversations used. @default all (quick: the first) */
  conversations?: number;
  /** Peers of the semantic table. @default cairn's MCP server (BM25, and each of `semanticEmbedders`), mcp-memory-service, basic-memory, then the main table's peers */
  semanticPeers?: Peer[];
  /**
   * Embedders cairn's MCP server runs with in the semantic table: `$CAIRN_BENCH_EMBEDDERS` when
   * set, else the product default and all-MiniLM-L6-v2 (the Python peers' weights); quick runs
   * take the first only.
   */
  semanticEmbedders?: string[];
  /** Synthetic memories in the semantic table. @default 200 (quick: 100) */
  semanticSize?: number;
  /** LoCoMo conversations in the semantic table. @default 1 */
  semanticConversations?: number;
  /**
   * Sessions of each LoCoMo conversation in the semantic table, with the questions whose evidence
   * lies in them. @default all (quick: the first {@link QUICK_SEMANTIC_SESSIONS}, 92 of conv-26's
   * 419 turns: a quick run only shows that the table runs, and the model embeds every turn)
   */
  semanticSessions?: number;
  /** Skip the semantic table. @default false (`$CAIRN_BENCH_PEERS_TABLE=npm` skips it) */
  skipSemantic?: boolean;
  /** Skip the npm table (cairn and the npm peers on the full workloads). @default false (`$CAIRN_BENCH_PEERS_TABLE=semantic` skips it) */
  skipMain?: boolean;
}

function semanticEmbedderSpecs(): string[] {
  const fromEnv = (process.env.CAIRN_BENCH_EMBEDDERS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return fromEnv.length > 0 ? fromEnv : [DEFAULT_EMBEDDER_SPEC, 'onnx:all-minilm-l6-v2-q'].filter((s, i, all) => all.indexOf(s) === i);
}

export function createPeersSuite(options: PeersOptions = {}): Suite {
  return {
    name: 'peers',
    description: 'the synthetic write/recall workload and LoCoMo dev retrieval through cairn and through peer tools from npm (MCP reference memory server, vectra, minisearch); then a semantic table on a smaller workload with servers that embed with a real model (cairn mcp with its ONNX encoders, mcp-memory-service and basic-memory from the bench-only venvs of bench/peers/setup.sh): paraphrases, LoCoMo, recall/write p50, server RSS',
    async run(ctx: BenchContext): Promise<SuiteOutcome> {
      const size = options.size ?? (ctx.quick ? 1000 : 10_000);
      const queryCount = options.queries ?? (ctx.quick ? 50 : 200);
      const writeCount = (options.writes ?? (ctx.quick ? 50 : 200)) + 5;
      const label = `@${sizeLabel(size)}`;
      const peers = options.peers ?? defaultPeers();
      const datasets: Dataset[] = [];
      const work = syntheticWorkload(ctx.seed, size, queryCount, writeCount);

      const locomoFile = join(ctx.dataDir, 'locomo', 'locomo-dev.json');
      const locomo = existsSync(locomoFile) ? loadLocomo(locomoFile) : null;
      if (locomo) {
        const raw = readFileSync(locomoFile);
        const source = dataSource(dirname(locomoFile));
        datasets.push({ name: 'locomo-dev', sha256: createHash('sha256').update(raw).digest('hex'), generator: null, ...(source ? { source } : {}), buildMs: null, cachedBuildMs: null });
      }
      const convs = locomo ? locomo.conversations.slice(0, options.conversations ?? (ctx.quick ? 1 : locomo.conversations.length)) : [];

      const rows: { peer: string; version: string | null; how: string; synthetic: SyntheticRow; locomo: LocomoRow }[] = [];
      const noLocomo: LocomoRow = { status: 'skipped', reason: `no ${locomoFile} (pass --data)`, recallAt5: null, recallAt10: null, questions: 0 };
      const table = process.env.CAIRN_BENCH_PEERS_TABLE ?? 'both';
      const skipMain = options.skipMain ?? table === 'semantic';
      const skipSemantic = options.skipSemantic ?? table === 'npm';
      if (options.cairn !== false && !skipMain) {
        ctx.log(`peers: cairn ${label}`);
        const cairn = cairnPeer();
        const synthetic = await runSyntheticCairn(ctx, size, queryCount, work, datasets).catch((e: unknown): SyntheticRow => ({ status: 'failed', reason: errorText(e), writeP50Ms: null, recallP50Ms: null, hitAt10: null, writes: 0, queries: 0 }));
        ctx.log('peers: cairn LoCoMo');
        rows.push({ peer: 'cairn', version: cairn.version, how: cairn.how, synthetic, locomo: locomo ? await runLocomo(cairn, convs) : noLocomo });
      }
      for (const peer of skipMain ? [] : peers) {
        ctx.log(`peers: ${peer.name} ${label}`);
        const synthetic = await runSynthetic(peer, work);
        ctx.log(`peers: ${peer.name} LoCoMo`);
        rows.push({ peer: peer.name, version: peer.version, how: peer.how, synthetic, locomo: locomo ? await runLocomo(peer, convs) : noLocomo });
      }

      let semantic: { rows: SemanticRow[]; size: number; queries: number; writes: number; conversations: string[]; sessions: number | null; turns: number; questions: number } | null = null;
      const semanticMetricsOut: Metric[] = [];
      if (!skipSemantic) {
        const sSize = options.semanticSize ?? (ctx.quick ? 100 : 200);
        const sQueries = ctx.quick ? 10 : 30;
        const sWrites = (ctx.quick ? 5 : 20) + 3;
        const sWork = syntheticWorkload(ctx.seed + 7, sSize, sQueries, sWrites);
        const sSessions = options.semanticSessions ?? (ctx.quick ? QUICK_SEMANTIC_SESSIONS : null);
        const sConvs = locomo ? locomo.conversations.slice(0, options.semanticConversations ?? 1) : [];
        const work: SemanticWorkload = {
          conversations: sSessions === null ? sConvs : sConvs.map((c) => firstSessions(c, sSessions)),
          synthetic: { docs: sWork.docs, queries: sWork.queries, writes: sWork.writes },
        };
        const specs = options.semanticEmbedders ?? (ctx.quick ? semanticEmbedderSpecs().slice(0, 1) : semanticEmbedderSpecs());
        const semanticPeers = options.semanticPeers ?? [cairnMcpPeer(null), ...specs.map((spec) => cairnMcpPeer(spec)), mcpMemoryServicePeer(), basicMemoryPeer(), ...peers];
        const sRows: SemanticRow[] = [];
        for (const peer of semanticPeers) {
          const row = await runSemantic(peer, work, ctx.log);
          // Each row as it completes, so a long run that is stopped keeps what it measured.
          ctx.log(`peers (semantic) row: ${JSON.stringify(row)}`);
          sRows.push(row);
        }
        semanticMetricsOut.push(...semanticMetrics(sRows, work));
        semantic = {
          rows: sRows,
          size: sSize,
          queries: work.synthetic.queries.length,
          writes: sWrites - 3,
          conversations: work.conversations.map((c) => c.id),
          sessions: sSessions,
          turns: work.conversations.reduce((n, c) => n + c.turns.length, 0),
          questions: work.conversations.reduce((n, c) => n + c.questions.length, 0),
        };
      }

      const metrics: Metric[] = [];
      for (const r of rows) {
        const tag = `${r.peer}${r.version ? ` ${r.version}` : ''}`;
        const why = (s: { status: string; reason: string | null }): string | undefined => (s.status === 'ok' ? undefined : `${s.status}: ${s.reason ?? ''}`);
        metrics.push(
          metric(`${tag}: write p50 ${label}`, r.synthetic.writeP50Ms, 'ms', { note: why(r.synthetic) ?? r.how }),
          metric(`${tag}: recall p50 ${label}`, r.synthetic.recallP50Ms, 'ms', { note: why(r.synthetic) }),
          metric(`${tag}: hit@${K} ${label} (known answers)`, r.synthetic.hitAt10, 'share', { note: why(r.synthetic) ?? `${r.synthetic.queries} queries` }),
          metric(`${tag}: LoCoMo evidence recall@5`, r.locomo.recallAt5, 'share', { note: why(r.locomo) ?? `${r.locomo.questions} questions` }),
          metric(`${tag}: LoCoMo evidence recall@10`, r.locomo.recallAt10, 'share', { note: why(r.locomo) }),
        );
      }
      metrics.push(...semanticMetricsOut);
      return {
        status: 'ok',
        datasets,
        metrics,
        details: {
          size,
          queries: queryCount,
          writes: writeCount - 5,
          locomo: locomo ? { conversations: convs.map((c) => c.id), questions: convs.reduce((n, c) => n + c.questions.length, 0), malformedEvidence: locomo.malformed } : null,
          rows,
          semantic,
        },
      };
    },
  };
}

export const peersSuite: Suite = createPeersSuite();
