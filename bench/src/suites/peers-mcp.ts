/**
 * Memory servers driven as their users' agents drive them: spawned as MCP stdio servers and spoken
 * to through the MCP SDK client, one fresh server (and data folder) per index. Their resident
 * memory is read from /proc for the server's whole process tree.
 *
 * - cairn — `cairn mcp` from this checkout, in a throwaway home, BM25 only or with an embedder
 *   (`$CAIRN_EMBEDDER`); tools `remember` / `recall`.
 * - mcp-memory-service (PyPI `mcp-memory-service-lite`) and basic-memory (PyPI) — from the
 *   bench-only virtual environments that `bench/peers/setup.sh` builds, with cairn's own model
 *   files; their manifest `peers.json` says where each is, or why it is not there.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { MCP_NODE_FLAGS } from 'cairn-memory/testing';
import { PACKAGE_ROOT } from '../env.js';
import type { Doc, Peer, PeerIndex } from './peers.js';

/** Resident memory of a process and its descendants, in MB (current and peak). */
export interface Rss {
  rssMb: number;
  peakMb: number;
}

/** What a process peer adds to an index: its server's memory. */
export interface ProcessIndex extends PeerIndex {
  rss(): Rss | null;
}

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** `pid` and every process below it (Linux /proc; just `pid` elsewhere). */
function processTree(pid: number): number[] {
  const parent = new Map<number, number>();
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        parent.set(Number(entry), ppid);
      } catch {
        // the process ended while we looked
      }
    }
  } catch {
    return [pid];
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) for (const [child, ppid] of parent) if (ppid === tree[i]) tree.push(child);
  return tree;
}

/** RSS of `pid`'s process tree, or null when /proc cannot say. */
export function treeRss(pid: number | null): Rss | null {
  if (pid === null || !existsSync(`/proc/${pid}/status`)) return null;
  const tree = processTree(pid);
  const sum = (field: 'VmRSS' | 'VmHWM'): number => tree.reduce((n, p) => n + statusKb(p, field), 0) / 1024;
  return { rssMb: sum('VmRSS'), peakMb: sum('VmHWM') };
}

/** How one MCP server is launched, and how documents become its writes and searches. */
interface McpServerSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Store `doc`; returns the server's key for it (results name the same key). */
  write(client: Client, doc: Doc): Promise<string>;
  /** Keys of the best `k` results, best first. */
  search(client: Client, query: string, k: number): Promise<string[]>;
}

function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ['PATH', 'LANG', 'LC_ALL', 'TZ', 'OPENBLAS_CORETYPE', 'OPENBLAS_L2_SIZE']) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return env;
}

function text(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.map((c) => c.text ?? '').join('\n');
}

function check(result: unknown, what: string): void {
  if ((result as { isError?: boolean }).isError) throw new Error(`${what} failed: ${text(result).slice(0, 200)}`);
}

/** Spawn the server in `dir` and wrap it as an index; documents map to the keys it returns. */
async function openMcp(spec: McpServerSpec, dir: string): Promise<ProcessIndex> {
  const transport = new StdioClientTransport({ command: spec.command, args: spec.args, env: spec.env, cwd: dir, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  const client = new Client({ name: 'cairn-bench-peers', version: '1.0.0' });
  try {
    await client.connect(transport, { timeout: 300_000 });
  } catch (e) {
    throw new Error(`${(e as Error).message}; server stderr: ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
  }
  /** server key → the documents it holds (a server may fold a repeated text into one entry). */
  const docsOf = new Map<string, string[]>();
  const write = async (doc: Doc): Promise<void> => {
    const key = await spec.write(client, doc);
    docsOf.set(key, [...(docsOf.get(key) ?? []), doc.id]);
  };
  return {
    async load(docs) {
      for (const d of docs) await write(d);
    },
    write,
    async search(query, k) {
      const keys = await spec.search(client, query, k);
      return keys.flatMap((key) => docsOf.get(key) ?? []).slice(0, k);
    },
    rss: () => treeRss(transport.pid),
    close: () => client.close(),
  };
}

const CALL = { timeout: 300_000 };

// ---------------------------------------------------------------- cairn

/** cairn's MCP server from this checkout (needs `npm run build`), BM25 only or with `embedder`. */
export function cairnMcpPeer(embedder: string | null): Peer {
  const bin = join(PACKAGE_ROOT, 'bin', 'cairn.js');
  const built = existsSync(join(PACKAGE_ROOT, 'dist', 'cli', 'main.js'));
  let version: string | null = null;
  try {
    version = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version?: string }).version ?? null;
  } catch {
    version = null;
  }
  return {
    name: embedder ? `cairn mcp + ${embedder}` : 'cairn mcp (BM25)',
    version: built ? version : null,
    how: `MCP stdio: remember / recall (k = asked), ${embedder ? `hybrid with ${embedder}` : 'BM25 only'}, a fresh home per index`,
    open(dir) {
      const env = { ...baseEnv(), HOME: dir, CAIRN_HOME: join(dir, 'home') };
      // No embedder means BM25 alone: say so, or cairn would use its default encoder when installed.
      Object.assign(env, { CAIRN_EMBEDDER: embedder ?? 'none' });
      return openMcp(
        {
          command: process.execPath,
          args: [...MCP_NODE_FLAGS, bin, 'mcp'],
          env,
          async write(client, doc) {
            const r = await client.callTool({ name: 'remember', arguments: { text: doc.text, kind: 'note', scope: 'user' } }, undefined, CALL);
            check(r, 'cairn remember');
            const id = (r.structuredContent as { id?: string } | undefined)?.id;
            if (!id) throw new Error(`cairn remember returned no id: ${text(r).slice(0, 200)}`);
            return id;
          },
          async search(client, query, k) {
            const r = await client.callTool({ name: 'recall', arguments: { query, k } }, undefined, CALL);
            check(r, 'cairn recall');
            return ((r.structuredContent as { hits?: { id: string }[] } | undefined)?.hits ?? []).map((h) => h.id);
          },
        },
        dir,
      );
    },
  };
}

// ---------------------------------------------------------------- the Python peers

/** Where `bench/peers/setup.sh` puts the venvs (`$CAIRN_BENCH_PEERS`). */
export function pythonPeersDir(): string {
  return process.env.CAIRN_BENCH_PEERS || join(homedir(), '.cache', 'cairn-bench-peers');
}

interface ManifestEntry {
  version?: string;
  command?: string;
  args?: string[];
  home?: string;
  fastembedCache?: string;
  model?: string;
  modelSha256?: string;
  reason?: string;
}

/** The setup script's manifest entry for `name`, or the reason the peer is absent. */
function manifestEntry(name: string): { entry: ManifestEntry | null; reason: string } {
  const file = join(pythonPeersDir(), 'peers.json');
  if (!existsSync(file)) return { entry: null, reason: `no ${file}: run \`bash bench/peers/setup.sh\` to build the bench-only venvs (PyPI, ~1 GB)` };
  const entry = (JSON.parse(readFileSync(file, 'utf8')) as Record<string, ManifestEntry>)[name];
  if (!entry) return { entry: null, reason: `${file} has no ${name}: run \`bash bench/peers/setup.sh\` again` };
  if (entry.reason || !entry.command || !existsSync(entry.command)) return { entry: null, reason: entry.reason ?? `${entry.command} is missing: run \`bash bench/peers/setup.sh\` again` };
  return { entry, reason: '' };
}

/** A peer that is not installed: `version` null and the reason in `how`. */
function absent(name: string, reason: string): Peer {
  return {
    name,
    version: null,
    how: reason,
    open: () => Promise.reject(new Error(reason)),
  };
}

/** The environment every Python peer gets: offline, no telemetry, a private HOME under `dir`. */
function pythonEnv(dir: string): Record<string, string> {
  return { ...baseEnv(), HOME: dir, HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1', DO_NOT_TRACK: '1', PYTHONUNBUFFERED: '1' };
}

/**
 * mcp-memory-service (lite: ONNX, no PyTorch) with its SQLite + sqlite-vec backend. Writes pass a
 * `conversation_id` so its semantic de-duplication keeps every document (exact repeats are still
 * folded, as for cairn); recall is `memory_search` in its default (semantic) mode. Its results
 * are text; each names the memory's content hash, which `memory_store` returned.
 */
export function mcpMemoryServicePeer(): Peer {
  const name = 'mcp-memory-service';
  const { entry, reason } = manifestEntry(name);
  if (!entry) return absent(name, reason);
  return {
    name,
    version: entry.version ?? null,
    how: `MCP stdio (\`memory server\`): memory_store / memory_search (semantic), sqlite-vec, ${entry.model ?? ''}`,
    open(dir) {
      const env = {
        ...pythonEnv(dir),
        HOME: entry.home!,
        MCP_MEMORY_STORAGE_BACKEND: 'sqlite_vec',
        MCP_MEMORY_BASE_DIR: dir,
        MCP_MEMORY_USE_ONNX: '1',
        MCP_MEMORY_OFFLINE: '1',
        MCP_MEMORY_ONNX_ALLOW_DOWNLOAD: '0',
        MCP_MDNS_ENABLED: 'false',
        MCP_HTTP_ENABLED: 'false',
        MCP_CONSOLIDATION_ENABLED: 'false',
      };
      return openMcp(
        {
          command: entry.command!,
          args: entry.args ?? ['server'],
          env,
          async write(client, doc) {
            const r = await client.callTool({ name: 'memory_store', arguments: { content: doc.text, conversation_id: 'cairn-bench' } }, undefined, CALL);
            check(r, 'memory_store');
            const out = text(r);
            const hash = /hash:\s*([0-9a-f]{16,})/i.exec(out)?.[1];
            if (!hash) throw new Error(`memory_store: ${out.slice(0, 200)}`);
            return hash;
          },
          async search(client, query, k) {
            const r = await client.callTool({ name: 'memory_search', arguments: { query, limit: k } }, undefined, CALL);
            check(r, 'memory_search');
            const out = text(r);
            if (/^Error/i.test(out)) throw new Error(`memory_search: ${out.slice(0, 200)}`);
            return [...out.matchAll(/^\s*Hash:\s*([0-9a-f]{16,})/gim)].map((m) => m[1]!);
          },
        },
        dir,
      );
    },
  };
}

/**
 * basic-memory: each document a note (`write_note`, titled `note <n>`) in a fresh
 * project folder; recall is `search_notes` with its defaults (hybrid full text + FastEmbed
 * vectors, similarity floor 0.55) asking JSON output.
 */
export function basicMemoryPeer(): Peer {
  const name = 'basic-memory';
  const { entry, reason } = manifestEntry(name);
  if (!entry) return absent(name, reason);
  return {
    name,
    version: entry.version ?? null,
    how: `MCP stdio (\`basic-memory mcp\`): write_note / search_notes (defaults: hybrid), ${entry.model ?? ''}`,
    open(dir) {
      const env = {
        ...pythonEnv(dir),
        BASIC_MEMORY_CONFIG_DIR: join(dir, 'config'),
        BASIC_MEMORY_HOME: join(dir, 'notes'),
        FASTEMBED_CACHE_PATH: entry.fastembedCache!,
        BASIC_MEMORY_LOG_LEVEL: 'WARNING',
      };
      // Titles become file names and permalinks; document ids such as LoCoMo's `D1:13` would not
      // survive that unambiguously, so notes are numbered and results mapped by permalink.
      let seq = 0;
      return openMcp(
        {
          command: entry.command!,
          args: entry.args ?? ['mcp'],
          env,
          async write(client, doc) {
            const r = await client.callTool({ name: 'write_note', arguments: { title: `note ${++seq}`, content: doc.text, directory: 'bench', output_format: 'json' } }, undefined, CALL);
            check(r, 'write_note');
            const result = (r.structuredContent as { result?: { permalink?: string } } | undefined)?.result;
            if (!result?.permalink) throw new Error(`write_note: ${text(r).slice(0, 200)}`);
            return result.permalink;
          },
          async search(client, query, k) {
            const r = await client.callTool({ name: 'search_notes', arguments: { query, page_size: k, output_format: 'json' } }, undefined, CALL);
            check(r, 'search_notes');
            const results = (r.structuredContent as { result?: { results?: { permalink?: string }[] } } | undefined)?.result?.results ?? [];
            return results.flatMap((h) => (h.permalink ? [h.permalink] : []));
          },
        },
        dir,
      );
    },
  };
}
