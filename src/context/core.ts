import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** Core memory line budget (SPEC §2): a short file the user edits, always injected first. */
export const CORE_LINE_BUDGET = 80;

export interface CoreFile {
  which: 'project' | 'user';
  path: string;
  exists: boolean;
  text: string;
  /** Non-empty lines. */
  lines: number;
  budget: number;
  overBudget: boolean;
}

export interface CorePaths {
  /** `<repo>/.cairn/MEMORY.md` (may be committed and shared through git). */
  project: string | null;
  /** `~/.cairn/MEMORY.md`. */
  user: string | null;
}

export function readCore(which: 'project' | 'user', path: string, budget = CORE_LINE_BUDGET): CoreFile {
  const exists = existsSync(path);
  const text = exists ? readFileSync(path, 'utf8') : '';
  const lines = text.split('\n').filter((l) => l.trim().length > 0).length;
  return { which, path, exists, text, lines, budget, overBudget: lines > budget };
}

export function readCores(paths: CorePaths, budget = CORE_LINE_BUDGET): CoreFile[] {
  const out: CoreFile[] = [];
  if (paths.project) out.push(readCore('project', paths.project, budget));
  if (paths.user) out.push(readCore('user', paths.user, budget));
  return out;
}

/** The text of a core file as injected: at most `budget` non-empty lines, and a note when cut. */
export function coreForInjection(core: CoreFile): string {
  if (!core.overBudget) return core.text.trim();
  const kept: string[] = [];
  let count = 0;
  for (const line of core.text.split('\n')) {
    if (line.trim().length > 0) count++;
    if (count > core.budget) break;
    kept.push(line);
  }
  return `${kept.join('\n').trim()}\n(core memory cut at ${core.budget} lines: ${core.path} has ${core.lines}; trim it with \`cairn core edit\`)`;
}

export const CORE_TEMPLATE = `# Core memory
<!-- Always given to the agent first. Keep it short (at most ${CORE_LINE_BUDGET} lines): the rules and
     facts that must never be forgotten. Lines starting with <!-- are kept but cost tokens. -->
`;

export function ensureCoreFile(path: string): void {
  if (existsSync(path)) return;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, CORE_TEMPLATE);
}
