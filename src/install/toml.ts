import { isDeepStrictEqual } from 'node:util';
import { parse, patch, TomlFormat } from '@decimalturn/toml-patch';
import { CairnError } from '../errors.js';

/**
 * Codex's `config.toml` is read and changed with @decimalturn/toml-patch, a maintained TOML 1.1
 * parser that patches a document in place: comments, other tables, arrays of tables and the
 * user's formatting outside the keys cairn changes stay as they were.
 */

export type TomlTable = Record<string, unknown>;

/** Parse a TOML file; a one-line error naming file and line when it is not valid TOML. */
export function parseTomlFile(path: string, text: string | null): TomlTable {
  if (text === null || text.trim().length === 0) return {};
  try {
    return parse(text) as TomlTable;
  } catch (error) {
    const err = error as { message?: string; line?: number; column?: number };
    const lines = (err.message ?? String(error)).split('\n').filter((l) => l.trim().length > 0);
    const reason = lines.length > 1 ? lines[lines.length - 1]!.trim() : (lines[0] ?? 'parse error').replace(/^Error parsing TOML \(\d+, \d+\):?\s*/, '');
    const where = typeof err.line === 'number' ? `:${err.line}${typeof err.column === 'number' ? `:${err.column + 1}` : ''}` : '';
    throw new CairnError('INVALID_INPUT', `${path}${where}: not valid TOML (${reason}); fix it or move it aside, nothing was changed`, { cause: error });
  }
}

/** Keep the file's own line endings and trailing newlines, so a later removal restores it byte for byte. */
function formatFor(text: string): TomlFormat {
  const format = TomlFormat.default();
  // New tables cairn adds (mcp_servers.cairn and its env) are written as sections, not inline.
  format.inlineTableStart = 3;
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  format.newLine = eol;
  const trailing = /(?:\r?\n)*$/.exec(text)?.[0] ?? '';
  format.trailingNewline = text.length === 0 ? 1 : trailing.split(eol).length - 1;
  return format;
}

/**
 * Set (or, with `undefined`, remove) one table at a dotted path, e.g. `['mcp_servers', 'cairn']`,
 * keeping everything else in the text. Returns the old text when nothing changes and `null` when
 * the file did not exist and stays empty.
 */
export function setTomlTable(path: string, text: string | null, at: string[], value: TomlTable | undefined): string | null {
  const doc = parseTomlFile(path, text);
  let parent: TomlTable = doc;
  for (const key of at.slice(0, -1)) {
    const next = parent[key];
    if (next === undefined) {
      if (value === undefined) return text;
      parent[key] = {};
    } else if (next === null || typeof next !== 'object' || Array.isArray(next)) {
      throw new CairnError('INVALID_INPUT', `${path}: "${at.join('.')}" cannot be set because "${key}" is not a table; nothing was changed`);
    }
    parent = parent[key] as TomlTable;
  }
  const leaf = at[at.length - 1]!;
  if (isDeepStrictEqual(parent[leaf], value)) return text;
  if (value === undefined) delete parent[leaf];
  else parent[leaf] = value;
  // An intermediate table cairn created and emptied again goes too.
  if (value === undefined) pruneEmpty(doc, at.slice(0, -1));
  if (text === null || text.trim().length === 0) {
    if (Object.keys(doc).length === 0) return text;
  }
  return patch(text ?? '', doc, formatFor(text ?? ''));
}

function pruneEmpty(doc: TomlTable, at: string[]): void {
  for (let depth = at.length; depth > 0; depth--) {
    let node: TomlTable = doc;
    for (const key of at.slice(0, depth - 1)) node = node[key] as TomlTable;
    const key = at[depth - 1]!;
    const child = node[key];
    if (child && typeof child === 'object' && !Array.isArray(child) && Object.keys(child).length === 0) delete node[key];
    else return;
  }
}
