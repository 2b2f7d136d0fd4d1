/**
 * Aggregates the store's interface cannot answer with one query — growth per day, top tags,
 * projects, which memories came from which session — built by one paged scan of every memory
 * and kept until something changes (or `ttlMs` passes, since other processes write too).
 * One scan runs at a time; callers during a rescan share it.
 */
import type { Cairn } from '../cairn.js';

export interface Catalog {
  builtAt: number;
  /** Every memory ever written (active, superseded, forgotten). */
  total: number;
  /** Memories created per UTC day (`YYYY-MM-DD`), oldest first, split by what they are now. */
  growth: Array<{ day: string; created: number; active: number }>;
  /** Active memories per tag, most used first (top 50). */
  tags: Array<{ tag: string; count: number }>;
  /** Active memories per project (`null` = user scope), most first. */
  projects: Array<{ project: string | null; count: number }>;
  /** Active memories per source. */
  sources: Record<string, number>;
  /** Memory ids by the session they were written in or distilled from. */
  bySession: Map<string, string[]>;
  /** How long the scan took, ms. */
  scanMs: number;
}

const PAGE = 2000;

function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export async function scanCatalog(cairn: Cairn, now: () => number): Promise<Catalog> {
  const started = now();
  const store = cairn.deps.store;
  const perDay = new Map<string, { created: number; active: number }>();
  const tags = new Map<string, number>();
  const projects = new Map<string | null, number>();
  const sources: Record<string, number> = {};
  const bySession = new Map<string, string[]>();
  let total = 0;
  for (let offset = 0; ; offset += PAGE) {
    const page = await store.listMemories({ includeSuperseded: true, includeDeleted: true, order: 'created-asc', limit: PAGE, offset });
    for (const m of page) {
      total++;
      const active = m.validTo === null && m.deletedAt === null;
      const day = dayOf(m.createdAt);
      const bucket = perDay.get(day) ?? { created: 0, active: 0 };
      bucket.created++;
      if (active) bucket.active++;
      perDay.set(day, bucket);
      const sessions = new Set<string>();
      if (m.session) sessions.add(m.session);
      if (m.provenance?.sessionId) sessions.add(m.provenance.sessionId);
      for (const also of m.provenance?.also ?? []) if (also.sessionId) sessions.add(also.sessionId);
      for (const s of sessions) {
        const ids = bySession.get(s);
        if (ids) ids.push(m.id);
        else bySession.set(s, [m.id]);
      }
      if (!active) continue;
      for (const tag of m.tags) tags.set(tag, (tags.get(tag) ?? 0) + 1);
      projects.set(m.project, (projects.get(m.project) ?? 0) + 1);
      sources[m.source] = (sources[m.source] ?? 0) + 1;
    }
    if (page.length < PAGE) break;
  }
  return {
    builtAt: now(),
    total,
    growth: [...perDay.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([day, v]) => ({ day, ...v })),
    tags: [...tags.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 50).map(([tag, count]) => ({ tag, count })),
    projects: [...projects.entries()].sort((a, b) => b[1] - a[1]).map(([project, count]) => ({ project, count })),
    sources,
    bySession,
    scanMs: now() - started,
  };
}

/** The catalog, rebuilt on demand when stale. */
export class CatalogCache {
  private current: Catalog | null = null;
  private pending: Promise<Catalog> | null = null;
  private dirty = true;

  constructor(
    private readonly cairn: Cairn,
    private readonly now: () => number,
    private readonly ttlMs = 60_000,
  ) {}

  /** Something changed: the next read rescans. */
  invalidate(): void {
    this.dirty = true;
  }

  async get(): Promise<Catalog> {
    const fresh = this.current && !this.dirty && this.now() - this.current.builtAt < this.ttlMs;
    if (fresh && this.current) return this.current;
    if (!this.pending) {
      this.dirty = false;
      this.pending = scanCatalog(this.cairn, this.now).then(
        (catalog) => {
          this.current = catalog;
          this.pending = null;
          return catalog;
        },
        (error: unknown) => {
          this.pending = null;
          this.dirty = true;
          throw error;
        },
      );
    }
    return this.pending;
  }
}
