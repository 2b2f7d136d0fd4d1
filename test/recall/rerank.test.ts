import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCairn, type Cairn } from '../../src/cairn.js';
import { createHashEmbedder } from '../../src/embed/hash.js';
import { reindex } from '../../src/embed/reindex.js';
import { fillVectors } from '../../src/embed/fill.js';
import { ALL_MINILM_L6_V2_Q } from '../../src/embed/onnx-models.js';
import { createOnnxEmbedder, onnxModelFolder } from '../../src/embed/onnx.js';
import { dot } from '../../src/embed/vector.js';
import { CairnError } from '../../src/errors.js';
import { blendOrder, blendPartial, contentPieces, maxSim, queryPieces, RERANK_DEPTH, RERANK_K, RERANK_WEIGHT } from '../../src/recall/rerank.js';
import { decodeSignature, encodeSignature, queryTables, signatureScore, SIGNATURE_MAX_PIECES, type TokenSignature } from '../../src/embed/token-signature.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Embedder, Logger, TokenStates } from '../../src/types.js';
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

  it('reorders only the items with a score; the others keep their place', () => {
    expect(blendPartial([0.1, null, 0.9, null, 0.5])).toEqual([2, 1, 4, 3, 0].map((_, i) => [0, 2, 4].includes(i) ? [0, 2, 4][blendOrder([0.1, 0.9, 0.5])[[0, 2, 4].indexOf(i)]!]! : i));
    expect(blendPartial([null, null])).toEqual([0, 1]);
    expect(blendPartial([0.3, 0.2, 0.1])).toEqual(blendOrder([0.3, 0.2, 0.1]));
  });

  it('takes the query content pieces, all of them when none is content', () => {
    const q = states('When did Maria go to the beach?');
    expect(queryPieces(q)).toEqual([q.states[2], q.states[3], q.states[6]]);
    const none = states('what is it?');
    expect(queryPieces(none)).toEqual(none.states);
  });
});

describe('token signatures', () => {
  const random = (seed: number, n: number) => {
    let a = seed;
    return Float32Array.from({ length: n }, () => ((a = (a * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1);
  };
  const unit = (v: Float32Array) => {
    const n = Math.sqrt(dot(v, v));
    return v.map((x) => x / n);
  };

  it('keeps the sign of every dimension of every piece, and scores as the float late interaction over the signs', () => {
    const pieces = [random(1, 384), random(2, 384), random(3, 384)];
    const blob = encodeSignature(pieces, 384);
    expect(blob.length).toBe(6 + 3 * 48);
    const decoded = decodeSignature(blob, 384) as TokenSignature;
    expect(typeof decoded).toBe('object');
    expect(decoded.pieces).toBe(3);
    const query = [unit(random(7, 384)), unit(random(8, 384))];
    const signs = pieces.map((p) => p.map((x) => (x >= 0 ? 1 : -1) / Math.sqrt(384)));
    const expected = query.reduce((sum, q) => sum + Math.max(...signs.map((s) => dot(q, s))), 0) / query.length;
    expect(signatureScore(queryTables(query, 384), decoded)).toBeCloseTo(expected, 5);
    // An odd dimension: the bits past it are never read.
    const odd = decodeSignature(encodeSignature([random(4, 13)], 13), 13) as TokenSignature;
    const q13 = [unit(random(9, 13))];
    expect(signatureScore(queryTables(q13, 13), odd)).toBeCloseTo(dot(q13[0]!, random(4, 13).map((x) => (x >= 0 ? 1 : -1) / Math.sqrt(13))), 5);
  });

  it('keeps at most SIGNATURE_MAX_PIECES pieces, the first ones', () => {
    const many = Array.from({ length: SIGNATURE_MAX_PIECES + 10 }, (_, i) => random(i + 1, 64));
    const decoded = decodeSignature(encodeSignature(many, 64), 64) as TokenSignature;
    expect(decoded.pieces).toBe(SIGNATURE_MAX_PIECES);
    const first = decodeSignature(encodeSignature(many.slice(0, SIGNATURE_MAX_PIECES), 64), 64) as TokenSignature;
    expect(Buffer.from(decoded.bytes).equals(Buffer.from(first.bytes))).toBe(true);
  });

  it('refuses a truncated, padded, corrupt, other-version or other-dimension signature with a reason', () => {
    const blob = encodeSignature([random(1, 64), random(2, 64)], 64);
    expect(decodeSignature(blob.subarray(0, blob.length - 1), 64)).toMatch(/truncated or corrupt/);
    expect(decodeSignature(new Uint8Array([...blob, 0]), 64)).toMatch(/truncated or corrupt/);
    expect(decodeSignature(blob.subarray(0, 3), 64)).toMatch(/shorter than its header/);
    expect(decodeSignature(new Uint8Array(0), 64)).toMatch(/shorter than its header/);
    const version = blob.slice();
    version[0] = 9;
    expect(decodeSignature(version, 64)).toMatch(/format version 9/);
    expect(decodeSignature(blob, 384)).toMatch(/64 dimensions, the model has 384/);
    const count = blob.slice();
    count[4] = 200;
    expect(decodeSignature(count, 64)).toMatch(/truncated or corrupt/);
    // No piece at all (an empty text): readable, scores 0.
    const empty = decodeSignature(encodeSignature([], 64), 64) as TokenSignature;
    expect(signatureScore(queryTables([unit(random(1, 64))], 64), empty)).toBe(0);
    expect(signatureScore(queryTables([], 64), decodeSignature(blob, 64) as TokenSignature)).toBe(0);
  });
});

describe('recall with the default rerank (stored token signatures)', () => {
  let cairn: Cairn | null = null;
  let root = '';
  afterEach(async () => {
    await cairn?.close();
    cairn = null;
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const DIM = 64;
  /**
   * A memory's one piece agrees with the query's by its note number: its first round(DIM · i / 30)
   * dimensions positive, the rest negative, so the word order differs from recall's and survives
   * the signs a signature keeps.
   */
  const pieceOf = (text: string): Float32Array => {
    const n = /note (\d+)/.exec(text);
    const m = n ? Math.round((DIM * Number(n[1])) / 30) : DIM;
    return Float32Array.from({ length: DIM }, (_, d) => (d < m ? 1 : -1) / Math.sqrt(DIM));
  };
  const numbered = (text: string): TokenStates => ({ tokens: ['note'], states: [pieceOf(text)] });
  /** A contextual embedder: the hash embedder's vectors, these token states, signatures from them. */
  const contextual = (calls: { states: string[][]; signed: string[][] } = { states: [], signed: [] }): Embedder => {
    const hash = createHashEmbedder({ dimension: DIM });
    return {
      ...hash,
      async tokenStates(texts) {
        calls.states.push(texts);
        return texts.map(numbered);
      },
      async embedSigned(texts, signed) {
        calls.signed.push(texts);
        const vectors = await hash.embed(texts);
        return vectors.map((vector, i) => ({ vector, signature: encodeSignature([pieceOf(signed[i]!)], DIM) }));
      },
    };
  };
  const warnings: string[] = [];
  const logger: Logger = { debug() {}, info() {}, warn: (m: string) => void warnings.push(m), error() {} } as unknown as Logger;

  async function open(embedder: Embedder): Promise<Cairn> {
    warnings.length = 0;
    root = mkdtempSync(join(tmpdir(), 'cairn-rerank-'));
    cairn = createCairn({ store: await openSqliteStore(join(root, 'cairn.db')), embedder, logger, clock: { now: () => Date.UTC(2026, 0, 1) } });
    const words = ['beach', 'maria', 'trip', 'sand', 'waves', 'summer', 'photo', 'sunset', 'shell', 'picnic'];
    // Many memories that share some of the query's words, in different amounts.
    for (let i = 0; i < 30; i++) {
      const picked = words.filter((_, j) => (i * 7 + j * 3) % 5 < 2);
      await cairn.remember({ text: `note ${i}: ${picked.join(' ')} and the garden fence number ${i}`, project: 'p' });
    }
    return cairn;
  }
  const query = 'When did Maria go to the beach for a picnic?';
  const raw = (c: Cairn) => (c.deps.store as unknown as { db: import('better-sqlite3').Database }).db;
  const expectedOrder = (head: Array<{ memory: { id: string; text: string } }>) => {
    const q = [pieceOf(query)];
    return blendOrder(head.map((h) => signatureScore(queryTables(q, DIM), decodeSignature(encodeSignature([pieceOf(h.memory.text)], DIM), DIM) as TokenSignature))).map((i) => head[i]!.memory.id);
  };

  it('reorders the first hits by default: stored signatures, the query states only, no model run for the hits', async () => {
    const calls = { states: [] as string[][], signed: [] as string[][] };
    const c = await open(contextual(calls));
    // remember wrote each memory's signature with its vector, from one run.
    expect(calls.signed).toHaveLength(30);
    expect(raw(c).prepare('SELECT count(*) FROM token_signatures').pluck().get()).toBe(30);
    calls.signed.length = 0;
    const plain = await c.recall({ query, k: 30, project: 'p', touch: false, rerank: false });
    expect(plain.reranked).toBeUndefined();
    expect(calls.states).toHaveLength(0);
    const reranked = await c.recall({ query, k: 30, project: 'p', touch: false });
    expect(reranked.reranked).toBe(true);
    expect(reranked.rerankNote).toBeUndefined();
    expect(calls.states).toEqual([[query]]);
    expect(calls.signed).toHaveLength(0);
    const head = plain.hits.slice(0, RERANK_DEPTH);
    const expected = expectedOrder(head);
    expect(reranked.hits.slice(0, RERANK_DEPTH).map((h) => h.memory.id)).toEqual(expected);
    expect(expected).not.toEqual(head.map((h) => h.memory.id));
    expect(reranked.hits.slice(0, RERANK_DEPTH).every((h) => h.why.rerank === 'compared')).toBe(true);
    // Past the reranked depth, recall's order, unmarked.
    expect(reranked.hits.slice(RERANK_DEPTH).map((h) => h.memory.id)).toEqual(plain.hits.slice(RERANK_DEPTH).map((h) => h.memory.id));
    expect(reranked.hits[RERANK_DEPTH]!.why.rerank).toBeUndefined();
    // k below the depth: the first k of the same reranked order.
    const five = await c.recall({ query, k: 5, project: 'p', touch: false });
    expect(five.hits.map((h) => h.memory.id)).toEqual(expected.slice(0, 5));
  });

  it('keeps the place of hits without a signature (and says so), and rerank: true computes theirs', async () => {
    const calls = { states: [] as string[][], signed: [] as string[][] };
    const c = await open(contextual(calls));
    const plain = await c.recall({ query, k: 10, project: 'p', touch: false, rerank: false });
    const unsigned = [plain.hits[1]!.memory.id, plain.hits[4]!.memory.id];
    raw(c).prepare(`DELETE FROM token_signatures WHERE memory_rowid IN (SELECT rowid FROM memories WHERE id IN (?, ?))`).run(...unsigned);
    calls.signed.length = 0;
    const partly = await c.recall({ query, k: 10, project: 'p', touch: false });
    expect(partly.reranked).toBe(true);
    expect(partly.rerankNote).toBe("2 of the first 10 hits have no token signature yet and keep recall's order");
    expect(partly.hits[1]!.memory.id).toBe(unsigned[0]);
    expect(partly.hits[4]!.memory.id).toBe(unsigned[1]);
    expect(partly.hits[1]!.why.rerank).toBe('no signature');
    const signedIds = plain.hits.map((h) => h.memory.id).filter((id) => !unsigned.includes(id));
    expect(partly.hits.filter((_, i) => i !== 1 && i !== 4).map((h) => h.memory.id)).toEqual(expectedOrder(plain.hits.filter((h) => signedIds.includes(h.memory.id))));
    expect(calls.signed).toHaveLength(0);
    // Asked explicitly: the two are signed now (one run each), not stored, and all ten compared.
    const asked = await c.recall({ query, k: 10, project: 'p', touch: false, rerank: true });
    expect(calls.signed).toHaveLength(1);
    expect(calls.signed[0]).toHaveLength(2);
    expect(asked.rerankNote).toBeUndefined();
    expect(asked.hits.map((h) => h.memory.id)).toEqual(expectedOrder(plain.hits));
    expect(raw(c).prepare('SELECT count(*) FROM token_signatures').pluck().get()).toBe(28);
    // None signed among the first hits: recall's order, and why.
    raw(c).prepare('DELETE FROM token_signatures').run();
    const none = await c.recall({ query, k: 10, project: 'p', touch: false });
    expect(none.reranked).toBe(false);
    expect(none.rerankNote).toMatch(/no token signatures for these hits yet/);
    expect(none.hits.map((h) => h.memory.id)).toEqual(plain.hits.map((h) => h.memory.id));
  });

  it('does not rerank a hit whose signature is truncated or corrupt: one warning, nothing stored changes', async () => {
    const c = await open(contextual());
    const plain = await c.recall({ query, k: 10, project: 'p', touch: false, rerank: false });
    const bad = plain.hits[2]!.memory.id;
    raw(c).prepare('UPDATE token_signatures SET signature = substr(signature, 1, 5) WHERE memory_rowid = (SELECT rowid FROM memories WHERE id = ?)').run(bad);
    const other = plain.hits[6]!.memory.id;
    raw(c).prepare("UPDATE token_signatures SET signature = X'09000000' WHERE memory_rowid = (SELECT rowid FROM memories WHERE id = ?)").run(other);
    const before = raw(c).prepare('SELECT memory_rowid, model, hex(signature) AS s FROM token_signatures ORDER BY memory_rowid').all();
    const reranked = await c.recall({ query, k: 10, project: 'p', touch: false });
    expect(reranked.reranked).toBe(true);
    expect(reranked.hits[2]!.memory.id).toBe(bad);
    expect(reranked.hits[2]!.why.rerank).toBe('unreadable signature');
    expect(reranked.hits[6]!.memory.id).toBe(other);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/2 token signature\(s\) cannot be read \(memory \S+: 5 bytes, shorter than its header\); those hits keep recall's order/);
    expect(raw(c).prepare('SELECT memory_rowid, model, hex(signature) AS s FROM token_signatures ORDER BY memory_rowid').all()).toEqual(before);
    expect(await c.deps.store.getMemory(bad)).not.toBeNull();
  });

  it('keeps a pinned memory first, however its words compare', async () => {
    const c = await open(contextual());
    const plain = await c.recall({ query, k: 30, project: 'p', touch: false, rerank: false });
    const noteOf = (text: string) => Number(/note (\d+)/.exec(text)![1]);
    const last = plain.hits.slice(0, RERANK_DEPTH).map((h) => h.memory).sort((a, b) => noteOf(a.text) - noteOf(b.text))[0]!;
    await c.update(last.id, { pinned: true });
    const reranked = await c.recall({ query, k: 5, project: 'p', touch: false });
    expect(reranked.reranked).toBe(true);
    expect(reranked.hits[0]!.memory.id).toBe(last.id);
  });

  it('recalls as usual without a contextual embedder (no rerank field unless asked) or with its model unavailable', async () => {
    const c = await open(createHashEmbedder());
    const plain = await c.recall({ query, k: 10, project: 'p', touch: false });
    expect(plain.reranked).toBeUndefined();
    const asked = await c.recall({ query, k: 10, project: 'p', touch: false, rerank: true });
    expect(asked.reranked).toBe(false);
    expect(asked.rerankNote).toBe('needs an onnx: embedder');
    expect(asked.hits.map((h) => h.memory.id)).toEqual(plain.hits.map((h) => h.memory.id));
    await c.close();
    cairn = null;
    rmSync(root, { recursive: true, force: true });

    const broken: Embedder = {
      ...contextual(),
      async tokenStates() {
        throw new CairnError('EMBEDDER_UNAVAILABLE', 'model file /x/model.onnx is missing; run fetch-model');
      },
    };
    const d = await open(broken);
    const before = await d.recall({ query, k: 10, project: 'p', touch: false, rerank: false });
    const after = await d.recall({ query, k: 10, project: 'p', touch: false });
    expect(after.reranked).toBe(false);
    expect(after.rerankNote).toMatch(/the model is unavailable: model file \/x\/model.onnx is missing/);
    expect(after.hits.map((h) => h.memory.id)).toEqual(before.hits.map((h) => h.memory.id));
  });

  it('lets any other model failure through', async () => {
    const failing: Embedder = {
      ...contextual(),
      async tokenStates() {
        throw new CairnError('EMBEDDER_FAILED', 'onnx:x: inference failed: boom');
      },
    };
    const c = await open(failing);
    await expect(c.recall({ query, k: 10, project: 'p', touch: false })).rejects.toThrow(/inference failed/);
  });

  it('never reads another model\'s signatures, and loses them with the vectors and with the memory', async () => {
    const c = await open(contextual());
    const store = c.deps.store;
    const ids = (await c.recall({ query, k: 3, project: 'p', touch: false, rerank: false })).hits.map((h) => h.memory.id);
    expect((await store.getSignatures!(ids, { model: `hash:v1:${DIM}`, dimension: DIM })).size).toBe(3);
    expect((await store.getSignatures!(ids, { model: 'onnx:other', dimension: DIM })).size).toBe(0);
    expect((await store.getSignatures!(ids, { model: `hash:v1:${DIM}`, dimension: 32 })).size).toBe(0);
    raw(c).prepare('DELETE FROM memories WHERE id = ?').run(ids[0]);
    expect((await store.getSignatures!(ids, { model: `hash:v1:${DIM}`, dimension: DIM })).size).toBe(2);
    raw(c).prepare('UPDATE memories SET text = text || ? WHERE id = ?').run(' changed', ids[1]);
    expect((await store.getSignatures!(ids, { model: `hash:v1:${DIM}`, dimension: DIM })).size).toBe(1);
    await store.clearVectors();
    expect(raw(c).prepare('SELECT count(*) FROM token_signatures').pluck().get()).toBe(0);
  });
});

describe('token signatures for memories embedded before them: reindex and the background fill', () => {
  const DIM = 64;
  const piece = (text: string) => Float32Array.from({ length: DIM }, (_, d) => ((text.length + d) % 3) - 1);
  const signing = (calls: string[][] = []): Embedder => {
    const hash = createHashEmbedder({ dimension: DIM });
    return {
      ...hash,
      async tokenStates(texts) {
        return texts.map((t) => ({ tokens: ['x'], states: [piece(t)] }));
      },
      async embedSigned(texts, signed) {
        calls.push(texts);
        const vectors = await hash.embed(texts);
        return vectors.map((vector, i) => ({ vector, signature: encodeSignature([piece(signed[i]!)], DIM) }));
      },
    };
  };
  let root = '';
  afterEach(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });
  async function unsignedStore(n: number) {
    root = mkdtempSync(join(tmpdir(), 'cairn-sign-'));
    const store = await openSqliteStore(join(root, 'cairn.db'));
    // Written by a writer of the same model without signatures (an older cairn).
    const c = createCairn({ store, embedder: createHashEmbedder({ dimension: DIM }) });
    for (let i = 0; i < n; i++) await c.remember({ text: `memory number ${i} about topic ${i % 7}`, context: i % 2 ? `question ${i}` : undefined, project: 'p' });
    const db = (store as unknown as { db: import('better-sqlite3').Database }).db;
    return { store, db };
  }

  it('reindex signs every memory that has a vector, from the memory text within its embedding text, without rewriting vectors', async () => {
    const { store, db } = await unsignedStore(20);
    const vectorsBefore = db.prepare('SELECT memory_rowid, hex(vector) AS v, seq FROM vectors ORDER BY memory_rowid').all();
    expect(await store.countMissingSignatures!({ model: `hash:v1:${DIM}`, dimension: DIM })).toBe(20);
    const calls: string[][] = [];
    const progress: Array<[number, number]> = [];
    const summary = await reindex(store, signing(calls), { batchSize: 8, onProgress: (d, t) => progress.push([d, t]) });
    expect(summary).toMatchObject({ embedded: 0, signed: 20, complete: true, remaining: 0 });
    expect(progress.at(-1)).toEqual([20, 20]);
    expect(db.prepare('SELECT memory_rowid, hex(vector) AS v, seq FROM vectors ORDER BY memory_rowid').all()).toEqual(vectorsBefore);
    expect(await store.countMissingSignatures!({ model: `hash:v1:${DIM}`, dimension: DIM })).toBe(0);
    // The embedding text (with its context) is what ran; the memory's own text is what was signed.
    const memories = await store.listMemories({ limit: 100 } as never);
    const odd = memories.find((m) => m.context !== null)!;
    expect(calls.flat()).toContain(`${odd.text} (in reply to: ${odd.context})`);
    const [blob] = (await store.getSignatures!([odd.id], { model: `hash:v1:${DIM}`, dimension: DIM })).values();
    expect(Buffer.from(blob!).equals(Buffer.from(encodeSignature([piece(odd.text)], DIM)))).toBe(true);
    // Nothing left: a second run signs nothing.
    expect(await reindex(store, signing())).toMatchObject({ embedded: 0, signed: 0, complete: true });
    await store.close();
  });

  it('the background fill signs them too, stops between batches and continues where it stopped', async () => {
    const { store } = await unsignedStore(40);
    const model = { model: `hash:v1:${DIM}`, dimension: DIM };
    const controller = new AbortController();
    let batches = 0;
    const first = await fillVectors(store, signing(), { batchSize: 8, onProgress: () => (++batches === 2 ? controller.abort() : undefined), signal: controller.signal });
    expect(first.outcome).toBe('stopped');
    const left = await store.countMissingSignatures!(model);
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThan(40);
    const calls: string[][] = [];
    const second = await fillVectors(store, signing(calls), { batchSize: 8 });
    expect(second.outcome).toBe('done');
    expect(calls.flat()).toHaveLength(left);
    expect(await store.countMissingSignatures!(model)).toBe(0);
    expect((await fillVectors(store, signing(), { batchSize: 8 })).outcome).toBe('done');
    await store.close();
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
    const question = 'When did Maria go to the beach?';
    const turns = ['John: I fixed the garage door yesterday.', 'Maria: I took this photo at the beach last month.', 'John: The quarterly report is due on Friday.'];
    const [queryVector] = await embedder.embed([question], { purpose: 'query' });
    const signed = await embedder.embedSigned!(turns.map((t) => `${t} (in reply to: how was your week?)`), turns);
    const [qs] = await embedder.tokenStates([question]);
    const scores = signed.map((s) => signatureScore(queryTables(queryPieces(qs!), 384), decodeSignature(s.signature, 384) as TokenSignature));
    expect(scores.indexOf(Math.max(...scores))).toBe(1);
    expect(queryVector).toHaveLength(384);
    await embedder.close!();
  });

  it('gives, in one run, the vector embed gives and the signature of the memory text pieces; the query states of its embedding run are those tokenStates computes', async () => {
    const embedder = createOnnxEmbedder(MINILM, ALL_MINILM_L6_V2_Q);
    const text = 'Maria (1:56 pm on 8 May, 2023): I went kayaking yesterday.';
    const full = `${text} (in reply to: John: what did you do this weekend?)`;
    const [signed] = await embedder.embedSigned!([full], [text]);
    const [vector] = await embedder.embed([full]);
    expect(Buffer.from(signed!.vector.buffer).equals(Buffer.from(vector!.buffer))).toBe(true);
    const [alone] = await embedder.tokenStates([text]);
    const decoded = decodeSignature(signed!.signature, 384) as TokenSignature;
    expect(decoded.pieces).toBe(alone!.tokens.length);
    // A long text keeps the pieces the model sees (its cut), at most SIGNATURE_MAX_PIECES.
    const [long] = await embedder.embedSigned!(['word '.repeat(600)], ['word '.repeat(600)]);
    expect((decodeSignature(long!.signature, 384) as TokenSignature).pieces).toBe(Math.min(SIGNATURE_MAX_PIECES, ALL_MINILM_L6_V2_Q.maxTokens - 2));
    // The query: its embedding run keeps its states, byte for byte those of a run of its own.
    const fresh = createOnnxEmbedder(MINILM, ALL_MINILM_L6_V2_Q);
    const [own] = await fresh.tokenStates(['When did Maria go kayaking?']);
    await embedder.embed(['When did Maria go kayaking?'], { purpose: 'query' });
    const [kept] = await embedder.tokenStates(['When did Maria go kayaking?']);
    expect(kept!.tokens).toEqual(own!.tokens);
    kept!.states.forEach((s, i) => expect(Buffer.from(s.buffer, s.byteOffset, s.byteLength).equals(Buffer.from(own!.states[i]!.buffer, own!.states[i]!.byteOffset, own!.states[i]!.byteLength))).toBe(true));
    await embedder.close!();
    await fresh.close!();
  });
});

describe('cairn recall --rerank / --no-rerank', () => {
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
      const json = (await cli(['--json', 'recall', 'beach', '--rerank'])).json<{ reranked?: boolean; rerankNote?: string; hits: unknown[] }>();
      expect(json.reranked).toBe(false);
      expect(json.rerankNote).toBe('needs an onnx: embedder');
      expect(json.hits).toHaveLength(1);
      const off = await cli(['--json', 'recall', 'beach', '--no-rerank']);
      expect(off.code).toBe(0);
      expect(off.json<{ reranked?: boolean }>().reranked).toBeUndefined();
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('MCP recall with the rerank', () => {
  it('reranks by default with a contextual embedder, says when it did not and why, takes rerank: false, and refuses a rerank that is not a boolean', async () => {
    const calls: string[][] = [];
    const hash = createHashEmbedder();
    const embedder: Embedder = {
      ...hash,
      async tokenStates(texts) {
        calls.push(texts);
        return texts.map(states).map((s) => ({ tokens: s.tokens, states: s.states.map((v) => v.map((x) => x * 2 - 0.5)) }));
      },
      async embedSigned(texts, signed) {
        const vectors = await hash.embed(texts);
        return vectors.map((vector, i) => ({ vector, signature: encodeSignature(states(signed[i]!).states.map((v) => v.map((x) => x * 2 - 0.5)), 64) }));
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
      type Result = { isError?: boolean; content: Array<{ text: string }>; structuredContent?: { hits: Array<{ id: string }>; reranked?: boolean; rerankNote?: string } };
      const off = (await client.callTool({ name: 'recall', arguments: { query: 'beach photo', rerank: false } })) as Result;
      expect(off.isError).toBeFalsy();
      expect(calls).toHaveLength(0);
      expect(off.structuredContent!.reranked).toBeUndefined();
      expect(off.content[0]!.text).not.toMatch(/reranked/);
      const reranked = (await client.callTool({ name: 'recall', arguments: { query: 'beach photo' } })) as Result;
      expect(reranked.isError).toBeFalsy();
      expect(calls).toEqual([['beach photo']]);
      expect(reranked.structuredContent!.reranked).toBe(true);
      expect(reranked.content[0]!.text).not.toMatch(/reranked/);
      expect(reranked.structuredContent!.hits.length).toBe(off.structuredContent!.hits.length);
      // Signatures gone (a store written before them): the text says the order is recall's, and why.
      (cairn.deps.store as unknown as { db: import('better-sqlite3').Database }).db.prepare('DELETE FROM token_signatures').run();
      const unsigned = (await client.callTool({ name: 'recall', arguments: { query: 'beach photo' } })) as Result;
      expect(unsigned.structuredContent!.reranked).toBe(false);
      expect(unsigned.content.map((c) => c.text).join('\n')).toMatch(/\(not reranked: no token signatures for these hits yet \(`cairn reindex` writes them\)\)/);
      const bad = (await client.callTool({ name: 'recall', arguments: { query: 'beach', rerank: 'yes' } })) as Result;
      expect(bad.isError).toBe(true);
      expect(bad.content[0]!.text).toMatch(/rerank/);
    } finally {
      await client.close();
      await cairn.close();
    }
  });
});
