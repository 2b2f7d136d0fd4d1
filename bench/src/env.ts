/** The environment every result records: commit, machine, Node version, date. */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { arch, cpus, loadavg, platform, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunEnv } from './types.js';

/** The cairn checkout this code runs from (bench/src or bench/dist → two levels up). */
export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Resolve `.git` (a folder, or a file pointing elsewhere as in worktrees) under `root`. */
function gitDir(root: string): string | null {
  const dotGit = join(root, '.git');
  if (!existsSync(dotGit)) return null;
  if (statSync(dotGit).isDirectory()) return dotGit;
  const pointer = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, 'utf8'));
  return pointer?.[1] ? resolve(root, pointer[1].trim()) : null;
}

/** HEAD's commit read from `.git` without spawning git; null when it cannot be read. */
export function gitCommit(root: string = PACKAGE_ROOT): string | null {
  try {
    const dir = gitDir(root);
    if (!dir) return null;
    const head = readFileSync(join(dir, 'HEAD'), 'utf8').trim();
    if (/^[0-9a-f]{40}$/.test(head)) return head;
    const ref = /^ref:\s*(.+)$/.exec(head)?.[1];
    if (!ref) return null;
    // A worktree keeps HEAD in its own folder but refs in the common one.
    const common = existsSync(join(dir, 'commondir')) ? resolve(dir, readFileSync(join(dir, 'commondir'), 'utf8').trim()) : dir;
    for (const base of [dir, common]) {
      const loose = join(base, ref);
      if (existsSync(loose)) return readFileSync(loose, 'utf8').trim();
    }
    const packed = join(common, 'packed-refs');
    if (existsSync(packed)) {
      for (const line of readFileSync(packed, 'utf8').split('\n')) {
        const [sha, name] = line.split(' ');
        if (name === ref && sha && /^[0-9a-f]{40}$/.test(sha)) return sha;
      }
    }
    return null;
  } catch {
    // An unreadable checkout is not a reason to fail a benchmark; the result says null.
    return null;
  }
}

/**
 * Whether tracked files differ from HEAD (one `git status` at the start of a run), so a figure
 * measured on uncommitted code says so; null when git is unavailable.
 */
export function gitDirty(root: string = PACKAGE_ROOT): boolean | null {
  try {
    // GIT_OPTIONAL_LOCKS=0: never take index.lock, so a run cannot break a concurrent `git commit`.
    const out = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 10_000,
      env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' },
    });
    return out.trim().length > 0;
  } catch {
    // No git binary or not a checkout: the result records null rather than guessing.
    return null;
  }
}

export function runEnv(command: string, now: Date = new Date()): RunEnv {
  const cores = cpus();
  const commit = gitCommit();
  return {
    command,
    commit,
    dirty: commit === null ? null : gitDirty(),
    machine: {
      cpu: cores[0]?.model.trim() ?? 'unknown',
      cores: cores.length,
      memoryBytes: totalmem(),
      platform: platform(),
      arch: arch(),
      loadAverage: loadavg().map((x) => Math.round(x * 100) / 100),
    },
    node: process.version,
    date: now.toISOString(),
  };
}
