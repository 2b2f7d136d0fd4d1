/**
 * What PostgreSQL stores differently (tags as text[], JSON as jsonb, booleans, `$n` parameters,
 * no U+0000 in text, snapshot members by pk); the memory model itself is ../memory-rows.ts.
 */
import type { FileRef, Memory, MemoryFilter, Provenance, ReviewItem } from '../../types.js';
import { MEMORY_FIELDS, filterWhere, memorySelectList, memoryToRow, rowToMemory as sharedRowToMemory, type FilterDialect, type MemoryEncoding, type StoredMemoryRow } from '../memory-rows.js';
import { rowToReview as sharedRowToReview, type StoredReviewRow } from '../review-rows.js';

/** A `memories` row as `pg` returns it (int8 parsed to numbers, jsonb to values, tags as text[]), and its pk. */
export interface MemoryRow extends StoredMemoryRow {
  pk: number;
  tags: string[];
  provenance: Provenance | null;
  files: FileRef[];
  pinned: boolean;
  meta: Record<string, unknown>;
}

export const MEMORY_COLUMNS = memorySelectList('m.pk');

/**
 * PostgreSQL text and jsonb cannot hold U+0000 (SQLite can): it becomes U+FFFD, so a transcript
 * with a NUL in a tool output is stored instead of failing the whole batch.
 */
export function pgText<T extends string | null>(value: T): T {
  return (typeof value === 'string' && value.includes('\0') ? value.replaceAll('\0', '\uFFFD') : value) as T;
}

/** JSON for a jsonb parameter, with U+0000 replaced inside strings. */
export function pgJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' ? pgText(v) : v));
}

/** Parameters collected while building a statement: `p.add(x)` returns its `$n`. */
export class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** PostgreSQL keeps tags as text[], JSON as jsonb (parsed by the driver), booleans as boolean, and no U+0000 in text. */
const POSTGRES_ENCODING: MemoryEncoding = {
  encodeJson: (value) => pgJson(value),
  decodeJson: (value) => value,
  encodeTags: (tags) => tags.map(pgText),
  decodeTags: (value) => value as string[],
  encodeBool: (value) => value,
  decodeBool: (value) => value === true,
  encodeText: (value) => pgText(value),
};

export function rowToMemory(row: MemoryRow): Memory {
  return sharedRowToMemory(row, POSTGRES_ENCODING);
}

/** Parameters of an INSERT INTO memories, in MEMORY_FIELDS order. */
export function memoryFieldValues(memory: Memory): unknown[] {
  const row = memoryToRow(memory, POSTGRES_ENCODING);
  return MEMORY_FIELDS.map((field) => row[field]);
}

/** PostgreSQL's spelling of a filter: `$n` parameters (added to `p`), array operators for tags, pk for snapshots. */
export function postgresDialect(p: Params): FilterDialect {
  return {
    param: (value) => p.add(value),
    projectIs: (project, orUserScope) => (orUserScope ? `(m.project = ${p.add(project)} OR m.project IS NULL)` : `m.project = ${p.add(project)}`),
    oneOf: (column, values) => `${column} = ANY(${p.add(values)}::text[])`,
    hasAllTags: (tags) => `m.tags @> ${p.add(tags)}::text[]`,
    hasAnyTag: (tags) => `m.tags && ${p.add(tags)}::text[]`,
    inSnapshot: (snapshotId) => `m.pk IN (SELECT memory_pk FROM snapshot_members WHERE snapshot_id = ${p.add(snapshotId)})`,
    bool: (value) => p.add(value),
    always: 'true',
  };
}

/** A WHERE clause over alias `m` for a MemoryFilter, parameters appended to `p`. */
export function filterSql(filter: MemoryFilter, p: Params): string {
  return filterWhere(filter, postgresDialect(p));
}

export type { StoredReviewRow as ReviewRow } from '../review-rows.js';

export function rowToReview(row: StoredReviewRow): ReviewItem {
  return sharedRowToReview(row, POSTGRES_ENCODING);
}

/** pgvector's text form of a vector: `[0.1,0.2,…]`. */
export function vectorLiteral(vector: Float32Array): string {
  return `[${Array.from(vector).join(',')}]`;
}

/** A vector read back as `real[]` (numbers) or as pgvector text. */
export function toFloat32(value: number[] | string): Float32Array {
  if (typeof value === 'string') return Float32Array.from(JSON.parse(value) as number[]);
  return Float32Array.from(value);
}
