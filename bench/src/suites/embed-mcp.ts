/**
 * The MCP server (`cairn mcp`, a real child process on an empty home) with an embedder configured
 * through `$CAIRN_EMBEDDER`: its RSS idle after `status` and a `recall` (the model is not loaded:
 * the vector index is empty), then after the first `remember` (which loads the model and embeds)
 * and a second `recall`. Part of `cairn bench embed`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { MCP_NODE_FLAGS } from 'cairn-memory/testing';
import { PACKAGE_ROOT } from '../env.js';
import { procMemory } from './rss.js';

/** What the server held, in MB, and how long its first write took (model load included). */
export interface McpEmbedderMemory {
  idleMb: number;
  loadedMb: number;
  firstWriteMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Measure `cairn mcp` with `spec` configured (null: no embedder, the BM25 floor). */
export async function measureMcpWithEmbedder(spec: string | null, idleMs = 1000): Promise<McpEmbedderMemory> {
  const home = mkdtempSync(join(tmpdir(), 'cairn-bench-embed-mcp-'));
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('CAIRN_')) env[k] = v;
  env.CAIRN_HOME = home;
  // null is the BM25 floor: 'none', or cairn would configure its default encoder when installed.
  env.CAIRN_EMBEDDER = spec ?? 'none';
  const transport = new StdioClientTransport({ command: process.execPath, args: [...MCP_NODE_FLAGS, join(PACKAGE_ROOT, 'bin', 'cairn.js'), 'mcp'], env, cwd: home, stderr: 'ignore' });
  const client = new Client({ name: 'cairn-bench-embed', version: '1.0.0' });
  await client.connect(transport);
  try {
    const rss = () => {
      const memory = transport.pid === null ? null : procMemory(transport.pid);
      if (!memory) throw new Error('cannot read the MCP server\'s memory from /proc');
      return memory.rssMb;
    };
    await client.callTool({ name: 'status', arguments: {} });
    await client.callTool({ name: 'recall', arguments: { query: 'how do releases reach production', k: 10 } });
    await sleep(idleMs);
    const idleMb = rss();
    const started = performance.now();
    await client.callTool({ name: 'remember', arguments: { text: 'deploys go through the staging cluster first' } });
    const firstWriteMs = performance.now() - started;
    await client.callTool({ name: 'recall', arguments: { query: 'how do releases reach production', k: 10 } });
    await sleep(idleMs);
    return { idleMb, loadedMb: rss(), firstWriteMs };
  } finally {
    await client.close();
    rmSync(home, { recursive: true, force: true });
  }
}
