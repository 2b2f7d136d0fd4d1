/**
 * The embedder and vector lines of `cairn status`: which embedder recall uses and why (configured,
 * the installed default, opted out, or the default's files missing), how many memories have a
 * vector, how many wait for the background fill, and who is filling right now.
 */
import type { CairnStatus } from '../../cairn.js';
import type { Config } from '../../config.js';
import { searchEmbedder, type Deps } from '../../deps.js';
import { readFillLease, type FillLease } from '../../embed/fill-lease.js';
import { waitingForVectors } from '../../embed/fill.js';
import { sameModel, switchStatus, type SwitchStatus } from '../../embed/switch.js';
import { isPretrainedEncoder } from '../../recall/fusion.js';
import type { EmbedderIdentity, Store } from '../../types.js';

/** A model switch: what is built so far, and what recall searches meanwhile. */
export interface SwitchProgress extends SwitchStatus {
  /** `old`: the index's own model (loadable here); `bm25`: it is not, recall runs on BM25 alone. */
  recall: 'old' | 'bm25';
}

/** Vectors present, waiting, the model the index holds, the filler at work and the model switch (if any). */
export interface VectorStatus {
  present: number;
  waiting: number;
  /**
   * Memories with the index's vector but without its token signature (recall's rerank leaves them
   * where fusion put them until the fill signs them); null when the embedder or the store keeps
   * no signatures, or while the index holds another model.
   */
  signaturesWaiting: number | null;
  index: EmbedderIdentity | null;
  filling: FillLease | null;
  /** Set while the index holds another model than the embedder's: the switch (started or not) and its progress. */
  switching: SwitchProgress | null;
}

/**
 * The vector side of `cairn status` (and `doctor`). With `deps`, whether recall can search the
 * old index during a switch is checked by building that model's embedder (files only, not loaded).
 */
export async function vectorStatus(store: Store, embedder: CairnStatus['embedder'], deps?: Deps): Promise<VectorStatus> {
  const stats = await store.stats();
  const index = store.capabilities.vectors ? await store.vectorModel() : null;
  const waiting = embedder && store.capabilities.vectors ? await waitingForVectors(store, embedder) : 0;
  const filling = embedder && store.capabilities.vectors ? await readFillLease(store) : null;
  let switching: SwitchProgress | null = null;
  if (embedder && index && !sameModel(index, embedder)) {
    const under = await switchStatus(store);
    const to: EmbedderIdentity = { model: embedder.model, dimension: embedder.dimension };
    const staged = under && sameModel(under.to, to) ? under.staged : 0;
    const searching = deps ? await searchEmbedder(deps) : null;
    switching = { from: index, to, staged, memories: stats.memories, recall: searching && sameModel(searching, index) ? 'old' : 'bm25' };
  }
  const signs = embedder !== null && !embedder.unavailable && isPretrainedEncoder(embedder.model) && store.countMissingSignatures !== undefined;
  const signaturesWaiting =
    signs && switching === null && store.countMissingSignatures ? await store.countMissingSignatures({ model: embedder.model, dimension: embedder.dimension }) : null;
  return { present: stats.vectors, waiting, signaturesWaiting, index, filling, switching };
}

/** `40%` of a switch (floor, so 100% means done). */
export function switchPercent(progress: Pick<SwitchStatus, 'staged' | 'memories'>): string {
  return `${progress.memories === 0 ? 100 : Math.floor((100 * progress.staged) / progress.memories)}%`;
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
  const switching = vectors.switching;
  if (switching) {
    const from = `${switching.from?.model ?? 'another model'}`;
    const recall = switching.recall === 'old' ? `hybrid over the vectors of ${from} until the switch completes` : `BM25 alone until the switch completes (${from} cannot be loaded here)`;
    lines.push(`embedder     ${embedder.model} (${embedder.dimension} dims, ${source}) · recall: ${recall}`);
    let line =
      `vectors      switching ${from} → ${embedder.model}: ${n(switching.staged)} of ${n(switching.memories)} memories have the new vector (${switchPercent(switching)}) · ` +
      'built beside the old ones in the background after ingests and `cairn remember`, swapped in at once when complete; `cairn reindex` finishes it now';
    if (vectors.filling) line += ` · filling now: ${vectors.filling.by}, pid ${vectors.filling.pid}, ${n(vectors.filling.done)} written`;
    lines.push(line);
    return lines;
  }
  const recall = vectors.present === 0 ? 'BM25 until the first vectors are filled' : status.recallMode;
  lines.push(`embedder     ${embedder.model} (${embedder.dimension} dims, ${source}) · recall: ${recall}`);
  let line = `vectors      ${n(vectors.present)} of ${n(vectors.present + vectors.waiting)} memories`;
  if (vectors.waiting > 0) line += ` · ${n(vectors.waiting)} waiting (filled in the background after ingests and \`cairn remember\`, and by an idle MCP server; \`cairn reindex --fill\` now)`;
  if (vectors.filling) line += ` · filling now: ${vectors.filling.by}, pid ${vectors.filling.pid}, ${n(vectors.filling.done)} written`;
  lines.push(line);
  if (vectors.signaturesWaiting !== null && vectors.signaturesWaiting > 0) {
    lines.push(
      `signatures   ${n(vectors.signaturesWaiting)} of ${n(vectors.present)} vectors wait for a token signature · recall does not rerank those ` +
        '(signed in the background like the vectors; `cairn reindex` now)',
    );
  }
  return lines;
}
