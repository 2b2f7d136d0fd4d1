import { CairnError, invalid } from '../errors.js';
import type { Deps } from '../deps.js';
import { distillTouched, recordingSubstrate } from '../distill/after-ingest.js';
import { pendingSessions } from '../distill/distill.js';
import type { DistillSummary } from '../distill/types.js';
import { ingestPaths, type IngestProgress, type IngestSummary } from '../ingest/index.js';
import { AGENTS, TURN_ROLES, type Agent, type SessionRecord, type SubstrateStore, type TurnHit, type TurnRole } from '../types.js';
import { resolveProject } from '../workspace/project.js';
import { foundByProject, type ProjectFound } from './found.js';
import { measureUse, type UseSummary } from '../context/use.js';
import { crashedRuns, readRuns, registerRun, releaseRuns, type IngestRun } from './resume.js';

export function substrateOf(deps: Deps): SubstrateStore {
  const substrate = deps.store.substrate;
  if (!deps.store.capabilities.substrate || !substrate) {
    throw new CairnError('INVALID_INPUT', `the ${deps.store.name} store does not keep session history`);
  }
  return substrate;
}

export interface IngestOptions {
  onProgress?: (progress: IngestProgress) => void;
  /** Distil the sessions that received turns into memories (heuristics, no network). @default true */
  distill?: boolean;
  /** Also report, per project, the sessions read, their corrections and the memories it holds (`projects`). @default false */
  byProject?: boolean;
  /**
   * The transcripts come from a headless run (`claude -p`, `codex exec`; the hooks know it from
   * `CLAUDE_CODE_ENTRYPOINT`): their sessions get no continuation note. Transcripts that record
   * it themselves (Claude Code 2.1+ `entrypoint`, Codex `originator`) need no flag. @default false
   */
  headless?: boolean;
  /**
   * Learn from use: read again the sessions the injection ledger gave context to and mark what the
   * agent used afterwards (src/context/use.ts). Off in the hooks' inline ingests (it re-reads whole
   * transcripts, ~0.3–1 s for 3 MB); `cairn ingest`, which the Stop hook runs detached, turns it on.
   * @default false
   */
  measureUse?: boolean;
}

/** What `ingest` reports: the reader's summary, what distillation made of it, and where it went by project. */
export type IngestReport = IngestSummary & { distilled?: DistillSummary; projects?: ProjectFound[]; use?: UseSummary };

/**
 * Read transcripts under `paths` into the session substrate, incrementally, then distil the
 * sessions that received turns into memories (see src/distill/).
 */
export async function ingest(deps: Deps, paths: string[], options: IngestOptions = {}): Promise<IngestReport> {
  const substrate = substrateOf(deps);
  const projects = new Map<string, string | null>();
  const touched = new Set<string>();
  // Runs that died after committing turns and before distilling them (see resume.ts).
  const crashed = options.distill === false ? [] : crashedRuns(await readRuns(deps.store));
  const run: IngestRun = { id: deps.ids.next(), pid: process.pid, at: deps.clock.now() };
  let registered: Promise<void> | null = null;
  const recording = recordingSubstrate(substrate, touched);
  const summary = await ingestPaths(paths, {
    substrate: {
      ...recording,
      async writeSubstrate(batch) {
        // Registered before the first write can commit, so a kill -9 after it is seen next time.
        if (batch.turns.length > 0) await (registered ??= registerRun(deps.store, run));
        return recording.writeSubstrate(batch);
      },
    },
    clock: deps.clock,
    logger: deps.logger,
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    resolveProject: (cwd) => {
      let id = projects.get(cwd);
      if (id === undefined) {
        id = resolveProject(cwd).id;
        projects.set(cwd, id);
      }
      return id;
    },
  });
  await deps.store.setState('last_ingest_at', String(deps.clock.now()));
  let distilled: DistillSummary | undefined;
  if (options.distill !== false) {
    const sessionIds = new Set(touched);
    if (crashed.length > 0) {
      for (const id of await pendingSessions(deps)) sessionIds.add(id);
      deps.logger.info('ingest: an earlier run died before distilling; distilling every pending session', { runs: crashed.length, sessions: sessionIds.size });
    }
    // In a stable order: which session a repeated finding is credited to must not depend on timing.
    distilled = await distillTouched(deps, new Set([...sessionIds].sort()), { headless: options.headless ?? false });
    // A run that did not distil (distill: false) stays registered: its sessions are pending.
    const done = new Set(crashed.map((r) => r.id));
    if (registered !== null) done.add(run.id);
    await releaseRuns(deps.store, done);
  }
  const found = options.byProject ? await foundByProject(deps, substrate, touched) : undefined;
  // Learn from use: what the agent did with cairn's injections in these sessions (src/context/use.ts).
  const use = options.measureUse ? await measureUse(deps, touched) : undefined;
  return { ...summary, ...(distilled ? { distilled } : {}), ...(found ? { projects: found } : {}), ...(use && use.windows > 0 ? { use } : {}) };
}

export interface SessionsInput {
  project?: string;
  agent?: Agent;
  limit?: number;
  offset?: number;
}

export async function sessions(deps: Deps, input: SessionsInput = {}): Promise<SessionRecord[]> {
  if (input.agent !== undefined && !AGENTS.includes(input.agent)) throw invalid(`agent must be one of ${AGENTS.join(', ')}`, 'agent');
  return substrateOf(deps).listSessions({
    ...(input.project !== undefined ? { project: input.project } : {}),
    ...(input.agent !== undefined ? { agent: input.agent } : {}),
    limit: input.limit ?? 50,
    offset: input.offset ?? 0,
  });
}

export interface HistoryInput {
  query: string;
  project?: string;
  sessionId?: string;
  agent?: Agent;
  roles?: TurnRole[];
  /** Epoch ms, or a duration like `7d`, `12h` (parsed by the surfaces). */
  since?: number;
  limit?: number;
}

/** Full-text search over raw transcript turns ("what did we try for the flaky test last week"). */
export async function history(deps: Deps, input: HistoryInput): Promise<TurnHit[]> {
  if (typeof input.query !== 'string' || input.query.trim().length === 0) throw invalid('query is empty', 'query');
  for (const role of input.roles ?? []) if (!TURN_ROLES.includes(role)) throw invalid(`role must be among ${TURN_ROLES.join(', ')}`, 'roles');
  if (input.agent !== undefined && !AGENTS.includes(input.agent)) throw invalid(`agent must be one of ${AGENTS.join(', ')}`, 'agent');
  return substrateOf(deps).searchTurns(input.query, {
    limit: input.limit ?? 20,
    ...(input.project !== undefined ? { project: input.project } : {}),
    ...(input.sessionId !== undefined ? { sessionId: input.sessionId } : {}),
    ...(input.agent !== undefined ? { agent: input.agent } : {}),
    ...(input.roles !== undefined ? { roles: input.roles } : {}),
    ...(input.since !== undefined ? { since: input.since } : {}),
  });
}

/** `7d`, `12h`, `30m`, or an ISO date → epoch ms. */
export function parseSince(value: string, now: number): number {
  const rel = /^(\d+)\s*([dhmw])$/.exec(value.trim());
  if (rel) {
    const unit = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[rel[2] as 'd' | 'h' | 'm' | 'w'];
    return now - Number(rel[1]) * unit;
  }
  const abs = Date.parse(value);
  if (Number.isNaN(abs)) throw invalid(`--since must be like 7d, 12h, 30m or a date (got "${value}")`, 'since');
  return abs;
}
