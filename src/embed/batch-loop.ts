/**
 * The batch loop every vector writer shares (the background fill, `cairn reindex`, the model
 * switch): read memories without a vector, embed them outside any transaction, write them in one
 * short transaction, renew the fill lease; stop on a time budget, a signal, a yield or a lost lease.
 */
import { CairnError } from '../errors.js';
import type { Embedder, EmbedderIdentity, Memory, Store } from '../types.js';
import type { HeldLease } from './fill-lease.js';
import { embeddingText } from './embedding-text.js';

/** Memories per `embed` call and per write transaction of a fill. */
export const DEFAULT_FILL_BATCH = 32;

/** What stops a loop between batches. */
export interface BatchLoopOptions {
  /** Memories per `embed` call and write transaction. @default 32 */
  batchSize?: number;
  /** Stop starting new batches after this many milliseconds. */
  maxMs?: number;
  /** Stop after the current batch. */
  signal?: AbortSignal;
  /** Asked between batches: true stops the loop there. */
  shouldYield?(): boolean;
  /** After every batch: vectors written so far and the number to write. */
  onProgress?(done: number, total: number): void;
}

/** Where a batch loop reads the memories without a vector and writes their vectors. */
export interface VectorTarget {
  missing(model: EmbedderIdentity, limit: number): Promise<Memory[]>;
  put(model: EmbedderIdentity, items: Array<{ id: string; vector: Float32Array; signature?: Uint8Array }>): Promise<void>;
  /** Whether `put` keeps token signatures (the store's own index does; a staged switch fills them after). */
  signatures?: boolean;
}

/** The store's own index as a {@link VectorTarget}. */
export function indexTarget(store: Store): VectorTarget {
  return {
    missing: (model, limit) => store.missingVectors(model, limit),
    put: (model, items) => store.putVectors(model, items),
    signatures: store.putSignatures !== undefined,
  };
}

/**
 * Write `items` in one call; when a memory vanished between the read and the write (NOT_FOUND),
 * write them one by one instead, leaving out the vanished. Returns how many were left out.
 */
async function putSkippingVanished<T>(items: T[], put: (some: T[]) => Promise<void>): Promise<number> {
  try {
    await put(items);
    return 0;
  } catch (error) {
    if (!(error instanceof CairnError && error.code === 'NOT_FOUND')) throw error;
  }
  let vanished = 0;
  for (const item of items) {
    try {
      await put([item]);
    } catch (error) {
      if (error instanceof CairnError && error.code === 'NOT_FOUND') vanished++;
      else throw error;
    }
  }
  return vanished;
}

/**
 * Each memory's vector, and its token signature from the same model run when the embedder gives
 * signatures and `signed` asks for them (src/embed/token-signature.ts).
 */
export async function embedMemories(embedder: Embedder, batch: readonly Memory[], signed: boolean): Promise<Array<{ vector: Float32Array; signature?: Uint8Array }>> {
  if (signed && embedder.embedSigned) {
    return embedder.embedSigned(batch.map(embeddingText), batch.map((m) => m.text));
  }
  return (await embedder.embed(batch.map(embeddingText))).map((vector) => ({ vector }));
}

/** One batch loop under a held lease; shared by {@link fillVectors}, `reindex` and the model switch. */
export async function embedMissing(
  store: Store | VectorTarget,
  embedder: Embedder,
  lease: HeldLease,
  options: BatchLoopOptions & { total: number; now?: () => number },
): Promise<{ embedded: number; skipped: number; batches: number; complete: boolean }> {
  const target = 'missingVectors' in store ? indexTarget(store) : store;
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
    const batch = await target.missing(identity, batchSize);
    if (batch.length === 0) return { embedded, skipped, batches, complete: true };
    const vectors = await embedMemories(embedder, batch, target.signatures === true);
    if (vectors.length !== batch.length) {
      throw new CairnError('EMBEDDER_MISMATCH', `${embedder.model} returned ${vectors.length} vectors for ${batch.length} texts`);
    }
    const items = batch.map((memory, i) => ({ id: memory.id, ...vectors[i]! }));
    skipped += await putSkippingVanished(items, (some) => target.put(identity, some));
    embedded += items.length;
    batches++;
    options.onProgress?.(embedded - skipped, Math.max(options.total, embedded - skipped));
    // Taken over after a stall longer than the TTL: the other filler continues; stop here.
    if (!(await lease.renew(embedded - skipped))) return { embedded, skipped, batches, complete: false };
  }
}

/**
 * Memories that have the index's vector but not its token signature (written before signatures,
 * or by a writer without them): how many wait for one. 0 when the embedder gives none.
 */
export async function waitingForSignatures(store: Store, embedder: Embedder): Promise<number> {
  if (!embedder.embedSigned || !store.countMissingSignatures) return 0;
  return store.countMissingSignatures({ model: embedder.model, dimension: embedder.dimension });
}

/**
 * The signature loop under a held lease: the same batches, embedded again with their signatures
 * (one model run a memory; the vector is the one stored and is not rewritten), each batch written
 * in one short transaction. Resumable like the vector loop: only memories still without a
 * signature are read.
 */
export async function signMissing(
  store: Store,
  embedder: Embedder,
  lease: HeldLease,
  options: BatchLoopOptions & { total: number; done?: number; now?: () => number },
): Promise<{ signed: number; skipped: number; batches: number; complete: boolean }> {
  const identity: EmbedderIdentity = { model: embedder.model, dimension: embedder.dimension };
  const batchSize = options.batchSize ?? DEFAULT_FILL_BATCH;
  const now = options.now ?? (() => performance.now());
  const started = now();
  const done = options.done ?? 0;
  let signed = 0;
  let skipped = 0;
  let batches = 0;
  if (!embedder.embedSigned || !store.missingSignatures || !store.putSignatures) return { signed, skipped, batches, complete: true };
  const putSignatures = store.putSignatures.bind(store);
  for (;;) {
    if (options.signal?.aborted || options.shouldYield?.() || (options.maxMs !== undefined && now() - started >= options.maxMs)) {
      return { signed, skipped, batches, complete: false };
    }
    const batch = await store.missingSignatures(identity, batchSize);
    if (batch.length === 0) return { signed, skipped, batches, complete: true };
    const runs = await embedder.embedSigned(batch.map(embeddingText), batch.map((m) => m.text));
    const items = batch.map((memory, i) => ({ id: memory.id, signature: runs[i]!.signature }));
    skipped += await putSkippingVanished(items, (some) => putSignatures(identity, some));
    signed += items.length;
    batches++;
    options.onProgress?.(done + signed - skipped, Math.max(options.total, done + signed - skipped));
    if (!(await lease.renew(done + signed - skipped))) return { signed, skipped, batches, complete: false };
  }
}
