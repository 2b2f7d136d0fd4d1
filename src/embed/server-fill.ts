/**
 * What a long-running server (`cairn serve`, the MCP server) adds for vectors, in one place: the
 * idle fill (once a request loaded the model — or, during a model switch, the old model recall
 * searches with — fill missing vectors or continue the switch while no request has come for a
 * moment) and, while a switch is under way, the index's own model for recall, loaded once per
 * process rather than once per request.
 */
import type { Embedder, EmbedderIdentity, Logger, Store } from '../types.js';
import { embedderLoaded, startIdleFill, type IdleFillOptions } from './idle-fill.js';

export interface ServerVectorsOptions {
  store: Store;
  embedder: Embedder;
  /** Builds an embedder for the index's model, or null (see `indexEmbedder` in config.ts). */
  loadIndexEmbedder(index: EmbedderIdentity): Promise<Embedder | null>;
  logger?: Logger;
  /** Recorded in the fill lease. @default 'serve' */
  by?: string;
  /** False: no idle fill (`CAIRN_IDLE_FILL=0`). @default true */
  fill?: boolean;
  /** Timing of the idle fill (tests). */
  timing?: Pick<IdleFillOptions, 'idleMs' | 'intervalMs' | 'sliceMs' | 'now' | 'onFill'>;
}

export interface ServerVectors {
  /** Call on every request. */
  onActivity(): void;
  /** For `CairnOptions.indexEmbedder`: memoized per model. */
  indexEmbedder(index: EmbedderIdentity): Promise<Embedder | null>;
  /** Stop the fill (waits for a running batch) and close the old models. */
  stop(): Promise<void>;
}

/**
 * @example
 * const vectors = serverVectors({ store, embedder, loadIndexEmbedder: (i) => indexEmbedder(i, make, store) });
 * const server = await startServe({ store, embedder, indexEmbedder: vectors.indexEmbedder, onActivity: vectors.onActivity, … });
 */
export function serverVectors(options: ServerVectorsOptions): ServerVectors {
  const now = options.timing?.now ?? Date.now;
  let lastActivity = now();
  const old = new Map<string, Promise<Embedder | null>>();
  // During a switch requests load the old model, never the new one: a loaded old model counts.
  const loadedOld: Embedder[] = [];
  const stopFill =
    options.fill === false
      ? null
      : startIdleFill({
          ...options.timing,
          store: options.store,
          embedder: options.embedder,
          lastActivity: () => lastActivity,
          by: options.by ?? 'serve',
          ready: () => loadedOld.some(embedderLoaded),
          ...(options.logger ? { logger: options.logger } : {}),
        });
  return {
    onActivity: () => {
      lastActivity = now();
    },
    indexEmbedder: (index) => {
      const key = `${index.model}#${index.dimension}`;
      let found = old.get(key);
      if (!found) {
        found = options.loadIndexEmbedder(index).then(
          (embedder) => (embedder && loadedOld.push(embedder), embedder),
          () => null,
        );
        old.set(key, found);
      }
      return found;
    },
    stop: async () => {
      await stopFill?.();
      for (const loading of old.values()) await (await loading)?.close?.();
    },
  };
}
