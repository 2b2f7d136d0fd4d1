/**
 * Rows of the PostgreSQL schema and their mapping to cairn's types, and the SQL for a
 * MemoryFilter with numbered parameters.
 */
import type { FileRef, Kind, Memory, MemoryFilter, Provenance, ReviewItem, ReviewKind, Scope, Source } from '../../types.js';

/** A `memories` row as `pg` returns it (int8 parsed to numbers, jsonb to values). */
export interface MemoryRow {
  pk: number;
  id: string;
  text: string;
  kind: string;
  scope: string;
  project: string | null;
  session: string | null;
  tags: string[];
  importance: number;
  source: string;
  provenance: Provenance | null;
  files: FileRef[];
  created_at: number;
  updated_at: number;
  valid_from: number;
  valid_to: number | null;
  supersedes: string | null;
  access_count: number;
  last_accessed_at: number | null;
  last_recalled_at: number | null;
  pinned: boolean;
  deleted_at: number | null;
  content_hash: string;
  meta: Record<string, unknown>;
}

export const MEMORY_COLUMNS =
  'm.pk, m.id, m.text, m.kind, m.scope, m.project, m.session, m.tags, m.importance, m.source, m.provenance, m.files, ' +
  'm.created_at, m.updated_at, m.valid_from, m.valid_to, m.supersedes, m.access_count, m.last_accessed_at, ' +
  'm.last_recalled_at, m.pinned, m.deleted_at, m.content_hash, m.meta';

export function rowToMemory(row: MemoryRow): Memory {
  return {
    id: row.id,
    text: row.text,
    kind: row.kind as Kind,
    scope: row.scope as Scope,
    project: row.project,
    session: row.session,
    tags: row.tags,
    importance: row.importance,
    source: row.source as Source,
    provenance: row.provenance,
    files: row.files,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    validFrom: row.valid_from,
    validTo: row.valid_to,
    supersedes: row.supersedes,
    accessCount: row.access_count,
    lastAccessedAt: row.last_accessed_at,
    lastRecalledAt: row.last_recalled_at,
    pinned: row.pinned,
    deletedAt: row.deleted_at,
    contentHash: row.content_hash,
    meta: row.meta,
  };
}

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

/** A WHERE clause over alias `m` for a MemoryFilter, parameters appended to `p`. */
export function filterSql(filter: MemoryFilter, p: Params): string {
  const clauses: string[] = [];
  if (filter.project !== undefined) {
    if (filter.project === null) clauses.push('m.project IS NULL');
    else if (filter.includeUserScope === false) clauses.push(`m.project = ${p.add(filter.project)}`);
    else clauses.push(`(m.project = ${p.add(filter.project)} OR m.project IS NULL)`);
  }
  if (filter.session !== undefined) clauses.push(`m.session = ${p.add(filter.session)}`);
  const inList = (column: string, values: readonly string[] | undefined): void => {
    if (values && values.length > 0) clauses.push(`${column} = ANY(${p.add(values)}::text[])`);
  };
  inList('m.kind', filter.kinds);
  inList('m.scope', filter.scopes);
  inList('m.source', filter.sources);
  if (filter.tags && filter.tags.length > 0) clauses.push(`m.tags @> ${p.add(filter.tags)}::text[]`);
  if (filter.anyTags && filter.anyTags.length > 0) clauses.push(`m.tags && ${p.add(filter.anyTags)}::text[]`);
  if (filter.snapshotId !== undefined) {
    // A snapshot's members are what was current when it was sealed, whatever happened since.
    clauses.push(`m.pk IN (SELECT memory_pk FROM snapshot_members WHERE snapshot_id = ${p.add(filter.snapshotId)})`);
  } else {
    if (!filter.includeSuperseded) clauses.push('m.valid_to IS NULL');
    if (filter.onlyDeleted) clauses.push('m.deleted_at IS NOT NULL');
    else if (!filter.includeDeleted) clauses.push('m.deleted_at IS NULL');
  }
  if (filter.createdAfter !== undefined) clauses.push(`m.created_at >= ${p.add(filter.createdAfter)}`);
  if (filter.createdBefore !== undefined) clauses.push(`m.created_at < ${p.add(filter.createdBefore)}`);
  if (filter.pinned !== undefined) clauses.push(`m.pinned = ${p.add(filter.pinned)}`);
  return clauses.length > 0 ? clauses.join(' AND ') : 'true';
}

export interface ReviewRow {
  id: string;
  key: string;
  kind: string;
  project: string | null;
  memory_ids: string[];
  reason: string;
  data: Record<string, unknown>;
  created_at: number;
  resolved_at: number | null;
  resolution: string | null;
}

export function rowToReview(row: ReviewRow): ReviewItem {
  return {
    id: row.id,
    key: row.key,
    kind: row.kind as ReviewKind,
    project: row.project,
    memoryIds: row.memory_ids,
    reason: row.reason,
    data: row.data,
    createdAt: row.created_at,
    resolvedAt: row.resolved_at,
    resolution: row.resolution,
  };
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
