/**
 * `rss`: resident memory of the MCP server (`cairn mcp`, the process an agent keeps running) idle
 * at each corpus size. The server runs as a real child process on a home whose cairn.db is a copy
 * of the corpus database; an MCP client (the SDK's, over stdio) calls `status` and one `recall` so
 * the store is open and warm, then waits about a second and reads VmRSS and VmHWM from
 * /proc/<pid>/status. A bare idle `node` process is measured the same way, as the floor.
 * SPEC §9 target: ≤ 80 MB at 100K.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { datasetOf, ensureCorpusDb } from '../dataset.js';
import { atMost, metric, sizeLabel } from '../metrics.js';
import { MCP_NODE_FLAGS } from 'cairn-memory/testing';
import { suiteSpec } from '../spec.js';
import type { BenchContext, Dataset, Metric, Suite, SuiteOutcome } from '../types.js';

const BIN = resolve(fileURLToPath(import.meta.url), '../../../../bin/cairn.js');
const TARGET_MB = 80;
const IDLE_MS = 1000;
const ANCHOR = suiteSpec('rss')?.anchor ?? null;

export interface ProcMemory {
  /** Resident set size now, in MB (1 MB = 2^20 bytes). */
  rssMb: number;
  /** Peak resident set size (high-water mark), in MB. */
  hwmMb: number;
}

/** VmRSS and VmHWM of a live process, from /proc (Linux); null elsewhere or when it is gone. */
export function procMemory(pid: number): ProcMemory | null {
  const file = `/proc/${pid}/status`;
  if (!existsSync(file)) return null;
  const text = readFileSync(file, 'utf8');
  const kb = (key: string): number | null => {
    const m = new RegExp(`^${key}:\\s+(\\d+)\\s+kB`, 'm').exec(text);
    return m ? Number(m[1]) : null;
  };
  const rss = kb('VmRSS');
  const hwm = kb('VmHWM');
  return rss === null || hwm === null ? null : { rssMb: rss / 1024, hwmMb: hwm / 1024 };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A bare `node` process idle for the same time: the floor any Node server starts from. */
async function bareNode(): Promise<ProcMemory | null> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  try {
    await sleep(IDLE_MS);
    return child.pid === undefined ? null : procMemory(child.pid);
  } finally {
    child.kill();
  }
}

interface ServerMemory extends ProcMemory {
  recallHits: number;
  recallMode: string | null;
}

/** The server on a copy of `dbPath`, or on an empty store when it is null. */
async function measureServer(dbPath: string | null, query: string): Promise<ServerMemory> {
  const home = mkdtempSync(join(tmpdir(), 'cairn-bench-rss-'));
  try {
    if (dbPath !== null) copyFileSync(dbPath, join(home, 'cairn.db'));
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('CAIRN_')) env[k] = v;
    env.CAIRN_HOME = home;
    const transport = new StdioClientTransport({ command: process.execPath, args: [...MCP_NODE_FLAGS, BIN, 'mcp'], env, cwd: home, stderr: 'ignore' });
    const client = new Client({ name: 'cairn-bench-rss', version: '1.0.0' });
    await client.connect(transport);
    try {
      await client.callTool({ name: 'status', arguments: {} });
      const recalled = await client.callTool({ name: 'recall', arguments: { query, k: 10 } });
      const structured = (recalled.structuredContent ?? {}) as { hits?: unknown[]; mode?: string };
      await sleep(IDLE_MS);
      const pid = transport.pid;
      const mem = pid === null ? null : procMemory(pid);
      if (!mem) throw new Error('could not read the MCP server process memory from /proc');
      return { ...mem, recallHits: structured.hits?.length ?? 0, recallMode: structured.mode ?? null };
    } finally {
      await client.close();
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

export const rssSuite: Suite = {
  name: 'rss',
  description: 'resident memory (VmRSS, and peak VmHWM) of the `cairn mcp` server process, idle after status + one recall, at each corpus size',
  async run(ctx: BenchContext): Promise<SuiteOutcome> {
    if (process.platform !== 'linux' || !existsSync('/proc/self/status')) return { status: 'skipped', reason: 'needs Linux /proc to read a process RSS' };
    if (!existsSync(join(BIN, '../../dist/cli/main.js'))) return { status: 'skipped', reason: 'dist/ is missing: run `npm run build` first (the suite spawns bin/cairn.js mcp)' };
    const datasets: Dataset[] = [];
    const metrics: Metric[] = [];
    const bySize: Record<string, unknown> = {};
    const floor = await bareNode();
    ctx.log('rss: cairn mcp on an empty store');
    const empty = await measureServer(null, 'build');
    for (const size of ctx.sizes) {
      const corpus = await ensureCorpusDb(ctx.cacheDir, { seed: ctx.seed, size }, ctx.log);
      datasets.push(datasetOf(corpus));
      const label = `@${sizeLabel(size)}`;
      ctx.log(`rss ${label}: cairn mcp on a copy of the corpus`);
      const query = corpus.manifest.queries[0]?.text ?? 'build';
      const m = await measureServer(corpus.path, query);
      const target = size === 100_000 ? atMost(TARGET_MB) : null;
      metrics.push(
        metric(`MCP server RSS idle ${label}`, m.rssMb, 'MB', { target, anchor: ANCHOR, note: `after status + 1 recall (${m.recallHits} hits), ${IDLE_MS} ms idle` }),
        metric(`MCP server peak RSS (VmHWM) ${label}`, m.hwmMb, 'MB'),
      );
      bySize[sizeLabel(size)] = m;
    }
    metrics.push(metric('MCP server RSS idle, empty store', empty.rssMb, 'MB', { note: 'code and runtime alone: what the corpus adds is the difference' }));
    if (floor) metrics.push(metric('baseline: bare idle node process RSS', floor.rssMb, 'MB', { note: 'the floor any Node server starts from' }));
    return { status: 'ok', datasets, metrics, details: { bySize, emptyStore: empty, bareNode: floor, idleMs: IDLE_MS } };
  },
};
