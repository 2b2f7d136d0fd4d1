/**
 * The value model on the fidelity cuts, offline: label each cut's candidate details (does its
 * line carry a detail used after the compaction?), fit the model on the tuning half, score any
 * model at any budget with the context's own packer, and replay learning from use in order
 * (issue #15, items 2 and 9). Pure over `CutCandidates`; the suite measures and reports.
 */
import type { ValueModel } from 'cairn-memory';
import { adjusted, carries, FEATURES, FIT_OPTIONS, fitValueModel, learnedDelta, learnedDetails, learnKey, markLearned, packDetails, valueOf, type Detail, type Example, type Feature, type Learned, type LearnOptions } from 'cairn-memory/testing';
import type { OutcomeCounts } from 'cairn-memory';
import { coverage } from './fidelity.js';
import type { CutCandidates } from './fidelity-run.js';
import { metric } from './metrics.js';
import { round } from './stats.js';
import type { Metric } from './types.js';

export interface ModelCut {
  cut: string;
  sessionId: string;
  half: 'tuning' | 'report';
  candidates: CutCandidates;
}

/** 1 when the line carries at least one needed detail. */
export function labelOf(detail: Detail, needed: readonly string[]): 0 | 1 {
  return carries(detail.line, needed) ? 1 : 0;
}

export function examplesOf(cuts: readonly ModelCut[]): Example[] {
  return cuts.flatMap((c) => c.candidates.details.map((d) => ({ features: d.features, label: labelOf(d, c.candidates.needed) })));
}

/** What the context would carry for a cut at `budget` (same packer as the product) and its share. */
export function shareAt(cut: ModelCut, model: ValueModel, budget: number, ranker = 'composite', seed = 42): { share: number; found: string[] } {
  const c = cut.candidates;
  const pack = packDetails(c.details, { budget: Math.max(0, budget - c.headerTokens), ranker, seed, model, endSeq: c.endSeq });
  return coverage(c.needed, pack.text);
}

/** Pooled share over cuts (weighted by needed details). */
export function pooledShare(cuts: readonly ModelCut[], model: ValueModel, budget: number, ranker = 'composite'): number | null {
  let sum = 0;
  let total = 0;
  for (const cut of cuts) {
    const n = cut.candidates.needed.length;
    sum += shareAt(cut, model, budget, ranker).share * n;
    total += n;
  }
  return total === 0 ? null : round(sum / total);
}

/** Features ranked by the size of their weight (for the report). */
export function topWeights(model: ValueModel, n = 12): Array<[Feature, number]> {
  return FEATURES.filter((f) => f !== 'bias')
    .map((f) => [f, model[f]] as [Feature, number])
    .sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]))
    .slice(0, n);
}

/** Fit on the tuning half only. */
export function fitOnTuning(cuts: readonly ModelCut[]): { model: ValueModel; examples: number; positives: number } {
  const examples = examplesOf(cuts.filter((c) => c.half === 'tuning'));
  return { model: fitValueModel(examples, FIT_OPTIONS), examples: examples.length, positives: examples.filter((e) => e.label === 1).length };
}

/** A cut in the replay: when its session started, where in it the cut falls, its project (the session's cwd). */
export interface ReplayCut extends ModelCut {
  startedAt: string;
  position: number;
  project: string;
}

export interface ReplayStep {
  cut: string;
  sessionId: string;
  half: 'tuning' | 'report';
  needed: number;
  /** Share with the shipped model plus what the earlier sessions (of the scope) taught. */
  learned: number;
  /** Share with the shipped model alone. */
  prior: number;
  /** Outcomes (cuts of earlier sessions) the learned model drew on. */
  learnedFrom: number;
}

/**
 * What one compaction shows the product (src/context/use.ts), per detail kind: the session facts
 * and memories the context injected at `budget` with `model` and whether each carried a needed
 * detail (used afterwards), and the session facts it left out and whether each did (missed).
 * Calls are not counted: the ledger records memories and session facts only. `learned`: the
 * needed details' `learnKey`s, what later sessions of the project learn from.
 */
export function outcomeOf(cut: ModelCut, model: ValueModel, budget: number): { reason: 'compact'; kinds: Record<string, OutcomeCounts>; learned: string[] } {
  const c = cut.candidates;
  const pack = packDetails(c.details, { budget: Math.max(0, budget - c.headerTokens), ranker: 'composite', seed: 42, model, endSeq: c.endSeq });
  const injected = new Set(pack.chosen.map((d) => d.key));
  const kinds: Record<string, OutcomeCounts> = {};
  for (const d of c.details) {
    if (!d.factId && !d.memory) continue;
    const k = (kinds[d.kind] ??= { injected: 0, used: 0, left: 0, missed: 0 });
    const label = labelOf(d, c.needed);
    if (injected.has(d.key)) (k.injected++, (k.used += label));
    else if (d.factId) ((k.left = (k.left ?? 0) + 1), (k.missed += label));
  }
  // What later sessions learn (use.ts): the details needed after it.
  return { reason: 'compact', kinds, learned: c.needed.map(learnKey) };
}

/** The cut with `usedBefore` set on the details earlier sessions needed (learn.ts `markLearned`); the cut itself when none. */
export function withLearned(cut: ModelCut, learned: Learned): ModelCut {
  if (learned.lists.length === 0) return cut;
  const details = cut.candidates.details.map((d) => ({ ...d, features: { ...d.features } }));
  markLearned(details, learned);
  return { ...cut, candidates: { ...cut.candidates, details } };
}

/**
 * Learning from use, replayed in the order the sessions happened: every cut of a session is scored
 * with what the cuts of EARLIER sessions taught (the product's `learnedDelta` over their outcomes,
 * within the same project for scope `project`, over all of the user's sessions for `user`), never
 * with its own session's; then the session's outcomes, as the product would measure them with the
 * model it used, join what later sessions learn from.
 */
export function replayLearning(cuts: readonly ReplayCut[], prior: ValueModel, budget: number, scope: 'project' | 'user', options: LearnOptions = {}, details = true): ReplayStep[] {
  const sessions = new Map<string, ReplayCut[]>();
  for (const cut of [...cuts].sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.sessionId.localeCompare(b.sessionId) || a.position - b.position)) {
    const list = sessions.get(cut.sessionId) ?? [];
    list.push(cut);
    sessions.set(cut.sessionId, list);
  }
  const seen: Array<{ scope: string; session: string; reason: string; kinds: Record<string, OutcomeCounts>; learned: string[] }> = [];
  const steps: ReplayStep[] = [];
  for (const list of sessions.values()) {
    const key = scope === 'user' ? '' : (list[0] as ReplayCut).project;
    const earlier = seen.filter((o) => o.scope === key);
    const model = adjusted(prior, learnedDelta(earlier, options));
    const learned = details === false ? { lists: [] } : learnedDetails(earlier, (list[0] as ReplayCut).sessionId);
    const taught: ModelCut[] = [];
    for (const cut of list) {
      const marked = withLearned(cut, learned);
      taught.push(marked);
      steps.push({
        cut: cut.cut,
        sessionId: cut.sessionId,
        half: cut.half,
        needed: cut.candidates.needed.length,
        learned: round(shareAt(marked, model, budget).share),
        prior: round(shareAt(cut, prior, budget).share),
        learnedFrom: earlier.length,
      });
    }
    // The session's outcomes as the product measures them: with the model and features it packed with.
    taught.forEach((cut) => seen.push({ scope: key, session: cut.sessionId, ...outcomeOf(cut, model, budget) }));
  }
  return steps;
}

/** Pooled share of replay steps (weighted by needed details), learned and prior. */
export function replayShare(steps: readonly ReplayStep[], pick: 'learned' | 'prior'): number | null {
  const total = steps.reduce((n, s) => n + s.needed, 0);
  return total === 0 ? null : round(steps.reduce((sum, s) => sum + s[pick] * s.needed, 0) / total);
}

/**
 * The two rows of a replay (shipped model, learned from earlier sessions) for one set of cuts,
 * named `<name>: shipped model` and `<name>: learned from earlier sessions`.
 */
export function replayRows(name: string, steps: readonly ReplayStep[]): Metric[] {
  const taught = steps.filter((s) => s.learnedFrom > 0);
  return [
    metric(`${name}: shipped model`, replayShare(steps, 'prior'), 'share', { note: `${steps.length} cuts; ${taught.length} scored after an earlier session taught` }),
    metric(`${name}: learned from earlier sessions`, replayShare(steps, 'learned'), 'share', { note: `on the taught cuts: ${replayShare(taught, 'prior') ?? '—'} → ${replayShare(taught, 'learned') ?? '—'}` }),
  ];
}

/** The model's mean value over a cut's candidates (a sanity figure for the report). */
export function meanValue(cut: ModelCut, model: ValueModel): number {
  const d = cut.candidates.details;
  return d.length === 0 ? 0 : round(d.reduce((s, x) => s + valueOf(model, x.features), 0) / d.length);
}
