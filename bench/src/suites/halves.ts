/**
 * Tuning and report halves for the retrieval suites, decided before any figure is seen (as the
 * fidelity suite does): ids are ordered by the sha256 of `<salt>:<id>` and alternate between the
 * halves, so each half gets half the ids (the first one, in that order, goes to tuning) and the
 * split never depends on results or on file order. Weights and heuristics are tuned on the
 * tuning half only; both halves are reported.
 */
import { createHash } from 'node:crypto';

export type Half = 'tuning' | 'report';

/** Assign every distinct id to a half. `salt` keeps the splits of different sets independent. */
export function assignHalves(ids: Iterable<string>, salt: string): Map<string, Half> {
  const keyed = [...new Set(ids)]
    .map((id) => ({ id, key: createHash('sha256').update(`${salt}:${id}`).digest('hex') }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return new Map(keyed.map(({ id }, i) => [id, i % 2 === 0 ? 'tuning' : 'report'] as const));
}
