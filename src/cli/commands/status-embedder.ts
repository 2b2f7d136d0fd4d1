/**
 * The embedder and vector lines of `cairn status`: which embedder recall uses and why (configured,
 * the installed default, opted out, or the default's files missing), how many memories have a
 * vector, how many wait for the background fill, and who is filling right now.
 */
import type { CairnStatus } from '../../cairn.js';
import type { Config } from '../../config.js';
import { readFillLease, type FillLease } from '../../embed/fill-lease.js';
import { waitingForVectors } from '../../embed/fill.js';
import type { EmbedderIdentity, Store } from '../../types.js';

/** Vectors present, waiting, the model the index holds, and the filler at work (if any). */
export interface VectorStatus {
  present: number;
  waiting: number;
  index: EmbedderIdentity | null;
  filling: FillLease | null;
}

export async function vectorStatus(store: Store, embedder: CairnStatus['embedder']): Promise<VectorStatus> {
  const stats = await store.stats();
  const index = store.capabilities.vectors ? await store.vectorModel() : null;
  const waiting = embedder && store.capabilities.vectors ? await waitingForVectors(store, embedder) : 0;
  const filling = embedder && store.capabilities.vectors ? await readFillLease(store) : null;
  return { present: stats.vectors, waiting, index, filling };
}

const n = (v: number): string => v.toLocaleString('en-US');

/** `embedder …` and `vectors …` lines. */
export function embedderLines(status: CairnStatus, config: Config, vectors: VectorStatus): string[] {
  const embedder = status.embedder;
  if (!embedder) {
    if (config.embedderNote) return [`embedder     none · recall runs on BM25 alone: ${config.embedderNote}`];
    const how = config.embedderSource === 'env' ? '$CAIRN_EMBEDDER' : '"embedder" in config.json';
    return [`embedder     none (turned off by ${how}) · recall runs on BM25 alone (full-text)`];
  }
  const source = config.embedderSource === 'default' ? 'the default' : config.embedderSource === 'env' ? 'from $CAIRN_EMBEDDER' : 'from config.json';
  if (embedder.unavailable) return [`embedder     ${embedder.model} (${source}) unavailable · recall runs on BM25 alone: ${embedder.unavailable}`];
  const lines: string[] = [];
  const mismatch = vectors.index && (vectors.index.model !== embedder.model || vectors.index.dimension !== embedder.dimension);
  const recall = mismatch ? 'BM25 alone until `cairn reindex` switches the index' : vectors.present === 0 ? 'BM25 until the first vectors are filled' : status.recallMode;
  lines.push(`embedder     ${embedder.model} (${embedder.dimension} dims, ${source}) · recall: ${recall}`);
  const total = vectors.present + (mismatch ? 0 : vectors.waiting);
  let line = mismatch
    ? `vectors      ${n(vectors.present)} of ${vectors.index!.model} (another model) · ${n(vectors.waiting)} memories wait for \`cairn reindex\``
    : `vectors      ${n(vectors.present)} of ${n(total)} memories`;
  if (!mismatch && vectors.waiting > 0) line += ` · ${n(vectors.waiting)} waiting (filled in the background after ingests and \`cairn remember\`, and by an idle MCP server; \`cairn reindex --fill\` now)`;
  if (vectors.filling) line += ` · filling now: ${vectors.filling.by}, pid ${vectors.filling.pid}, ${n(vectors.filling.done)} written`;
  lines.push(line);
  return lines;
}
