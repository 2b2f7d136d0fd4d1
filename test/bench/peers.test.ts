import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { basicMemoryPeer, cairnMcpPeer, mcpMemoryServicePeer, pythonPeersDir } from '../../bench/src/suites/peers-mcp.js';
import { createPeersSuite, defaultPeers, firstSessions, installedVersion, loadLocomo, normalizeEvidence, type Peer } from '../../bench/src/suites/peers.js';
import { DEFAULT_EMBEDDER_SPEC } from '../../src/embed/onnx-models.js';
import { onnxModelFolder } from '../../src/embed/onnx.js';
import type { BenchContext } from '../../bench/src/types.js';
import { tempDir } from '../helpers/cli.js';

const root = tempDir('cairn-bench-peers-');
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A two-session conversation whose questions each point at one turn. */
function writeLocomo(dataDir: string): void {
  mkdirSync(join(dataDir, 'locomo'), { recursive: true });
  const sample = {
    sample_id: 'conv-test',
    conversation: {
      speaker_a: 'Ann',
      speaker_b: 'Bob',
      session_1: [
        { speaker: 'Ann', dia_id: 'D1:1', text: 'I adopted a grey kitten called Pixel last week.' },
        { speaker: 'Bob', dia_id: 'D1:2', text: 'Nice! I started learning the cello in March.' },
        { speaker: 'Ann', dia_id: 'D1:3', text: 'My sister lives in Lisbon and teaches chemistry.' },
      ],
      session_1_date_time: '1 May 2023',
      session_2: [
        { speaker: 'Bob', dia_id: 'D2:1', text: 'We hiked the volcano trail on Saturday.', blip_caption: 'a photo of a crater' },
        { speaker: 'Ann', dia_id: 'D2:2', text: 'Pixel knocked my coffee over again.' },
      ],
    },
    qa: [
      { question: 'What is the name of the kitten Ann adopted?', answer: 'Pixel', evidence: ['D1:1'], category: 1 },
      { question: 'Which instrument is Bob learning?', answer: 'cello', evidence: ['D:1:2'], category: 2 },
      { question: 'Where does Ann sister live and teach chemistry?', answer: 'Lisbon', evidence: ['D1:3; D1:03'], category: 3 },
      { question: 'Which trail did Bob hike?', answer: 'volcano', evidence: ['D2:1'], category: 4 },
      { question: 'adversarial', adversarial_answer: 'x', evidence: ['D2:2'], category: 5 },
      { question: 'broken evidence', answer: 'x', evidence: ['D9:99'], category: 1 },
    ],
  };
  writeFileSync(join(dataDir, 'locomo', 'locomo-dev.json'), JSON.stringify([sample]));
}

function context(dataDir: string): BenchContext {
  return { quick: true, seed: 7, sizes: [200], dataDir, cacheDir: join(root, 'cache'), log: () => {} };
}

describe('LoCoMo loading', () => {
  it('repairs malformed evidence ids and keeps categories 1-4 with known evidence', () => {
    expect(normalizeEvidence('D8:6; D9:17')).toEqual(['D8:6', 'D9:17']);
    expect(normalizeEvidence('D:11:26')).toEqual(['D11:26']);
    expect(normalizeEvidence('D30:05')).toEqual(['D30:5']);
    expect(normalizeEvidence('nonsense')).toEqual([]);
    const dataDir = join(root, 'data-load');
    writeLocomo(dataDir);
    const { conversations, malformed } = loadLocomo(join(dataDir, 'locomo', 'locomo-dev.json'));
    expect(conversations).toHaveLength(1);
    const conv = conversations[0]!;
    expect(conv.turns.map((t) => t.id)).toEqual(['D1:1', 'D1:2', 'D1:3', 'D2:1', 'D2:2']);
    expect(conv.turns[3]!.text).toContain('[image: a photo of a crater]');
    expect(conv.questions.map((q) => q.evidence)).toEqual([['D1:1'], ['D1:2'], ['D1:3'], ['D2:1']]);
    expect(malformed).toBe(1);
    // Quick runs' semantic table: the first sessions and only the questions answered there.
    const first = firstSessions(conv, 1);
    expect(first.turns.map((t) => t.id)).toEqual(['D1:1', 'D1:2', 'D1:3']);
    expect(first.questions.map((q) => q.evidence)).toEqual([['D1:1'], ['D1:2'], ['D1:3']]);
    expect(firstSessions(conv, 2)).toEqual(conv);
  });
});

describe('peers suite', () => {
  it('finds the peers installed as dev dependencies', () => {
    expect(installedVersion('minisearch')).toMatch(/^\d+\./);
    expect(installedVersion('vectra')).toMatch(/^\d+\./);
    expect(installedVersion('@modelcontextprotocol/server-memory')).toMatch(/^\d+\./);
    expect(installedVersion('no-such-package-cairn-test')).toBeNull();
  });

  it('runs cairn and every peer through one table, and says why a peer has no figures', async () => {
    const dataDir = join(root, 'data-run');
    writeLocomo(dataDir);
    const missing: Peer = { name: 'ghost', version: null, how: 'not installed', open: () => Promise.reject(new Error('unreachable')) };
    const broken: Peer = {
      name: 'broken',
      version: '1.0.0',
      how: 'throws on search',
      open: async () => ({ load: async () => {}, write: async () => {}, search: () => Promise.reject(new Error('boom')), close: async () => {} }),
    };
    const suite = createPeersSuite({ peers: [...defaultPeers(), missing, broken], size: 200, queries: 10, writes: 5, skipSemantic: true });
    const outcome = await suite.run(context(dataDir));
    expect(outcome.status).toBe('ok');
    if (outcome.status !== 'ok') return;
    const rows = outcome.details?.rows as { peer: string; synthetic: { status: string; reason: string | null; hitAt10: number | null; recallP50Ms: number | null }; locomo: { status: string; recallAt5: number | null; questions: number } }[];
    expect(rows.map((r) => r.peer)).toEqual(['cairn', 'mcp server-memory', 'vectra', 'minisearch', 'ghost', 'broken']);
    for (const r of rows.slice(0, 4)) {
      expect(r.synthetic.status, `${r.peer}: ${r.synthetic.reason}`).toBe('ok');
      expect(r.synthetic.hitAt10).toBeGreaterThanOrEqual(0);
      expect(r.synthetic.recallP50Ms).toBeGreaterThan(0);
      expect(r.locomo.status).toBe('ok');
      expect(r.locomo.questions).toBe(4);
      expect(r.locomo.recallAt5).toBeGreaterThanOrEqual(0);
      expect(r.locomo.recallAt5).toBeLessThanOrEqual(1);
    }
    // BM25 over five turns finds the kitten for cairn and minisearch.
    expect(rows[0]!.locomo.recallAt5).toBeGreaterThan(0.5);
    expect(rows[3]!.locomo.recallAt5).toBeGreaterThan(0.5);
    expect(rows[0]!.synthetic.hitAt10).toBeGreaterThan(0.5);
    const ghost = rows[4]!;
    expect(ghost.synthetic.status).toBe('unavailable');
    expect(ghost.locomo.status).toBe('unavailable');
    const bad = rows[5]!;
    expect(bad.synthetic.status).toBe('failed');
    expect(bad.synthetic.reason).toContain('boom');
    // Every row's figures are in the table; those without a number say why.
    for (const m of outcome.metrics) {
      if (m.value === null) expect(m.note, m.name).toMatch(/unavailable|failed|skipped/);
    }
    expect(outcome.metrics.filter((m) => m.name.startsWith('ghost'))).toHaveLength(5);
  }, 120_000);
});

const BUILT = existsSync(join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js'));
const MODEL = DEFAULT_EMBEDDER_SPEC.startsWith('onnx:') && existsSync(join(onnxModelFolder(DEFAULT_EMBEDDER_SPEC.slice(5)), 'model.onnx'));
const PYTHON_PEERS = existsSync(join(pythonPeersDir(), 'peers.json'));
if (!PYTHON_PEERS) console.warn(`peers suite: the Python peers are not checked here: no ${join(pythonPeersDir(), 'peers.json')} (bash bench/peers/setup.sh builds them)`);

describe.skipIf(!BUILT)('peers suite, semantic table (needs npm run build)', () => {
  it('drives cairn\'s MCP server on paraphrases, LoCoMo and the synthetic workload, with its RSS; an absent Python peer says how to build it', async () => {
    const dataDir = join(root, 'data-semantic');
    writeLocomo(dataDir);
    const embedders = MODEL ? [DEFAULT_EMBEDDER_SPEC] : [];
    const python = PYTHON_PEERS ? [] : [mcpMemoryServicePeer(), basicMemoryPeer()];
    const suite = createPeersSuite({ peers: [], cairn: false, size: 50, queries: 5, writes: 3, semanticSize: 40, semanticPeers: [cairnMcpPeer(null), ...embedders.map((e) => cairnMcpPeer(e)), ...python] });
    const outcome = await suite.run(context(dataDir));
    expect(outcome.status).toBe('ok');
    if (outcome.status !== 'ok') return;
    const rows = (outcome.details?.semantic as { rows: { peer: string; status: string; reason: string | null; paraphrases: number | null; locomoAt5: number | null; locomoQuestions: number; hitAt10: number | null; rss: { rssMb: number; peakMb: number } | null }[] }).rows;
    for (const r of rows.slice(0, 1 + embedders.length)) {
      expect(r.status, `${r.peer}: ${r.reason}`).toBe('ok');
      expect(r.locomoQuestions).toBe(4);
      expect(r.hitAt10).toBeGreaterThan(0.5);
      expect(r.rss!.rssMb).toBeGreaterThan(20);
      expect(r.rss!.peakMb).toBeGreaterThanOrEqual(r.rss!.rssMb);
    }
    // BM25 finds only the cases that share a word with their answer ("use", "objects"); the model finds more.
    expect(rows[0]!.paraphrases).toBeLessThanOrEqual(2);
    if (MODEL) expect(rows[1]!.paraphrases).toBeGreaterThanOrEqual(4);
    for (const r of rows.slice(1 + embedders.length)) {
      expect(r.status).toBe('unavailable');
      expect(r.reason).toMatch(/bench\/peers\/setup\.sh/);
    }
    expect(outcome.metrics.filter((m) => m.name.startsWith('semantic · cairn mcp (BM25)'))).toHaveLength(8);
  }, 300_000);
});
