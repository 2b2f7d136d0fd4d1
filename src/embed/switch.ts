/**
 * Switching the vector index to another model without a gap: the new model's vectors are built
 * beside the index (the store's `vectorStaging`, another table) by the same lease-guarded batch
 * loop as the fill, while recall keeps searching the old index; when every memory has a new vector
 * the store swaps them in one transaction (model, dimension and vectors at once). Run by the
 * background fill and by `cairn reindex` whenever the configured embedder differs from the index
 * by id or dimension.
 *
 * Resumable after `kill -9`: staged vectors stay, only memories still without one are embedded,
 * and a dead filler's lease is taken over at once. Never mixed: searches read the index only, the
 * staged table only ever holds the model recorded with it, and the swap is atomic.
 */
import type { Embedder, EmbedderIdentity, Store, VectorStaging } from '../types.js';
import { embedMissing, type BatchLoopOptions } from './batch-loop.js';
import type { HeldLease } from './fill-lease.js';

/** A switch under way, for `cairn status` and `doctor`. */
export interface SwitchStatus {
  /** What the index holds and recall searches meanwhile. */
  from: EmbedderIdentity | null;
  /** The model being built. */
  to: EmbedderIdentity;
  /** Memories that already have the new model's vector. */
  staged: number;
  memories: number;
}

/** Whether two identities are the same model and dimension. */
export function sameModel(a: EmbedderIdentity, b: EmbedderIdentity): boolean {
  return a.model === b.model && a.dimension === b.dimension;
}

/** The switch under way in `store`, or null. */
export async function switchStatus(store: Store): Promise<SwitchStatus | null> {
  const staged = await store.vectorStaging?.staged();
  if (!staged) return null;
  const stats = await store.stats();
  return { from: await store.vectorModel(), to: staged.model, staged: staged.vectors, memories: stats.memories };
}

/** What a switch run did. */
export interface SwitchRun {
  embedded: number;
  skipped: number;
  batches: number;
  /** True when the new vectors replaced the index in this run. */
  committed: boolean;
}

/**
 * Build `embedder`'s vectors beside the index of `store` under a held fill lease and swap them in
 * once complete. Stops like a fill (time budget, signal, yield, lost lease) with the staged
 * vectors kept for the next run.
 *
 * @example
 * const run = await switchModel(store, store.vectorStaging!, embedder, lease, { batchSize: 32, total });
 */
export async function switchModel(
  store: Store,
  staging: VectorStaging,
  embedder: Embedder,
  lease: HeldLease,
  options: BatchLoopOptions & { total?: number; now?: () => number },
): Promise<SwitchRun> {
  const identity: EmbedderIdentity = { model: embedder.model, dimension: embedder.dimension };
  await staging.begin(identity);
  const now = options.now ?? (() => performance.now());
  const started = now();
  const total = options.total ?? (await waitingToStage(store, identity));
  const run: SwitchRun = { embedded: 0, skipped: 0, batches: 0, committed: false };
  const target = { missing: staging.missing.bind(staging), put: staging.put.bind(staging) };
  for (;;) {
    const maxMs = options.maxMs === undefined ? undefined : Math.max(0, options.maxMs - (now() - started));
    const done = run.embedded - run.skipped;
    const pass = await embedMissing(target, embedder, lease, {
      ...options,
      ...(maxMs === undefined ? {} : { maxMs }),
      total,
      onProgress: (written, all) => options.onProgress?.(done + written, Math.max(total, done + all)),
    });
    run.embedded += pass.embedded;
    run.skipped += pass.skipped;
    run.batches += pass.batches;
    if (!pass.complete) return run;
    // Every memory had a staged vector a moment ago; a writer may have added one since, which the
    // commit sees (it changes nothing then) and the next pass embeds.
    if (await staging.commit(identity)) {
      run.committed = true;
      return run;
    }
  }
}

/** Memories still without the staged vector of `model` (all of them when another model is staged). */
export async function waitingToStage(store: Store, model: EmbedderIdentity): Promise<number> {
  const stats = await store.stats();
  const staged = await store.vectorStaging?.staged();
  return Math.max(0, stats.memories - (staged && sameModel(staged.model, model) ? staged.vectors : 0));
}
