import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { changesFor, type Agent, type FileChange, type InstallContext } from './targets.js';

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
  return now.toISOString().replace(/[-:]/g, '').replace('T', '-').replace('.', '').slice(0, 18);
}

/** A backup path not taken yet (two runs in the same millisecond get -1, -2 …). */
function freshBackupPath(path: string, now: Date): string {
  const base = `${path}${BACKUP_MARK}${stamp(now)}`;
  let candidate = base;
  for (let n = 1; existsSync(candidate); n++) candidate = `${base}-${n}`;
  return candidate;
}

const BACKUP_MARK = '.cairn-backup-';

/** cairn's backups of a file, oldest first. */
function backupsOf(path: string): string[] {
  const dir = dirname(path);
  const prefix = `${basename(path)}${BACKUP_MARK}`;
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.startsWith(prefix))
    .sort()
    .map((name) => join(dir, name));
}

/**
 * On uninstall, the file exactly as it was before cairn touched it, when the user has not edited
 * it since: the oldest backup that cairn's install turns into the current text (later backups of
 * a re-install hold cairn's earlier entries). `null` when there is none (the library's removal is
 * used then, which keeps the user's later edits).
 */
function pristineBackup(current: string, install: FileChange): string | null {
  for (const backup of backupsOf(install.path)) {
    try {
      const text = readFileSync(backup, 'utf8');
      if (install.apply(text) === current) return text;
    } catch {
      // A backup that no longer parses is not the one we are looking for.
    }
  }
  return null;
}

/**
 * Plan and (unless `dryRun`) apply the changes for an agent: idempotent merges that keep the
 * user's other settings, a timestamped backup of every file changed, atomic writes. `--uninstall`
 * restores a file byte for byte when it is unchanged since cairn's install, and removes a file
 * that cairn created and that holds nothing else.
 */
export function install(agent: Agent, ctx: InstallContext, options: { dryRun: boolean; now?: Date }): PlannedChange[] {
  const planned: PlannedChange[] = [];
  const changes = changesFor(agent, ctx);
  const installs = ctx.uninstall ? changesFor(agent, { ...ctx, uninstall: false }) : changes;
  changes.forEach((change, index) => {
    const before = existsSync(change.path) ? readFileSync(change.path, 'utf8') : null;
    let after = change.apply(before);
    if (ctx.uninstall && before !== null && after !== before) after = pristineBackup(before, installs[index]!) ?? after;
    planned.push({ path: change.path, before, after, changed: after !== before, backup: null });
  });
  if (options.dryRun) return planned;
  for (const plan of planned) {
    if (!plan.changed) continue;
    mkdirSync(dirname(plan.path), { recursive: true });
    if (plan.before !== null) {
      plan.backup = freshBackupPath(plan.path, options.now ?? new Date());
      copyFileSync(plan.path, plan.backup);
    }
    if (plan.after === null) {
      rmSync(plan.path, { force: true });
      continue;
    }
    const tmp = `${plan.path}.cairn-tmp-${process.pid}`;
    writeFileSync(tmp, plan.after);
    renameSync(tmp, plan.path);
  }
  return planned;
}
