/**
 * The value model on the fidelity cuts, offline: label each cut's candidate details (does its
 * line carry a detail used after the compaction?), fit the model on the tuning half, score any
 * model at any budget with the context's own packer, and replay learning from use in order
 * (issue #15, items 2 and 9). Pure over `CutCandidates`; the suite measures and reports.
 */
import type { ValueModel } from 'cairn-memory';
import { adjusted, carries, FEATURES, FIT_OPTIONS, fitValueModel, learnStep, packDetails, valueOf, type Detail, type Example, type Feature } from 'cairn-memory/testing';
import { coverage } from './fidelity.js';
import type { CutCandidates } from './fidelity-run.js';
import { round } from './stats.js';

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

export interface ReplayStep {
  cut: string;
  half: 'tuning' | 'report';
  /** Share with the model before this cut was learned from (prior + what earlier cuts taught). */
  learned: number;
  /** Share with the shipped model alone. */
  prior: number;
}

/**
 * Learning from use, replayed: cuts in order (the order sessions happened in); each is scored with
 * the adjustments learned from the cuts before it only, then what it showed (which injected
 * details were used afterwards, and which needed details the candidates held but the context left
 * out) updates the adjustments. The cut being scored never informs its own score.
 */
export function replayLearning(cuts: readonly ModelCut[], prior: ValueModel, budget: number): ReplayStep[] {
  let delta: Partial<Record<Feature, number>> = {};
  const steps: ReplayStep[] = [];
  for (const cut of cuts) {
    const model = adjusted(prior, delta);
    steps.push({ cut: cut.cut, half: cut.half, learned: round(shareAt(cut, model, budget).share), prior: round(shareAt(cut, prior, budget).share) });
    delta = learnStep(prior, delta, feedbackOf(cut, model, budget));
  }
  return steps;
}

/**
 * What one compaction teaches, as the product can observe it: the injected details (used → 1,
 * unused → 0) and the candidates it left out whose detail the agent then needed (→ 1). Candidates
 * neither injected nor needed teach nothing (the agent never saw them).
 */
export function feedbackOf(cut: ModelCut, model: ValueModel, budget: number): Example[] {
  const c = cut.candidates;
  const pack = packDetails(c.details, { budget: Math.max(0, budget - c.headerTokens), ranker: 'composite', seed: 42, model, endSeq: c.endSeq });
  const injected = new Set(pack.chosen.map((d) => d.key));
  const out: Example[] = [];
  for (const d of c.details) {
    const label = labelOf(d, c.needed);
    if (injected.has(d.key) || label === 1) out.push({ features: d.features, label });
  }
  return out;
}

/** The model's mean value over a cut's candidates (a sanity figure for the report). */
export function meanValue(cut: ModelCut, model: ValueModel): number {
  const d = cut.candidates.details;
  return d.length === 0 ? 0 : round(d.reduce((s, x) => s + valueOf(model, x.features), 0) / d.length);
}
