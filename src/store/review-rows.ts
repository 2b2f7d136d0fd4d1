/**
 * The distillation review queue as both SQL stores hold it: the `review_items` row and its
 * mapping to {@link ReviewItem}. The dialect's {@link MemoryEncoding} decodes the JSON `data` and
 * the id list (SQLite: JSON text; PostgreSQL: jsonb and text[]).
 */
import type { ReviewFilter, ReviewItem, ReviewKind } from '../types.js';
import type { FilterDialect, MemoryEncoding } from './memory-rows.js';

/** A `review_items` row as a driver returns it (`memory_ids` and `data` encoded as the dialect stores them). */
export interface StoredReviewRow {
  id: string;
  key: string;
  kind: string;
  project: string | null;
  memory_ids: unknown;
  reason: string;
  data: unknown;
  created_at: number;
  resolved_at: number | null;
  resolution: string | null;
}

export function rowToReview(row: StoredReviewRow, encoding: MemoryEncoding): ReviewItem {
  return {
    id: row.id,
    key: row.key,
    kind: row.kind as ReviewKind,
    project: row.project,
    memoryIds: encoding.decodeTags(row.memory_ids),
    reason: row.reason,
    data: encoding.decodeJson(row.data) as Record<string, unknown>,
    createdAt: row.created_at,
    resolvedAt: row.resolved_at,
    resolution: row.resolution,
  };
}

/** The WHERE clause of a review listing (open or resolved, project or user-wide, kinds). */
export function reviewWhere(filter: Omit<ReviewFilter, 'limit' | 'offset'>, sql: Pick<FilterDialect, 'param' | 'oneOf' | 'always'>): string {
  const clauses: string[] = [];
  if (filter.open === true) clauses.push('resolved_at IS NULL');
  if (filter.open === false) clauses.push('resolved_at IS NOT NULL');
  if (filter.project === null) clauses.push('project IS NULL');
  else if (filter.project !== undefined) clauses.push(`(project = ${sql.param(filter.project)} OR project IS NULL)`);
  if (filter.kinds && filter.kinds.length > 0) clauses.push(sql.oneOf('kind', filter.kinds));
  return clauses.length > 0 ? clauses.join(' AND ') : sql.always;
}
