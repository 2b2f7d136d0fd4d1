/**
 * The memory list behind the browser's main view: filters, sorting and server-side paging that
 * stay fast at 100K memories. Filters the store understands become SQL (`LIMIT`/`OFFSET` on an
 * indexed order, counts cached briefly); the few it does not (superseded only, stale files, a
 * file path) scan forward in pages from a cursor with a per-request budget, so a request never
 * reads more than `SCAN_BUDGET` rows and the total is reported as unknown.
 */
import type { Cairn } from '../cairn.js';
import { stalenessOf, type Staleness } from '../recall/recall.js';
import { FileReader } from '../workspace/files.js';
import type { Kind, ListOptions, Memory, MemoryFilter, Scope, Source } from '../types.js';

export const SORTS = ['created-desc', 'created-asc', 'updated-desc', 'importance-desc', 'access-desc'] as const;
export type Sort = (typeof SORTS)[number];
export const STATUSES = ['active', 'forgotten', 'superseded', 'all'] as const;
export type Status = (typeof STATUSES)[number];

/** Rows a scanning request may read before it answers with what it has and a cursor. */
export const SCAN_BUDGET = 5000;
const SCAN_PAGE = 500;

export interface ListQuery {
  /** Absent: every project; `~`: user scope only; else exactly that project. */
  project?: string;
  kinds?: Kind[];
  scopes?: Scope[];
  sources?: Source[];
  /** Memories carrying any of these tags. */
  tags?: string[];
  status: Status;
  /** Only memories whose file references are stale (missing, changed, line moved). */
  stale?: boolean;
  /** Only memories referring to a file whose path contains this. */
  file?: string;
  pinned?: boolean;
  since?: number;
  until?: number;
  sort: Sort;
  limit: number;
  /** Where to continue: the `nextCursor` of the previous page (0 = start). */
  cursor: number;
}

export interface ListedMemory {
  memory: Memory;
  staleness: Staleness;
}

export interface ListPage {
  items: ListedMemory[];
  /** Matches in all; null when a scanning filter makes it unknown. */
  total: number | null;
  /** Cursor of the next page, or null at the end. */
  nextCursor: number | null;
  /** Rows read to answer (scanning filters only). */
  scanned?: number;
}

function storeFilter(query: ListQuery): MemoryFilter {
  const filter: MemoryFilter = {};
  if (query.project === '~') filter.project = null;
  else if (query.project !== undefined) {
    filter.project = query.project;
    filter.includeUserScope = false;
  }
  if (query.kinds?.length) filter.kinds = query.kinds;
  if (query.scopes?.length) filter.scopes = query.scopes;
  if (query.sources?.length) filter.sources = query.sources;
  if (query.tags?.length) filter.anyTags = query.tags;
  if (query.pinned !== undefined) filter.pinned = query.pinned;
  if (query.since !== undefined) filter.createdAfter = query.since;
  if (query.until !== undefined) filter.createdBefore = query.until;
  if (query.status === 'forgotten') {
    filter.onlyDeleted = true;
    filter.includeSuperseded = true;
  } else if (query.status === 'superseded' || query.status === 'all') {
    filter.includeSuperseded = true;
    filter.includeDeleted = true;
  }
  return filter;
}

/** Counts per filter, for a few seconds (other processes write too) or until a change here. */
export class CountCache {
  private readonly entries = new Map<string, { n: number; at: number }>();
  constructor(private readonly ttlMs = 10_000) {}

  async count(cairn: Cairn, filter: MemoryFilter): Promise<number> {
    const key = JSON.stringify(filter);
    const hit = this.entries.get(key);
    if (hit && Date.now() - hit.at < this.ttlMs) return hit.n;
    const n = await cairn.deps.store.countMemories(filter);
    if (this.entries.size > 200) this.entries.clear();
    this.entries.set(key, { n, at: Date.now() });
    return n;
  }

  clear(): void {
    this.entries.clear();
  }
}

export async function listMemories(cairn: Cairn, counts: CountCache, query: ListQuery): Promise<ListPage> {
  const deps = cairn.deps;
  const filter = storeFilter(query);
  const options: ListOptions = { ...filter, order: query.sort };
  // Many memories point at the same lines of the same files: check each distinct set once.
  const checked = new Map<string, Staleness>();
  const files = new FileReader();
  const withStaleness = (memory: Memory): ListedMemory => {
    if (memory.files.length === 0 || memory.validTo !== null || memory.deletedAt !== null) return { memory, staleness: stalenessOf(deps, memory, true, files) };
    const key = `${memory.project ?? ''}\n${JSON.stringify(memory.files)}`;
    let staleness = checked.get(key);
    if (!staleness) {
      staleness = stalenessOf(deps, memory, true, files);
      checked.set(key, staleness);
    }
    return { memory, staleness };
  };
  const needle = query.file?.toLowerCase();
  const predicate =
    query.status === 'superseded' || query.stale || needle
      ? (m: Memory, s: Staleness): boolean =>
          (query.status !== 'superseded' || m.validTo !== null) &&
          (!query.stale || s.files.some((f) => f.status !== 'ok' && f.status !== 'unknown')) &&
          (!needle || m.files.some((f) => f.path.toLowerCase().includes(needle)))
      : null;

  if (predicate === null) {
    const [memories, total] = await Promise.all([
      deps.store.listMemories({ ...options, limit: query.limit, offset: query.cursor }),
      counts.count(cairn, filter),
    ]);
    const next = query.cursor + memories.length;
    return { items: memories.map(withStaleness), total, nextCursor: memories.length === query.limit && next < total ? next : null };
  }

  const items: ListedMemory[] = [];
  let position = query.cursor;
  let scanned = 0;
  while (items.length < query.limit && scanned < SCAN_BUDGET) {
    const page = await deps.store.listMemories({ ...options, limit: SCAN_PAGE, offset: position });
    let consumed = 0;
    for (const memory of page) {
      consumed++;
      scanned++;
      // Only the file checks cost; skip them for rows the cheap tests already reject.
      if (needle && !memory.files.some((f) => f.path.toLowerCase().includes(needle))) continue;
      if (query.status === 'superseded' && memory.validTo === null) continue;
      const listed = withStaleness(memory);
      if (predicate(memory, listed.staleness)) items.push(listed);
      if (items.length >= query.limit) break;
    }
    position += consumed;
    if (page.length < SCAN_PAGE && consumed === page.length) {
      return { items, total: null, nextCursor: null, scanned };
    }
  }
  return { items, total: null, nextCursor: position, scanned };
}
