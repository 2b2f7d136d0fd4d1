/**
 * Building the vector index with an embedder: embed every memory still missing a vector, batch
 * by batch, each batch embedded OUTSIDE any transaction and written in its own short one
 * (`missingVectors` → `embed` → `putVectors`). When the index holds another model (id or
 * dimension), the new vectors are built beside it (switch.ts) and replace it in one transaction
 * once complete, so recall keeps searching the old index until then; a store that cannot stage
 * (none shipped) drops the old vectors first.
 *
 * Resumable by construction: only memories without a vector (or without a staged one) are
 * embedded, so a run that is killed continues where it stopped. It holds the fill lease
 * (fill-lease.ts) like the background fill: one filler at a time, and a killed one is taken over
 * at once.
 */
import { CairnError } from '../errors.js';
import type { Embedder, EmbedderIdentity, Store } from '../types.js';
import { embedMissing, signMissing, waitingForSignatures } from './batch-loop.js';
import { sameModel, switchModel, waitingToStage } from './switch.js';
import { acquireFillLease, defaultLeaseEnvironment, type LeaseEnvironment } from './fill-lease.js';

export interface ReindexOptions {
  /**
   * Memories per `embed` call (and per write transaction).
   * @default 256
   */
  batchSize?: number;
  /** Called after every batch with vectors written so far and the number to write in this run. */
  onProgress?(done: number, total: number): void;
  /** Stop after the current batch (the rest is picked up by the next run). */
  signal?: AbortSignal;
  /** Recorded in the fill lease. @default 'reindex' */
  by?: string;
  /** Injected for tests: clock, pid, host, liveness check of the fill lease. */
  lease?: LeaseEnvironment;
}

export interface ReindexSummary {
  /** The embedder the index is built with now. */
  model: string;
  dimension: number;
  /** What the index held before (null when it was empty). */
  previous: EmbedderIdentity | null;
  /** True when the vectors of another model (or dimension) were replaced: by the staged switch once complete, or dropped first. */
  cleared: boolean;
  /** True when this run built the new model's vectors beside the old index (a model switch). */
  staged: boolean;
  /** Memories embedded in this run. */
  embedded: number;
  /** Memories that disappeared between reading and writing their batch (skipped). */
  skipped: number;
  /** Memories that had a vector and got their token signature in this run (src/embed/token-signature.ts). */
  signed: number;
  batches: number;
  /** Vectors in the index at the end. */
  vectors: number;
  /** Memories still without a vector of this model (non-zero only when stopped through `signal`). */
  remaining: number;
  /** False when stopped through `signal` before the end. */
  complete: boolean;
  ms: number;
}

export const DEFAULT_REINDEX_BATCH = 256;

/**
 * Build (or finish building) the vector index of `store` with `embedder`.
 *
 * @example
 * const summary = await reindex(store, createHashEmbedder({ dimension: 256 }), { batchSize: 128 });
 */
export async function reindex(store: Store, embedder: Embedder, options: ReindexOptions = {}): Promise<ReindexSummary> {
  const started = performance.now();
  const batchSize = options.batchSize ?? DEFAULT_REINDEX_BATCH;
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new CairnError('INVALID_INPUT', `batch size must be a positive integer (got ${batchSize})`, { field: 'batch' });
  }
  if (!store.capabilities.vectors) {
    throw new CairnError('INVALID_INPUT', `the ${store.name} store has no vector support; recall runs on BM25 alone`, { field: 'store' });
  }
  const identity: EmbedderIdentity = { model: embedder.model, dimension: embedder.dimension };
  // One filler at a time: a background fill (or another reindex) holding the lease is named.
  const taken = await acquireFillLease(store, identity.model, options.by ?? 'reindex', options.lease ?? defaultLeaseEnvironment());
  if ('busy' in taken) {
    const { busy } = taken;
    throw new CairnError(
      'CONFLICT',
      `another process is filling the vector index (${busy.by}, pid ${busy.pid} on ${busy.host}, ${busy.done} vectors so far, ${busy.model}): ` +
        'wait for it (cairn status shows it) or stop it; a killed filler is taken over at once',
    );
  }
  let previous: EmbedderIdentity | null;
  let cleared = false;
  let staged = false;
  let signed = 0;
  let run: Awaited<ReturnType<typeof embedMissing>>;
  const loop = { batchSize, signal: options.signal, onProgress: options.onProgress };
  try {
    previous = await store.vectorModel();
    const staging = store.vectorStaging;
    if (previous && !sameModel(previous, identity) && staging) {
      staged = true;
      const switched = await switchModel(store, staging, embedder, taken.lease, { ...loop, total: await waitingToStage(store, identity) });
      cleared = switched.committed;
      run = { embedded: switched.embedded, skipped: switched.skipped, batches: switched.batches, complete: switched.committed };
      // The staged vectors carry no signatures: sign the new index now that it is the index.
      if (switched.committed) {
        const waiting = await waitingForSignatures(store, embedder);
        const signing = await signMissing(store, embedder, taken.lease, { ...loop, total: waiting });
        run = { ...run, complete: signing.complete };
        signed = signing.signed - signing.skipped;
      }
    } else {
      if (previous && !sameModel(previous, identity)) {
        // Claimed in the same transaction: a process still on the old embedder now fails with
        // EMBEDDER_MISMATCH instead of writing old vectors or re-claiming the empty index.
        await store.clearVectors(identity);
        cleared = true;
      } else if (staging && (await staging.staged()) !== null) {
        // A switch to a model that is no longer asked for.
        await staging.drop();
      }
      const before = await store.stats();
      const vectorsWaiting = Math.max(0, before.memories - (cleared ? 0 : before.vectors));
      const total = vectorsWaiting + (cleared ? 0 : await waitingForSignatures(store, embedder));
      run = await embedMissing(store, embedder, taken.lease, { ...loop, total });
      // Then the token signatures of memories embedded before them (src/embed/token-signature.ts).
      if (run.complete) {
        const signing = await signMissing(store, embedder, taken.lease, { ...loop, total, done: run.embedded - run.skipped });
        run = { ...run, complete: signing.complete };
        signed = signing.signed - signing.skipped;
      }
    }
  } finally {
    await taken.lease.release();
  }
  const { embedded, skipped, batches, complete } = run;
  const after = await store.stats();
  return {
    model: identity.model,
    dimension: identity.dimension,
    previous,
    cleared,
    staged,
    embedded: embedded - skipped,
    skipped,
    signed,
    batches,
    vectors: after.vectors,
    // A switch stopped part-way: what still lacks the new model's vector.
    remaining: staged && !cleared ? await waitingToStage(store, identity) : Math.max(0, after.memories - after.vectors),
    complete,
    ms: performance.now() - started,
  };
}
