/**
 * Scope assignment (seed 004): `user` for personal preferences, tools and style that follow the
 * user across projects; `project` for conventions, architecture and file facts; `session` for
 * task state. A candidate that fits no scope (a file fact outside any project) is dropped.
 */
import type { Scope } from '../types.js';
import { hasSpecific } from './text.js';
import type { Candidate } from './types.js';

/** Words that tie a statement to the work at hand rather than to the user's general style. */
const DEICTIC =
  /\b(?:it|its|it's|this|that|these|those|there|here|the (?:file|function|method|class|field|table|test|tests|phase|option|value|step|doc|document|plan|module|api|endpoint|bug|issue|logic|session|repo|code ?base))\b|(?:^|\s)(?:это|этот|эта|там|тут|цей|ця|там|dies|diese|das hier|ça|ce fichier|esto|esta|isso|este|这个|那个|ここ|これ|それ)(?=$|\s|[,.])/iu;

function headline(text: string): string {
  const nl = text.indexOf('\n');
  return nl < 0 ? text : text.slice(0, nl);
}

/** Whether a rule speaks about how the user likes to work in general, not about this project. */
export function isGeneralStyle(text: string): boolean {
  const head = headline(text);
  return !hasSpecific(head) && !DEICTIC.test(head);
}

/**
 * The scope a candidate belongs in, or null when it fits none (then it is dropped).
 * `project` is the session's project identity (null outside any project).
 */
export function assignScope(candidate: Pick<Candidate, 'text' | 'kind' | 'scope' | 'extractor'>, project: string | null): Scope | null {
  if (candidate.kind === 'continuation' || candidate.scope === 'session') return 'session';
  if (candidate.scope === 'user') return 'user';
  if (candidate.scope === 'project') return project === null ? null : 'project';
  switch (candidate.kind) {
    case 'correction':
    case 'preference':
      if (project === null) return 'user';
      return isGeneralStyle(candidate.text) ? 'user' : 'project';
    default:
      return project === null ? null : 'project';
  }
}
