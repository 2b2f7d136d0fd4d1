/**
 * Scanners for what code uses (as opposed to what it defines, scan.ts `scanDefinitions`): the
 * calls it makes (`parseConfig(`, `Enum.group_by(`) and the `--dashed` names it holds (CSS custom
 * properties with their value, command-line options in scripts). They read code the session saw —
 * a file it read, code it wrote, search hits, a shell's output — from the full text, so a detail
 * past the part of the output a turn keeps is not lost.
 *
 * A file can make hundreds of calls: each scanner counts every name in one linear pass and keeps
 * the most frequent (first seen first among equals) up to the kind's cap (in code the agent wrote,
 * up to {@link WRITTEN_CALLS}), each with the file and the line where it first occurs.
 */
import type { FactSink } from './sink.js';
import { FACT_CAPS } from './sink.js';

/** Where the code is from, to give each detail a `path:line`. */
export interface CodeSource {
  path?: string | null;
  /** Read output numbers its lines (`    12→code`, `12\tcode`). */
  numbered?: boolean;
  /** Line number of the text's first line when it is not numbered (Write content: 1). */
  firstLine?: number | null;
  /**
   * Code the agent wrote (Write/Edit content, a patch): its calls are kept past the turn's cap, up
   * to {@link WRITTEN_CALLS} — what the agent wrote it needs again, and a new file calls most
   * names once, so the most frequent forty miss most of them.
   */
  written?: boolean;
  /**
   * Prose (a user's message): outside backticks and fenced blocks only a name that reads as code
   * — dotted (`pool.map(`), with `_`, `$`, a digit or an inner capital, or called with nothing
   * (`reload()`) — is a call; `file(s)` and `Note(see below)` are words. Inside them every call is.
   */
  prose?: boolean;
}

/**
 * Calls kept from one text the agent wrote: all of a hand-written file's (a few hundred at most),
 * while generated or minified code cannot flood the session's facts.
 */
const WRITTEN_CALLS = 1_000;

/** Code beyond this many characters of one text is not scanned for calls and names (a 50 MB log is not code). */
const MAX_CODE = 2 * 1024 * 1024;

/**
 * A call: `name(`, `obj.method(`, `Mod.fun(` — what `/(?<![\w$.])([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*){0,4})\(/g`
 * matches; `this.`/`self.` receivers are dropped. Found from each `(` backwards (see {@link callBefore}).
 */
const MAX_CALL_DOTS = 4;

/** `[\w$]`: a character of a name. */
function isNameCode(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 36;
}

/**
 * Where the call whose `(` is at `paren` starts, or -1: the run of name characters and dots
 * right before it, taken whole (a match of the pattern above can only start where no name
 * character or dot precedes it, and can only end at this `(`), when it is 1–5 names joined by
 * single dots, each starting with a letter, `_` or `$`. Exactly the match the pattern's search
 * finds ending at this `(`, from a scan of the few characters before each `(` instead of the
 * engine trying every position of the text.
 */
function callBefore(code: string, paren: number): number {
  let start = paren;
  while (start > 0) {
    const c = code.charCodeAt(start - 1);
    if (!isNameCode(c) && c !== 46) break;
    start--;
  }
  if (start === paren) return -1;
  let dots = 0;
  let atNameStart = true;
  for (let i = start; i < paren; i++) {
    const c = code.charCodeAt(i);
    if (c === 46) {
      if (atNameStart || ++dots > MAX_CALL_DOTS) return -1;
      atNameStart = true;
    } else if (atNameStart) {
      if (c >= 48 && c <= 57) return -1;
      atNameStart = false;
    }
  }
  return atNameStart ? -1 : start;
}
/** Keywords and built-ins written like calls. */
const NOT_CALLS = new Set([
  'if', 'for', 'while', 'switch', 'catch', 'function', 'return', 'typeof', 'await', 'super', 'elif', 'else', 'with', 'when', 'case',
  'print', 'console.log', 'require', 'import', 'assert', 'defined', 'sizeof', 'unless', 'until', 'match', 'foreach', 'elseif', 'async',
]);
const NUMBERED = /^[ \t]*(\d{1,7})(?:→|\t)/;

interface Seen {
  count: number;
  index: number;
}

/** Line number at `index` (1-based within the text), counted incrementally: calls arrive in order. */
class LineCounter {
  private at = 0;
  private line = 1;
  constructor(private readonly text: string) {}
  lineAt(index: number): number {
    for (let i = this.text.indexOf('\n', this.at); i !== -1 && i < index; i = this.text.indexOf('\n', this.at)) {
      this.line++;
      this.at = i + 1;
    }
    return this.line;
  }
}

function lineOf(text: string, index: number, source: CodeSource, counter: LineCounter): number | null {
  if (source.numbered === true) {
    const start = text.lastIndexOf('\n', index - 1) + 1;
    const m = NUMBERED.exec(text.slice(start, Math.min(text.length, start + 12)));
    return m === null ? null : Number(m[1]);
  }
  if (source.firstLine === null || source.firstLine === undefined) return null;
  return source.firstLine - 1 + counter.lineAt(index);
}

/** The most frequent names, first seen first among equals. */
function top<T extends Seen>(seen: Map<string, T>, n: number): Array<[string, T]> {
  return [...seen.entries()].sort((a, b) => b[1].count - a[1].count || a[1].index - b[1].index).slice(0, n);
}

/** Code in prose: a fenced block, or a span in backticks on one line. */
const CODE_REGION = /```[^]*?(?:```|$)|`[^`\n]+`/g;

/** `[start, end)` of each code region of `text`, in order. */
function codeRegions(text: string): number[] {
  const out: number[] = [];
  if (text.indexOf('`') < 0) return out;
  CODE_REGION.lastIndex = 0;
  for (let m = CODE_REGION.exec(text); m !== null; m = CODE_REGION.exec(text)) out.push(m.index, m.index + m[0].length);
  return out;
}

/** A name that reads as code wherever it is written: dotted, with `_`, `$` or a digit, or an inner capital (`parseConfig`). */
const CODE_LIKE_NAME = /[._$\d]|[a-z][A-Z]/;

/** Calls the code makes, with the file and line of each one's first occurrence. */
export function scanCalls(text: string, sink: FactSink, source: CodeSource = {}): void {
  const written = source.written === true;
  if ((!written && sink.full('call')) || text.indexOf('(') < 0) return;
  const code = text.length > MAX_CODE ? text.slice(0, MAX_CODE) : text;
  const regions = source.prose === true ? codeRegions(code) : null;
  let region = 0;
  const seen = new Map<string, Seen>();
  for (let paren = code.indexOf('('); paren !== -1; paren = code.indexOf('(', paren + 1)) {
    const start = callBefore(code, paren);
    if (start < 0) continue;
    // A `this.` / `self.` receiver is dropped (`/^(?:this|self)\./`, without a regex per call).
    const receiver = code.startsWith('this.', start) || code.startsWith('self.', start) ? 5 : 0;
    const name = code.slice(start + receiver, paren);
    if (name.length < 4 || NOT_CALLS.has(name)) continue;
    if (regions !== null) {
      while (region < regions.length && (regions[region + 1] as number) <= paren) region += 2;
      const inCode = region < regions.length && (regions[region] as number) <= start;
      if (!inCode && !CODE_LIKE_NAME.test(name) && code.charCodeAt(paren + 1) !== 41) continue;
    }
    const known = seen.get(name);
    if (known !== undefined) known.count++;
    else seen.set(name, { count: 1, index: paren - name.length });
  }
  if (seen.size === 0) return;
  const counter = new LineCounter(code);
  const chosen = top(seen, written ? WRITTEN_CALLS : FACT_CAPS.call).sort((a, b) => a[1].index - b[1].index);
  for (const [name, at] of chosen) {
    sink.add('call', name, at.index, at.index + name.length, { path: source.path ?? null, line: lineOf(code, at.index, source, counter) }, written);
    if (!written && sink.full('call')) return;
  }
}

/** `--name` (a CSS custom property, a command-line option), and `--name: value;` where the code defines one. */
const DASHED = /(?<![\w-])(--[A-Za-z][\w-]{1,60})(?:[ \t]*:[ \t]*([^;{}\n]{1,80});)?/g;

/** Dashed names the code holds, as settings: `--accent: #f59e0b` where it defines one, else `--name`. */
export function scanDashedNames(text: string, sink: FactSink): void {
  if (sink.full('config') || text.indexOf('--') < 0) return;
  const code = text.length > MAX_CODE ? text.slice(0, MAX_CODE) : text;
  const seen = new Map<string, Seen & { value: string | null; at: number; end: number }>();
  DASHED.lastIndex = 0;
  for (let m = DASHED.exec(code); m !== null; m = DASHED.exec(code)) {
    const name = m[1] as string;
    if (name.length < 4 || /^-+$/.test(name.slice(2)) || name.endsWith('-')) continue;
    const value = m[2]?.trim() || null;
    const known = seen.get(name);
    if (known !== undefined) {
      known.count++;
      if (known.value === null && value !== null) Object.assign(known, { value, at: m.index, end: m.index + m[0].length });
    } else seen.set(name, { count: 1, index: m.index, value, at: m.index, end: m.index + (value === null ? name.length : m[0].length) });
  }
  for (const [name, info] of top(seen, FACT_CAPS.config)) {
    const fact = info.value === null ? name : `${name}: ${info.value}`;
    sink.add('config', fact, info.at, info.end);
    if (sink.full('config')) return;
  }
}

/** An exception or error class's name: `ValueError`, `EngineError`, `IOException`. */
const ERROR_NAME = /\b[A-Z][A-Za-z0-9]{0,80}(?:Error|Exception)\b/g;
/** Error names kept from one text the agent wrote (a hand-written file names a few dozen at most). */
const WRITTEN_ERROR_NAMES = 100;

/**
 * Error and exception names in code the agent wrote (`raise EngineError(…)`, `except (OSError,
 * ValueError)`, `catch (e: HttpError)`), as symbols with the file and line where each first
 * occurs: which errors the code raises and handles is what the next change to it needs, and a
 * name that is not called (`except X:`) is no call.
 */
export function scanErrorNames(text: string, sink: FactSink, source: CodeSource = {}): void {
  if (text.indexOf('Error') < 0 && text.indexOf('Exception') < 0) return;
  const code = text.length > MAX_CODE ? text.slice(0, MAX_CODE) : text;
  const seen = new Map<string, Seen>();
  ERROR_NAME.lastIndex = 0;
  for (let m = ERROR_NAME.exec(code); m !== null; m = ERROR_NAME.exec(code)) {
    const known = seen.get(m[0]);
    if (known !== undefined) known.count++;
    else seen.set(m[0], { count: 1, index: m.index });
  }
  const counter = new LineCounter(code);
  const chosen = top(seen, WRITTEN_ERROR_NAMES).sort((a, b) => a[1].index - b[1].index);
  for (const [name, at] of chosen) {
    sink.add('symbol', name, at.index, at.index + name.length, { path: source.path ?? null, line: lineOf(code, at.index, source, counter) }, true);
  }
}
