/**
 * The background vector fill: memories written without a vector (by hooks, by short-lived CLI
 * commands, while the model was unavailable) get one later, without a daemon. The detached
 * `cairn ingest` that the Stop hook starts ends with a bounded fill, `cairn remember` starts a
 * detached `cairn reindex --fill`, the MCP server fills while idle once its model is loaded
 * (idle-fill.ts), and `cairn reindex` fills everything at once.
 *
 * Guarantees: one filler at a time (a lease in the store, see fill-lease.ts); resumable after
 * `kill -9` (only memories still without a vector are embedded, batch by batch, each batch written
 * in its own short transaction); never mixes models: when the index holds another model (id or
 * dimension), the fill builds the configured model's vectors beside it and swaps them in at once
 * when complete (switch.ts), recall searching the old index meanwhile.
 */
import { isCairnError } from '../errors.js';
import type { Embedder, EmbedderIdentity, Store } from '../types.js';
import { embedMissing, signMissing, waitingForSignatures } from './batch-loop.js';
import { acquireFillLease, defaultLeaseEnvironment, type FillLease, type LeaseEnvironment } from './fill-lease.js';
import { sameModel, switchModel, waitingToStage } from './switch.js';

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
 * model and this store cannot build one beside it: run `cairn reindex`), `unavailable` (the model
 * files are missing or damaged). A model switch that completed in this run ends `done`.
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
  /** Set when this run worked on a model switch: the model the index held, and whether the switch completed. */
  switching?: { from: EmbedderIdentity; committed: boolean };
}

export { DEFAULT_FILL_BATCH, embedMissing, indexTarget, type VectorTarget } from './batch-loop.js';

/**
 * Memories still waiting for `model`'s vector: without one in the index, or, while the index
 * holds another model, without one among the vectors staged for the switch.
 */
export async function waitingForVectors(store: Store, model: EmbedderIdentity | null): Promise<number> {
  const index = await store.vectorModel();
  if (index && model && !sameModel(index, model)) return waitingToStage(store, model);
  const stats = await store.stats();
  return Math.max(0, stats.memories - stats.vectors);
}

/**
 * Embed the memories that have no vector yet, under the fill lease. When the index holds another
 * model, build this one's vectors beside it instead and switch when they are complete.
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
  const staging = store.vectorStaging;
  const before = await store.vectorModel();
  if (before && !sameModel(before, identity) && !staging) {
    return result('mismatch', { remaining: await waitingForVectors(store, identity), index: before });
  }
  const total = await waitingForVectors(store, identity);
  if (total === 0 && (await waitingForSignatures(store, embedder)) === 0) return result('done', { remaining: 0 });
  const taken = await acquireFillLease(store, identity.model, options.by ?? 'cairn', options.lease ?? defaultLeaseEnvironment());
  if ('busy' in taken) return result('busy', { remaining: total, holder: taken.busy });
  // Read again under the lease: another filler may have switched the index meanwhile.
  const index = await store.vectorModel();
  try {
    if (index && !sameModel(index, identity)) {
      if (!staging) return result('mismatch', { remaining: await waitingForVectors(store, identity), index });
      const run = await switchModel(store, staging, embedder, taken.lease, { ...options, total: await waitingToStage(store, identity) });
      const remaining = await waitingForVectors(store, identity);
      return result(run.committed ? 'done' : 'stopped', { embedded: run.embedded - run.skipped, skipped: run.skipped, remaining, switching: { from: index, committed: run.committed } });
    }
    // A switch to another model stays: a process still on the index's model (an MCP server started
    // before the configuration changed) must not undo it; an explicit `cairn reindex` drops it.
    const vectorsWaiting = await waitingForVectors(store, identity);
    const signaturesWaiting = await waitingForSignatures(store, embedder);
    const loopTotal = vectorsWaiting + signaturesWaiting;
    const run = await embedMissing(store, embedder, taken.lease, { ...options, total: loopTotal });
    let complete = run.complete;
    // Then the token signatures of memories embedded before them (src/embed/token-signature.ts).
    if (complete) {
      const elapsed = performance.now() - started;
      const maxMs = options.maxMs === undefined ? undefined : Math.max(0, options.maxMs - elapsed);
      const signing = await signMissing(store, embedder, taken.lease, { ...options, maxMs, total: loopTotal, done: run.embedded - run.skipped });
      complete = signing.complete;
    }
    const remaining = await waitingForVectors(store, identity);
    return result(complete ? 'done' : 'stopped', { embedded: run.embedded - run.skipped, skipped: run.skipped, remaining });
  } catch (error) {
    if (isCairnError(error) && error.code === 'EMBEDDER_UNAVAILABLE') {
      return result('unavailable', { remaining: await waitingForVectors(store, identity), reason: error.message });
    }
    // Another process switched the index (or the staged model) meanwhile: never write across it.
    if (isCairnError(error) && error.code === 'EMBEDDER_MISMATCH') {
      const now = await store.vectorModel();
      return result('mismatch', { remaining: await waitingForVectors(store, identity), ...(now ? { index: now } : {}) });
    }
    throw error;
  } finally {
    await taken.lease.release();
  }
}
