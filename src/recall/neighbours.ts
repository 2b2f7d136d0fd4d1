/**
 * Conversation neighbours: memories written from consecutive turns of one conversation lend each
 * other relevance at query time. A reply ("5 years already!") rarely shares a word with the
 * question that will look for it; the turn before it (the question it answers) or after it often
 * does, and ranks high instead. Two memories are neighbours when their provenance names the same
 * session (`provenance.sessionId`) and lines one apart (`provenance.line`): the memories of a
 * conversation import (one memory per turn, `line` = the turn's place in its session) and those
 * distilled from consecutive lines of one transcript. Memories without both fields have none.
 *
 * Only candidates already retrieved lend and receive: no extra store query, so the cost is one
 * pass over the candidates, and a memory with no neighbour among them scores as before.
 */
import type { Memory } from '../types.js';

/**
 * The share of a neighbour's relevance a memory gains, added to its own: of the turn after it (its
 * reply) and of the turn before it (what it answers); the better of the two counts. Chosen on the
 * LoCoMo tuning half only (even conversations; a grid of shares 0.1–0.6 × each direction weighted
 * 0 / 0.5 / 1, the largest mean recall@5 over the two stored layouts; docs/EMBEDDINGS.md): 0.3 both
 * ways.
 */
export const NEIGHBOUR_SHARE = { next: 0.3, previous: 0.3 } as const;

/** Where a memory sits in a conversation, or null when its provenance does not say. */
export function turnPosition(memory: Pick<Memory, 'provenance'>): { session: string; line: number } | null {
  const session = memory.provenance?.sessionId;
  const line = memory.provenance?.line;
  if (typeof session !== 'string' || session === '' || typeof line !== 'number' || !Number.isInteger(line)) return null;
  return { session, line };
}

/**
 * For each candidate with a neighbour among the candidates, the relevance it gains (0..1 scale of
 * relevance): max(next × the next turn's relevance, previous × the previous turn's). Candidates
 * without a neighbour are absent from the map.
 */
export function neighbourLifts(
  candidates: ReadonlyArray<{ memory: Pick<Memory, 'id' | 'provenance'>; relevance: number }>,
  share: { next: number; previous: number } = NEIGHBOUR_SHARE,
): Map<string, number> {
  const byPosition = new Map<string, number>();
  const positions = candidates.map((c) => turnPosition(c.memory));
  const key = (session: string, line: number): string => `${line}\u0000${session}`;
  candidates.forEach((c, i) => {
    const at = positions[i];
    if (!at) return;
    const k = key(at.session, at.line);
    byPosition.set(k, Math.max(byPosition.get(k) ?? 0, c.relevance));
  });
  const lifts = new Map<string, number>();
  candidates.forEach((c, i) => {
    const at = positions[i];
    if (!at) return;
    const next = byPosition.get(key(at.session, at.line + 1));
    const previous = byPosition.get(key(at.session, at.line - 1));
    const lift = Math.max(next !== undefined ? share.next * next : 0, previous !== undefined ? share.previous * previous : 0);
    if (lift > 0) lifts.set(c.memory.id, lift);
  });
  return lifts;
}
