/**
 * The long-running servers' share of the background fill (the MCP server, `cairn serve`): once
 * their model is loaded (by a recall or a
 * remember that needed it — never just to fill), it embeds memories still without a vector while
 * no request has come for a moment, a few at a time, and stops at the next request. The fill lease
 * keeps it from working beside another filler (a detached ingest, `cairn reindex`).
 */
import type { Embedder, Logger, Store } from '../types.js';
import { fillVectors, type FillSummary } from './fill.js';

export interface IdleFillOptions {
  store: Store;
  embedder: Embedder;
  /** When the last request came (ms, same clock as `now`). */
  lastActivity(): number;
  /**
   * Quiet time before a fill starts.
   * @default 3000
   */
  idleMs?: number;
  /**
   * How often to look.
   * @default 5000
   */
  intervalMs?: number;
  /**
   * Work per fill before looking again (a request also stops it after the current batch of 8).
   * @default 2000
   */
  sliceMs?: number;
  now?: () => number;
  logger?: Logger;
  /**
   * Also start when this says so although `embedder` is not loaded (`cairn serve` during a model
   * switch: its requests load the old model, never the new one, which the fill then loads).
   */
  ready?(): boolean;
  /** Who fills, recorded in the fill lease (`cairn status` shows it). @default 'mcp' */
  by?: string;
  /** After each fill that ran (tests, logging). */
  onFill?(summary: FillSummary): void;
}

/** True once an embedder that loads lazily has its model in memory (`loaded`, passed through the cache). */
export function embedderLoaded(embedder: Embedder): boolean {
  return (embedder as { loaded?: boolean }).loaded === true;
}

/**
 * Start looking for idle time; returns `stop`, which waits for a running fill to end.
 *
 * @example
 * const stop = startIdleFill({ store, embedder, lastActivity: () => last });
 * // … on shutdown:
 * await stop();
 */
export function startIdleFill(options: IdleFillOptions): () => Promise<void> {
  const now = options.now ?? Date.now;
  const idleMs = options.idleMs ?? 3000;
  const sliceMs = options.sliceMs ?? 2000;
  let running: Promise<void> | null = null;
  let stopped = false;
  // Nothing waits (or another model holds the index): look again only after new writes.
  let settledAt: number | null = null;

  const tick = (): void => {
    if (stopped || running || !(embedderLoaded(options.embedder) || options.ready?.() === true)) return;
    const started = now();
    if (started - options.lastActivity() < idleMs) return;
    if (settledAt !== null && options.lastActivity() <= settledAt) return;
    running = (async () => {
      try {
        const summary = await fillVectors(options.store, options.embedder, {
          batchSize: 8,
          maxMs: sliceMs,
          by: options.by ?? 'mcp',
          shouldYield: () => stopped || options.lastActivity() > started,
        });
        options.onFill?.(summary);
        if (summary.outcome === 'done' || summary.outcome === 'mismatch' || summary.outcome === 'unavailable') settledAt = now();
        if (summary.embedded > 0) options.logger?.debug('idle fill', { embedded: summary.embedded, remaining: summary.remaining });
      } catch (error) {
        options.logger?.warn(`idle vector fill failed: ${(error as Error).message}`);
        settledAt = now();
      } finally {
        running = null;
      }
    })();
  };
  const timer = setInterval(tick, options.intervalMs ?? 5000);
  timer.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}
