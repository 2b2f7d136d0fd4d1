/**
 * The tables `cairn copy` moves between a SQLite and a PostgreSQL store, described once: their
 * key, their columns (PostgreSQL names; SQLite uses the same), and which columns hold JSON,
 * arrays or booleans. Rows travel in a canonical form (arrays, objects, booleans, numbers), so
 * either side can read what the other wrote and both can hash the same rows the same way.
 */
import { createHash } from 'node:crypto';
import type { EmbedderIdentity } from '../../types.js';

export interface TableSpec {
  name: string;
  /** Columns of the key, in order (keyset paging and hashing order). */
  key: string[];
  columns: string[];
  json?: string[];
  arrays?: string[];
  bools?: string[];
}

export type Row = Record<string, unknown>;

const spec = (name: string, key: string[], columns: string[], extra: Partial<TableSpec> = {}): TableSpec => ({ name, key, columns, ...extra });

/**
 * In copy order: memories before what refers to them (`vectors` and `snapshot_members` name memories
 * by id), turns before the session facts found in them, ledger injections before their items.
 */
export const TABLES: TableSpec[] = [
  spec(
    'memories',
    ['id'],
    [
      'id', 'text', 'kind', 'scope', 'project', 'session', 'tags', 'importance', 'source', 'provenance', 'files', 'created_at',
      'updated_at', 'valid_from', 'valid_to', 'supersedes', 'access_count', 'last_accessed_at', 'last_recalled_at', 'pinned',
      'deleted_at', 'content_hash', 'meta', 'context',
    ],
    { json: ['provenance', 'files', 'meta'], arrays: ['tags'], bools: ['pinned'] },
  ),
  spec('vectors', ['memory_id'], ['memory_id', 'vector']),
  spec('events', ['id'], ['id', 'memory_id', 'type', 'at', 'actor', 'data'], { json: ['data'] }),
  spec('snapshots', ['id'], ['id', 'label', 'created_at', 'memory_count']),
  spec('snapshot_members', ['snapshot_id', 'memory_id'], ['snapshot_id', 'memory_id']),
  spec('state', ['key'], ['key', 'value']),
  spec('sessions', ['id'], [
    'id', 'agent', 'project', 'cwd', 'branch', 'parent_id', 'started_at', 'ended_at', 'input_tokens', 'output_tokens',
    'cache_read_tokens', 'cache_creation_tokens', 'compactions', 'source_path', 'title',
  ]),
  spec('session_sources', ['session_id', 'path'], ['session_id', 'path', 'input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_creation_tokens']),
  spec(
    'turns',
    ['id'],
    ['id', 'session_id', 'seq', 'role', 'text', 'tool_name', 'tool_input', 'tool_use_id', 'is_error', 'flags', 'at', 'source_uuid', 'source_line'],
    { arrays: ['flags'], bools: ['is_error'] },
  ),
  spec('compactions', ['id'], ['id', 'session_id', 'trigger', 'pre_tokens', 'summary', 'at', 'seq', 'source_line']),
  spec('corrections', ['id'], ['id', 'session_id', 'premise_turn_id', 'correction_turn_id', 'kind', 'lang', 'text', 'at']),
  spec('ingest_cursors', ['path'], ['path', 'size', 'mtime_ms', 'offset', 'head_hash', 'state', 'updated_at'], { json: ['state'] }),
  // One row per occurrence (session_fact_refs) with its fact's columns; written through the
  // substrate, which keeps each store's fact index.
  spec('session_facts', ['fact_id', 'turn_id'], ['fact_id', 'turn_id', 'session_id', 'kind', 'text', 'path', 'line', 'seq', 'role', 'tool_name', 'at', 'note']),
  spec('ledger_windows', ['session_id', 'win'], ['session_id', 'win', 'at', 'reason', 'project']),
  spec('ledger_injections', ['id'], ['id', 'session_id', 'win', 'at', 'via', 'name', 'target', 'tokens', 'project', 'measured_at']),
  spec('ledger_items', ['injection_id', 'item_id'], ['injection_id', 'item_id', 'kind', 'ord', 'used'], { bools: ['used'] }),
  spec(
    'ledger_outcomes',
    ['session_id', 'win'],
    ['session_id', 'win', 'project', 'reason', 'measured_at', 'turns_after', 'injected', 'used', 'needed', 'missed', 'missed_facts', 'kinds', 'learned'],
    { json: ['missed_facts', 'kinds', 'learned'] },
  ),
  spec(
    'review_items',
    ['id'],
    ['id', 'key', 'kind', 'project', 'memory_ids', 'reason', 'data', 'created_at', 'resolved_at', 'resolution'],
    { json: ['data'], arrays: ['memory_ids'] },
  ),
];

/** State keys that describe one store's own index or copy progress, never copied. */
export function isLocalStateKey(key: string): boolean {
  return key === 'vector_model' || key === 'vector_epoch' || key.startsWith('copy.');
}

/** `"offset"` and `"trigger"` are keywords. */
export function quoteColumn(column: string): string {
  return column === 'offset' || column === 'trigger' || column === 'key' ? `"${column}"` : column;
}

/** JSON with object keys sorted, so equal rows hash equally whatever order a store returns keys in. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** A running content hash over a table's rows in key order. */
export class TableHash {
  private readonly hash = createHash('sha256');
  rows = 0;
  add(row: Row): void {
    this.hash.update(canonicalJson(row));
    this.hash.update('\n');
    this.rows++;
  }
  digest(): string {
    return this.hash.digest('hex');
  }
}

/** Float32 values as numbers that compare equal whichever store they were read from. */
export function vectorValues(vector: ArrayLike<number>): number[] {
  return Array.from(vector, (x) => Math.fround(x));
}

/** What one side of a copy can do. */
export interface CopyEndpoint {
  readonly location: string;
  count(table: TableSpec): Promise<number>;
  /** Up to `limit` canonical rows with a key after `after` (null: from the start), in key order (bytewise). */
  read(table: TableSpec, after: unknown[] | null, limit: number): Promise<Row[]>;
  /** Insert or update rows by key (idempotent). */
  write(table: TableSpec, rows: Row[], model: EmbedderIdentity | null): Promise<void>;
  vectorModel(): Promise<EmbedderIdentity | null>;
  getState(key: string): Promise<string | null>;
  setState(key: string, value: string | null): Promise<void>;
  /** After all writes (e.g. move PostgreSQL's event id sequence past the copied ids). */
  finish(): Promise<void>;
}
