import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCairn, type Cairn } from '../../src/cairn.js';
import { createHashEmbedder } from '../../src/embed/hash.js';
import { ALL_MINILM_L6_V2_Q } from '../../src/embed/onnx-models.js';
import { createOnnxEmbedder, onnxModelFolder } from '../../src/embed/onnx.js';
import { dot } from '../../src/embed/vector.js';
import { CairnError } from '../../src/errors.js';
import { blendOrder, contentPieces, maxSim, RERANK_DEPTH, RERANK_K, RERANK_WEIGHT, rerankHead, wordScores } from '../../src/recall/rerank.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Embedder, TokenStates } from '../../src/types.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createMcpServer } from '../../src/mcp/server.js';

/** A unit vector per word (one of 64 axes by a stable hash): states that match only on equal words. */
function wordState(word: string): Float32Array {
  let h = 0;
  for (const c of word) h = (h * 31 + c.charCodeAt(0)) % 64;
  const v = new Float32Array(64);
  v[h] = 1;
  return v;
}
const states = (text: string): TokenStates => {
  const tokens = text.toLowerCase().match(/[a-z0-9]+|[^\sa-z0-9]/g) ?? [];
  return { tokens, states: tokens.map(wordState) };
};

describe('rerank arithmetic', () => {
  it('marks function words and punctuation as no content; a continuation piece follows its word', () => {
    expect(contentPieces(['when', 'did', 'maria', 'go', 'to', 'the', 'beach', '?'])).toEqual([false, false, true, true, false, false, true, false]);
    expect(contentPieces(['what', '##ever', 'kayak', '##ing'])).toEqual([false, false, true, true]);
  });

  it('scores the mean best match of the query content pieces, or of all pieces when none is content', () => {
    const query = states('When did Maria go to the beach?');
    // Content pieces: maria, go, beach. Two of three are in the document.
    expect(maxSim(query, states('Maria: the beach was lovely'))).toBeCloseTo(2 / 3, 12);
    expect(maxSim(query, states('nothing alike here'))).toBe(0);
    // No content piece: every piece counts (what 0, is 1, it 1, ? 0).
    expect(maxSim(states('what is it?'), states('it is'))).toBeCloseTo(2 / 4, 12);
    expect(maxSim(states(''), states('anything'))).toBe(0);
    expect(maxSim(query, states(''))).toBe(0);
  });

  it('blends recall order and word order by weighted reciprocal ranks, keeping recall order on ties', () => {
    expect(blendOrder([0.3, 0.2, 0.1])).toEqual([0, 1, 2]);
    expect(blendOrder([0.5, 0.5, 0.5])).toEqual([0, 1, 2]);
    // The first hit has the worst words of ten, the next ones the best: it falls behind those
    // whose blended value beats 1 / (k + 1) + w / (k + 10).
    const scores = [0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1];
    const value = (i: number, wordRank: number) => 1 / (RERANK_K + i + 1) + RERANK_WEIGHT / (RERANK_K + wordRank);
    const ahead = [1, 2, 3, 4, 5, 6, 7, 8, 9].filter((i) => value(i, i) > value(0, 10));
    expect(ahead.length).toBeGreaterThan(0);
    expect(blendOrder(scores)).toEqual([...ahead, 0, ...[1, 2, 3, 4, 5, 6, 7, 8, 9].filter((i) => !ahead.includes(i))]);
    // With all the weight on words, the word order alone.
    expect(blendOrder(scores, RERANK_K, 1000)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 0]);
  });

  it('keeps items of higher precedence first, each group in the blended order', () => {
    // The pinned item comes first in recall's order and has the worst words: the blend alone would move it.
    const head = ['pinned', 'a', 'b', 'c', 'd', 'e'];
    const scores = [0, 0.9, 0.8, 0.7, 0.6, 0.5];
    expect(blendOrder(scores)[0]).not.toBe(0);
    expect(rerankHead(head, scores, (x) => (x === 'pinned' ? 2 : 0))).toEqual(['pinned', ...blendOrder(scores).filter((i) => i !== 0).map((i) => head[i])]);
    expect(rerankHead(head, scores, () => 0)).toEqual(blendOrder(scores).map((i) => head[i]));
  });

  it('gives no scores for an embedder without token states', async () => {
    expect(await wordScores(createHashEmbedder(), 'q', ['a'])).toBeNull();
  });
});

describe('recall with rerank', () => {
  let cairn: Cairn | null = null;
  let root = '';
  afterEach(async () => {
    await cairn?.close();
    cairn = null;
    if (root) rmSync(root, { recursive: true, force: true });
  });

  async function open(embedder: Embedder): Promise<Cairn> {
    root = mkdtempSync(join(tmpdir(), 'cairn-rerank-'));
    cairn = createCairn({ store: await openSqliteStore(join(root, 'cairn.db')), embedder, clock: { now: () => Date.UTC(2026, 0, 1) } });
    const words = ['beach', 'maria', 'trip', 'sand', 'waves', 'summer', 'photo', 'sunset', 'shell', 'picnic'];
    // Many memories that share some of the query's words, in different amounts.
    for (let i = 0; i < 30; i++) {
      const picked = words.filter((_, j) => (i * 7 + j * 3) % 5 < 2);
      await cairn.remember({ text: `note ${i}: ${picked.join(' ')} and the garden fence number ${i}`, project: 'p' });
    }
    return cairn;
  }
  /**
   * Token states that judge what recall cannot see: a memory's one piece agrees with the query's
   * by its note number (note i: cosine i / 30), so the word order differs from recall's.
   */
  const numbered = (text: string): TokenStates => {
    const n = /note (\d+)/.exec(text);
    if (!n) return { tokens: ['maria'], states: [Float32Array.from([1, 0])] };
    const s = Number(n[1]) / 30;
    return { tokens: ['note'], states: [Float32Array.from([s, Math.sqrt(1 - s * s)])] };
  };
  const withTokens = (calls: string[][] = []): Embedder => ({
    ...createHashEmbedder(),
    async tokenStates(texts) {
      calls.push(texts);
      return texts.map(numbered);
    },
  });
  const query = 'When did Maria go to the beach for a picnic?';

  it('reorders the first hits by the blend of recall order and word scores, one model call for the query and the hits', async () => {
    const calls: string[][] = [];
    const c = await open(withTokens(calls));
    const plain = await c.recall({ query, k: 30, project: 'p', touch: false });
    expect(plain.reranked).toBeUndefined();
    expect(calls).toHaveLength(0);
    const reranked = await c.recall({ query, k: 30, project: 'p', touch: false, rerank: true });
    expect(reranked.reranked).toBe(true);
    expect(calls).toHaveLength(1);
    const head = plain.hits.slice(0, RERANK_DEPTH);
    expect(calls[0]).toEqual([query, ...head.map((h) => h.memory.text)]);
    const q = numbered(query);
    const expected = blendOrder(head.map((h) => maxSim(q, numbered(h.memory.text)))).map((i) => head[i]!.memory.id);
    expect(reranked.hits.slice(0, RERANK_DEPTH).map((h) => h.memory.id)).toEqual(expected);
    expect(expected).not.toEqual(head.map((h) => h.memory.id));
    // Past the reranked depth, recall's order.
    expect(reranked.hits.slice(RERANK_DEPTH).map((h) => h.memory.id)).toEqual(plain.hits.slice(RERANK_DEPTH).map((h) => h.memory.id));
    // k below the depth: the first k of the same reranked order.
    const five = await c.recall({ query, k: 5, project: 'p', touch: false, rerank: true });
    expect(five.hits.map((h) => h.memory.id)).toEqual(expected.slice(0, 5));
  });

  it('keeps a pinned memory first, however its words compare', async () => {
    const c = await open(withTokens());
    const plain = await c.recall({ query, k: 30, project: 'p', touch: false });
    // The hit whose words agree least: the blend alone would move it down.
    const noteOf = (text: string) => Number(/note (\d+)/.exec(text)![1]);
    const last = plain.hits.slice(0, RERANK_DEPTH).map((h) => h.memory).sort((a, b) => noteOf(a.text) - noteOf(b.text))[0]!;
    await c.update(last.id, { pinned: true });
    const reranked = await c.recall({ query, k: 5, project: 'p', touch: false, rerank: true });
    expect(reranked.hits[0]!.memory.id).toBe(last.id);
  });

  it('recalls as usual, reranked false, with an embedder that has no token states or whose model is unavailable', async () => {
    const c = await open(createHashEmbedder());
    const plain = await c.recall({ query, k: 10, project: 'p', touch: false });
    const asked = await c.recall({ query, k: 10, project: 'p', touch: false, rerank: true });
    expect(asked.reranked).toBe(false);
    expect(asked.hits.map((h) => h.memory.id)).toEqual(plain.hits.map((h) => h.memory.id));
    await c.close();
    cairn = null;
    rmSync(root, { recursive: true, force: true });

    const broken: Embedder = {
      ...createHashEmbedder(),
      async tokenStates() {
        throw new CairnError('EMBEDDER_UNAVAILABLE', 'model file /x/model.onnx is missing; run fetch-model');
      },
    };
    const d = await open(broken);
    const before = await d.recall({ query, k: 10, project: 'p', touch: false });
    const after = await d.recall({ query, k: 10, project: 'p', touch: false, rerank: true });
    expect(after.reranked).toBe(false);
    expect(after.hits.map((h) => h.memory.id)).toEqual(before.hits.map((h) => h.memory.id));
  });

  it('lets any other model failure through', async () => {
    const failing: Embedder = {
      ...createHashEmbedder(),
      async tokenStates() {
        throw new CairnError('EMBEDDER_FAILED', 'onnx:x: inference failed: boom');
      },
    };
    const c = await open(failing);
    await expect(c.recall({ query, k: 10, project: 'p', touch: false, rerank: true })).rejects.toThrow(/inference failed/);
  });
});

const MINILM = onnxModelFolder(ALL_MINILM_L6_V2_Q.name);
describe.skipIf(!existsSync(join(MINILM, 'model.onnx')))('token states from the shipped model (onnx:all-minilm-l6-v2-q)', () => {
  it('gives each word piece a unit state, without the model markers, and scores the answering turn first', async () => {
    const embedder = createOnnxEmbedder(MINILM, ALL_MINILM_L6_V2_Q);
    const [q, long] = await embedder.tokenStates(['When did Maria go kayaking?', 'word '.repeat(600)]);
    expect(q!.tokens).toEqual(['when', 'did', 'maria', 'go', 'kay', '##aking', '?']);
    expect(q!.states).toHaveLength(7);
    for (const s of q!.states) {
      expect(s).toHaveLength(384);
      expect(Math.abs(dot(s, s) - 1)).toBeLessThan(1e-5);
    }
    // Cut as embed cuts: at most maxTokens with the markers.
    expect(long!.states).toHaveLength(ALL_MINILM_L6_V2_Q.maxTokens - 2);
    const scores = await wordScores(embedder, 'When did Maria go to the beach?', [
      'John: I fixed the garage door yesterday.',
      'Maria: I took this photo at the beach last month.',
      'John: The quarterly report is due on Friday.',
    ]);
    expect(scores!.indexOf(Math.max(...scores!))).toBe(1);
    await embedder.close!();
  });
});

describe('cairn recall --rerank', () => {
  it('says when it could not rerank (no contextual embedder), recalls as usual, and reports it in --json', async () => {
    const home = tempDir('cairn-rerank-cli-');
    try {
      const cli = (args: string[]) => runCli(args, { home, cwd: home });
      expect((await cli(['remember', 'Maria took the photo at the beach last month'])).code).toBe(0);
      const plain = await cli(['recall', 'beach', 'photo']);
      const asked = await cli(['recall', 'beach', 'photo', '--rerank']);
      expect(asked.code).toBe(0);
      expect(asked.stdout).toContain('Maria took the photo');
      expect(`${asked.stdout}${asked.stderr}`).toContain('not reranked (needs an onnx: embedder)');
      expect(`${plain.stdout}${plain.stderr}`).not.toContain('reranked');
      const json = (await cli(['--json', 'recall', 'beach', '--rerank'])).json<{ reranked?: boolean; hits: unknown[] }>();
      expect(json.reranked).toBe(false);
      expect(json.hits).toHaveLength(1);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('MCP recall with rerank', () => {
  it('passes rerank: true to recall (the model is asked for token states), and refuses a rerank that is not a boolean', async () => {
    const calls: string[][] = [];
    const embedder: Embedder = {
      ...createHashEmbedder(),
      async tokenStates(texts) {
        calls.push(texts);
        return texts.map(states);
      },
    };
    const cairn = createCairn({ store: await openSqliteStore(':memory:'), project: 'p', actor: 'mcp', embedder });
    const server = createMcpServer(cairn, { version: 'test', budget: { tokens: 200, calls: 3 } });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(b);
    try {
      for (const text of ['Maria took the photo at the beach', 'John fixed the garage door', 'the beach trip was in May']) {
        await client.callTool({ name: 'remember', arguments: { text } });
      }
      type Result = { isError?: boolean; content: Array<{ text: string }>; structuredContent?: { hits: Array<{ id: string }> } };
      const plain = (await client.callTool({ name: 'recall', arguments: { query: 'beach photo' } })) as Result;
      expect(plain.isError).toBeFalsy();
      expect(calls).toHaveLength(0);
      const reranked = (await client.callTool({ name: 'recall', arguments: { query: 'beach photo', rerank: true } })) as Result;
      expect(reranked.isError).toBeFalsy();
      expect(calls).toHaveLength(1);
      expect(calls[0]![0]).toBe('beach photo');
      expect(reranked.structuredContent!.hits.length).toBe(plain.structuredContent!.hits.length);
      const bad = (await client.callTool({ name: 'recall', arguments: { query: 'beach', rerank: 'yes' } })) as Result;
      expect(bad.isError).toBe(true);
      expect(bad.content[0]!.text).toMatch(/rerank/);
    } finally {
      await client.close();
      await cairn.close();
    }
  });
});
