/**
 * What an ingest found, per project: the sessions it read into, the corrections in them, and the
 * memories that project now holds — so `cairn ingest` can say where everything went and how to
 * look at it (memories are scoped to each transcript's project, not to the folder ingest ran in).
 */
import type { Deps } from '../deps.js';
import type { SubstrateStore } from '../types.js';

export interface ProjectFound {
  /** Project id (see workspace/project.ts); null for sessions whose project is unknown (no cwd). */
  project: string | null;
  /** Sessions that received turns in this run. */
  sessions: number;
  /** Corrections in those sessions (the user pushing back on the agent). */
  corrections: number;
  /** Active memories the project holds now (for null: project- or session-scope memories without a project). */
  memories: number;
}

/** Per project of the sessions in `touched`, most sessions first. */
export async function foundByProject(deps: Deps, substrate: SubstrateStore, touched: ReadonlySet<string>): Promise<ProjectFound[]> {
  const byProject = new Map<string | null, { sessions: number; corrections: number }>();
  for (const id of touched) {
    const session = await substrate.getSession(id);
    if (!session) continue;
    const entry = byProject.get(session.project) ?? { sessions: 0, corrections: 0 };
    entry.sessions++;
    entry.corrections += (await substrate.getCorrections({ sessionId: id, limit: 100_000 })).length;
    byProject.set(session.project, entry);
  }
  const found: ProjectFound[] = [];
  for (const [project, entry] of byProject) {
    const memories =
      project === null
        ? await deps.store.countMemories({ project: null, scopes: ['project', 'session'] })
        : await deps.store.countMemories({ project, includeUserScope: false });
    found.push({ project, ...entry, memories });
  }
  return found.sort((a, b) => b.sessions - a.sessions || b.memories - a.memories || String(a.project).localeCompare(String(b.project)));
}
