/**
 * The lines that tell a newcomer where their memories are: memories are kept per project (the
 * transcript's, not the folder a command runs in), so a command that finds nothing here says
 * what other projects hold and the command that shows it.
 */
import type { ProjectFound } from '../history/found.js';
import type { MemorySpread } from '../memory/spread.js';

/** Quote a command argument for a POSIX shell when it needs it. */
export function shellArg(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/** `cairn list --project <id>`, or the memories without a project. */
export function listCommand(project: string | null): string {
  return project === null ? 'cairn list --no-project' : `cairn list --project ${shellArg(project)}`;
}

/** What `cairn ingest` found per project, and the command that shows each. */
export function foundLines(found: ProjectFound[], here: string | null, max = 10): string[] {
  if (found.length === 0) return ['no new sessions: everything was read before (cairn status shows what is stored)'];
  const lines = [`found in ${plural(found.length, 'project')} (memories are kept per project; each command shows one):`];
  const shown = found.slice(0, max);
  const name = (p: string | null): string => p ?? '(project unknown)';
  const width = Math.min(48, Math.max(...shown.map((f) => name(f.project).length)));
  // Counts in columns (numbers right-aligned), so the commands line up too.
  const counts = shown.map((f) => [
    [f.sessions, 'session', 'sessions'],
    [f.memories, 'memory', 'memories'],
    [f.corrections, 'correction', 'corrections'],
  ] as const);
  const numWidth = [0, 1, 2].map((i) => Math.max(...counts.map((c) => c[i]![0].toLocaleString('en-US').length)));
  const cells = counts.map((c) => c.map(([value, one, many], i) => `${value.toLocaleString('en-US').padStart(numWidth[i]!)} ${value === 1 ? one : many}`));
  const cellWidth = [0, 1, 2].map((i) => Math.max(...cells.map((c) => c[i]!.length)));
  shown.forEach((f, k) => {
    const label = name(f.project).length > width ? `…${name(f.project).slice(-(width - 1))}` : name(f.project).padEnd(width);
    lines.push(`  ${label}  ${cells[k]!.map((c, i) => c.padEnd(cellWidth[i]!)).join(' · ')}   ${listCommand(f.project)}`);
  });
  if (found.length > max) lines.push(`  … and ${plural(found.length - max, 'more project')} (cairn status --projects lists every one)`);
  if (!found.some((f) => f.project === here)) {
    lines.push(`this folder's project (${here ?? 'none'}) got nothing: \`cairn list\` and \`cairn recall\` here show its memories and the user-wide ones; add --all-projects for all`);
  }
  return lines;
}

/** One line: how many memories other projects hold and how to see them (empty when none). */
export function elsewhereLine(spread: MemorySpread): string | null {
  const elsewhere = spread.otherTotal + spread.noProject;
  if (elsewhere === 0) return null;
  const top = spread.others[0];
  const named = spread.otherProjects > 0 ? ` in ${plural(spread.otherProjects, 'other project')}${spread.unnamed > 0 ? ' and more' : ''}` : ' in other projects';
  const unknown = spread.noProject > 0 ? ` (${spread.noProject.toLocaleString('en-US')} without a project)` : '';
  return `${plural(elsewhere, 'memory', 'memories')}${named}${unknown}: cairn list --all-projects${top ? `, or ${listCommand(top.project)}` : ''}`;
}
