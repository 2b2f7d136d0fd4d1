/**
 * Ingest → distillation: the substrate handed to the ingest runner records which sessions
 * received turns, and those sessions are distilled right after (the hooks' pre-compact and stop
 * ingests thus leave fresh memories and continuation state behind).
 */
import type { Deps } from '../deps.js';
import type { SubstrateStore } from '../types.js';
import { distill } from './distill.js';
import { emptySummary, type DistillSummary } from './types.js';

/** A substrate that notes the session of every turn written through it. */
export function recordingSubstrate(substrate: SubstrateStore, touched: Set<string>): SubstrateStore {
  return {
    async writeSubstrate(batch) {
      const result = await substrate.writeSubstrate(batch);
      for (const turn of batch.turns) touched.add(turn.sessionId);
      return result;
    },
    getCursor: (path) => substrate.getCursor(path),
    getSession: (id) => substrate.getSession(id),
    listSessions: (options) => substrate.listSessions(options),
    getTurns: (sessionId, options) => substrate.getTurns(sessionId, options),
    getCompactions: (sessionId) => substrate.getCompactions(sessionId),
    getCorrections: (options) => substrate.getCorrections(options),
    searchTurns: (query, options) => substrate.searchTurns(query, options),
    listFacts: (sessionId, options) => substrate.listFacts(sessionId, options),
    searchFacts: (query, options) => substrate.searchFacts(query, options),
    getFact: (id) => substrate.getFact(id),
    substrateStats: () => substrate.substrateStats(),
  };
}

/** Distil the sessions an ingest touched; a failure is logged and reported, never thrown. */
export async function distillTouched(deps: Deps, touched: ReadonlySet<string>, options: { headless?: boolean } = {}): Promise<DistillSummary> {
  if (touched.size === 0) return emptySummary();
  try {
    return await distill(deps, { sessionIds: [...touched], headless: options.headless ?? false });
  } catch (error) {
    deps.logger.error('distill after ingest failed', { error: error instanceof Error ? error.message : String(error) });
    const summary = emptySummary();
    summary.errors.push({ sessionId: '*', error: error instanceof Error ? error.message : String(error) });
    return summary;
  }
}
