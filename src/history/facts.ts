/**
 * Session facts through the library: list a session's facts (by kind, before or near a turn),
 * search them, and get one by the short id the context quotes ("expand f3k9w2m7q1xz").
 */
import { invalid, notFound } from '../errors.js';
import type { Deps } from '../deps.js';
import { isFactId } from '../ingest/facts/id.js';
import { FACT_KINDS, type FactHit, type FactKind, type SessionFact, type SessionFactDetail } from '../types.js';
import { substrateOf } from './history.js';

export interface SessionFactsInput {
  sessionId: string;
  kinds?: FactKind[];
  /** Only what occurred before this turn (seq), e.g. the facts known before a compaction. */
  beforeSeq?: number;
  /** Only what occurred from this turn (seq) on. */
  fromSeq?: number;
  /** Only facts occurring within `window` turns of this one (seq). */
  nearSeq?: number;
  /** @default 20 */
  window?: number;
  /** @default 500 */
  limit?: number;
}

export interface FactSearchInput {
  query: string;
  sessionId?: string;
  /** Only sessions of this project; the current project by default (`null`: every project). */
  project?: string | null;
  kinds?: FactKind[];
  /** @default 20 */
  limit?: number;
}

function checkKinds(kinds: readonly string[] | undefined): void {
  for (const kind of kinds ?? []) {
    if (!(FACT_KINDS as readonly string[]).includes(kind)) throw invalid(`kind must be among ${FACT_KINDS.join(', ')} (got "${kind}")`, 'kinds');
  }
}

function checkCount(value: number | undefined, field: string, min: number): void {
  if (value !== undefined && (!Number.isInteger(value) || value < min)) throw invalid(`${field} must be an integer ≥ ${min}`, field);
}

/** A session's facts, most recently seen first. */
export async function sessionFacts(deps: Deps, input: SessionFactsInput): Promise<SessionFact[]> {
  if (typeof input.sessionId !== 'string' || input.sessionId.length === 0) throw invalid('sessionId is empty', 'sessionId');
  checkKinds(input.kinds);
  checkCount(input.beforeSeq, 'beforeSeq', 0);
  checkCount(input.fromSeq, 'fromSeq', 0);
  checkCount(input.nearSeq, 'nearSeq', 0);
  checkCount(input.window, 'window', 0);
  checkCount(input.limit, 'limit', 1);
  return substrateOf(deps).listFacts(input.sessionId, {
    ...(input.kinds !== undefined ? { kinds: input.kinds } : {}),
    ...(input.beforeSeq !== undefined ? { beforeSeq: input.beforeSeq } : {}),
    ...(input.fromSeq !== undefined ? { fromSeq: input.fromSeq } : {}),
    ...(input.nearSeq !== undefined ? { nearSeq: input.nearSeq } : {}),
    ...(input.window !== undefined ? { window: input.window } : {}),
    ...(input.limit !== undefined ? { limit: input.limit } : {}),
  });
}

/** Full-text search over session facts. */
export async function searchFacts(deps: Deps, input: FactSearchInput): Promise<FactHit[]> {
  if (typeof input.query !== 'string' || input.query.trim().length === 0) throw invalid('query is empty', 'query');
  checkKinds(input.kinds);
  checkCount(input.limit, 'limit', 1);
  const project = input.project === undefined ? deps.project : input.project;
  return substrateOf(deps).searchFacts(input.query, {
    limit: input.limit ?? 20,
    ...(input.sessionId !== undefined ? { sessionId: input.sessionId } : {}),
    ...(project !== null ? { project } : {}),
    ...(input.kinds !== undefined ? { kinds: input.kinds } : {}),
  });
}

/** One fact with every turn it occurs in; NOT_FOUND for an unknown id, INVALID_INPUT for a malformed one. */
export async function getFact(deps: Deps, id: string): Promise<SessionFactDetail> {
  const trimmed = typeof id === 'string' ? id.trim() : '';
  if (!isFactId(trimmed)) throw invalid(`"${trimmed}" is not a fact id (f and 11 letters or digits, e.g. f3k9w2m7q1xz)`, 'id');
  const fact = await substrateOf(deps).getFact(trimmed);
  if (fact === null) throw notFound(`fact ${trimmed}`);
  return fact;
}
