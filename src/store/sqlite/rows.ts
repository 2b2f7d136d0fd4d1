import type { FileRef, Kind, Memory, MemoryFilter, Provenance, Scope, Source } from '../../types.js';

/** A `memories` row as better-sqlite3 returns it. */
export interface MemoryRow {
  rowid: number;
  id: string;
  text: string;
  kind: string;
  scope: string;
  project: string | null;
  session: string | null;
  tags: string;
  importance: number;
  source: string;
  provenance: string | null;
  files: string;
  created_at: number;
  updated_at: number;
  valid_from: number;
  valid_to: number | null;
  supersedes: string | null;
  access_count: number;
  last_accessed_at: number | null;
  last_recalled_at: number | null;
  pinned: number;
  deleted_at: number | null;
  content_hash: string;
  meta: string;
}

export const MEMORY_COLUMNS =
  'm.rowid AS rowid, m.id, m.text, m.kind, m.scope, m.project, m.session, m.tags, m.importance, m.source, ' +
  'm.provenance, m.files, m.created_at, m.updated_at, m.valid_from, m.valid_to, m.supersedes, m.access_count, ' +
  'm.last_accessed_at, m.last_recalled_at, m.pinned, m.deleted_at, m.content_hash, m.meta';

export function rowToMemory(row: MemoryRow): Memory {
  return {
    id: row.id,
    text: row.text,
    kind: row.kind as Kind,
    scope: row.scope as Scope,
    project: row.project,
    session: row.session,
    tags: JSON.parse(row.tags) as string[],
    importance: row.importance,
    source: row.source as Source,
    provenance: row.provenance === null ? null : (JSON.parse(row.provenance) as Provenance),
    files: JSON.parse(row.files) as FileRef[],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    validFrom: row.valid_from,
    validTo: row.valid_to,
    supersedes: row.supersedes,
    accessCount: row.access_count,
    lastAccessedAt: row.last_accessed_at,
    lastRecalledAt: row.last_recalled_at,
    pinned: row.pinned === 1,
    deletedAt: row.deleted_at,
    contentHash: row.content_hash,
    meta: JSON.parse(row.meta) as Record<string, unknown>,
  };
}

export function memoryToParams(memory: Memory): Record<string, unknown> {
  return {
    id: memory.id,
    text: memory.text,
    kind: memory.kind,
    scope: memory.scope,
    project: memory.project,
    session: memory.session,
    tags: JSON.stringify(memory.tags),
    importance: memory.importance,
    source: memory.source,
    provenance: memory.provenance === null ? null : JSON.stringify(memory.provenance),
    files: JSON.stringify(memory.files),
    created_at: memory.createdAt,
    updated_at: memory.updatedAt,
    valid_from: memory.validFrom,
    valid_to: memory.validTo,
    supersedes: memory.supersedes,
    access_count: memory.accessCount,
    last_accessed_at: memory.lastAccessedAt,
    last_recalled_at: memory.lastRecalledAt,
    pinned: memory.pinned ? 1 : 0,
    deleted_at: memory.deletedAt,
    content_hash: memory.contentHash,
    meta: JSON.stringify(memory.meta),
  };
}

/** A WHERE clause (over alias `m`) and its positional parameters for a MemoryFilter. */
export function filterSql(filter: MemoryFilter): { where: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  if (filter.project !== undefined) {
    if (filter.project === null) clauses.push('m.project IS NULL');
    else if (filter.includeUserScope === false) {
      clauses.push('+m.project = ?');
      params.push(filter.project);
    } else {
      // Unary + keeps the planner on the ordered partial indexes (see migration 004).
      clauses.push('(+m.project = ? OR +m.project IS NULL)');
      params.push(filter.project);
    }
  }
  if (filter.session !== undefined) {
    clauses.push('m.session = ?');
    params.push(filter.session);
  }
  const inList = (column: string, values: readonly string[] | undefined): void => {
    if (!values || values.length === 0) return;
    clauses.push(`${column} IN (${values.map(() => '?').join(', ')})`);
    params.push(...values);
  };
  inList('m.kind', filter.kinds);
  inList('m.scope', filter.scopes);
  inList('m.source', filter.sources);
  for (const tag of filter.tags ?? []) {
    clauses.push('EXISTS (SELECT 1 FROM json_each(m.tags) WHERE value = ?)');
    params.push(tag);
  }
  if (filter.anyTags && filter.anyTags.length > 0) {
    clauses.push(`EXISTS (SELECT 1 FROM json_each(m.tags) WHERE value IN (${filter.anyTags.map(() => '?').join(', ')}))`);
    params.push(...filter.anyTags);
  }
  if (filter.snapshotId !== undefined) {
    // A snapshot's members are what was current when it was sealed, whatever happened since.
    clauses.push('m.rowid IN (SELECT memory_rowid FROM snapshot_members WHERE snapshot_id = ?)');
    params.push(filter.snapshotId);
  } else {
    if (!filter.includeSuperseded) clauses.push('m.valid_to IS NULL');
    if (filter.onlyDeleted) clauses.push('m.deleted_at IS NOT NULL');
    else if (!filter.includeDeleted) clauses.push('m.deleted_at IS NULL');
  }
  if (filter.createdAfter !== undefined) {
    clauses.push('m.created_at >= ?');
    params.push(filter.createdAfter);
  }
  if (filter.createdBefore !== undefined) {
    clauses.push('m.created_at < ?');
    params.push(filter.createdBefore);
  }
  if (filter.pinned !== undefined) {
    clauses.push('m.pinned = ?');
    params.push(filter.pinned ? 1 : 0);
  }
  return { where: clauses.length > 0 ? clauses.join(' AND ') : '1', params };
}

export function vectorToBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

export function blobToVector(blob: Buffer): Float32Array {
  // Copy: the Buffer may be a view into a pooled allocation with an unaligned offset.
  const copy = new Float32Array(blob.byteLength / 4);
  new Uint8Array(copy.buffer).set(blob);
  return copy;
}
