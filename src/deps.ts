import { isCairnError } from './errors.js';
import type { Clock, EmbedOptions, Embedder, EmbedderIdentity, IdSource, Logger, Store } from './types.js';

/** What the operations need, wired once by createCairn(). */
export interface Deps {
  store: Store;
  embedder: Embedder | null;
  /**
   * While a model switch is under way (the index holds another model than `embedder`), an
   * embedder for the index's model, so recall keeps searching the old vectors; resolves to null
   * when that model cannot be loaded here (recall then runs on BM25). Called at most once per model.
   */
  indexEmbedder?: (index: EmbedderIdentity) => Promise<Embedder | null>;
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
  /**
   * How the BM25 part of the relevance signal is scaled: false or absent, relative to the best
   * candidate's (score / best); true, over the BM25 candidates' range (the best 1, the last one
   * retrieved 0: min–max normalisation), so a weak keyword match among many counts little.
   */
  bm25Range?: boolean;
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

/**
 * {@link embedAll} with, when the embedder gives them, each text's token signature from the same
 * model run (`signed[i]`: the part of `texts[i]` that is the memory's own text; recall's rerank
 * reads the signature, src/embed/token-signature.ts). Null where there is no vector.
 */
export async function embedAllSigned(deps: Deps, texts: string[], signed: string[]): Promise<Array<{ vector: Float32Array; signature?: Uint8Array } | null>> {
  const embedder = deps.embedder;
  if (!embedder?.embedSigned) return (await embedAll(deps, texts)).map((vector) => (vector ? { vector } : null));
  if (deps.deferVectors || texts.length === 0 || !(await vectorIndexMatches(deps))) return texts.map(() => null);
  try {
    return await embedder.embedSigned(texts, signed);
  } catch (error) {
    if (!isCairnError(error) || error.code !== 'EMBEDDER_UNAVAILABLE') throw error;
    if (!warned.has(deps.logger)) {
      warned.add(deps.logger);
      deps.logger.warn(`semantic recall is off, recall uses BM25 alone: ${error.message}`);
    }
    return texts.map(() => null);
  }
}

const warned = new WeakSet<Logger>();
const warnedMismatch = new WeakSet<Logger>();

/**
 * True when the store's vector index is empty or holds the embedder's own model and dimension.
 * Otherwise logs once that the switch is pending (writes then go in without a vector).
 */
export async function vectorIndexMatches(deps: Deps): Promise<boolean> {
  if (!deps.embedder || !deps.store.capabilities.vectors) return false;
  const stored = await deps.store.vectorModel();
  if (stored === null || (stored.model === deps.embedder.model && stored.dimension === deps.embedder.dimension)) return true;
  if (!warnedMismatch.has(deps.logger)) {
    warnedMismatch.add(deps.logger);
    deps.logger.warn(
      `the vector index holds ${stored.model} (${stored.dimension} dims), the embedder is ${deps.embedder.model}: recall uses BM25 alone until the switch completes ` +
        '(the background fill builds the new vectors after ingests; `cairn reindex` does it now)',
    );
  }
  return false;
}

const warnedOldIndex = new WeakSet<Logger>();
const indexEmbedders = new WeakMap<Deps, Map<string, Promise<Embedder | null>>>();

/**
 * The embedder to search the vector index with: the configured one when the index holds its
 * model and dimension; while the index holds another model (a switch under way, see
 * src/embed/switch.ts), that model's embedder when `deps.indexEmbedder` can load it; else null
 * (recall runs on BM25, said once in the log). Null too without an embedder or an index.
 */
export async function searchEmbedder(deps: Deps): Promise<Embedder | null> {
  if (!deps.embedder || !deps.store.capabilities.vectors) return null;
  const stored = await deps.store.vectorModel();
  if (stored === null) return null;
  if (stored.model === deps.embedder.model && stored.dimension === deps.embedder.dimension) return deps.embedder;
  if (deps.indexEmbedder) {
    let byModel = indexEmbedders.get(deps);
    if (!byModel) indexEmbedders.set(deps, (byModel = new Map()));
    const key = `${stored.model}#${stored.dimension}`;
    let loading = byModel.get(key);
    if (!loading) {
      loading = deps.indexEmbedder(stored).catch(() => null);
      byModel.set(key, loading);
    }
    const old = await loading;
    if (old && old.model === stored.model && old.dimension === stored.dimension) {
      if (!warnedOldIndex.has(deps.logger)) {
        warnedOldIndex.add(deps.logger);
        deps.logger.info(`recall searches the vectors of ${stored.model} until the switch to ${deps.embedder.model} completes`);
      }
      return old;
    }
  }
  await vectorIndexMatches(deps);
  return null;
}

/**
 * The embedder's vectors, or null when its model is unavailable (`EMBEDDER_UNAVAILABLE`): the
 * reason is logged once per logger and the caller carries on with BM25. Other errors propagate.
 */
export async function embedOrUnavailable(deps: Deps, texts: string[], options?: EmbedOptions, embedder: Embedder | null = deps.embedder): Promise<Float32Array[] | null> {
  if (!embedder) return null;
  try {
    return await embedder.embed(texts, options);
  } catch (error) {
    if (!isCairnError(error) || error.code !== 'EMBEDDER_UNAVAILABLE') throw error;
    if (!warned.has(deps.logger)) {
      warned.add(deps.logger);
      deps.logger.warn(`semantic recall is off, recall uses BM25 alone: ${error.message}`);
    }
    return null;
  }
}
