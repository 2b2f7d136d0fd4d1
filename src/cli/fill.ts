/**
 * The CLI's share of the background vector fill (src/embed/fill.ts): short-lived commands write
 * memories without a vector (they never load a model), `cairn ingest` ends with a bounded fill,
 * and `cairn remember` starts a detached one so its memory is found by meaning seconds later.
 */
import { setPriority } from 'node:os';
import { createEmbedderFromSpec, type Config } from '../config.js';
import { readFillLease } from '../embed/fill-lease.js';
import type { FillSummary } from '../embed/fill.js';
import { packagePath } from '../paths.js';
import type { Store } from '../types.js';

/** Wall-time budget of the fill at the end of `cairn ingest` (the next ingest continues). */
export const INGEST_FILL_SECONDS = 60;

/**
 * Fill missing vectors with the configured embedder in this process, for at most `seconds`, with
 * one ONNX thread (the agent keeps the other core). Null when there is no embedder or nothing waits.
 */
export async function fillAfterWrite(config: Config, store: Store, options: { seconds: number; by: string; background: boolean }): Promise<FillSummary | null> {
  if (!config.embedder || options.seconds <= 0 || !store.capabilities.vectors) return null;
  const stats = await store.stats();
  if (stats.memories <= stats.vectors) return null;
  // A detached child of a hook works at low priority: the agent's own work comes first.
  if (options.background) {
    try {
      setPriority(10);
    } catch {
      // Not permitted here: run at normal priority.
    }
  }
  const { fillVectors } = await import('../embed/fill.js');
  const embedder = await createEmbedderFromSpec(config.embedder, config, { threads: 1 });
  try {
    return await fillVectors(store, embedder, { maxMs: options.seconds * 1000, by: options.by });
  } finally {
    await embedder.close?.();
  }
}

/**
 * Start `cairn reindex --fill` detached, unless `$CAIRN_BACKGROUND_FILL` is `0` or a filler is at
 * work already (it embeds until nothing waits, so it picks this write up too). The child takes the
 * fill lease or exits at once when another filler holds it.
 */
export async function startBackgroundFill(config: Config, env: NodeJS.ProcessEnv, store?: Store): Promise<boolean> {
  if (!config.embedder || env.CAIRN_BACKGROUND_FILL === '0') return false;
  if (store?.capabilities.vectors === false) return false;
  if (store && (await readFillLease(store)) !== null) return false;
  const { spawn } = await import('node:child_process');
  // The store goes by environment, not argv: a postgres:// URL may carry a password.
  const child = spawn(process.execPath, [packagePath('bin', 'cairn.js'), '--home', config.home, 'reindex', '--fill', '--max-seconds', String(INGEST_FILL_SECONDS)], {
    detached: true,
    stdio: 'ignore',
    env: { ...env, CAIRN_HOOK_CHILD: '1', CAIRN_STORE: config.store, CAIRN_EMBEDDER: config.embedder },
  });
  child.on('error', () => {});
  child.unref();
  return true;
}
