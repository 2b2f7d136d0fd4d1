import type { Hono } from 'hono';
import type { Cairn } from '../cairn.js';
import { CatalogCache } from './catalog.js';
import { CountCache } from './listing.js';
import { UndoLog } from './undo.js';

/** What the API routes share: the cairn they are a thin layer over, and its caches. */
export interface WebState {
  cairn: Cairn;
  counts: CountCache;
  catalog: CatalogCache;
  undo: UndoLog;
  /** After any change made through the browser: drop cached counts and aggregates. */
  changed(): void;
}

export function createWebState(cairn: Cairn): WebState {
  const counts = new CountCache();
  const catalog = new CatalogCache(cairn, () => Date.now());
  return {
    cairn,
    counts,
    catalog,
    undo: new UndoLog(cairn),
    changed() {
      counts.clear();
      catalog.invalidate();
    },
  };
}

/** A route module: adds its routes under /api. */
export type Routes = (api: Hono, state: WebState) => void;
