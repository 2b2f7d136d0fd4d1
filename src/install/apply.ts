import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { changesFor, type Agent, type InstallContext } from './targets.js';

export interface PlannedChange {
  path: string;
  before: string | null;
  after: string | null;
  changed: boolean;
  /** Where the previous content was saved (only when written). */
  backup: string | null;
}

/** A small unified-style line diff for `--dry-run` (files here are a few hundred lines at most). */
export function lineDiff(before: string, after: string): string[] {
  const a = before.split('\n');
  const b = after.split('\n');
  const m = a.length;
  const n = b.length;
  const lcs: number[][] = Array.from({ length: m + 1 }, () => new Array<number>(n + 1).fill(0));
  for (let i = m - 1; i >= 0; i--) {
    for (let j = n - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < m || j < n) {
    if (i < m && j < n && a[i] === b[j]) {
      out.push(`  ${a[i]}`);
      i++;
      j++;
    } else if (j < n && (i >= m || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) out.push(`+ ${b[j++]}`);
    else out.push(`- ${a[i++]}`);
  }
  return out;
}

function stamp(now: Date): string {
  return now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}

/**
 * Plan and (unless `dryRun`) apply the changes for an agent: idempotent merges that keep the
 * user's other settings, a timestamped backup of every file changed, atomic writes.
 */
export function install(agent: Agent, ctx: InstallContext, options: { dryRun: boolean; now?: Date }): PlannedChange[] {
  const planned: PlannedChange[] = [];
  for (const change of changesFor(agent, ctx)) {
    const before = existsSync(change.path) ? readFileSync(change.path, 'utf8') : null;
    const after = change.apply(before);
    planned.push({ path: change.path, before, after, changed: after !== null && after !== before, backup: null });
  }
  if (options.dryRun) return planned;
  for (const plan of planned) {
    if (!plan.changed || plan.after === null) continue;
    mkdirSync(dirname(plan.path), { recursive: true });
    if (plan.before !== null) {
      plan.backup = `${plan.path}.cairn-backup-${stamp(options.now ?? new Date())}`;
      copyFileSync(plan.path, plan.backup);
    }
    const tmp = `${plan.path}.cairn-tmp-${process.pid}`;
    writeFileSync(tmp, plan.after);
    renameSync(tmp, plan.path);
  }
  return planned;
}
