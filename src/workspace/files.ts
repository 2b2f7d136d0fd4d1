/**
 * File references in memories and their staleness. A memory that says "the race is in
 * src/workspace/resolver.rs:214" stores the file's sha256 and the text of line 214 when it is
 * written; recall later tells whether that still holds (same content, same line elsewhere, line
 * gone, file gone) — by content, not just by the path existing.
 */
import { sha256Hex } from '../runtime.js';
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { FileRef } from '../types.js';

/** A path mentioned in text, with the line it points at when it names one. */
export interface ExtractedRef {
  path: string;
  line?: number;
}

/** What {@link checkStaleness} says about one reference. */
export interface FileStatus {
  path: string;
  line?: number;
  /**
   * - `ok`: same content, or the file changed elsewhere and the referenced line is still where it was
   * - `line-moved`: the referenced line's text is now at `movedTo`
   * - `file-changed`: the content differs and the referenced line (if any) is gone
   * - `file-missing`: the file is not there (or is not a file)
   * - `unknown`: nothing was captured at write time to compare with
   */
  status: 'ok' | 'file-missing' | 'file-changed' | 'line-moved' | 'unknown';
  movedTo?: number;
}

/** Files larger than this are referenced by path only. */
export const MAX_FILE_BYTES = 5 * 1024 * 1024;
/** Stored line text is capped so a minified line does not bloat every memory. */
const MAX_LINE_TEXT = 400;

/* ------------------------------------------------------------------------------------------ */
/* Extraction                                                                                  */
/* ------------------------------------------------------------------------------------------ */

const CODE_EXTENSIONS = new Set(
  (
    'ts tsx mts cts js jsx mjs cjs py pyi pyx rs go java kt kts scala groovy swift mm c h cc cpp cxx hpp hh hxx cs fs ' +
    'vb rb php pl pm lua r jl dart ex exs erl hrl clj cljs elm hs ml mli nim zig sol sh bash zsh fish ps1 bat cmd ' +
    'sql graphql gql proto thrift md mdx markdown rst txt adoc json jsonc json5 jsonl ndjson toml yaml yml xml ini ' +
    'cfg conf env properties lock gradle csv tsv html htm css scss sass less vue svelte astro tf tfvars hcl nix ' +
    'dockerfile mk cmake ipynb log diff patch svg plist gemspec podspec csproj sln'
  ).split(' '),
);

/** Files known by name alone. */
const BARE_FILE_NAMES = new Set([
  'Makefile', 'Dockerfile', 'Containerfile', 'Gemfile', 'Rakefile', 'Procfile', 'Justfile', 'Vagrantfile',
  'Jenkinsfile', 'Brewfile', 'LICENSE', 'CODEOWNERS', '.env', '.gitignore', '.gitattributes', '.npmrc',
  '.nvmrc', '.editorconfig', '.dockerignore', '.prettierrc', '.eslintrc', '.bashrc', '.zshrc', '.profile',
]);

/** First segments that make an extension-less relative path (`src/workspace`) a path. */
const PROJECT_DIRS = new Set([
  'src', 'lib', 'libs', 'test', 'tests', 'spec', 'specs', '__tests__', 'docs', 'doc', 'bin', 'app', 'apps',
  'packages', 'scripts', 'script', 'cmd', 'internal', 'pkg', 'include', 'crates', 'config', 'public', 'assets',
  'migrations', '.github', 'examples', 'bench', 'benches', 'tools', 'vendor', 'node_modules', 'dist', 'build',
  'target', 'hooks', 'fixtures', 'static', 'templates', 'components', 'pages', 'server', 'client',
]);

/** Roots that make an extension-less absolute path a path (`/etc/nginx`), unlike a URL route (`/api/users`). */
const FILESYSTEM_ROOTS = new Set(['usr', 'etc', 'var', 'home', 'tmp', 'opt', 'Users', 'private', 'mnt', 'srv', 'root', 'Library', 'Applications']);

/** Names that look like files but are projects or code (`Node.js`, `llama.cpp`, `process.env`). */
const NOT_FILES =
  /^(?:(?:node|vue|next|nuxt|react|express|three|d3|chart|ember|backbone|angular|deno|p5|moment|day|lodash|jquery|handlebars|mustache|solid|alpine|preact|htmx)\.js|(?:llama|whisper|ggml|bark|stable-diffusion)\.cpp|process\.env)$/i;

/** `example.com`, `api.github.com` as a first segment: a URL without its scheme. */
const DOMAIN = /^(?:[a-z0-9-]+\.)+(?:com|org|net|io|dev|app|ai|co|edu|gov|uk|de|fr|ru|jp|cn|us|eu|info|biz|me|sh|cloud|tech|xyz|site|so|gg|tv)$/i;

/**
 * A candidate path: an optional root (`C:\`, `~/`, `./`, `../`, `/`) and segments of
 * `[\w@+.-]` (a leading dot for dotfiles), not glued to a preceding word, path, `@` or `:`.
 */
const PATH_TOKEN = /(?<![\w@./\\:-])(?:[A-Za-z]:[\\/]|~\/|\.{1,2}\/|\/)?\.?[\w@+-][\w@.+-]*(?:[\\/]\.?[\w@+-][\w@.+-]*)*/g;

/** `:12`, `:12:5`, `#L12`, `#L12-L20`, ` (line 12)`, `, line 12`, `", line 12` (Python), `(12,5)` (MSVC), ` line 12`. */
const LINE_SUFFIX = /(?::(\d+)(?::\d+)?|#L(\d+)(?:-L?\d+)?|\s*\((?:line|l\.)\s*(\d+)\)|["'`]?,?\s+(?:at\s+|on\s+)?line\s+(\d+)|\((\d+)(?:,\d+)?\))/iy;

const URL_SPAN = /\b[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s<>"'`)\]]*/g;

/**
 * File paths mentioned in prose or code, with the line when one is given (`path:line`,
 * `path:line:col`, `path#L12`, `path (line 12)`, `path, line 12`). Relative, absolute and
 * Windows paths count when they have a slash or a known code/doc extension; URLs, versions,
 * domains and e-mail addresses do not. Deduplicated; a path mentioned with a line is not listed
 * again without one.
 *
 * @example
 * extractFileRefs('race in /src/workspace/resolver.rs:214, see README.md')
 * // [{ path: '/src/workspace/resolver.rs', line: 214 }, { path: 'README.md' }]
 */
export function extractFileRefs(text: string): ExtractedRef[] {
  const urls: Array<[number, number]> = [];
  for (const m of text.matchAll(URL_SPAN)) urls.push([m.index, m.index + m[0].length]);
  const insideUrl = (i: number): boolean => urls.some(([from, to]) => i >= from && i < to);

  const refs: ExtractedRef[] = [];
  const seen = new Set<string>();
  const withLine = new Set<string>();
  PATH_TOKEN.lastIndex = 0;
  for (let m = PATH_TOKEN.exec(text); m !== null; m = PATH_TOKEN.exec(text)) {
    const token = m[0];
    // Most tokens are plain words: no dot, no slash, not a known file name.
    if (token.indexOf('.') === -1 && token.indexOf('/') === -1 && token.indexOf('\\') === -1 && !BARE_FILE_NAMES.has(token)) continue;
    const path = token.replace(/\.+$/, '');
    if (!isFileLike(path) || insideUrl(m.index)) continue;
    const line = lineAfter(text, m.index + path.length);
    const key = `${path}\0${line ?? ''}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (line === undefined) refs.push({ path });
    else {
      refs.push({ path, line });
      withLine.add(path);
    }
  }
  return refs.filter((ref) => ref.line !== undefined || !withLine.has(ref.path));
}

function lineAfter(text: string, end: number): number | undefined {
  LINE_SUFFIX.lastIndex = end;
  const m = LINE_SUFFIX.exec(text);
  if (m === null) return undefined;
  const line = Number(m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5]);
  return line >= 1 ? line : undefined;
}

/** Whether a token (no surrounding text) names a file or folder rather than a URL, version, domain or word. */
export function isFileLike(token: string): boolean {
  const root = /^(?:[A-Za-z]:[\\/]|~\/|\.{1,2}\/|\/)/.exec(token)?.[0] ?? '';
  const segments = token.slice(root.length).split(/[\\/]/);
  if (segments.some((s) => s === '' || s.indexOf('@') > 0)) return false; // `a//b`, e-mail addresses
  if (segments.every((s) => /^[\d.]+$/.test(s)) || /^v\d+(?:\.\d+)+$/i.test(token)) return false; // versions, dates
  const first = segments[0] as string;
  const last = segments[segments.length - 1] as string;
  const ext = /.\.([A-Za-z0-9]+)$/.exec(last)?.[1]; // a name before the dot: `.env` has no extension
  const hasSlash = segments.length > 1 || root !== '';

  if (!hasSlash) {
    if (BARE_FILE_NAMES.has(last)) return true;
    return ext !== undefined && CODE_EXTENSIONS.has(ext.toLowerCase()) && !NOT_FILES.test(last);
  }
  if (root === '' && DOMAIN.test(first)) return false;
  if (ext !== undefined && !/^\d+$/.test(ext)) return true;
  if (root === './' || root === '../' || root === '~/') return true;
  if (root === '/') return segments.length > 1 && (FILESYSTEM_ROOTS.has(first) || PROJECT_DIRS.has(first));
  return root === '' ? PROJECT_DIRS.has(first) && segments.length > 1 : true; // `C:\…`
}

/* ------------------------------------------------------------------------------------------ */
/* Capture and staleness                                                                      */
/* ------------------------------------------------------------------------------------------ */

/** A file as read once within one call. */
interface FileSnapshot {
  hash: string;
  /** Capped, trimmed lines; null for binary content. */
  lines: string[] | null;
}

/**
 * Reads each file at most once while it lives; null for a missing file, a directory or a file too
 * large. One per call that checks many memories (a recall, a context build): memories often point at
 * the same files, and each would otherwise read and hash them again. Never kept across calls, so
 * an edit between two calls is always seen.
 */
export class FileReader {
  private readonly cache = new Map<string, FileSnapshot | null | 'too-large'>();

  read(abs: string): FileSnapshot | null | 'too-large' {
    let entry = this.cache.get(abs);
    if (entry === undefined) {
      entry = readSnapshot(abs);
      this.cache.set(abs, entry);
    }
    return entry;
  }
}

function readSnapshot(abs: string): FileSnapshot | null | 'too-large' {
  const stat = statSync(abs, { throwIfNoEntry: false });
  if (stat === undefined || !stat.isFile()) return null;
  if (stat.size > MAX_FILE_BYTES) return 'too-large';
  let content: Buffer;
  try {
    content = readFileSync(abs);
  } catch {
    return null; // unreadable (permissions, raced deletion): same as absent for a reference
  }
  const hash = sha256Hex(content);
  const binary = content.subarray(0, 8192).includes(0);
  return { hash, lines: binary ? null : content.toString('utf8').split('\n').map(lineText) };
}

function lineText(line: string): string {
  const trimmed = line.trim();
  return trimmed.length > MAX_LINE_TEXT ? trimmed.slice(0, MAX_LINE_TEXT) : trimmed;
}

/** A segment `resolve` would change: empty (`//`, a trailing `/`), `.` or `..`. */
const NOT_PLAIN = /(?:^|\/)\.{0,2}(?:\/|$)/;

/**
 * Whether `resolve(root, path)` is `root + '/' + path` for this `path`: POSIX separators and no
 * segment `resolve` would change. Node's `resolve` walks the path a character at a time through
 * its internals (~72K instructions a call in a hook, where TurboFan is off), and the staleness
 * checks resolve every file reference of every memory they look at.
 */
function isPlainRelative(path: string): boolean {
  return sep === '/' && path.length > 0 && !NOT_PLAIN.test(path);
}

let normalRoot: { root: string; normal: boolean } | null = null;

/** `resolve(root, path)` for a relative `path`, without walking it when it is plain under a normal root. */
export function resolveUnder(root: string, path: string): string {
  return isPlainRelative(path) && isNormalRoot(root) ? `${root === '/' ? '' : root}/${path}` : resolve(root, path);
}

/** Whether `root` is absolute and already what `resolve` makes of it (remembered for the last root asked). */
function isNormalRoot(root: string): boolean {
  if (normalRoot?.root !== root) normalRoot = { root, normal: isAbsolute(root) && resolve(root) === root };
  return normalRoot.normal;
}

/** Absolute path of a reference: relative to `root`; an absolute path as is, unless only `root + path` exists. */
function locate(path: string, root: string): string {
  if (!isAbsolute(path)) return resolveUnder(root, path);
  if (statSync(path, { throwIfNoEntry: false }) === undefined) {
    const underRoot = join(root, path);
    if (statSync(underRoot, { throwIfNoEntry: false }) !== undefined) return underRoot;
  }
  return path;
}

/** `abs` relative to `root` (with `/`) when inside it, else `abs`. */
function displayPath(abs: string, root: string): string {
  const rel = relative(resolve(root), abs);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return abs;
  return sep === '/' ? rel : rel.split(sep).join('/');
}

/**
 * Capture references at write time: each path resolved against `root`, stored relative to it
 * when inside, with the sha256 of the content and the trimmed text of `line`. A missing file,
 * a directory or a file over 5 MB keeps only its path and line. Deduplicated.
 */
export function captureFileRefs(refs: ReadonlyArray<ExtractedRef>, root: string): FileRef[] {
  const reader = new FileReader();
  const out = new Map<string, FileRef>();
  for (const ref of refs) {
    const abs = locate(ref.path, root);
    const snapshot = reader.read(abs);
    const line = ref.line !== undefined && Number.isInteger(ref.line) && ref.line >= 1 ? ref.line : undefined;
    const captured: FileRef = { path: snapshot === null ? ref.path : displayPath(abs, root) };
    if (line !== undefined) captured.line = line;
    if (snapshot !== null && snapshot !== 'too-large') {
      captured.hash = snapshot.hash;
      const text = line === undefined ? undefined : snapshot.lines?.[line - 1];
      if (text !== undefined) captured.lineText = text;
    }
    const key = `${captured.path}\0${captured.line ?? ''}`;
    if (!out.has(key)) out.set(key, captured);
  }
  return [...out.values()];
}

/**
 * Whether captured references still hold (see {@link FileStatus}). Each file is read at most
 * once per `reader` (by default, once per call); recall calls this for its top hits only.
 */
export function checkStaleness(refs: ReadonlyArray<FileRef>, root: string, reader: FileReader = new FileReader()): FileStatus[] {
  return refs.map((ref) => {
    const base: FileStatus = ref.line === undefined ? { path: ref.path, status: 'unknown' } : { path: ref.path, line: ref.line, status: 'unknown' };
    const snapshot = reader.read(locate(ref.path, root));
    if (snapshot === null) return { ...base, status: 'file-missing' };
    if (ref.hash === undefined) return base;
    // It was at most 5 MB when hashed, so a file over the limit now has other content.
    if (snapshot === 'too-large') return { ...base, status: 'file-changed' };
    if (snapshot.hash === ref.hash) return { ...base, status: 'ok' };
    if (ref.line === undefined || !ref.lineText || snapshot.lines === null) return { ...base, status: 'file-changed' };
    if (snapshot.lines[ref.line - 1] === ref.lineText) return { ...base, status: 'ok' };
    const movedTo = nearestLine(snapshot.lines, ref.lineText, ref.line);
    return movedTo === null ? { ...base, status: 'file-changed' } : { ...base, status: 'line-moved', movedTo };
  });
}

/** The 1-based line holding `text` closest to `line`, or null. */
function nearestLine(lines: string[], text: string, line: number): number | null {
  const at = line - 1;
  for (let d = 1; d < lines.length; d++) {
    if (lines[at - d] === text) return at - d + 1;
    if (lines[at + d] === text) return at + d + 1;
    if (at - d < 0 && at + d >= lines.length) break;
  }
  return null;
}
