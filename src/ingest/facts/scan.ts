/**
 * The scanners behind session facts: each finds one kind of detail in a text and reports it to a
 * {@link FactSink} with the span it came from (so the sink can redact it in its line's context).
 *
 * Every scanner is linear in the text: global regexes without nested or overlapping quantifiers,
 * or a character loop. A 50 MB tool output costs a few passes over its characters, never more,
 * and a kind stops being scanned once the turn holds as many facts of it as it may keep.
 */
import { isFileLike } from '../../workspace/files.js';
import type { ExtractedFact, FactSink } from './sink.js';

/* ------------------------------------------------------------------------------------------ */
/* Paths and path:line                                                                        */
/* ------------------------------------------------------------------------------------------ */

/** Characters of a path token, `[A-Za-z0-9_@+.~/\\-]`, by code below 128 (1: one of them). */
const PATH_CHARS = new Uint8Array(128);
for (const c of 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./\\-@+~') PATH_CHARS[c.charCodeAt(0)] = 1;

/**
 * Characters of a path token: `[A-Za-z0-9_@+.~/\\-]`. The hot loop of {@link scanPaths} repeats
 * this look-up in place: under ingest's small inlining budget a call per character stays a call.
 */
function isPathChar(code: number): boolean {
  return code < 128 && PATH_CHARS[code] === 1;
}

/** A run of path characters without a backslash, from `lastIndex` (sticky: `test` moves `lastIndex` to its end). */
const PATH_RUN_NO_BACKSLASH = /[A-Za-z0-9_@+.~/-]*/y;
/** A run of path characters, from `lastIndex`. */
const PATH_RUN = /[A-Za-z0-9_@+.~/\\-]*/y;

/** Slots of {@link fileLikeAt}'s cache, in sets of two (a power of two; 10,880 distinct tokens over ../shared's transcripts). */
const FILE_LIKE_SLOTS = 1 << 15;
const slotTokens: Array<string | undefined> = new Array<string | undefined>(FILE_LIKE_SLOTS);
const slotVerdicts = new Uint8Array(FILE_LIKE_SLOTS);

/**
 * A copy of `token` that shares no memory with the text it was cut from: V8 cuts a string of 13
 * characters or more as a view into its text, and a cached view would keep a whole tool output
 * (up to 64 KB, or a 50 MB line) alive for as long as its slot lasts.
 */
function detached(token: string): string {
  return token.length < 13 ? token : (JSON.parse(JSON.stringify(token)) as string);
}

/**
 * {@link isFileLike} of `text.slice(start, end)`, remembered in a cache of two-slot sets keyed by a
 * hash of the characters read in place. Over ../shared's transcripts 56,288 tokens are asked
 * about, 10,880 distinct: a token met before costs neither a cut string nor a string-keyed
 * look-up (a `Map` memo of the cut tokens, before: its look-up alone was 9% of fact extraction's
 * CPU). A slot holds one token and its verdict and is compared with the text before it is
 * trusted; `isFileLike` is a pure function of the token, so what the cache holds changes no answer.
 * Two slots a set (the newest token first, the one it displaces second): one slot a hash, before,
 * missed 2,146 of 45,051 look-ups a warm pass, tokens sharing a slot evicting each other.
 */
function fileLikeAt(text: string, start: number, end: number): boolean {
  let hash = end - start;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  const slot = (hash ^ (hash >>> 15)) & (FILE_LIKE_SLOTS - 2);
  const first = slotTokens[slot];
  if (first !== undefined && first.length === end - start && text.startsWith(first, start)) return slotVerdicts[slot] === 1;
  const second = slotTokens[slot + 1];
  if (second !== undefined && second.length === end - start && text.startsWith(second, start)) return slotVerdicts[slot + 1] === 1;
  const token = text.slice(start, end);
  const verdict = isFileLike(token);
  slotTokens[slot + 1] = first;
  slotVerdicts[slot + 1] = slotVerdicts[slot] as number;
  slotTokens[slot] = detached(token);
  slotVerdicts[slot] = verdict ? 1 : 0;
  return verdict;
}

/** `/`, `\\` or `.`: the characters {@link SEPARATOR} finds. */
function isSeparatorCode(code: number): boolean {
  return code === 47 || code === 92 || code === 46;
}

function isUpperCode(code: number): boolean {
  return code >= 65 && code <= 90;
}

function isLetter(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90);
}

/** A separator (`/`, `\`, `.`) every path token holds, searched for before a token is cut out. */
const SEPARATOR = /[/\\.]/g;
/** `:12`, `:12:5`, `#L12`, `(line 12)`, `", line 12`, `(12,5)`: the line a path points at. */
const LINE_SUFFIX = /(?::(\d{1,7})(?::\d+)?|#L(\d{1,7})(?:-L?\d+)?|\s?\((?:line|l\.)\s(\d{1,7})\)|["'`]?,\sline\s(\d{1,7})|\((\d{1,7})(?:,\d+)?\))/y;
const MAX_PATH = 400;

/** Whether `\n`, `\r` or `\t` written as two characters ends at `end`. */
function isEscapeBefore(text: string, end: number): boolean {
  const code = text.charCodeAt(end - 1);
  return (code === 110 || code === 114 || code === 116) && end >= 2 && text.charCodeAt(end - 2) === 92;
}

/**
 * Whether a Windows drive (`C:` alone, not the end of a word; after a `\n` written out, as a line
 * break) sits before a token at `start` that starts with `/` or `\`.
 */
function isDriveAt(text: string, start: number): boolean {
  if (start < 2 || text.charCodeAt(start - 1) !== 58 || !isLetter(text.charCodeAt(start - 2))) return false;
  if (start >= 3 && isPathChar(text.charCodeAt(start - 3)) && !isEscapeBefore(text, start - 2)) return false;
  const next = text.charCodeAt(start);
  return next === 47 || next === 92;
}

/**
 * Whether the path token `text[start, end)` is text printed with its escapes (a JSON string, a
 * `repr`): it holds a backslash, and every backslash is a `\n`, `\r` or `\t` — a line break or a
 * tab written as two characters, as in `file1.txt\nfile2.txt` — and it is not a Windows path from
 * a drive written with backslashes (`C:\new\file.txt`). A relative Windows path whose every
 * folder starts with n, r or t (`src\new`) reads as escaped too: rare, and its pieces are still
 * looked at one by one.
 */
function isEscapedToken(text: string, start: number, end: number): boolean {
  if (text.charCodeAt(start) === 92 && isDriveAt(text, start)) return false;
  for (let i = start; i < end; i++) {
    if (text.charCodeAt(i) !== 92) continue;
    const next = i + 1 < text.length ? text.charCodeAt(i + 1) : -1;
    if (next !== 110 && next !== 114 && next !== 116) return false; // n, r, t
    i++;
  }
  return true;
}

/**
 * File paths (`src/a.ts`, `/etc/hosts`, `C:\Users\me\a.py`, `README.md`) and `path:line`, as the
 * shared file-reference rules recognise them; URLs, versions, domains and e-mail addresses are not.
 * In text printed with its escapes, `\n`, `\r` and `\t` end a path as the characters they stand
 * for would: `file1.txt\nfile2.txt` is two paths, not one (see {@link isEscapedToken}).
 */
export function scanPaths(text: string, sink: FactSink): void {
  if (sink.full('path')) return;
  // `test` and `lastIndex` rather than `exec`: no match array is made for each of the many
  // separators (every `.` of prose) only to read its index.
  SEPARATOR.lastIndex = 0;
  while (SEPARATOR.test(text)) {
    const at = SEPARATOR.lastIndex - 1;
    // The token is the run of path characters around `at`: walked back in place, and forward by
    // the engine (a sticky run without a backslash, then, only if one follows, the rest of the run).
    // No character is read outside the text (an out-of-bounds read, NaN, deoptimizes the
    // compiled loop the first time a token starts or ends the text).
    let start = at;
    let backslash = text.charCodeAt(at) === 92;
    while (start > 0) {
      const code = text.charCodeAt(start - 1);
      if (code >= 128 || PATH_CHARS[code] !== 1) break;
      if (code === 92) backslash = true;
      start--;
    }
    PATH_RUN_NO_BACKSLASH.lastIndex = at + 1;
    PATH_RUN_NO_BACKSLASH.test(text);
    let end = PATH_RUN_NO_BACKSLASH.lastIndex;
    if (end < text.length && text.charCodeAt(end) === 92) {
      backslash = true;
      PATH_RUN.lastIndex = end;
      PATH_RUN.test(text);
      end = PATH_RUN.lastIndex;
    }
    SEPARATOR.lastIndex = end;
    if (!backslash || !isEscapedToken(text, start, end)) {
      if (pathAt(text, start, end, at, sink)) return;
      continue;
    }
    // Each piece between escapes on its own, all in this pass (a piece is never walked again).
    for (let piece = start; piece < end; ) {
      let pieceEnd = piece;
      let separator = -1;
      while (pieceEnd < end) {
        const code = text.charCodeAt(pieceEnd);
        if (code === 92) break;
        if (separator < 0 && isSeparatorCode(code)) separator = pieceEnd;
        pieceEnd++;
      }
      // A piece without a separator is a word the scan never stops at.
      if (separator >= 0 && pathAt(text, piece, pieceEnd, separator, sink)) return;
      piece = pieceEnd + 2;
    }
  }
}

/**
 * Whether `::` ends right before `start`, and a character other than `:` before it: the end of
 * a GitHub workflow annotation's head (`::error file=…,line=56::`), not a `:::` run or a colon
 * glued to a word (`image:tag`, `git@host:owner/repo`).
 */
function isAnnotationAt(text: string, start: number): boolean {
  return start >= 2 && text.charCodeAt(start - 1) === 58 && text.charCodeAt(start - 2) === 58 && (start < 3 || text.charCodeAt(start - 3) !== 58);
}

/**
 * The path in the token `text[start, end)` whose first separator is at `at` (no separator before
 * it), if it names a file, to `sink`. Whether the sink is full of paths after it.
 */
function pathAt(text: string, tokenStart: number, end: number, at: number, sink: FactSink): boolean {
  let start = tokenStart;
  // Most separators end a word (`done.`, `src/`): once the trailing separators go (as below),
  // no separator is left, and such a token names a file only as a bare file name (`Makefile`),
  // all of which start with a capital. The characters before `at` hold no separator (the
  // search would have stopped there), so the token keeps one only if it ends past `at`.
  let last = end;
  while (last > at && isSeparatorCode(text.charCodeAt(last - 1))) last--;
  if (last <= at && !isUpperCode(text.charCodeAt(start))) return false;
  // A Windows drive (`C:\…`, `C:/…`) sits before the cut: the colon is not a path character.
  if (isDriveAt(text, start)) start -= 2;
  // Glued to a word, an `@`, or a URL scheme (`https://…`): not a path of its own. After `::`
  // it is one: GitHub's workflow annotations (`::error title=…::src/a.py:56:5: …`, ruff's and
  // others' `github` output format) put the path right after it.
  const before = start > 0 ? text.charCodeAt(start - 1) : 32;
  if ((before === 58 && !isAnnotationAt(text, start)) || before === 64) return false;
  if (text.startsWith('//', start)) return false;
  // Trailing sentence punctuation and a trailing separator are not part of the path: cut by
  // index, and the length checked, before any string is made.
  let tokenEnd = end;
  while (tokenEnd > start && isSeparatorCode(text.charCodeAt(tokenEnd - 1))) tokenEnd--;
  if (tokenEnd - start < 3 || tokenEnd - start > MAX_PATH) return false;
  if (!fileLikeAt(text, start, tokenEnd)) return false;
  const token = text.slice(start, tokenEnd);
  LINE_SUFFIX.lastIndex = tokenEnd;
  const suffix = LINE_SUFFIX.exec(text);
  const line = suffix === null ? null : Number(suffix[1] ?? suffix[2] ?? suffix[3] ?? suffix[4] ?? suffix[5]);
  if (line !== null && line >= 1) {
    sink.add('path', `${token}:${line}`, start, tokenEnd, { path: token, line });
  } else {
    sink.add('path', token, start, tokenEnd, { path: token });
  }
  return sink.full('path');
}

/** `path:line:` at the start of grep / ripgrep / compiler output lines. */
const GREP_LINE = /^([^\s:]{1,400}):(\d{1,7})[:-]/gm;

/** `src/a.ts:12:…` lines (grep -n, ripgrep, tsc, eslint, go vet): a path:line per line. */
export function scanGrepLines(text: string, sink: FactSink): void {
  if (sink.full('path')) return;
  GREP_LINE.lastIndex = 0;
  for (let m = GREP_LINE.exec(text); m !== null; m = GREP_LINE.exec(text)) {
    const path = m[1] as string;
    if (!fileLikeAt(text, m.index, m.index + path.length)) continue;
    const line = Number(m[2]);
    sink.add('path', `${path}:${line}`, m.index, m.index + path.length, { path, line });
    if (sink.full('path')) return;
  }
}

/* ------------------------------------------------------------------------------------------ */
/* URLs                                                                                       */
/* ------------------------------------------------------------------------------------------ */

/** A URL; a `[REDACTED:kind]` marker left by the sanitizer (a password in it) is part of it. */
const URL = /\b(?:https?|wss?|ftp):\/\/(?:\[REDACTED:[\w-]{1,40}\]|[^\s<>"'`)\]}|\\^]){3,2000}/g;

export function scanUrls(text: string, sink: FactSink): void {
  if (sink.full('url') || text.indexOf('://') < 0) return;
  URL.lastIndex = 0;
  for (let m = URL.exec(text); m !== null; m = URL.exec(text)) {
    let url = m[0];
    while (url.length > 0 && '.,;:!?*'.includes(url.charAt(url.length - 1))) url = url.slice(0, -1);
    sink.add('url', url, m.index, m.index + url.length);
    if (sink.full('url')) return;
  }
}

/* ------------------------------------------------------------------------------------------ */
/* Error lines, test names                                                                    */
/* ------------------------------------------------------------------------------------------ */

/**
 * What marks an error line: a `…Error` / `…Exception` name, `error:` / `error[E…]:` / `error TS…`,
 * `FAIL`, `panic:`, `fatal:`, a Python traceback, shell failures.
 */
const ERROR_MARK =
  /\b[A-Z][A-Za-z0-9]*(?:Error|Exception)\b|\b(?:Error|Exception|ERROR|FAILED|FAIL):|\berror(?:\[\w{1,10}\])?:|\berror TS\d{4}|\bERROR\b|\bFATAL\b|\bfatal:|\bpanic:|Traceback \(most recent|Segmentation fault|command not found|No such file or directory|npm ERR!|\bUnhandled\b|\bnot ok \d/g;
const MAX_LINE = 300;

/** Line bounds around `index`. */
export function lineAround(text: string, index: number): [number, number] {
  const start = text.lastIndexOf('\n', index - 1) + 1;
  let end = text.indexOf('\n', index);
  if (end < 0) end = text.length;
  return [start, end];
}

/** A line's text, trimmed and cut to {@link MAX_LINE} characters; its span in `text`. */
function lineSpan(text: string, start: number, end: number): { text: string; start: number; end: number } {
  let s = start;
  let e = end;
  while (s < e && text.charCodeAt(s) <= 32) s++;
  while (e > s && text.charCodeAt(e - 1) <= 32) e--;
  if (e - s > MAX_LINE) e = s + MAX_LINE;
  return { text: text.slice(s, e), start: s, end: e };
}

/**
 * Error lines of a tool output: the first few, and the last (where the final error usually is).
 * Returns the first one as kept (redacted), for a command's note; null when there is none.
 */
export function scanErrors(text: string, sink: FactSink): ExtractedFact | null {
  let first: ExtractedFact | null = null;
  let last: { text: string; start: number; end: number } | null = null;
  let lastAdded = false;
  const tail = text.length - 64 * 1024;
  ERROR_MARK.lastIndex = 0;
  for (let m = ERROR_MARK.exec(text); m !== null; m = ERROR_MARK.exec(text)) {
    const [start, end] = lineAround(text, m.index);
    ERROR_MARK.lastIndex = end;
    const line = lineSpan(text, start, end);
    if (line.text.length < 4) continue;
    last = line;
    lastAdded = false;
    if (first === null) {
      first = sink.add('error', line.text, line.start, line.end, {}, true);
      lastAdded = true;
    } else if (!sink.full('error')) {
      sink.add('error', line.text, line.start, line.end);
      lastAdded = true;
    } else if (end < tail) {
      // Past the cap only the last error line is wanted: go on from the tail of a huge output.
      ERROR_MARK.lastIndex = tail;
    }
  }
  if (last !== null && !lastAdded) sink.add('error', last.text, last.start, last.end, {}, true);
  return first;
}

/** Test outcomes in the formats of vitest/jest, pytest, go test, cargo test, XCTest, TAP. */
const TEST_LINE =
  /^[ \t]*(?:(✓|√|✔|×|✗|✘|❯)[ \t]+(.{3,250}?)(?:[ \t]+\d+ ?m?s)?[ \t]*$|(FAIL|PASS)[ \t]+(\S.{2,250}?)[ \t]*$|--- (FAIL|PASS): (\S{1,200})|(FAILED|PASSED|ERROR) (\S{1,300}::\S{1,200})|(\S{1,300}::\S{1,200}) (PASSED|FAILED|ERROR)\b|test (\S{1,250}) \.\.\. (ok|FAILED|ignored)|Test Case '(.{1,250})' (passed|failed)|(not ok|ok) \d+ - (.{1,250}))/gm;

export function scanTests(text: string, sink: FactSink): void {
  if (sink.full('test')) return;
  TEST_LINE.lastIndex = 0;
  for (let m = TEST_LINE.exec(text); m !== null; m = TEST_LINE.exec(text)) {
    if (m[0].length === 0) {
      TEST_LINE.lastIndex++;
      continue;
    }
    let name: string | undefined;
    let failed = false;
    if (m[2] !== undefined) {
      name = m[2];
      failed = m[1] === '×' || m[1] === '✗' || m[1] === '✘';
      if (m[1] === '❯' && !/\bfail/i.test(name)) continue; // a file heading, not a test
    } else if (m[4] !== undefined) {
      name = m[4];
      failed = m[3] === 'FAIL';
    } else if (m[6] !== undefined) {
      name = m[6];
      failed = m[5] === 'FAIL';
    } else if (m[8] !== undefined) {
      name = m[8];
      failed = m[7] !== 'PASSED';
    } else if (m[9] !== undefined) {
      name = m[9];
      failed = m[10] !== 'PASSED';
    } else if (m[11] !== undefined) {
      name = m[11];
      failed = m[12] === 'FAILED';
    } else if (m[13] !== undefined) {
      name = m[13];
      failed = m[14] === 'failed';
    } else if (m[16] !== undefined) {
      name = m[16];
      failed = m[15] === 'not ok';
    }
    if (name === undefined) continue;
    name = name.trim();
    if (name.length < 3) continue;
    const at = m.index + m[0].indexOf(name);
    sink.add('test', name, at, at + name.length, { note: failed ? 'failed' : 'passed' }, failed);
    if (sink.full('test')) return;
  }
}

/* ------------------------------------------------------------------------------------------ */
/* Symbols                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/**
 * A definition line in the common languages: `function f(`, `def f(`, `fn f(`, `func (r *T) F(`,
 * `class C`, `interface I`, `type T =`, `struct S`, `enum E`, `trait T`, `protocol P`,
 * `const f = (…) =>`, and methods (`  async name(args): T {`). Group 1..4: the name.
 */
const DEFINITION =
  /^(?:[ \t]*\d{1,7}(?:→|\t))?[ \t]*(?:export[ \t]+)?(?:default[ \t]+)?(?:(?:public|private|protected|internal|static|async|abstract|final|override|open|pub(?:\(\w+\))?|unsafe|extern|inline|virtual|readonly|declare)[ \t]+){0,4}(?:(?:function\*?|def|fn|func|class|interface|type|struct|enum|trait|protocol|object|record|module|impl)[ \t]+(?:\([^)\n]{0,120}\)[ \t]*)?([A-Za-z_$][\w$]{1,80})|(?:const|let|var)[ \t]+([A-Za-z_$][\w$]{1,80})[ \t]*(?::[^=\n]{1,120})?=[ \t]*(?:async[ \t]+)?(?:function\b|\([^)\n]{0,200}\)[ \t]*(?::[^=\n]{1,120})?=>|[A-Za-z_$][\w$]{0,40}[ \t]*=>)|(?:get[ \t]+|set[ \t]+)?([A-Za-z_$][\w$]{1,80})[ \t]*(?:<[^>\n]{0,80}>)?\([^)\n]{0,200}\)[ \t]*(?::[^{;\n]{1,120})?\{[ \t]*$)/gm;

/** Words a method pattern mistakes for names. */
const NOT_NAMES = new Set(['if', 'for', 'while', 'switch', 'catch', 'function', 'return', 'with', 'elif', 'else', 'do', 'try', 'when', 'match', 'foreach', 'synchronized', 'using', 'lock', 'fixed', 'unless', 'until', 'constructor']);

export interface DefinitionSource {
  /** The file the text is from (Read output, Edit/Write content). */
  path?: string | null;
  /** Read output numbers its lines (`    12→code`, `12\tcode`): take the line from there. */
  numbered?: boolean;
  /** Line number of the text's first line when it is not numbered (Write content: 1). */
  firstLine?: number | null;
}

const NUMBERED = /^\s*(\d{1,7})(?:→|\t)/;

/** Definitions (symbols with their signature line) in code. */
export function scanDefinitions(text: string, sink: FactSink, source: DefinitionSource = {}): void {
  if (sink.full('symbol')) return;
  const path = source.path ?? null;
  let counted = 0;
  let countedLine = source.firstLine ?? null;
  DEFINITION.lastIndex = 0;
  for (let m = DEFINITION.exec(text); m !== null; m = DEFINITION.exec(text)) {
    if (m[0].length === 0) {
      DEFINITION.lastIndex++;
      continue;
    }
    const name = m[1] ?? m[2] ?? m[3];
    if (name === undefined || NOT_NAMES.has(name)) continue;
    const [start, end] = lineAround(text, m.index);
    const signature = lineSpan(text, start, end);
    let line: number | null = null;
    if (source.numbered === true) {
      const numbered = NUMBERED.exec(signature.text);
      if (numbered !== null) {
        line = Number(numbered[1]);
        signature.text = signature.text.slice(numbered[0].length).trim();
      }
    } else if (countedLine !== null) {
      for (let i = text.indexOf('\n', counted); i !== -1 && i < start; i = text.indexOf('\n', i + 1)) countedLine++;
      counted = start;
      line = countedLine;
    }
    const at = m.index + m[0].lastIndexOf(name);
    sink.add('symbol', name, at, at + name.length, { note: signature.text, path, line });
    if (sink.full('symbol')) return;
  }
}

/** Code spans in prose: `` `name(…)` ``, `` `obj.method` ``, `` `CamelCase` ``, `` `snake_case` ``. */
const CODE_SPAN = /`([A-Za-z_$][\w$]{1,80}(?:(?:\.|::|#)[A-Za-z_$][\w$]{0,80}){0,4})(\([^`\n]{0,80}\))?`/g;

/** Identifiers the user or the agent wrote in backticks (what they name when they talk code). */
export function scanCodeSpans(text: string, sink: FactSink): void {
  if (sink.full('symbol') || text.indexOf('`') < 0) return;
  CODE_SPAN.lastIndex = 0;
  for (let m = CODE_SPAN.exec(text); m !== null; m = CODE_SPAN.exec(text)) {
    const name = m[1] as string;
    const called = m[2] !== undefined;
    // A bare lower-case word in backticks is usually a value or a command, not a symbol.
    if (!called && !/[._:#]|[a-z][A-Z]|^[A-Z][a-z]+[A-Z]/.test(name)) continue;
    if (/\.(?:[a-z]{1,4})$/.test(name) && !called) continue; // a file name, the path scanner's
    sink.add('symbol', name, m.index + 1, m.index + 1 + name.length, called ? { note: `${name}${m[2]}` } : {});
    if (sink.full('symbol')) return;
  }
}

/* ------------------------------------------------------------------------------------------ */
/* Versions, settings, ids                                                                    */
/* ------------------------------------------------------------------------------------------ */

const VERSION =
  /(?<![\w@/.-])(@?[a-z][\w.-]{0,60}(?:\/[\w.-]{1,60})?)@(\^|~|>=|<=)?(\d{1,4}\.\d{1,4}(?:\.\d{1,6})?(?:-[\w.]{1,30})?)\b|\b(Node(?:\.js)?|node|Python|python3?|Go|go version go|Rust|rustc|cargo|npm|pnpm|yarn|bun|Deno|deno|TypeScript|tsc|java|openjdk|Ruby|ruby|Swift|swift|Xcode|PostgreSQL|psql|SQLite|sqlite3|Docker|docker|git version|gcc|clang|cmake|pip|vitest|jest|pytest|Next\.js|React|Vite|vite)[ \t]v?(\d{1,4}\.\d{1,4}(?:\.\d{1,6})?(?:-[\w.]{1,30})?)\b|\bgo(1\.\d{1,3}(?:\.\d{1,3})?)\b|(?<![\w.-])([a-zA-Z][\w.-]{1,60})(==|>=|~=)(\d{1,4}(?:\.\d{1,6}){1,3})\b/g;

/** Every version pattern holds a digit, a dot and a digit: only lines with one are scanned. */
const DIGIT_DOT = /\d\.\d/g;

export function scanVersions(text: string, sink: FactSink): void {
  if (sink.full('version')) return;
  // No version spans a line, and a line start looks to the pattern like the text's start (the
  // look-behind sees nothing either way), so scanning line by line finds exactly what one pass
  // over the whole text finds — without running the large pattern at every character.
  DIGIT_DOT.lastIndex = 0;
  for (let d = DIGIT_DOT.exec(text); d !== null; d = DIGIT_DOT.exec(text)) {
    const [start, end] = lineAround(text, d.index);
    DIGIT_DOT.lastIndex = end;
    const line = text.slice(start, end);
    VERSION.lastIndex = 0;
    for (let m = VERSION.exec(line); m !== null; m = VERSION.exec(line)) {
      let fact: string;
      if (m[1] !== undefined) fact = `${m[1]}@${m[2] ?? ''}${m[3]}`;
      else if (m[4] !== undefined) fact = `${m[4].replace(/ version go$/, '').replace(/ version$/, '')} ${m[5]}`;
      else if (m[6] !== undefined) fact = `go ${m[6]}`;
      else fact = `${m[7]}${m[8]}${m[9]}`;
      sink.add('version', fact, start + m.index, start + m.index + m[0].length);
      if (sink.full('version')) return;
    }
  }
}

/** `KEY=value` environment assignments and `--flag=value` settings in a command line. */
const ENV_ASSIGNMENT = /(?<![\w-])(?:export[ \t]+)?([A-Z][A-Z0-9_]{1,60})=("[^"\n]{0,200}"|'[^'\n]{0,200}'|[^\s;&|]{0,200})/g;

export function scanAssignments(text: string, sink: FactSink): void {
  if (sink.full('config') || text.indexOf('=') < 0) return;
  ENV_ASSIGNMENT.lastIndex = 0;
  for (let m = ENV_ASSIGNMENT.exec(text); m !== null; m = ENV_ASSIGNMENT.exec(text)) {
    const start = m.index + m[0].indexOf(m[1] as string);
    sink.add('config', `${m[1]}=${m[2]}`, start, m.index + m[0].length);
    if (sink.full('config')) return;
  }
}

/** `key = value`, `key: value`, `"key": value` lines of a config file (TOML, YAML, INI, .env, JSON). */
const CONFIG_LINE = /^[ \t]*(?:"([\w.@/-]{1,80})"|([A-Za-z_][\w.-]{0,80}))[ \t]*(?:=|:(?=[ \t]))[ \t]*([^\n]{1,200})$/gm;
const CONFIG_FILE = /(?:\.(?:json|jsonc|json5|toml|ya?ml|ini|cfg|conf|properties|env)|(?:^|[\\/])\.env(?:\.[\w-]+)?|(?:^|[\\/])\.?\w*rc)$/i;

/** Whether a file's lines are settings (`package.json`, `.env`, `config.toml` …). */
export function isConfigFile(path: string | null): boolean {
  return path !== null && CONFIG_FILE.test(path);
}

export function scanConfigLines(text: string, sink: FactSink): void {
  if (sink.full('config')) return;
  CONFIG_LINE.lastIndex = 0;
  for (let m = CONFIG_LINE.exec(text); m !== null; m = CONFIG_LINE.exec(text)) {
    if (m[0].length === 0) {
      CONFIG_LINE.lastIndex++;
      continue;
    }
    const key = (m[1] ?? m[2]) as string;
    const value = (m[3] as string).trim().replace(/,$/, '');
    if (value === '{' || value === '[' || value.length === 0) continue; // a section, not a value
    const start = m.index + m[0].indexOf(key);
    sink.add('config', `${key}: ${value}`, start, m.index + m[0].length);
    if (sink.full('config')) return;
  }
}

/**
 * Identifiers a user types: issue and pull-request numbers (`#123`, `GH-12`, `PROJ-4711`),
 * commit hashes (7–40 hex with a digit and a letter), UUIDs. Each starts where the character
 * before it is not part of a word (`(?<![\w#/-])#\d{1,7}` …); the look-behind is written after
 * the first character, over both (`#(?<![\w#/-]#)\d{1,7}`): the same matches, and the engine
 * rules most positions out on their first character before it looks behind (half the time).
 */
const USER_ID =
  /(#(?<![\w#/-]#)\d{1,7}|[A-Z](?<![\w#/-][A-Z])[A-Z0-9]{1,9}-\d{2,7})(?![\w-])|([0-9a-f](?<![\w-][0-9a-f])[0-9a-f]{7}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?![\w-])|([0-9a-f](?<![\w./-][0-9a-f])[0-9a-f]{6,39})(?![\w/-])/g;

export function scanIds(text: string, sink: FactSink): void {
  if (sink.full('id')) return;
  USER_ID.lastIndex = 0;
  for (let m = USER_ID.exec(text); m !== null; m = USER_ID.exec(text)) {
    const id = m[1] ?? m[2] ?? (m[3] as string);
    if (m[3] !== undefined && !(/\d/.test(id) && /[a-f]/.test(id))) continue;
    if (m[1] !== undefined && /^(?:UTF|ISO|SHA|MD|RFC|TLS|SSL|HTTP|CVE)-/.test(id)) {
      if (!id.startsWith('CVE-')) continue;
    }
    sink.add('id', id, m.index, m.index + id.length);
    if (sink.full('id')) return;
  }
}
