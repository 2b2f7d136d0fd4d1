import type { Kind, Memory } from '../types.js';

/** Kinds that are rules the user stated (the only cross-project memories a project sees). */
const USER_RULE_KINDS: ReadonlySet<Kind> = new Set<Kind>(['correction', 'preference', 'procedure']);

/**
 * Whether a memory may reach `project`'s context and recall hits (issue #15, item 5): its own
 * memories, and — from outside any project — only user-scope rules the user stated. Memories of
 * other projects, and of sessions whose project is unknown (no project, not user scope), stay out.
 * For a session whose project is unknown (`project` null), only memories without a project.
 */
export function admissible(memory: Pick<Memory, 'project' | 'scope' | 'kind'>, project: string | null): boolean {
  if (project === null) return memory.project === null;
  if (memory.project === project) return true;
  return memory.project === null && memory.scope === 'user' && USER_RULE_KINDS.has(memory.kind);
}
