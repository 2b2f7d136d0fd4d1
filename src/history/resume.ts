/**
 * Ingest that resumes after a crash distils what the crashed run committed.
 *
 * Ingest commits each reader pass (turns + the file's new cursor) in one transaction, then
 * distils the sessions it touched. A run killed between the two (kill -9, power cut) leaves
 * sessions whose turns are stored and whose files' cursors say "done", so the next run skips
 * those files, never touches those sessions, and never distils them.
 *
 * So every run that writes registers itself (id, pid, start) under one state key before its
 * first write and removes itself once its distillation is over. A later run that finds an entry
 * whose process is gone knows a run died with writes that may not be distilled, and distils every
 * session with turns past its distillation cursor (see `pendingSessions`) besides the ones it
 * touched itself. Runs of live processes are left alone (they will clean up after themselves).
 */
import { z } from 'zod';
import { processAlive } from '../runtime.js';
import type { Store } from '../types.js';

/** The state key holding the runs that wrote turns and have not finished distilling them. */
export const RUNS_KEY = 'ingest:runs';

const runSchema = z.object({ id: z.string(), pid: z.number().int(), at: z.number() });
const runsSchema = z.array(runSchema);

/** One ingest run that wrote (or is writing) turns. */
export type IngestRun = z.infer<typeof runSchema>;

export { processAlive };

/** The registered runs; a damaged value reads as one crashed run (so pending sessions are looked for). */
export async function readRuns(store: Pick<Store, 'getState'>): Promise<IngestRun[]> {
  const raw = await store.getState(RUNS_KEY);
  if (raw === null || raw === '') return [];
  try {
    return runsSchema.parse(JSON.parse(raw));
  } catch {
    return [{ id: 'damaged', pid: -1, at: 0 }];
  }
}

/** Runs whose process is gone: they may have left committed, undistilled sessions. */
export function crashedRuns(runs: IngestRun[], alive: (pid: number) => boolean = processAlive): IngestRun[] {
  return runs.filter((run) => run.pid < 0 || !alive(run.pid));
}

/** Register `run` (before its first write). */
export async function registerRun(store: Pick<Store, 'getState' | 'setState'>, run: IngestRun): Promise<void> {
  const runs = (await readRuns(store)).filter((r) => r.id !== run.id && r.id !== 'damaged');
  runs.push(run);
  await store.setState(RUNS_KEY, JSON.stringify(runs));
}

/** Remove `ids` (this run once distilled, and the crashed runs whose sessions it distilled). */
export async function releaseRuns(store: Pick<Store, 'getState' | 'setState'>, ids: ReadonlySet<string>): Promise<void> {
  if (ids.size === 0) return;
  const runs = await readRuns(store);
  const left = runs.filter((r) => !ids.has(r.id));
  if (left.length === runs.length) return;
  await store.setState(RUNS_KEY, left.length === 0 ? '' : JSON.stringify(left));
}
