import type { Hono } from 'hono';
import type { Cairn, CairnStatus } from '../cairn.js';
import { CatalogCache } from './catalog.js';
import { CountCache } from './listing.js';
import { UndoLog } from './undo.js';

/** What the API routes share: the cairn they are a thin layer over, and its caches. */
export interface WebState {
  cairn: Cairn;
  counts: CountCache;
  catalog: CatalogCache;
  undo: UndoLog;
  /** The cairn home (bench results, hook log), or null when the app was built without one. */
  home: string | null;
  /** `cairn.status()` (its counts scan the table), cached for a few seconds. */
  status(): Promise<CairnStatus>;
  /** After any change made through the browser: drop cached counts and aggregates. */
  changed(): void;
}

const STATUS_TTL_MS = 15_000;

export function createWebState(cairn: Cairn, home: string | null = null): WebState {
  const counts = new CountCache();
  const catalog = new CatalogCache(cairn);
  let status: { value: Promise<CairnStatus>; at: number } | null = null;
  return {
    cairn,
    counts,
    catalog,
    undo: new UndoLog(cairn),
    home,
    status() {
      if (!status || Date.now() - status.at > STATUS_TTL_MS) {
        const value = cairn.status();
        status = { value, at: Date.now() };
        value.catch(() => (status = null));
      }
      return status.value;
    },
    changed() {
      counts.clear();
      catalog.invalidate();
      status = null;
    },
  };
}

/** A route module: adds its routes under /api. */
export type Routes = (api: Hono, state: WebState) => void;
