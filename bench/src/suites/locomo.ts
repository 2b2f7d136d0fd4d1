/**
 * `locomo`: turn-level evidence recall on LoCoMo (`<data>/locomo/locomo-dev.json`). Every turn of
 * a conversation becomes one memory (`<speaker> (<session date>): <text>`, plus the shared
 * photo's caption when there is one; the dialogue id such as `D1:3` in `meta.diaId`), one project
 * per conversation, with the provenance a conversation import records (session `<conversation>/D1`,
 * line 3), so recall's conversation neighbours (src/recall/neighbours.ts) see adjacent turns. Each question of categories 1–4 runs `cairn.recall` with k = 10 scoped to its
 * conversation, without touching, in two modes: BM25 alone, and hybrid with the hash embedder and
 * (unless `--quick`) cairn's default all-MiniLM-L6-v2 — or `$CAIRN_BENCH_EMBEDDERS` instead, each
 * also at the `$CAIRN_BENCH_FUSION` weights; an embedder whose files are missing is skipped. Every mode is
 * also reported on two halves: even conversations (tuning) and odd ones (report; the split by
 * file order predates the sha256 splits of the other suites and is kept so figures stay
 * comparable). Last, the same questions are asked twice with touching (#15.6), with and without
 * `diversify`.
 *
 * Then everything but the asking twice again in a second layout, named `…, turn + the turn it
 * answers`: each memory also carries, as its context (`Memory.context`), the text of the turn
 * before it in the same session — what `cairn import` gives a conversation imported one memory per
 * turn (src/memory/context.ts, `ConversationContext`, the same code) — so a reply ("5 years
 * already!") is indexed and embedded with the question it answers while its text stays the turn.
 * On the tuning half, most evidence turns that neither retriever found in the top 50 were such
 * replies. The BM25 baseline is measured in the same layout.
 * recall@k = share of the question's evidence turns among the first k hits, averaged over
 * questions. Malformed evidence ids (`D8:6; D9:17`, `D:11:26`, `D30:05`) are normalised; what
 * cannot be, or names no turn, is counted and left out.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { reindex } from 'cairn-memory/testing';
import { ConversationContext, type Embedder } from 'cairn-memory';
import { atLeast, metric } from '../metrics.js';
import type { Dataset, Metric, Suite, SuiteOutcome } from '../types.js';
import { benchCairn, dataSource, benchEmbedder, benchEmbedderSpecs, benchFusionGrid, bulkRemember, defaultEmbedderSpecs, freshStore, fusionLabel, sha256Files, type BulkItem } from './beir.js';

const K = 10;
const CATEGORIES = new Set([1, 2, 3, 4]);
const HASH_DIMENSION = 1024;
const QUICK_QUESTIONS = 40;

interface LocomoTurn {
  speaker?: unknown;
  dia_id?: unknown;
  text?: unknown;
  blip_caption?: unknown;
}

interface LocomoSample {
  sample_id?: unknown;
  conversation?: Record<string, unknown>;
  qa?: Array<{ question?: unknown; evidence?: unknown; category?: unknown }>;
}

export interface LocomoQuestion {
  conversation: string;
  question: string;
  category: number;
  evidence: string[];
}

export interface LocomoTurnRecord {
  diaId: string;
  /** The turn as stored: speaker, session date, words, photo caption. */
  text: string;
}

/** How a turn becomes a memory: alone (the historical layout), or with the turn it answers as its context. */
export type LocomoLayout = 'turn' | 'reply';

export interface LocomoData {
  conversations: Array<{ id: string; turns: LocomoTurnRecord[] }>;
  questions: LocomoQuestion[];
  /** Evidence ids that could not be normalised, or name no turn of their conversation. */
  badEvidence: number;
  /** Scored questions left out because none of their evidence ids was usable. */
  noEvidence: number;
}

/** `D1:3` stays; `D:11:26` → `D11:26`; `D30:05` → `D30:5`; anything else is null. */
export function normalizeDiaId(raw: string): string | null {
  const match = /^D:?(\d+):0*(\d+)$/.exec(raw.trim());
  return match ? `D${Number(match[1])}:${Number(match[2])}` : null;
}

/** The text a turn is stored as: speaker, session date, words, and the caption of a shared photo. */
export function turnText(speaker: string, date: string, text: string, caption: string | null): string {
  const head = date ? `${speaker} (${date}): ` : `${speaker}: `;
  return `${head}${text}${caption ? ` [shares a photo: ${caption}]` : ''}`;
}

/**
 * Where a turn sits, as a conversation import records it: its session (`<conversation>/D<n>`) and
 * its place in that session (`D3:7` → line 7). Recall lets adjacent turns of a session lend each
 * other relevance (src/recall/neighbours.ts).
 */
export function turnProvenance(conversation: string, diaId: string): { sessionId: string; line: number } {
  const [session = '', line = '0'] = diaId.split(':');
  return { sessionId: `${conversation}/${session}`, line: Number(line) };
}

export function parseLocomo(raw: unknown): LocomoData {
  const samples = Array.isArray(raw) ? (raw as LocomoSample[]) : [];
  const conversations: LocomoData['conversations'] = [];
  const questions: LocomoQuestion[] = [];
  let badEvidence = 0;
  let noEvidence = 0;
  samples.forEach((sample, index) => {
    const id = typeof sample.sample_id === 'string' ? sample.sample_id : `conv-${index}`;
    const conv = sample.conversation ?? {};
    const turns: LocomoTurnRecord[] = [];
    const sessions = Object.keys(conv)
      .map((key) => /^session_(\d+)$/.exec(key))
      .filter((m): m is RegExpExecArray => m !== null && Array.isArray(conv[m[0]]))
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
    for (const n of sessions) {
      const date = typeof conv[`session_${n}_date_time`] === 'string' ? (conv[`session_${n}_date_time`] as string) : '';
      for (const turn of conv[`session_${n}`] as LocomoTurn[]) {
        const diaId = typeof turn.dia_id === 'string' ? normalizeDiaId(turn.dia_id) : null;
        if (!diaId || typeof turn.text !== 'string') continue;
        const caption = typeof turn.blip_caption === 'string' && turn.blip_caption.trim() ? turn.blip_caption.trim() : null;
        const text = turnText(String(turn.speaker ?? '?'), date, turn.text, caption);
        turns.push({ diaId, text });
      }
    }
    const known = new Set(turns.map((t) => t.diaId));
    conversations.push({ id, turns });
    for (const qa of sample.qa ?? []) {
      const category = Number(qa.category);
      if (!CATEGORIES.has(category) || typeof qa.question !== 'string' || qa.question.trim() === '') continue;
      const evidence = new Set<string>();
      const rawIds = Array.isArray(qa.evidence) ? qa.evidence.filter((e): e is string => typeof e === 'string') : [];
      for (const piece of rawIds.flatMap((e) => e.split(/[;,\s]+/)).filter(Boolean)) {
        const diaId = normalizeDiaId(piece);
        if (diaId && known.has(diaId)) evidence.add(diaId);
        else badEvidence++;
      }
      if (evidence.size === 0) {
        noEvidence++;
        continue;
      }
      questions.push({ conversation: id, question: qa.question, category, evidence: [...evidence] });
    }
  });
  return { conversations, questions, badEvidence, noEvidence };
}

/** recall@5 / @10 over one half of the conversations. */
interface SplitResult {
  questions: number;
  recallAt5: number;
  recallAt10: number;
}

interface ModeResult {
  /** Even-numbered conversations (tune weights here only) and odd-numbered ones (report). */
  splits: { tuning: SplitResult; report: SplitResult };
  recallAt5: number;
  recallAt10: number;
  /** Share of questions with at least one evidence turn in the top 10. */
  anyAt10: number;
  byCategory: Record<string, { questions: number; recallAt5: number; recallAt10: number }>;
  queryMs: number;
}

export interface LocomoResult {
  layout: LocomoLayout;
  conversations: number;
  turns: number;
  memories: number;
  merged: number;
  loadMs: number;
  questions: number;
  badEvidence: number;
  noEvidence: number;
  modes: Record<string, ModeResult>;
}

/** Load every conversation into a fresh store and measure BM25 and hybrid recall. */
export async function runLocomo(
  cacheDir: string,
  data: LocomoData,
  log: (line: string) => void = () => {},
  /** Embedder specs measured in hybrid mode instead of the hash embedder (`$CAIRN_BENCH_EMBEDDERS` in the suite). */
  embedderSpecs: string[] = [],
  options: {
    /** What a memory holds: the turn alone, or the turn and the one it answers. @default 'turn' */
    layout?: LocomoLayout;
    /** Ask the questions twice with touching (#15.6) at the end. @default true */
    askTwice?: boolean;
  } = {},
): Promise<LocomoResult> {
  const layout = options.layout ?? 'turn';
  const work = await freshStore(cacheDir, `locomo-${layout}`);
  try {
    const { store } = work;
    const bm25 = benchCairn(store, null);
    // The context `cairn import` gives each turn of a conversation imported one memory per turn.
    const conversation = new ConversationContext();
    const items: BulkItem[] = data.conversations.flatMap((c) =>
      c.turns.map((t) => {
        const provenance = turnProvenance(c.id, t.diaId);
        const context = conversation.next(provenance, t.text);
        return {
          key: `${c.id}/${t.diaId}`,
          text: t.text,
          project: `locomo-${c.id}`,
          meta: { diaId: t.diaId, conversation: c.id },
          provenance,
          ...(layout === 'reply' && context !== null ? { context } : {}),
        };
      }),
    );
    const started = performance.now();
    const loaded = await bulkRemember(bm25, items);
    const loadMs = performance.now() - started;
    log(`locomo: ${loaded.written} memories from ${items.length} turns; ${data.questions.length} questions`);
    const half = new Map(data.conversations.map((c, i) => [c.id, i % 2 === 0 ? 'tuning' : 'report'] as const));
    const evaluate = async (cairn: ReturnType<typeof benchCairn>, ask: { touch?: boolean; diversify?: boolean; rerank?: boolean } = {}): Promise<ModeResult> => {
      let at5 = 0;
      let at10 = 0;
      let any10 = 0;
      const cats: Record<string, { questions: number; at5: number; at10: number }> = {};
      const splits = { tuning: { questions: 0, recallAt5: 0, recallAt10: 0 }, report: { questions: 0, recallAt5: 0, recallAt10: 0 } };
      const started = performance.now();
      for (const q of data.questions) {
        const result = await cairn.recall({ query: q.question, k: K, project: `locomo-${q.conversation}`, touch: ask.touch === true, diversify: ask.diversify === true, checkFiles: false, ...(ask.rerank !== undefined ? { rerank: ask.rerank } : {}) });
        const keys = result.hits.map((h) => loaded.keysOf.get(h.memory.id) ?? []);
        const within = (n: number): Set<string> => new Set(keys.slice(0, n).flat().map((key) => key.slice(key.indexOf('/') + 1)));
        const top5 = within(5);
        const top10 = within(10);
        const r5 = q.evidence.filter((e) => top5.has(e)).length / q.evidence.length;
        const r10 = q.evidence.filter((e) => top10.has(e)).length / q.evidence.length;
        at5 += r5;
        at10 += r10;
        if (r10 > 0) any10++;
        const split = splits[half.get(q.conversation) ?? 'report'];
        split.questions++;
        split.recallAt5 += r5;
        split.recallAt10 += r10;
        const cat = (cats[String(q.category)] ??= { questions: 0, at5: 0, at10: 0 });
        cat.questions++;
        cat.at5 += r5;
        cat.at10 += r10;
      }
      const n = Math.max(1, data.questions.length);
      const byCategory: ModeResult['byCategory'] = {};
      for (const [cat, c] of Object.entries(cats)) byCategory[cat] = { questions: c.questions, recallAt5: c.at5 / c.questions, recallAt10: c.at10 / c.questions };
      for (const s of Object.values(splits)) {
        s.recallAt5 /= Math.max(1, s.questions);
        s.recallAt10 /= Math.max(1, s.questions);
      }
      return { splits, recallAt5: at5 / n, recallAt10: at10 / n, anyAt10: any10 / n, byCategory, queryMs: (performance.now() - started) / n };
    };
    const modes: Record<string, ModeResult> = { bm25: await evaluate(bm25) };
    const specs = embedderSpecs.length ? embedderSpecs : [`hash:${HASH_DIMENSION}`];
    const loaders: Array<() => Promise<Embedder>> = specs.map((spec) => () => benchEmbedder(cacheDir, spec));
    for (const [index, load] of loaders.entries()) {
      let embedder: Embedder;
      try {
        embedder = await load();
        await embedder.embed(['probe']); // a lazily loaded model (ONNX) fails here when its files are missing
      } catch (error) {
        log(`locomo: ${specs[index]} skipped: ${(error as Error).message}`);
        continue;
      }
      await reindex(store, embedder);
      // Recall as shipped: with a contextual model, the first hits reranked through their stored token
      // signatures (src/recall/rerank.ts); its twin without the rerank beside it.
      modes[`hybrid ${embedder.model}`] = await evaluate(benchCairn(store, embedder));
      if (embedder.tokenStates) modes[`hybrid ${embedder.model} no rerank`] = await evaluate(benchCairn(store, embedder), { rerank: false });
      for (const fusion of benchFusionGrid()) {
        modes[`hybrid ${embedder.model} ${fusionLabel(fusion)}`] = await evaluate(benchCairn(store, embedder, fusion));
      }
      await embedder.close?.();
    }
    // Asking twice (#15.6): touch every answer, then ask the same questions again. Last, since
    // touching changes usage counts for anything measured after it.
    if (options.askTwice !== false) {
      await evaluate(bm25, { touch: true });
      modes['bm25, asked again'] = await evaluate(bm25);
      modes['bm25, asked again, diversify'] = await evaluate(bm25, { diversify: true });
    }
    return {
      layout,
      conversations: data.conversations.length,
      turns: items.length,
      memories: loaded.written,
      merged: loaded.merged,
      loadMs,
      questions: data.questions.length,
      badEvidence: data.badEvidence,
      noEvidence: data.noEvidence,
      modes,
    };
  } finally {
    await work.dispose();
  }
}

const withSource = (source: string | undefined): { source?: string } => (source ? { source } : {});

export const locomoSuite: Suite = {
  name: 'locomo',
  description: 'turn-level evidence recall@5/@10 on LoCoMo (categories 1–4) through cairn.recall scoped to each conversation: BM25, hybrid (reranked by default with a contextual model) and hybrid without the rerank',
  async run(ctx): Promise<SuiteOutcome> {
    const path = join(ctx.dataDir, 'locomo', 'locomo-dev.json');
    if (!existsSync(path)) return { status: 'skipped', reason: `no LoCoMo data: ${path} not found (pass --data <shared data folder>)` };
    const data = parseLocomo(JSON.parse(readFileSync(path, 'utf8')) as unknown);
    if (ctx.quick) data.questions = data.questions.slice(0, QUICK_QUESTIONS);
    const specs = benchEmbedderSpecs();
    const embedderSpecs = specs.length > 0 ? specs : defaultEmbedderSpecs(ctx.quick);
    const result = await runLocomo(ctx.cacheDir, data, ctx.log, embedderSpecs);
    const replies = await runLocomo(ctx.cacheDir, data, ctx.log, embedderSpecs, { layout: 'reply', askTwice: false });
    const datasets: Dataset[] = [
      { name: `locomo/locomo-dev.json${ctx.quick ? ' (quick: first questions)' : ''}`, sha256: sha256Files([path]), generator: null, ...withSource(dataSource(join(ctx.dataDir, 'locomo'))), buildMs: result.loadMs, cachedBuildMs: null },
    ];
    const metrics: Metric[] = [];
    const note = `${result.questions} questions (cat. 1–4), ${result.turns} turns, ${result.conversations} conversations`;
    const layouts = [...Object.entries(result.modes), ...Object.entries(replies.modes).map(([mode, r]) => [`${mode}, turn + the turn it answers`, r] as const)];
    const isPlain = (mode: string): boolean => / no rerank(, |$)/.test(mode);
    const reranked = new Set(layouts.filter(([mode]) => isPlain(mode)).map(([mode]) => mode.replace(' no rerank', '')));
    for (const [mode, r] of layouts) {
      metrics.push(
        metric(`evidence recall@5 (${mode})`, r.recallAt5, 'share', { target: atLeast(0.8), anchor: '0.705 @5 (hybrid, Acolyte)', note }),
        metric(`evidence recall@10 (${mode})`, r.recallAt10, 'share'),
        metric(`evidence recall@5, tuning half (${mode})`, r.splits.tuning.recallAt5, 'share', { note: `${r.splits.tuning.questions} questions, even conversations` }),
        metric(`evidence recall@5, report half (${mode})`, r.splits.report.recallAt5, 'share', { note: `${r.splits.report.questions} questions, odd conversations` }),
        metric(`any evidence in top 10 (${mode})`, r.anyAt10, 'share', { anchor: 'BM25 0.646 @10 (any evidence turn in the top 10)' }),
      );
      // What the default rerank costs: the mean recall time of each reranked mode and its twin without it.
      if (isPlain(mode) || reranked.has(mode)) {
        metrics.push(metric(`recall mean ms per question (${mode})`, r.queryMs, 'ms', { note: 'one process, modes one after the other; a shared machine drifts' }));
      }
    }
    return { status: 'ok', datasets, metrics, details: { k: K, touch: false, ...result, replyLayout: replies } };
  },
};
