/**
 * Where the memories are: this project's, the user-wide ones, the ones without a project, and
 * every other project's — so the surfaces can say "nothing here, 4,210 in other projects, see
 * them with …" instead of looking empty. Counts come from indexed counts, one per project; the
 * projects are the ones ingested sessions name (plus this one), so memories of a project no
 * session names are counted in `otherTotal` without a name.
 */
import type { Deps } from '../deps.js';
import type { MemoryFilter, Scope } from '../types.js';

export interface ProjectMemories {
  project: string;
  /** Active memories of exactly this project. */
  memories: number;
}

export interface MemorySpread {
  /** The project this instance works in (null: none). */
  project: string | null;
  /** Active memories of this project (not counting user-wide ones). */
  here: number;
  /** Active user-scope memories without a project: recalled in every project. */
  userWide: number;
  /** Active project- or session-scope memories whose project is unknown (e.g. a transcript without a cwd). */
  noProject: number;
  /** Active memories of every other project. */
  otherTotal: number;
  /** Other projects by memories, most first (only the first `limit`). */
  others: ProjectMemories[];
  /** How many other projects hold memories, among those ingested sessions name. */
  otherProjects: number;
  /** Of `otherTotal`, memories of projects no ingested session names (written there by hand or by an agent). */
  unnamed: number;
}

/** How many distinct projects are counted one by one; the rest only appear in `otherTotal`. */
const MAX_PROJECTS = 200;
const SESSION_PAGE = 1000;

/** The projects ingested sessions name, most recently active first. */
async function sessionProjects(deps: Deps): Promise<string[]> {
  const substrate = deps.store.substrate;
  if (!substrate) return [];
  const seen = new Set<string>();
  for (let offset = 0; seen.size < MAX_PROJECTS; offset += SESSION_PAGE) {
    const page = await substrate.listSessions({ limit: SESSION_PAGE, offset });
    for (const s of page) if (s.project) seen.add(s.project);
    if (page.length < SESSION_PAGE) break;
  }
  return [...seen].slice(0, MAX_PROJECTS);
}

/**
 * Count active memories by where they belong. `filter` narrows every count the same way (kinds,
 * scopes, tags …; its `project` is ignored).
 * @example const spread = await memorySpread(cairn.deps); // spread.otherTotal memories elsewhere
 */
export async function memorySpread(deps: Deps, options: { limit?: number; filter?: MemoryFilter } = {}): Promise<MemorySpread> {
  const { project: _ignored, includeUserScope: _also, ...base } = options.filter ?? {};
  const count = (filter: MemoryFilter): Promise<number> => deps.store.countMemories({ ...base, ...filter });
  // `wanted` scopes within the caller's own scope filter; none left counts nothing.
  const countScopes = async (project: null, wanted: Scope[]): Promise<number> => {
    const scopes = base.scopes && base.scopes.length > 0 ? wanted.filter((s) => base.scopes?.includes(s)) : wanted;
    return scopes.length === 0 ? 0 : count({ project, scopes });
  };
  const here = deps.project;
  const [total, hereCount, userWide, noProject, named] = await Promise.all([
    count({}),
    here === null ? Promise.resolve(0) : count({ project: here, includeUserScope: false }),
    countScopes(null, ['user']),
    countScopes(null, ['project', 'session']),
    sessionProjects(deps),
  ]);
  const others: ProjectMemories[] = [];
  for (const project of named) {
    if (project === here) continue;
    const memories = await count({ project, includeUserScope: false });
    if (memories > 0) others.push({ project, memories });
  }
  others.sort((a, b) => b.memories - a.memories || a.project.localeCompare(b.project));
  const otherTotal = Math.max(0, total - hereCount - userWide - noProject);
  return {
    project: here,
    here: hereCount,
    userWide,
    noProject,
    otherTotal,
    others: others.slice(0, options.limit ?? 5),
    otherProjects: others.length,
    unnamed: Math.max(0, otherTotal - others.reduce((sum, p) => sum + p.memories, 0)),
  };
}
