/**
 * Learning from use (issue #15, item 9): per-project adjustments to the value model from what
 * learn-from-use measured after earlier compactions (src/context/use.ts). For each kind of session
 * fact (path, command, symbol …) a project's share of injected candidates that the agent used
 * after a compaction is shrunk toward the global share for that kind (a Beta prior worth `prior`
 * injected candidates), and the log-odds difference moves that kind's weight, bounded by `cap`.
 * Nothing moves until the project has `minOutcomes` measured compactions.
 *
 * Only the use rate of what was injected is learned: it is what the product observes without
 * bias. Counting left-out candidates that were needed (the rule before this one) reads misses
 * that the context's own ranking chose, and replayed in session order it lowered the share
 * (docs/BENCHMARKS.md, fidelity). Only fact kinds learn: memory kinds have no global rate here.
 * Only compaction windows count: elsewhere "used" means used at all, not needed after a cut.
 *
 * Pure: `cairn bench fidelity` and `cairn bench fidelity-external` replay the same function in
 * session order.
 */
import type { OutcomeCounts } from '../types.js';
import type { Feature } from './value-model.js';

/**
 * Share of injected session-fact candidates of each kind that carried a needed detail after a
 * compaction, on the tuning half of the shared transcripts only (the shipped model at the hook's
 * 4K budget over its 12 cuts, 1,592 injected; smoothed with 5 pseudo-candidates at the overall
 * 0.292). The model's kind weights were fitted on the same half.
 */
export const GLOBAL_USE_RATES: Readonly<Record<string, number>> = {
  path: 0.259,
  pathLine: 0.183,
  symbol: 0.55,
  command: 0.329,
  error: 0.133,
  test: 0.292,
  config: 0.117,
  url: 0.024,
  version: 0.292,
  id: 0.292,
};

export interface LearnOptions {
  /** Pseudo-candidates at the global use rate per kind (shrinkage toward the shipped model). @default 30 */
  prior?: number;
  /** Largest change to a kind's weight, either way. @default 0.25 */
  cap?: number;
  /** Measured compactions a project needs before anything is learned (abstain below). @default 2 */
  minOutcomes?: number;
}

/**
 * What learning from use settles on by default: chosen on the tuning half of the shared
 * transcripts only, by replaying it in session order (docs/BENCHMARKS.md, fidelity).
 */
export const LEARN_DEFAULTS: Required<LearnOptions> = { prior: 30, cap: 0.25, minOutcomes: 2 };

/**
 * Learning reads a project's latest this many measured compactions (the ledger keeps a year):
 * recent use counts, and the read on the compaction hook's path stays bounded.
 */
export const LEARN_FROM_LAST = 200;

/** An outcome as learning reads it: the window's reason and its per-kind counts. */
export interface LearnOutcome {
  reason: string;
  kinds: Readonly<Record<string, OutcomeCounts>>;
}

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
 * fewer than `minOutcomes` compactions were measured. Add them with `adjusted(model, delta)`.
 * @example const model = adjusted(DEFAULT_VALUE_MODEL, learnedDelta(await cairn.ledger.outcomes({ project })));
 */
export function learnedDelta(outcomes: readonly LearnOutcome[], options: LearnOptions = {}): Partial<Record<Feature, number>> {
  const prior = options.prior ?? LEARN_DEFAULTS.prior;
  const cap = options.cap ?? LEARN_DEFAULTS.cap;
  const compactions = outcomes.filter((o) => o.reason === 'compact');
  if (compactions.length === 0 || compactions.length < (options.minOutcomes ?? LEARN_DEFAULTS.minOutcomes)) return {};
  const delta: Partial<Record<Feature, number>> = {};
  for (const [kind, c] of Object.entries(sumKinds(compactions))) {
    const global = GLOBAL_USE_RATES[kind];
    if (global === undefined || c.injected === 0) continue;
    const rate = (c.used + prior * global) / (c.injected + prior);
    const d = logit(clampRate(rate)) - logit(clampRate(global));
    delta[`kind:${kind}` as Feature] = Math.round(Math.max(-cap, Math.min(cap, d)) * 1000) / 1000;
  }
  return delta;
}

/** What learning changed for one project, as the context applies it (`cairn status`, the browser). */
export interface ProjectLearned {
  /** Measured compactions it learned from (the latest {@link LEARN_FROM_LAST}). */
  compactions: number;
  /** Change to each fact kind's weight (`symbol`, `path` …); empty before the project's `minOutcomes`th compaction. */
  weights: Record<string, number>;
  /** Distinct details its sessions needed after their compactions (what later sessions rank up: `usedBefore`). */
  details: number;
}

/** {@link learnedDelta} for one project of a list of outcomes of every project (oldest first or not). */
export function learnedForProject(outcomes: ReadonlyArray<LearnOutcome & { session: string; project: string | null; measuredAt: number; learned?: readonly string[] }>, project: string | null): ProjectLearned {
  const compactions = outcomes
    .filter((o) => o.project === project && o.reason === 'compact')
    .sort((a, b) => a.measuredAt - b.measuredAt)
    .slice(-LEARN_FROM_LAST);
  const weights: Record<string, number> = {};
  for (const [feature, d] of Object.entries(learnedDelta(compactions))) if (d !== undefined && d !== 0) weights[feature.replace(/^kind:/, '')] = d;
  return { compactions: compactions.length, weights, details: learnedCount(learnedDetails(compactions, null)) };
}

/** Keys a project's learned details keep at most per measured compaction (the ledger row stays small). */
export const LEARNED_PER_OUTCOME = 256;

/**
 * A detail's identity across sessions: a 64-bit hash (16 hex digits) of the detail as the matcher
 * reads it (src/ledger/used-details.ts: a path, `path:line`, a call written `name(`, a flag, an error
 * name, a command line). The ledger keeps these, never the text. Two 32-bit multiply-xor lanes, not
 * node:crypto: a post-compact hook hashes every candidate, and the first sha256 of a fresh process
 * cost 10–15 ms there (OpenSSL's start), the lanes ~0.1 ms for a session's candidates. A collision
 * only marks one more candidate `usedBefore`.
 * @example learnKey('src/config.ts') // the same 16 hex digits in every session and process
 */
export function learnKey(detail: string): string {
  let a = 0x811c9dc5;
  let b = 0x9747b28c ^ detail.length;
  for (let i = 0; i < detail.length; i++) {
    const c = detail.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  a = Math.imul(a ^ (a >>> 16), 0x85ebca6b);
  a ^= a >>> 13;
  b = Math.imul(b ^ (b >>> 16), 0xc2b2ae35);
  b ^= b >>> 16;
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}

/** What earlier sessions of a project needed after their compactions: their keys, not yet gathered into a set. */
export interface Learned {
  /** Each outcome's `learned` keys (compactions of other sessions only). */
  readonly lists: ReadonlyArray<readonly string[]>;
}

/**
 * The details earlier sessions of a project needed after their compactions (the `learned` keys of
 * their outcomes, src/context/use.ts), for the value model's `usedBefore` feature: a detail that
 * another session of the project needed again after a compaction is more often needed again after
 * this one (docs/BENCHMARKS.md, fidelity-external). The session being built is left out: what it
 * taught itself is not what earlier sessions taught. Outcomes of other reasons than `compact` are
 * ignored. The keys stay in their lists: a hook looks up its ~100–1,500 candidates' keys in them
 * rather than gathering ~10,000 keys of 200 compactions into a set ({@link markLearned}).
 */
export function learnedDetails(outcomes: ReadonlyArray<{ session: string; reason: string; learned?: readonly string[] }>, session: string | null): Learned {
  const lists: Array<readonly string[]> = [];
  for (const o of outcomes) if (o.reason === 'compact' && o.session !== session && o.learned && o.learned.length > 0) lists.push(o.learned);
  return { lists };
}

/** How many distinct details `learned` holds (`cairn status`, the browser). */
export function learnedCount(learned: Learned): number {
  const keys = new Set<string>();
  for (const list of learned.lists) for (const key of list) keys.add(key);
  return keys.size;
}

/**
 * Set the `usedBefore` feature of each detail whose identity is among the `learned` keys; nothing
 * is hashed when there are none.
 * @returns how many details it set
 */
export function markLearned(details: ReadonlyArray<{ learn?: string; features: Record<Feature, number> }>, learned: Learned): number {
  if (learned.lists.length === 0) return 0;
  const byKey = new Map<string, Array<{ features: Record<Feature, number> }>>();
  for (const d of details) {
    if (d.learn === undefined) continue;
    const key = learnKey(d.learn);
    const same = byKey.get(key);
    if (same) same.push(d);
    else byKey.set(key, [d]);
  }
  let marked = 0;
  for (const list of learned.lists) {
    for (const key of list) {
      const same = byKey.get(key);
      if (!same) continue;
      for (const d of same) d.features.usedBefore = 1;
      marked += same.length;
      byKey.delete(key);
    }
  }
  return marked;
}
