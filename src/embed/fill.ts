/**
 * The background vector fill: memories written without a vector (by hooks, by short-lived CLI
 * commands, while the model was unavailable) get one later, without a daemon. The detached
 * `cairn ingest` that the Stop hook starts ends with a bounded fill, `cairn remember` starts a
 * detached `cairn reindex --fill`, the MCP server fills while idle once its model is loaded
 * (idle-fill.ts), and `cairn reindex` fills everything at once.
 *
 * Guarantees: one filler at a time (a lease in the store, see fill-lease.ts); resumable after
 * `kill -9` (only memories still without a vector are embedded, batch by batch, each batch written
 * in its own short transaction); never mixes models (when the index holds another model's vectors
 * the fill does nothing — switching models is `cairn reindex`'s explicit job).
 */
import { CairnError, isCairnError } from '../errors.js';
import type { Embedder, EmbedderIdentity, Store } from '../types.js';
import { acquireFillLease, defaultLeaseEnvironment, type FillLease, type HeldLease, type LeaseEnvironment } from './fill-lease.js';

export interface FillOptions {
  /**
   * Memories per `embed` call and per write transaction: small, so the lease is renewed often and
   * a waiting request (MCP) is served after at most one batch.
   * @default 32
   */
  batchSize?: number;
  /** Stop starting new batches after this many milliseconds (a bounded fill); absent: until done. */
  maxMs?: number;
  /** Stop after the current batch. */
  signal?: AbortSignal;
  /** Asked between batches: true stops the fill there (the MCP server has a request waiting). */
  shouldYield?(): boolean;
  /** After every batch: vectors written in this run and the number that were waiting at the start. */
  onProgress?(done: number, total: number): void;
  /** Who fills, recorded in the lease (`ingest`, `mcp`, `cli` …). @default 'cairn' */
  by?: string;
  /** Injected for tests: clock, pid, host, liveness check, TTL. */
  lease?: LeaseEnvironment;
}

/**
 * How a fill ended: `done` (nothing waits any more), `stopped` (time budget, signal, yield, or the
 * lease was lost), `busy` (another process holds the lease), `mismatch` (the index holds another
 * model: run `cairn reindex`), `unavailable` (the model files are missing or damaged).
 */
export type FillOutcome = 'done' | 'stopped' | 'busy' | 'mismatch' | 'unavailable';

export interface FillSummary {
  outcome: FillOutcome;
  model: string;
  /** Vectors written in this run. */
  embedded: number;
  /** Memories that vanished between read and write (skipped). */
  skipped: number;
  /** Memories still without a vector at the end. */
  remaining: number;
  ms: number;
  /** `busy`: who holds the lease. */
  holder?: FillLease;
  /** `mismatch`: what the index holds. */
  index?: EmbedderIdentity;
  /** `unavailable`: why. */
  reason?: string;
}

export const DEFAULT_FILL_BATCH = 32;

/** Memories without a vector (every memory when the index holds another model). */
export async function waitingForVectors(store: Store, model: EmbedderIdentity | null): Promise<number> {
  const stats = await store.stats();
  const index = await store.vectorModel();
  if (index && model && (index.model !== model.model || index.dimension !== model.dimension)) return stats.memories;
  return Math.max(0, stats.memories - stats.vectors);
}

/** One batch loop under a held lease; shared by {@link fillVectors} and `reindex`. */
export async function embedMissing(
  store: Store,
  embedder: Embedder,
  lease: HeldLease,
  options: Pick<FillOptions, 'batchSize' | 'maxMs' | 'signal' | 'shouldYield' | 'onProgress'> & { total: number; now?: () => number },
): Promise<{ embedded: number; skipped: number; batches: number; complete: boolean }> {
  const identity: EmbedderIdentity = { model: embedder.model, dimension: embedder.dimension };
  const batchSize = options.batchSize ?? DEFAULT_FILL_BATCH;
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new CairnError('INVALID_INPUT', `batch size must be a positive integer (got ${batchSize})`, { field: 'batch' });
  }
  const now = options.now ?? (() => performance.now());
  const started = now();
  let embedded = 0;
  let skipped = 0;
  let batches = 0;
  options.onProgress?.(0, options.total);
  for (;;) {
    if (options.signal?.aborted || options.shouldYield?.() || (options.maxMs !== undefined && now() - started >= options.maxMs)) {
      return { embedded, skipped, batches, complete: false };
    }
    const batch = await store.missingVectors(identity, batchSize);
    if (batch.length === 0) return { embedded, skipped, batches, complete: true };
    const vectors = await embedder.embed(batch.map((memory) => memory.text));
    if (vectors.length !== batch.length) {
      throw new CairnError('EMBEDDER_MISMATCH', `${embedder.model} returned ${vectors.length} vectors for ${batch.length} texts`);
    }
    const items = batch.map((memory, i) => ({ id: memory.id, vector: vectors[i] as Float32Array }));
    try {
      await store.putVectors(identity, items);
    } catch (error) {
      if (!(error instanceof CairnError && error.code === 'NOT_FOUND')) throw error;
      // A memory vanished between the read and the write: write the others one by one.
      for (const item of items) {
        try {
          await store.putVectors(identity, [item]);
        } catch (inner) {
          if (inner instanceof CairnError && inner.code === 'NOT_FOUND') skipped++;
          else throw inner;
        }
      }
    }
    embedded += items.length;
    batches++;
    options.onProgress?.(embedded - skipped, Math.max(options.total, embedded - skipped));
    // Taken over after a stall longer than the TTL: the other filler continues; stop here.
    if (!(await lease.renew(embedded - skipped))) return { embedded, skipped, batches, complete: false };
  }
}

/**
 * Embed the memories that have no vector yet, under the fill lease, never switching models.
 *
 * @example
 * // the end of a detached ingest: at most a minute of work, then the next run continues
 * const summary = await fillVectors(store, embedder, { maxMs: 60_000, by: 'ingest' });
 */
export async function fillVectors(store: Store, embedder: Embedder, options: FillOptions = {}): Promise<FillSummary> {
  const started = performance.now();
  const identity: EmbedderIdentity = { model: embedder.model, dimension: embedder.dimension };
  const result = (outcome: FillOutcome, extra: Partial<FillSummary> & { remaining: number }): FillSummary => ({
    outcome,
    model: identity.model,
    embedded: 0,
    skipped: 0,
    ms: performance.now() - started,
    ...extra,
  });
  if (!store.capabilities.vectors) return result('unavailable', { remaining: 0, reason: `the ${store.name} store has no vector support` });
  const index = await store.vectorModel();
  if (index && (index.model !== identity.model || index.dimension !== identity.dimension)) {
    return result('mismatch', { remaining: await waitingForVectors(store, identity), index });
  }
  const total = await waitingForVectors(store, identity);
  if (total === 0) return result('done', { remaining: 0 });
  const taken = await acquireFillLease(store, identity.model, options.by ?? 'cairn', options.lease ?? defaultLeaseEnvironment());
  if ('busy' in taken) return result('busy', { remaining: total, holder: taken.busy });
  try {
    const run = await embedMissing(store, embedder, taken.lease, { ...options, total });
    const remaining = await waitingForVectors(store, identity);
    return result(run.complete ? 'done' : 'stopped', { embedded: run.embedded - run.skipped, skipped: run.skipped, remaining });
  } catch (error) {
    if (isCairnError(error) && error.code === 'EMBEDDER_UNAVAILABLE') {
      return result('unavailable', { remaining: await waitingForVectors(store, identity), reason: error.message });
    }
    // Another process switched the index to another model meanwhile: never write across it.
    if (isCairnError(error) && error.code === 'EMBEDDER_MISMATCH') {
      const now = await store.vectorModel();
      return result('mismatch', { remaining: await waitingForVectors(store, identity), ...(now ? { index: now } : {}) });
    }
    throw error;
  } finally {
    await taken.lease.release();
  }
}
