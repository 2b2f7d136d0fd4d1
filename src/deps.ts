import { isCairnError } from './errors.js';
import type { Clock, EmbedOptions, Embedder, IdSource, Logger, Store } from './types.js';

/** What the operations need, wired once by createCairn(). */
export interface Deps {
  store: Store;
  embedder: Embedder | null;
  /** Writes go in without a vector; the background fill embeds them later (short-lived processes). */
  deferVectors?: boolean;
  clock: Clock;
  ids: IdSource;
  logger: Logger;
  /** Project identity writes default to and recall prefers (null outside any project). */
  project: string | null;
  /** Folder file references are resolved against (the project root). */
  workspaceRoot: string | null;
  /** The agent session writes belong to, when known. */
  session: string | null;
  /** Recorded in the event log: `cli`, `mcp`, `hook`, a token name … */
  actor: string;
  /** Overrides of the hybrid fusion weights (benchmarks tune them; defaults in src/recall). */
  fusion?: Partial<FusionWeights>;
}

/** How much the vector retriever counts next to BM25 (whose weight is 1 in both places). */
export interface FusionWeights {
  /** Weight of the vector list in reciprocal rank fusion. */
  vectorRankWeight: number;
  /** The cosine's share in the relevance signal, next to BM25's 1. */
  vectorSignalShare: number;
  /** The k of reciprocal rank fusion. */
  rrfK: number;
  /**
   * Pseudo-relevance feedback on the vector side (Rocchio): the query vector plus this share of
   * the mean vector of the first fused hits, searched again. 0 or absent: off.
   */
  feedback?: number;
}

/**
 * Embed texts, or return nulls when no embedder is configured, writes defer their vectors to the
 * background fill, or the model is unavailable (missing or damaged files: logged, and the fill or
 * `cairn reindex` adds the vectors later). Never inside a DB transaction.
 */
export async function embedAll(deps: Deps, texts: string[]): Promise<Array<Float32Array | null>> {
  if (!deps.embedder || deps.deferVectors || texts.length === 0) return texts.map(() => null);
  // The index holds another model's vectors (the embedder was switched and `cairn reindex` has
  // not run yet): write without a vector rather than mix models; the reindex embeds these too.
  if (!(await vectorIndexMatches(deps))) return texts.map(() => null);
  const vectors = await embedOrUnavailable(deps, texts);
  return vectors ?? texts.map(() => null);
}

const warned = new WeakSet<Logger>();
const warnedMismatch = new WeakSet<Logger>();

/**
 * True when the store's vector index is empty or holds the embedder's own model and dimension.
 * Otherwise logs once that `cairn reindex` switches it: until then recall runs on BM25.
 */
export async function vectorIndexMatches(deps: Deps): Promise<boolean> {
  if (!deps.embedder || !deps.store.capabilities.vectors) return false;
  const stored = await deps.store.vectorModel();
  if (stored === null || (stored.model === deps.embedder.model && stored.dimension === deps.embedder.dimension)) return true;
  if (!warnedMismatch.has(deps.logger)) {
    warnedMismatch.add(deps.logger);
    deps.logger.warn(`the vector index holds ${stored.model} (${stored.dimension} dims), the embedder is ${deps.embedder.model}: recall uses BM25 alone until \`cairn reindex\` rebuilds it`);
  }
  return false;
}

/**
 * The embedder's vectors, or null when its model is unavailable (`EMBEDDER_UNAVAILABLE`): the
 * reason is logged once per logger and the caller carries on with BM25. Other errors propagate.
 */
export async function embedOrUnavailable(deps: Deps, texts: string[], options?: EmbedOptions): Promise<Float32Array[] | null> {
  if (!deps.embedder) return null;
  try {
    return await deps.embedder.embed(texts, options);
  } catch (error) {
    if (!isCairnError(error) || error.code !== 'EMBEDDER_UNAVAILABLE') throw error;
    if (!warned.has(deps.logger)) {
      warned.add(deps.logger);
      deps.logger.warn(`semantic recall is off, recall uses BM25 alone: ${error.message}`);
    }
    return null;
  }
}
