/**
 * The reader plug-in shape and the helpers every JSONL reader uses. A reader is a factory that
 * turns lines into records on a {@link BatchBuilder}; it keeps its own small state between passes.
 */
import type { BatchBuilder } from '../builder.js';
import { isObject, type JsonObject } from '../text.js';

/** Consumes the lines of one pass over one file. */
export interface LineParser {
  /** One complete, non-empty line. `offset` is its first byte in the file. */
  line(text: string, line: number, offset: number): void;
  /**
   * End of the pass. Returns the reader's state for the next pass and, for readers that must
   * see a block's end before it is final (Aider), where the next pass should start again.
   */
  end(atEof: boolean): { state: unknown; rewind?: { offset: number; line: number } };
}

/** Creates a parser continuing from `state` (null on a first pass). */
export type LineParserFactory = (builder: BatchBuilder, path: string, state: unknown) => LineParser;

/** Parses a whole-document format (a JSON chat file) in one go. */
export type DocumentParser = (builder: BatchBuilder, path: string, text: string) => void;

/** Parse one JSONL line into an object, counting it as bad (with a reason) when it is not one. */
export function parseJsonLine(text: string, line: number, builder: BatchBuilder): JsonObject | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    if (text.trim().length === 0) return null;
    builder.bad(line, text.charCodeAt(0) === 123 ? 'invalid or truncated JSON' : 'not JSON');
    return null;
  }
  if (!isObject(value)) {
    builder.bad(line, `JSON ${Array.isArray(value) ? 'array' : typeof value}, not an object`);
    return null;
  }
  return value;
}

/** A bounded insertion-ordered map, serialised as entries (oldest dropped first). */
export function boundedEntries<K, V>(map: Map<K, V>, max: number): Array<[K, V]> {
  const entries = [...map.entries()];
  return entries.length > max ? entries.slice(entries.length - max) : entries;
}

/** Read an array of entries from a state value, tolerating anything malformed. */
export function entriesOf<V>(value: unknown): Array<[string, V]> {
  if (!Array.isArray(value)) return [];
  const out: Array<[string, V]> = [];
  for (const item of value) {
    if (Array.isArray(item) && item.length === 2 && typeof item[0] === 'string') out.push([item[0], item[1] as V]);
  }
  return out;
}

export function stateObject(state: unknown): JsonObject {
  return isObject(state) ? state : {};
}

/**
 * Whether a line was written by a headless run: Claude Code 2.1+ records how it was started in
 * `entrypoint` — `cli` (the terminal UI), `claude-vscode`, … interactive; `sdk-cli` (`claude -p`),
 * `sdk-ts` / `sdk-py` (the Agent SDK), `claude-code-github-action`, `mcp` headless.
 */
export function isHeadlessEntrypoint(value: unknown): boolean {
  return typeof value === 'string' && (value.startsWith('sdk-') || value === 'claude-code-github-action' || value === 'mcp');
}
