import { isDeepStrictEqual } from 'node:util';
import { applyEdits, modify, parse, printParseErrorCode, type JSONPath, type ParseError } from 'jsonc-parser';
import { CairnError } from '../errors.js';

/**
 * Users' JSON configuration files (Claude Code settings, `.mcp.json`, Cursor and VS Code
 * `mcp.json`, Codex `hooks.json`) may hold comments and trailing commas (VS Code's do). They are
 * read with jsonc-parser and changed with its `modify`/`applyEdits`, which edit the text in place:
 * comments, key order and formatting outside the changed property stay as they were.
 */

export type JsonObject = Record<string, unknown>;

/** 1-based line and column of a character offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/** Parse a JSON-with-comments file that must hold an object; a one-line error naming file and line otherwise. */
export function parseJsoncObject(path: string, text: string | null): JsonObject {
  if (text === null || text.trim().length === 0) return {};
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { allowTrailingComma: true, allowEmptyContent: true, disallowComments: false });
  const first = errors[0];
  if (first) {
    const { line, column } = lineColumn(text, first.offset);
    throw new CairnError('INVALID_INPUT', `${path}:${line}:${column}: not valid JSON (${printParseErrorCode(first.error)}); fix it or move it aside, nothing was changed`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new CairnError('INVALID_INPUT', `${path}:1:1: not a JSON object; fix it or move it aside, nothing was changed`);
  }
  return value as JsonObject;
}

/** The indentation the file already uses (two spaces when it has none). */
function detectIndent(text: string): { insertSpaces: boolean; tabSize: number } {
  const match = /\n([ \t]+)\S/.exec(text);
  if (!match?.[1]) return { insertSpaces: true, tabSize: 2 };
  if (match[1].startsWith('\t')) return { insertSpaces: false, tabSize: 1 };
  return { insertSpaces: true, tabSize: match[1].length };
}

/** One change: set `path` to `value`, or remove it when `value` is undefined. */
export interface JsonEdit {
  path: JSONPath;
  value: unknown;
}

/**
 * Apply edits to the text of a JSONC object file, in place. Returns the new text, the old text
 * when nothing changes, or `null` when the file did not exist and stays empty.
 */
export function editJsonc(text: string | null, edits: JsonEdit[]): string | null {
  const eol = text?.includes('\r\n') ? '\r\n' : '\n';
  let out = text === null || text.trim().length === 0 ? null : text;
  for (const edit of edits) {
    if (out === null) {
      if (edit.value === undefined) continue;
      out = '{}';
    }
    const current = parse(out, [], { allowTrailingComma: true }) as JsonObject;
    if (isDeepStrictEqual(valueAt(current, edit.path), edit.value)) continue;
    const result = modify(out, edit.path, edit.value, { formattingOptions: { ...detectIndent(out), eol } });
    out = applyEdits(out, result);
  }
  if (out === null) return text;
  if (text === null || text.trim().length === 0) return out.endsWith(eol) ? out : `${out}${eol}`;
  return out;
}

/** The value at a path inside parsed JSON (undefined when absent). */
export function valueAt(root: unknown, path: JSONPath): unknown {
  let node: unknown = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[key];
  }
  return node;
}

/** Whether a parsed file holds nothing at all (an empty object). */
export function isEmptyObject(text: string): boolean {
  const value: unknown = parse(text, [], { allowTrailingComma: true });
  return value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0 && !/\/\/|\/\*/.test(text);
}
