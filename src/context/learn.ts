/**
 * Learning from use (issue #15, item 9): per-project adjustments to the value model from what
 * learn-from-use measured after earlier compactions (src/context/use.ts). For each kind of session
 * fact (path, command, symbol …) a project's observed chance that a candidate of that kind is
 * needed after a compaction — injected and used, or left out and then needed — is shrunk toward
 * the global rate (a Beta prior of `prior` pseudo-candidates), and the log-odds difference moves
 * that kind's weight, bounded by `cap`. Only fact kinds learn: the outcomes count the left-out
 * candidates of facts only, so a memory kind's rate would be the injected items' alone (biased).
 *
 * Pure: `cairn bench fidelity` replays the same function in session order (docs/BENCHMARKS.md).
 */
import type { OutcomeCounts } from '../types.js';
import type { Feature } from './value-model.js';

/**
 * Share of session-fact candidates of each kind that carried a needed detail after a compaction,
 * on the tuning half of the shared transcripts only (1,743 candidates from 12 cuts; smoothed with
 * 5 pseudo-candidates at the overall 0.403). The model's kind weights were fitted on the same half.
 */
export const GLOBAL_KIND_RATES: Readonly<Record<string, number>> = {
  path: 0.344,
  pathLine: 0.239,
  symbol: 0.706,
  command: 0.397,
  error: 0.096,
  test: 0.288,
  config: 0.224,
  url: 0.025,
  version: 0.403,
  id: 0.403,
};
const OVERALL_RATE = 0.403;

export interface LearnOptions {
  /** Pseudo-candidates at the global rate per kind (shrinkage toward the global fit). @default 100 */
  prior?: number;
  /** Largest change to a kind's weight, either way. @default 0.5 */
  cap?: number;
}

/** What learning from use settles on by default (see docs/BENCHMARKS.md, fidelity). */
export const LEARN_DEFAULTS: Required<LearnOptions> = { prior: 100, cap: 0.5 };

const logit = (p: number): number => Math.log(p / (1 - p));
const clampRate = (p: number): number => Math.min(0.99, Math.max(0.01, p));

/** Sum the per-kind counts of outcomes (one per measured window). */
export function sumKinds(outcomes: ReadonlyArray<{ kinds: Readonly<Record<string, OutcomeCounts>> }>): Record<string, Required<OutcomeCounts>> {
  const out: Record<string, Required<OutcomeCounts>> = {};
  for (const o of outcomes) {
    for (const [kind, c] of Object.entries(o.kinds)) {
      const t = (out[kind] ??= { injected: 0, used: 0, left: 0, missed: 0 });
      t.injected += c.injected;
      t.used += c.used;
      t.left += c.left ?? 0;
      t.missed += c.missed;
    }
  }
  return out;
}

/**
 * Adjustments to the value model's `kind:*` weights from a project's measured outcomes; `{}` when
 * nothing was measured. Add them with `adjusted(model, delta)`.
 * @example const model = adjusted(DEFAULT_VALUE_MODEL, learnedDelta(await cairn.ledger.outcomes({ project })));
 */
export function learnedDelta(outcomes: ReadonlyArray<{ kinds: Readonly<Record<string, OutcomeCounts>> }>, options: LearnOptions = {}): Partial<Record<Feature, number>> {
  const prior = options.prior ?? LEARN_DEFAULTS.prior;
  const cap = options.cap ?? LEARN_DEFAULTS.cap;
  const delta: Partial<Record<Feature, number>> = {};
  for (const [kind, c] of Object.entries(sumKinds(outcomes))) {
    if (!(kind in GLOBAL_KIND_RATES)) continue;
    const trials = c.injected + c.left;
    if (trials === 0) continue;
    const global = GLOBAL_KIND_RATES[kind] ?? OVERALL_RATE;
    const rate = (c.used + c.missed + prior * global) / (trials + prior);
    const d = logit(clampRate(rate)) - logit(clampRate(global));
    delta[`kind:${kind}` as Feature] = Math.round(Math.max(-cap, Math.min(cap, d)) * 1000) / 1000;
  }
  return delta;
}
