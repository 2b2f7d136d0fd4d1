/**
 * Distillation: turn the session substrate into memories. For each session with turns past its
 * cursor, the heuristic extractors read the new turns (with earlier ones as context), and every
 * candidate goes down the ladder (gate → scope → contradictions → dedup → store). The cursor — the
 * last distilled turn's seq — is saved per session, so re-running adds nothing.
 */
import { CairnError } from '../errors.js';
import type { Deps } from '../deps.js';
import type { SessionRecord, SubstrateStore } from '../types.js';
import { extractAll } from './extract/index.js';
import { applyCandidate, existingDir, type LadderContext } from './ladder.js';
import { SessionView } from './session.js';
import { emptySummary, type Candidate, type DistillSummary, type Outcome } from './types.js';

/** Earlier turns read again as context (tool results, the request a fix belongs to …). */
export const LOOKBACK_TURNS = 300;

export interface DistillOptions {
  /** Only these sessions. @default every session with turns not distilled yet */
  sessionIds?: string[];
  /** Report what would be stored without writing anything (cursors included). @default false */
  dryRun?: boolean;
  /** Read every session from its first turn again (what is already stored merges). @default false */
  full?: boolean;
  /**
   * The sessions come from a headless run (`claude -p`, `codex exec`): no continuation note (a
   * one-shot run is not resumed; its "where we left off" would only pile up in recall). Sessions
   * whose transcript says so themselves (turns flagged `headless`) are treated alike. @default false
   */
  headless?: boolean;
  /** Extra candidate sources run after the heuristics (the optional LLM observer). */
  extraExtractors?: Array<(view: SessionView) => Promise<Candidate[]>>;
  /** Called after each session. */
  onSession?: (sessionId: string, results: Array<{ candidate: Candidate; outcome: Outcome }>) => void;
}

export const cursorKey = (sessionId: string): string => `distill:cursor:${sessionId}`;

function substrateOf(deps: Deps): SubstrateStore {
  const substrate = deps.store.substrate;
  if (!deps.store.capabilities.substrate || !substrate) {
    throw new CairnError('INVALID_INPUT', `the ${deps.store.name} store does not keep session history to distil`);
  }
  return substrate;
}

async function readCursor(deps: Deps, sessionId: string): Promise<number> {
  const raw = await deps.store.getState(cursorKey(sessionId));
  const n = raw === null ? Number.NaN : Number(raw);
  return Number.isInteger(n) ? n : -1;
}

/** Sessions whose newest turn lies past their cursor. */
export async function pendingSessions(deps: Deps): Promise<string[]> {
  const substrate = substrateOf(deps);
  const out: string[] = [];
  const page = 500;
  for (let offset = 0; ; offset += page) {
    const sessions = await substrate.listSessions({ limit: page, offset });
    for (const session of sessions) {
      const cursor = await readCursor(deps, session.id);
      const next = await substrate.getTurns(session.id, { fromSeq: cursor + 1, limit: 1 });
      if (next.length > 0) out.push(session.id);
    }
    if (sessions.length < page) return out;
  }
}

function tally(summary: DistillSummary, outcome: Outcome, candidate: Candidate): void {
  switch (outcome.action) {
    case 'rejected':
      summary.rejected[outcome.reason] = (summary.rejected[outcome.reason] ?? 0) + 1;
      return;
    case 'merged':
      summary.merged++;
      return;
    case 'replaced':
      summary.continuations++;
      return;
    case 'unchanged':
    case 'outdated':
      return;
    default:
      if (outcome.action === 'added') summary.added++;
      else if (outcome.action === 'superseded') summary.superseded++;
      else summary.queued++;
      summary.byKind[candidate.kind] = (summary.byKind[candidate.kind] ?? 0) + 1;
      summary.byScope[outcome.scope] = (summary.byScope[outcome.scope] ?? 0) + 1;
  }
}

/** Distil one session from its cursor; returns the outcome of every candidate. */
export async function distillSession(
  deps: Deps,
  session: SessionRecord,
  options: DistillOptions,
  summary: DistillSummary,
): Promise<Array<{ candidate: Candidate; outcome: Outcome }>> {
  const substrate = substrateOf(deps);
  const cursor = options.full ? -1 : await readCursor(deps, session.id);
  const fromSeq = cursor + 1;
  const turns = await substrate.getTurns(session.id, { fromSeq: Math.max(0, fromSeq - LOOKBACK_TURNS) });
  const fresh = turns.filter((t) => t.seq >= fromSeq);
  if (fresh.length === 0) return [];
  summary.sessions++;
  summary.turns += fresh.length;
  const corrections = await substrate.getCorrections({ sessionId: session.id });
  const view = new SessionView(session, turns, fromSeq, corrections, options.headless ?? false);
  const candidates = extractAll(view);
  for (const extra of options.extraExtractors ?? []) candidates.push(...(await extra(view)));
  summary.candidates += candidates.length;
  const ctx: LadderContext = {
    deps,
    project: session.project,
    sessionId: session.id,
    workspaceRoot: existingDir(session.cwd),
    dryRun: options.dryRun ?? false,
  };
  const outcomes: Array<{ candidate: Candidate; outcome: Outcome }> = [];
  for (const candidate of candidates) {
    const outcome = await applyCandidate(ctx, candidate);
    outcomes.push({ candidate, outcome });
    tally(summary, outcome, candidate);
  }
  if (!ctx.dryRun) {
    const last = fresh[fresh.length - 1];
    if (last) await deps.store.setState(cursorKey(session.id), String(last.seq));
  }
  return outcomes;
}

/**
 * Distil the sessions given (or every session with new turns) into memories. A session that
 * fails is reported and left at its cursor; the others go on.
 */
export async function distill(deps: Deps, options: DistillOptions = {}): Promise<DistillSummary> {
  const substrate = substrateOf(deps);
  const summary = emptySummary(options.dryRun ?? false);
  const ids = options.sessionIds ?? (options.full ? await allSessions(substrate) : await pendingSessions(deps));
  for (const id of ids) {
    try {
      const session = await substrate.getSession(id);
      if (!session) continue;
      const outcomes = await distillSession(deps, session, options, summary);
      options.onSession?.(id, outcomes);
    } catch (error) {
      deps.logger.error('distill: session failed', { sessionId: id, error: error instanceof Error ? error.message : String(error) });
      summary.errors.push({ sessionId: id, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return summary;
}

async function allSessions(substrate: SubstrateStore): Promise<string[]> {
  const out: string[] = [];
  for (let offset = 0; ; offset += 500) {
    const page = await substrate.listSessions({ limit: 500, offset });
    out.push(...page.map((s) => s.id));
    if (page.length < 500) return out;
  }
}
