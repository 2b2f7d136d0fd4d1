/**
 * Project identity (SPEC §2): the git repository — worktrees and subfolders of one repository
 * are one project, named by its remote URL when it has one, else by the main repository's root —
 * and outside git, the folder.
 *
 * Hooks call this on every prompt and must finish the whole process in ~100 ms, so it never
 * spawns `git`: it reads `.git`, `commondir`, `config` and `HEAD` itself (a few small file reads).
 */
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';

export interface ProjectIdentity {
  /** Stable id: the normalised remote (`github.com/owner/repo`), else the main repository's root
   * path (the same for all its worktrees), else the folder path. */
  id: string;
  /** Top of the working tree that contains `cwd` (the worktree's own top for a linked worktree). */
  root: string;
  kind: 'git-remote' | 'git-local' | 'folder';
  /** The remote URL as written in the git config (`origin`, else the first remote). */
  remote: string | null;
  /** Checked-out branch; null when HEAD is detached. */
  branch: string | null;
}

/** Resolve the project that `cwd` belongs to. Synchronous and cheap; never throws for a missing repo. */
export function resolveProject(cwd: string): ProjectIdentity {
  const start = realPath(resolve(cwd));
  for (let dir = start; ; ) {
    const dotGit = join(dir, '.git');
    const stat = statSync(dotGit, { throwIfNoEntry: false });
    if (stat !== undefined) {
      const gitDir = stat.isDirectory() ? dotGit : readGitDirFile(dotGit, dir);
      if (gitDir !== null) return gitIdentity(dir, gitDir);
      break; // a broken `.git` file (stale worktree): git itself gives up here too
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return { id: start, root: start, kind: 'folder', remote: null, branch: null };
}

function gitIdentity(root: string, gitDir: string): ProjectIdentity {
  // A linked worktree (or a submodule) keeps refs and config in a shared "common" directory.
  const commonRef = readText(join(gitDir, 'commondir'))?.trim();
  const commonDir = commonRef ? realPath(resolve(gitDir, commonRef)) : gitDir;
  const config = parseGitConfig(readText(join(commonDir, 'config')) ?? '');
  const branch = parseHead(readText(join(gitDir, 'HEAD')));
  const remote = pickRemote(config);
  if (remote !== null) {
    return { id: normalizeRemoteUrl(applyInsteadOf(remote, config)), root, kind: 'git-remote', remote, branch };
  }
  return { id: mainRoot(commonDir, config), root, kind: 'git-local', remote: null, branch };
}

/** `gitdir: <path>` in a `.git` file (linked worktrees, submodules, `--separate-git-dir`). */
function readGitDirFile(file: string, dir: string): string | null {
  const match = /^gitdir:\s*(.+?)\s*$/m.exec(readText(file) ?? '');
  if (match === null) return null;
  const gitDir = resolve(dir, match[1] as string);
  return statSync(gitDir, { throwIfNoEntry: false })?.isDirectory() ? realPath(gitDir) : null;
}

/** The main working tree's root: the parent of `.git`, the configured `core.worktree`, or the git dir itself (bare). */
function mainRoot(commonDir: string, config: GitConfig): string {
  if (basename(commonDir) === '.git') return dirname(commonDir);
  const worktree = config.sections.get('core')?.get('worktree');
  if (worktree !== undefined) return realPath(resolve(commonDir, worktree));
  return commonDir;
}

function parseHead(head: string | null): string | null {
  const match = /^ref:\s*refs\/heads\/(.+?)\s*$/m.exec(head ?? '');
  return match === null ? null : (match[1] as string);
}

/* ----------------------------------------------------------------------------------------- */

/** What cairn needs from a repository's git config. */
export interface GitConfig {
  /** Section (`[remote "origin"]` → `remote.origin`; the section name lower-cased) → key (lower-cased) → last value. */
  sections: Map<string, Map<string, string>>;
  /** Section names in file order (the "first remote" is the first one here). */
  order: string[];
  /** `[url "<base>"] insteadOf = <prefix>` rules as [prefix, base]. */
  insteadOf: Array<[string, string]>;
}

/**
 * The subset of git's config syntax that repository configs use: `[section]`,
 * `[section "subsection"]`, `key = value` with comments, quotes and escapes.
 */
export function parseGitConfig(text: string): GitConfig {
  const config: GitConfig = { sections: new Map(), order: [], insteadOf: [] };
  let section: string | null = null;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]/.exec(line);
    if (header !== null) {
      const name = (header[1] as string).toLowerCase();
      section = header[2] === undefined ? name : `${name}.${header[2].replace(/\\(.)/g, '$1')}`;
      if (!config.sections.has(section)) {
        config.sections.set(section, new Map());
        config.order.push(section);
      }
      continue;
    }
    if (section === null) continue;
    const entry = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (entry === null) continue;
    const key = (entry[1] as string).toLowerCase();
    const value = parseConfigValue(entry[2] ?? 'true');
    config.sections.get(section)?.set(key, value);
    if (key === 'insteadof' && section.startsWith('url.')) config.insteadOf.push([value, section.slice(4)]);
  }
  return config;
}

/** Unquote a config value and drop a trailing comment outside quotes. */
function parseConfigValue(raw: string): string {
  let out = '';
  let quoted = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] as string;
    if (c === '\\' && i + 1 < raw.length) {
      const next = raw[++i] as string;
      out += next === 'n' ? '\n' : next === 't' ? '\t' : next;
    } else if (c === '"') {
      quoted = !quoted;
    } else if ((c === '#' || c === ';') && !quoted) {
      break;
    } else {
      out += c;
    }
  }
  return out.trim();
}

/** `origin`'s URL, else the first remote (in file order) that has one. */
function pickRemote(config: GitConfig): string | null {
  const origin = config.sections.get('remote.origin')?.get('url');
  if (origin) return origin;
  for (const section of config.order) {
    const url = section.startsWith('remote.') ? config.sections.get(section)?.get('url') : undefined;
    if (url) return url;
  }
  return null;
}

/** `[url "git@github.com:"] insteadOf = gh:` rewrites, longest prefix first, as git applies them. */
function applyInsteadOf(url: string, config: GitConfig): string {
  let best: [string, string] | null = null;
  for (const rule of config.insteadOf) {
    if (url.startsWith(rule[0]) && (best === null || rule[0].length > best[0].length)) best = rule;
  }
  return best === null ? url : best[1] + url.slice(best[0].length);
}

/**
 * A stable id for a remote URL, the same for its https and ssh forms:
 * `https://user:token@GitHub.com/owner/repo.git/` and `git@github.com:owner/repo.git` both give
 * `github.com/owner/repo`. Scheme, credentials, port, `.git` suffix and trailing slashes are
 * dropped and the host is lower-cased; the path keeps its case. Local paths stay paths.
 */
export function normalizeRemoteUrl(url: string): string {
  let rest = url.trim();
  let host = '';
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(rest);
  if (scheme !== null) {
    rest = rest.slice(scheme[0].length);
    if ((scheme[1] as string).toLowerCase() !== 'file') {
      const slash = rest.indexOf('/');
      host = slash === -1 ? rest : rest.slice(0, slash);
      rest = slash === -1 ? '' : rest.slice(slash);
    }
  } else {
    // scp-like `[user@]host:path` — a colon before any slash (git's own rule), not a drive letter.
    const scp = /^([^/:]+):(?!\\)/.exec(rest);
    if (scp !== null && !/^[A-Za-z]$/.test(scp[1] as string)) {
      host = scp[1] as string;
      rest = rest.slice(scp[0].length);
    }
  }
  host = host.slice(host.lastIndexOf('@') + 1).replace(/:\d*$/, '').toLowerCase();
  rest = rest.replace(/[/\\]+$/, '').replace(/\.git$/i, '').replace(/[/\\]+$/, '');
  if (host === '') return rest;
  return `${host}/${rest.replace(/^\/+/, '')}`.replace(/\/+$/, '');
}

/* ----------------------------------------------------------------------------------------- */

function readText(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null; // absent or unreadable: the caller falls back (no remote, no branch, no commondir)
  }
}

function realPath(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return isAbsolute(path) ? path : resolve(path); // a cwd that no longer exists still has an identity
  }
}
