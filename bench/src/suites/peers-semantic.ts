/**
 * The `peers` suite's semantic table: memory servers that embed with a real model (cairn with its
 * ONNX encoders, mcp-memory-service, basic-memory) beside the same peers as the main table, on
 * one smaller workload, because the Python servers store about one memory per second here:
 *
 * - paraphrases: the five query → memory pairs of `cairn bench embed` (at most one word in common), all
 *   five answers and three unrelated memories in one index; a case counts when its answer is first.
 * - LoCoMo: the first conversations (one document per turn), evidence recall@5 / @10.
 * - synthetic: a small corpus from the generator, hit@10 on known answers, recall and write p50.
 * - memory: for servers run as processes, the resident memory of the server's process tree at the
 *   end of the synthetic workload, and its peak.
 *
 * Every index is a fresh server (or library instance) in a fresh folder. A peer that is not
 * installed gets a row with the reason.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { metric, sizeLabel } from '../metrics.js';
import { summarize, timeEach } from '../stats.js';
import type { Metric } from '../types.js';
import { PARAPHRASES, UNRELATED } from './embed.js';
import type { Rss } from './peers-mcp.js';
import type { Doc, LocomoConversation, Peer, PeerIndex } from './peers.js';

export interface SemanticWorkload {
  conversations: LocomoConversation[];
  synthetic: { docs: Doc[]; queries: { text: string; target: string }[]; writes: Doc[] };
}

export interface SemanticRow {
  peer: string;
  version: string | null;
  how: string;
  status: 'ok' | 'unavailable' | 'failed';
  reason: string | null;
  paraphrases: number | null;
  locomoAt5: number | null;
  locomoAt10: number | null;
  locomoQuestions: number;
  hitAt10: number | null;
  recallP50Ms: number | null;
  writeP50Ms: number | null;
  /** Untimed bulk load of the synthetic corpus, per document. */
  loadMsPerDoc: number | null;
  rss: Rss | null;
  ms: number;
}

async function withIndex<T>(peer: Peer, fn: (index: PeerIndex) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-bench-semantic-'));
  try {
    const index = await peer.open(dir);
    try {
      return await fn(index);
    } finally {
      await index.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** How many paraphrase cases find their answer first, all answers and the unrelated memories in one index. */
async function paraphrases(peer: Peer): Promise<number> {
  const docs: Doc[] = [...PARAPHRASES.map(([, answer], i) => ({ id: `p${i}`, text: answer })), ...UNRELATED.map((text, i) => ({ id: `u${i}`, text }))];
  return withIndex(peer, async (index) => {
    await index.load(docs);
    let found = 0;
    for (const [i, [query]] of PARAPHRASES.entries()) if ((await index.search(query, 1))[0] === `p${i}`) found++;
    return found;
  });
}

async function locomo(peer: Peer, conversations: LocomoConversation[]): Promise<{ at5: number; at10: number; n: number }> {
  let at5 = 0;
  let at10 = 0;
  let n = 0;
  for (const conv of conversations) {
    await withIndex(peer, async (index) => {
      await index.load(conv.turns);
      for (const q of conv.questions) {
        const top = await index.search(q.question, 10);
        const share = (k: number): number => q.evidence.filter((e) => top.slice(0, k).includes(e)).length / q.evidence.length;
        at5 += share(5);
        at10 += share(10);
        n++;
      }
    });
  }
  return { at5: n > 0 ? at5 / n : 0, at10: n > 0 ? at10 / n : 0, n };
}

async function synthetic(peer: Peer, work: SemanticWorkload['synthetic']): Promise<Pick<SemanticRow, 'hitAt10' | 'recallP50Ms' | 'writeP50Ms' | 'loadMsPerDoc' | 'rss'>> {
  return withIndex(peer, async (index) => {
    const started = performance.now();
    await index.load(work.docs);
    const loadMsPerDoc = (performance.now() - started) / Math.max(1, work.docs.length);
    for (const q of work.queries.slice(0, 3)) await index.search(q.text, 10);
    let hits = 0;
    const recall = summarize(
      await timeEach(work.queries, async (q) => {
        if ((await index.search(q.text, 10)).includes(q.target)) hits++;
      }),
    );
    const write = summarize(await timeEach(work.writes.slice(3), (d) => index.write(d), work.writes.slice(0, 3)));
    const rss = (index as Partial<{ rss(): Rss | null }>).rss?.() ?? null;
    return { hitAt10: hits / Math.max(1, work.queries.length), recallP50Ms: recall.p50, writeP50Ms: write.p50, loadMsPerDoc, rss };
  });
}

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e)).split('\n')[0]?.slice(0, 240) ?? '';

/** Run every workload through `peer`; a failure ends that peer's row with the reason. */
export async function runSemantic(peer: Peer, work: SemanticWorkload, log: (line: string) => void): Promise<SemanticRow> {
  const row: SemanticRow = {
    peer: peer.name,
    version: peer.version,
    how: peer.how,
    status: 'ok',
    reason: null,
    paraphrases: null,
    locomoAt5: null,
    locomoAt10: null,
    locomoQuestions: 0,
    hitAt10: null,
    recallP50Ms: null,
    writeP50Ms: null,
    loadMsPerDoc: null,
    rss: null,
    ms: 0,
  };
  if (peer.version === null) return { ...row, status: 'unavailable', reason: peer.how };
  const started = performance.now();
  try {
    log(`peers (semantic): ${peer.name} paraphrases`);
    row.paraphrases = await paraphrases(peer);
    if (work.conversations.length > 0) {
      log(`peers (semantic): ${peer.name} LoCoMo (${work.conversations.length} conversation${work.conversations.length === 1 ? '' : 's'})`);
      const l = await locomo(peer, work.conversations);
      Object.assign(row, { locomoAt5: l.at5, locomoAt10: l.at10, locomoQuestions: l.n });
    }
    log(`peers (semantic): ${peer.name} synthetic @${work.synthetic.docs.length}`);
    Object.assign(row, await synthetic(peer, work.synthetic));
  } catch (e) {
    Object.assign(row, { status: 'failed', reason: errorText(e) });
  }
  row.ms = performance.now() - started;
  return row;
}

/** The table's metrics, one block per peer. */
export function semanticMetrics(rows: SemanticRow[], work: SemanticWorkload): Metric[] {
  const size = `@${sizeLabel(work.synthetic.docs.length)}`;
  const metrics: Metric[] = [];
  for (const r of rows) {
    const tag = `semantic · ${r.peer}${r.version ? ` ${r.version}` : ''}`;
    const why = r.status === 'ok' ? undefined : `${r.status}: ${r.reason ?? ''}`;
    metrics.push(
      metric(`${tag}: paraphrase cases first (of ${PARAPHRASES.length})`, r.paraphrases, 'cases', { note: why ?? r.how }),
      metric(`${tag}: LoCoMo evidence recall@5`, r.locomoAt5, 'share', { note: why ?? `${r.locomoQuestions} questions` }),
      metric(`${tag}: LoCoMo evidence recall@10`, r.locomoAt10, 'share', { note: why }),
      metric(`${tag}: hit@10 ${size} (known answers)`, r.hitAt10, 'share', { note: why ?? `${work.synthetic.queries.length} queries` }),
      metric(`${tag}: recall p50 ${size}`, r.recallP50Ms, 'ms', { note: why }),
      metric(`${tag}: write p50 ${size}`, r.writeP50Ms, 'ms', { note: why }),
      metric(`${tag}: load ${size}, per memory`, r.loadMsPerDoc, 'ms', { note: why }),
      metric(`${tag}: server RSS after ${size} (peak)`, r.rss?.rssMb ?? null, 'MB', { note: why ?? (r.rss ? `peak ${Math.round(r.rss.peakMb)} MB` : 'in-process library: not separable') }),
    );
  }
  return metrics;
}
