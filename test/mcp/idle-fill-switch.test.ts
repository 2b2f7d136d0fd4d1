/**
 * The MCP server (`cairn mcp`, src/mcp/stdio.ts) during a model switch: its recalls search the old
 * index with the old model (requests never load the new one), and once that old model is loaded
 * and the client is quiet its idle fill continues the switch and completes it — as `cairn serve`
 * does (test/serve/idle-fill.test.ts). Before, the MCP server's fill waited for the configured
 * (new) model to be loaded, which never happened during a switch, so it left the work to ingests.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { createCairn } from '../../src/cairn.js';
import { withCache } from '../../src/embed/cache.js';
import type { FillSummary } from '../../src/embed/fill.js';
import { createHashEmbedder } from '../../src/embed/hash.js';
import { reindex } from '../../src/embed/reindex.js';
import { runMcp } from '../../src/mcp/stdio.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Embedder } from '../../src/types.js';
import { tempDir } from '../helpers/cli.js';
import { until } from '../helpers/until.js';

const dir = tempDir('cairn-mcp-switch-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Reply = { id: number; result?: unknown };

/** A hash embedder that reports `loaded` once it embedded something, like the ONNX one. */
function lazy(dimension: number, loads: Map<number, number>): Embedder {
  const base = createHashEmbedder({ dimension });
  let loaded = false;
  return withCache({
    model: base.model,
    dimension: base.dimension,
    get loaded() {
      return loaded;
    },
    embed: async (texts: string[]) => {
      if (!loaded) loads.set(dimension, (loads.get(dimension) ?? 0) + 1);
      loaded = true;
      return base.embed(texts);
    },
  });
}

describe('cairn mcp: idle fill during a model switch', () => {
  it('recall searches the old index with the old model; once it is loaded and the client is quiet, the fill completes the switch', async () => {
    const db = join(dir, 'cairn.db');
    const seed = await openSqliteStore(db);
    const plain = createCairn({ store: seed, project: null });
    for (let i = 0; i < 30; i++) await plain.remember({ text: `mcp memory ${i} about module m${i} and flag f${i % 4}` });
    await reindex(seed, createHashEmbedder({ dimension: 16 }));
    await seed.close();

    const loads = new Map<number, number>();
    const fills: FillSummary[] = [];
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const replies: Reply[] = [];
    let buffered = '';
    stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
        replies.push(JSON.parse(buffered.slice(0, nl)) as Reply);
        buffered = buffered.slice(nl + 1);
      }
    });
    const served = runMcp({
      env: { CAIRN_HOME: dir, HOME: dir, CAIRN_EMBEDDER: 'hash:32' },
      cwd: dir,
      stdin,
      stdout,
      makeEmbedder: async (spec) => lazy(Number(/^hash:(\d+)$/.exec(spec)?.[1] ?? NaN), loads),
      fillTiming: { idleMs: 300, intervalMs: 20, onFill: (s) => fills.push(s) },
    });
    const send = (message: object): void => void stdin.write(`${JSON.stringify(message)}\n`);
    const answer = async (id: number): Promise<Reply> => {
      await until(() => replies.some((r) => r.id === id), 10_000, 10);
      return replies.find((r) => r.id === id) as Reply;
    };
    const watch = await openSqliteStore(db);
    try {
      send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 't', version: '1' } } });
      await answer(0);
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      // Quiet, but no model loaded yet: no fill.
      await new Promise((r) => setTimeout(r, 500));
      expect(fills).toEqual([]);
      // A recall during the switch embeds its query with the old model (to search the old index).
      send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'recall', arguments: { query: 'module m3 flag' } } });
      const recall = await answer(1);
      expect(JSON.stringify(recall.result)).toContain('mcp memory 3');
      expect(loads.get(16)).toBe(1);
      expect(loads.get(32)).toBeUndefined();
      // The old model is loaded: the quiet client lets the fill load the new one and finish the switch.
      await until(async () => (await watch.vectorModel())?.model === 'hash:v1:32', 20_000, 20);
      expect(fills.some((f) => f.switching?.committed)).toBe(true);
      expect(fills.every((f) => f.outcome !== 'busy')).toBe(true);
      expect(JSON.parse((await watch.getState('vector_fill')) ?? 'null')).toBeNull();
      expect((await watch.stats()).vectors).toBe(30);
    } finally {
      stdin.end();
      expect(await served).toBe(0);
      await watch.close();
    }
  }, 60_000);
});
