/**
 * Signatures the agent relied on: function, method, class and type declarations in the files it
 * read and edited (from the Read output, with the line numbers the tool printed) and in the text
 * it wrote (Edit / Write / patches). One memory per file + symbol, so a later read showing a
 * different signature for the same symbol supersedes the older one.
 */
import type { TurnRecord } from '../../types.js';
import { filePathOf, toolClass, writtenTextOf, type SessionView } from '../session.js';
import { code, oneLine } from '../text.js';
import type { Candidate } from '../types.js';
import { candidate } from './common.js';

/** Declaration patterns by file extension; group 1 is the symbol name. */
const TS = [
  /^\s*export\s+(?:default\s+)?(?:declare\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)\s*[<(]/,
  /^\s*export\s+(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)/,
  /^\s*export\s+(?:declare\s+)?(?:interface|type|enum)\s+([A-Za-z_$][\w$]*)/,
  /^\s*export\s+const\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:\([^)]*\)|[A-Za-z_$][\w$]*)\s*(?::\s*[^=]+)?=>/,
  /^(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)\s*[<(]/,
  /^\s{2,4}(?:(?:public|static|async|readonly|override|get|set)\s+)*(?!private\b|protected\b|if\b|for\b|while\b|switch\b|catch\b|return\b|function\b|else\b|do\b|try\b|with\b)([A-Za-z_$][\w$]*)\s*(?:<[^>]*>)?\([^)]*\)\s*(?::\s*[^{;]+)?\s*\{\s*$/,
];
const PATTERNS: Record<string, RegExp[]> = {
  ts: TS,
  tsx: TS,
  mts: TS,
  cts: TS,
  js: TS,
  jsx: TS,
  mjs: TS,
  cjs: TS,
  py: [/^\s{0,4}(?:async\s+)?def\s+((?!_)[A-Za-z]\w*|__init__)\s*\(/, /^class\s+([A-Za-z_]\w*)/],
  go: [/^func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)\s*[[(]/, /^type\s+([A-Za-z_]\w*)\s+(?:struct|interface)\b/],
  rs: [/^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+([A-Za-z_]\w*)/, /^\s*pub(?:\([^)]*\))?\s+(?:struct|enum|trait|type)\s+([A-Za-z_]\w*)/],
  ex: [/^\s*(?:def|defmacro)\s+([a-z_]\w*[?!]?)\s*(?:\(|,|\s+do\b|$)/, /^\s*defmodule\s+([\w.]+)/],
  exs: [/^\s*(?:def|defmacro)\s+([a-z_]\w*[?!]?)\s*(?:\(|,|\s+do\b|$)/, /^\s*defmodule\s+([\w.]+)/],
  rb: [/^\s*def\s+((?:self\.)?[a-z_]\w*[?!=]?)/, /^\s*(?:class|module)\s+([A-Z][\w:]*)/],
  java: [/^\s*(?:public|protected|private)\s+(?:static\s+)?(?:final\s+)?(?:abstract\s+)?(?:synchronized\s+)?(?:<[^>]+>\s+)?[\w<>[\],.? ]+\s+([a-zA-Z_]\w*)\s*\(/, /^\s*(?:public\s+)?(?:abstract\s+|final\s+)?(?:class|interface|enum|record)\s+([A-Z]\w*)/],
  kt: [/^\s*(?:(?:public|private|internal|protected|override|suspend|inline|open)\s+)*fun\s+(?:<[^>]+>\s+)?(?:[\w.]+\.)?([a-zA-Z_]\w*)\s*\(/, /^\s*(?:data\s+|sealed\s+|abstract\s+|open\s+)?(?:class|interface|object)\s+([A-Z]\w*)/],
  cs: [/^\s*(?:public|protected|internal|private)\s+(?:static\s+|async\s+|override\s+|virtual\s+|abstract\s+)*[\w<>[\],.? ]+\s+([A-Z]\w*)\s*\(/, /^\s*(?:public\s+)?(?:static\s+|abstract\s+|sealed\s+|partial\s+)*(?:class|interface|record|struct)\s+([A-Z]\w*)/],
  swift: [/^\s*(?:(?:public|private|internal|open|static|override|@\w+)\s+)*func\s+([a-zA-Z_]\w*)/, /^\s*(?:public\s+)?(?:final\s+)?(?:class|struct|protocol|enum)\s+([A-Z]\w*)/],
  php: [/^\s*(?:(?:public|private|protected|static|abstract|final)\s+)*function\s+([a-zA-Z_]\w*)\s*\(/, /^\s*(?:abstract\s+|final\s+)?class\s+([A-Z]\w*)/],
  sh: [/^(?:function\s+)?([a-zA-Z_][\w-]*)\s*\(\)\s*\{?/],
  bash: [/^(?:function\s+)?([a-zA-Z_][\w-]*)\s*\(\)\s*\{?/],
};

const MAX_SIGNATURE = 220;
/** Languages where one function is written as several clauses (`def f(:a)`, `def f(:b)`). */
const MULTI_CLAUSE = new Set(['ex', 'exs', 'erl', 'hs']);
/** Signatures kept per file per run, so one big read does not flood the store. */
const MAX_PER_FILE = 8;
/** Manifests and configs: their declarations are not API the agent relied on. */
const NOT_CODE = /(?:^|\/)(?:deps|node_modules|vendor|third_party|\.venv|venv|site-packages|target|dist|build)\/|(?:^|\/)(?:mix\.exs|setup\.py|conftest\.py|Rakefile|Gemfile|[\w.-]*\.config\.[cm]?[jt]s)$|(?:^|\/)config\/[\w.-]+\.exs$/;

export interface Signature {
  symbol: string;
  signature: string;
  /** 1-based line when the source printed line numbers. */
  line?: number;
}

function extensionOf(path: string): string {
  const dot = path.lastIndexOf('.');
  return dot < 0 ? '' : path.slice(dot + 1).toLowerCase();
}

/** A numbered line of Read output: `    12→text` or `    12\ttext`. */
const NUMBERED = /^\s*(\d{1,6})(?:→|\t)(.*)$/;

/** Lines of a tool's file view with their numbers (none when the tool printed none). */
function viewLines(text: string): Array<{ line?: number; text: string }> {
  const raw = text.split('\n');
  const numbered = raw.filter((l) => NUMBERED.test(l)).length;
  if (numbered >= Math.min(3, raw.length)) {
    return raw.flatMap((l) => {
      const m = NUMBERED.exec(l);
      return m ? [{ line: Number(m[1]), text: m[2] as string }] : [];
    });
  }
  return raw.map((l) => ({ text: l }));
}

/** Declarations in a file's text (or a window of it) for the file's language. */
export function findSignatures(path: string, text: string): Signature[] {
  const patterns = PATTERNS[extensionOf(path)];
  if (!patterns) return [];
  const lines = viewLines(text);
  const out: Signature[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < lines.length; i++) {
    const current = lines[i] as { line?: number; text: string };
    for (const pattern of patterns) {
      const m = pattern.exec(current.text);
      if (!m?.[1]) continue;
      const symbol = m[1];
      if (seen.has(symbol)) break;
      seen.add(symbol);
      // Parameters spread over the next lines: join until the parenthesis closes (at most 6 lines).
      let signature = current.text.trim();
      for (let j = i + 1; j < Math.min(lines.length, i + 7); j++) {
        const next = (lines[j] as { text: string }).text.trim();
        if (!unbalanced(signature) && !/[=|,]$/.test(signature) && !next.startsWith('|')) break;
        signature += ` ${next}`;
      }
      // An Elixir one-liner's body (`def f(x), do: x`) is not part of the signature.
      const oneLiner = /,\s*do:/.exec(signature);
      if (oneLiner && !unbalanced(signature.slice(0, oneLiner.index))) signature = signature.slice(0, oneLiner.index);
      signature = signature.replace(/\s*(?:\{|\bdo)\s*$/, '').replace(/\s+/g, ' ').trim();
      if (signature.length > MAX_SIGNATURE) signature = oneLine(signature, MAX_SIGNATURE);
      // A bare declaration (`defmodule X`, `export interface X`, `def up`) says no more than the path.
      if (!/[(<=:]|\b(?:extends|implements)\b/.test(signature.replace(/^\s*(?:export\s+)?(?:default\s+)?/, '').replace(/::/g, ''))) break;
      // Nor does a function of no parameters and no declared result (`def main():`, `mounted()`).
      if (/\(\s*\)\s*:?\s*$/.test(signature)) break;
      // Nor a type whose body was cut off (`export type A =`).
      if (/[=|]$/.test(signature)) break;
      out.push({ symbol, signature, ...(current.line !== undefined ? { line: current.line } : {}) });
      break;
    }
  }
  return out;
}

function unbalanced(text: string): boolean {
  let depth = 0;
  for (const ch of text) {
    if (ch === '(') depth++;
    else if (ch === ')') depth--;
  }
  return depth > 0;
}

/** A line of `grep -n` / `rg -n` output: path, line, text. */
const GREP_LINE = /^((?:[\w@.+-]+\/)*[\w@.+-]+\.[A-Za-z]{1,5}):(\d+):(.*)$/;
const MAX_PER_SEARCH = 3;

export function extractSignatures(view: SessionView): Candidate[] {
  // Files the agent changed in the turns at hand: the ones whose shape it relied on.
  const edited = new Set<string>();
  for (const turn of view.turns) {
    if (turn.role === 'tool_call' && toolClass(turn.toolName) === 'edit') {
      const path = filePathOf(turn);
      if (path) edited.add(path);
    }
  }
  const out: Candidate[] = [];
  const perFile = new Map<string, number>();
  const emit = (turn: TurnRecord, path: string, sig: Signature): void => {
    const n = perFile.get(path) ?? 0;
    if (n >= MAX_PER_FILE) return;
    perFile.set(path, n + 1);
    const rel = view.relative(path);
    const where = sig.line !== undefined ? `${rel}:${sig.line}` : rel;
    out.push(
      candidate(view, turn, {
        text: `${code(sig.signature)} — ${where}`,
        kind: 'fact',
        extractor: 'signature',
        importance: 0.55,
        tags: ['signature', extensionOf(path)],
        files: [where],
        // Languages with multi-clause functions: each clause is its own claim, never a conflict.
        subject: MULTI_CLAUSE.has(extensionOf(path))
          ? { key: `sig:${rel}#${sig.symbol}:${sig.signature}`, value: sig.signature, onConflict: 'merge' }
          : { key: `sig:${rel}#${sig.symbol}`, value: sig.signature, onConflict: 'supersede' },
      }),
    );
  };
  for (const turn of view.turns) {
    if (turn.role !== 'tool_call' || !view.isNew(turn)) continue;
    const cls = toolClass(turn.toolName);
    if (cls === 'search') {
      // A search that found a definition: `path:line:def name(…)` lines of grep / rg output.
      const result = view.resultOf(turn);
      if (result === null || result.isError) continue;
      let found = 0;
      for (const line of (result.toolInput ?? result.text).split('\n')) {
        const m = GREP_LINE.exec(line.trim());
        if (!m || found >= MAX_PER_SEARCH) continue;
        const sig = findSignatures(m[1] as string, m[3] as string)[0];
        if (!sig || NOT_CODE.test(m[1] as string)) continue;
        found++;
        emit(result, m[1] as string, { ...sig, line: Number(m[2]) });
      }
      continue;
    }
    const path = filePathOf(turn);
    if (path === null || !edited.has(path) || NOT_CODE.test(path)) continue;
    if (cls === 'read') {
      const result = view.resultOf(turn);
      if (result === null || result.isError) continue;
      for (const sig of findSignatures(path, result.toolInput ?? result.text)) emit(result, path, sig);
    } else if (cls === 'edit') {
      const written = writtenTextOf(turn);
      if (written === null) continue;
      for (const sig of findSignatures(path, written)) emit(turn, path, sig);
    }
  }
  return out;
}
