/**
 * Aggregates the store's interface cannot answer with one query — top tags, projects, sources,
 * which memories came from which session. Built once by a paged scan of every memory that runs
 * in the background (pages by creation time, yielding between pages so requests keep being
 * answered), then kept current from the event log: each refresh reads only the memories that
 * events touched since the last one. Until the first scan is done, `get()` answers null and
 * callers fall back to something cheaper.
 */
import type { Cairn } from '../cairn.js';
import type { Memory } from '../types.js';

export interface Catalog {
  builtAt: number;
  /** Every memory ever written (active, superseded, forgotten). */
  total: number;
  /** Active memories per tag, most used first (top 50). */
  tags: Array<{ tag: string; count: number }>;
  /** Active memories per named project, most first. */
  projects: Array<{ project: string; count: number }>;
  /** Active user-scope memories without a project: recalled in every project. */
  userWide: number;
  /** Active project- or session-scope memories whose project is unknown (a transcript without a cwd). */
  noProject: number;
  /** Memories written over time per project (every version, like `growth`), for the biggest projects. */
  projectGrowth: ProjectGrowth;
  /** Active memories per source. */
  sources: Record<string, number>;
  /** Memory ids by the session they were written in or distilled from. */
  bySession: ReadonlyMap<string, string[]>;
  /** How long the full scan took, ms. */
  scanMs: number;
}

/** Memories written per time bucket, one series per project (the rest summed as `other`). */
export interface ProjectGrowth {
  unit: 'day' | 'week' | 'month';
  /** Bucket starts, epoch ms (UTC). */
  starts: number[];
  /**
   * One series per group, labelled by what it is: a named `project`, the `user-wide` memories
   * (user scope, recalled in every project), the memories with `no-project` (their session's
   * folder was unknown), or `other` (every smaller project summed). `project` is null unless
   * `group` is `project`.
   */
  series: Array<{ group: GrowthGroup; project: string | null; total: number; counts: number[] }>;
}

/** What a series of {@link ProjectGrowth} counts. */
export type GrowthGroup = 'project' | 'user-wide' | 'no-project' | 'other';

export interface CatalogProgress {
  ready: boolean;
  scanned: number;
}

/** What one memory adds to the aggregates. */
interface Entry {
  active: boolean;
  tags: string[];
  project: string | null;
  scope: string;
  createdAt: number;
  source: string;
  sessions: string[];
}

/** Rows per page of the scan: small enough that requests wait at most a few ms behind it. */
const PAGE = 500;
/** Events read per refresh; more changes than this since the last refresh means a rescan. */
const EVENT_WINDOW = 5000;
/** A full rescan this often anyway (catches anything the event log does not show). */
const RESCAN_MS = 10 * 60_000;
/** Refresh from the event log at most this often. */
const REFRESH_MS = 2000;

function entryOf(m: Memory): Entry {
  const sessions = new Set<string>();
  if (m.session) sessions.add(m.session);
  if (m.provenance?.sessionId) sessions.add(m.provenance.sessionId);
  for (const also of m.provenance?.also ?? []) if (also.sessionId) sessions.add(also.sessionId);
  return { active: m.validTo === null && m.deletedAt === null, tags: m.tags, project: m.project, scope: m.scope, createdAt: m.createdAt, source: m.source, sessions: [...sessions] };
}

/** Pause between pages as long as the page took, so the scan takes at most half the event loop. */
const yieldToRequests = (busyMs: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.min(50, Math.max(2, busyMs))));

/** The catalog of one cairn, built in the background and refreshed from the event log. */
export class CatalogCache {
  private entries = new Map<string, Entry>();
  private scanned = 0;
  private ready = false;
  private building: Promise<void> | null = null;
  private builtAt = 0;
  private scanMs = 0;
  private eventMark = 0;
  private refreshedAt = 0;
  private refreshing: Promise<void> | null = null;
  private snapshot: Catalog | null = null;

  constructor(
    private readonly cairn: Cairn,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** Start the full scan (once); resolves when it is done. */
  build(): Promise<void> {
    this.building ??= this.scan().finally(() => {
      this.building = null;
    });
    return this.building;
  }

  progress(): CatalogProgress {
    return { ready: this.ready, scanned: this.scanned };
  }

  /** Something changed here: refresh on the next read. */
  invalidate(): void {
    this.refreshedAt = 0;
  }

  /** The catalog, or null while the first scan runs (it is started if it was not). */
  async get(): Promise<Catalog | null> {
    if (!this.ready) {
      void this.build().catch((error: unknown) => this.cairn.deps.logger.error('ui: catalog scan failed', { error: String(error) }));
      return null;
    }
    if (this.now() - this.builtAt > RESCAN_MS && !this.building) void this.build().catch(() => {});
    if (this.now() - this.refreshedAt > REFRESH_MS) {
      this.refreshing ??= this.refresh().finally(() => {
        this.refreshing = null;
      });
      await this.refreshing;
    }
    this.snapshot ??= this.summarize();
    return this.snapshot;
  }

  /** The catalog if the first scan is done, else null — without starting it. */
  async peek(): Promise<Catalog | null> {
    return this.ready ? this.get() : null;
  }

  /** The catalog, waiting up to `ms` for the first scan to finish (null if it has not). */
  async within(ms: number): Promise<Catalog | null> {
    if (!this.ready) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
      await Promise.race([this.build().catch(() => {}), timeout]);
      clearTimeout(timer);
    }
    return this.get();
  }

  private async scan(): Promise<void> {
    const started = this.now();
    const store = this.cairn.deps.store;
    const [latest] = await store.listEvents({ limit: 1 });
    const mark = latest?.id ?? 0;
    const entries = new Map<string, Entry>();
    // Keyset paging by creation time: OFFSET would re-read every earlier row on every page.
    let after: number | undefined;
    let tiesSeen = 0;
    for (;;) {
      const pageStarted = performance.now();
      const page = await store.listMemories({
        includeSuperseded: true,
        includeDeleted: true,
        order: 'created-asc',
        limit: PAGE,
        offset: tiesSeen,
        ...(after !== undefined ? { createdAfter: after } : {}),
      });
      for (const m of page) entries.set(m.id, entryOf(m));
      this.scanned = entries.size;
      if (page.length < PAGE) break;
      const last = (page[page.length - 1] as Memory).createdAt;
      const ties = page.filter((m) => m.createdAt === last).length;
      tiesSeen = last === after ? tiesSeen + ties : ties;
      after = last;
      await yieldToRequests(performance.now() - pageStarted);
    }
    this.entries = entries;
    this.eventMark = mark;
    this.builtAt = this.now();
    this.refreshedAt = 0;
    this.scanMs = this.now() - started;
    this.snapshot = null;
    this.ready = true;
  }

  /** Apply what the event log says changed since the last scan or refresh. */
  private async refresh(): Promise<void> {
    const store = this.cairn.deps.store;
    const events = (await store.listEvents({ limit: EVENT_WINDOW })).filter((e) => (e.id ?? 0) > this.eventMark);
    this.refreshedAt = this.now();
    if (events.length === 0) return;
    if (events.length >= EVENT_WINDOW) {
      await this.build();
      return;
    }
    const ids = new Set<string>();
    for (const e of events) {
      if (e.type === 'access') continue;
      ids.add(e.memoryId);
      if (typeof e.data.by === 'string') ids.add(e.data.by);
    }
    for (const m of await store.getMemories([...ids])) this.entries.set(m.id, entryOf(m));
    this.eventMark = Math.max(this.eventMark, ...events.map((e) => e.id ?? 0));
    this.snapshot = null;
  }

  private summarize(): Catalog {
    const tags = new Map<string, number>();
    const projects = new Map<string, number>();
    let userWide = 0;
    let noProject = 0;
    const sources: Record<string, number> = {};
    const bySession = new Map<string, string[]>();
    for (const [id, e] of this.entries) {
      for (const s of e.sessions) {
        const list = bySession.get(s);
        if (list) list.push(id);
        else bySession.set(s, [id]);
      }
      if (!e.active) continue;
      for (const tag of e.tags) tags.set(tag, (tags.get(tag) ?? 0) + 1);
      if (e.project !== null) projects.set(e.project, (projects.get(e.project) ?? 0) + 1);
      else if (e.scope === 'user') userWide++;
      else noProject++;
      sources[e.source] = (sources[e.source] ?? 0) + 1;
    }
    return {
      builtAt: this.builtAt,
      total: this.entries.size,
      tags: [...tags.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 50).map(([tag, count]) => ({ tag, count })),
      projects: [...projects.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([project, count]) => ({ project, count })),
      userWide,
      noProject,
      projectGrowth: projectGrowth(this.entries.values()),
      sources,
      bySession,
      scanMs: this.scanMs,
    };
  }
}

const DAY = 86_400_000;
/** Series drawn one by one; smaller projects are summed into one `other` series. */
const GROWTH_SERIES = 6;

/** Bucket starts from `first` to `last`: days, weeks or months, whichever keeps it under ~120. */
export function bucketStarts(first: number, last: number): { unit: ProjectGrowth['unit']; starts: number[] } {
  const spanDays = (last - first) / DAY;
  const unit = spanDays <= 120 ? 'day' : spanDays <= 800 ? 'week' : 'month';
  const month = (ms: number): number => Date.UTC(new Date(ms).getUTCFullYear(), new Date(ms).getUTCMonth(), 1);
  const starts: number[] = [];
  for (let at = unit === 'month' ? month(first) : Math.floor(first / DAY) * DAY; at <= last; ) {
    starts.push(at);
    at = unit === 'month' ? Date.UTC(new Date(at).getUTCFullYear(), new Date(at).getUTCMonth() + 1, 1) : at + (unit === 'week' ? 7 : 1) * DAY;
  }
  return { unit, starts };
}

/** The series a memory counts in: its project, or user-wide, or no project. */
function groupKey(e: Entry): string {
  return e.project !== null ? `p:${e.project}` : e.scope === 'user' ? 'user-wide' : 'no-project';
}

/** Memories written per bucket for each of the biggest groups (every version, forgotten ones too). */
function projectGrowth(entries: Iterable<Entry>): ProjectGrowth {
  const all = [...entries];
  if (all.length === 0) return { unit: 'day', starts: [], series: [] };
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  const totals = new Map<string, number>();
  for (const e of all) {
    first = Math.min(first, e.createdAt);
    last = Math.max(last, e.createdAt);
    const key = groupKey(e);
    totals.set(key, (totals.get(key) ?? 0) + 1);
  }
  const { unit, starts } = bucketStarts(first, last);
  const ranked = [...totals.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const shown = ranked.slice(0, ranked.length > GROWTH_SERIES ? GROWTH_SERIES - 1 : GROWTH_SERIES).map(([key]) => key);
  const counts = new Map<string, number[]>(shown.map((key) => [key, starts.map(() => 0)]));
  const other = starts.map(() => 0);
  for (const e of all) {
    // The last bucket whose start is at or before the memory (binary search).
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] as number) <= e.createdAt) lo = mid;
      else hi = mid - 1;
    }
    const row = counts.get(groupKey(e)) ?? other;
    row[lo] = (row[lo] as number) + 1;
  }
  const series: ProjectGrowth['series'] = shown.map((key) => ({
    group: key.startsWith('p:') ? 'project' : (key as GrowthGroup),
    project: key.startsWith('p:') ? key.slice(2) : null,
    total: totals.get(key) ?? 0,
    counts: counts.get(key) as number[],
  }));
  const otherTotal = other.reduce((a, b) => a + b, 0);
  if (otherTotal > 0) series.push({ group: 'other', project: null, total: otherTotal, counts: other });
  return { unit, starts, series };
}
