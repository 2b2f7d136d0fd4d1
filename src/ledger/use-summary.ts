/**
 * Learn-from-use totals per project, as `cairn status` and the browser show them: compactions
 * measured, items injected, the share used afterwards, needed details missed.
 */
import type { LedgerOutcome } from '../types.js';

export interface ProjectUse {
  /** null: sessions whose project is unknown. */
  project: string | null;
  /** Compactions whose aftermath was measured (windows opened by /compact). */
  compactions: number;
  /** Context windows measured, compactions included. */
  windows: number;
  /** Memories and session facts injected into those windows, and how many the agent used afterwards. */
  injected: number;
  used: number;
  /** used / injected, null when nothing was injected. */
  usedShare: number | null;
  /** Details used after a compaction and known before it, and how many nothing injected carried. */
  needed: number;
  missed: number;
  lastMeasuredAt: number;
}

/** Sum outcomes per project, the project with most windows first. */
export function useByProject(outcomes: readonly LedgerOutcome[]): ProjectUse[] {
  const byProject = new Map<string | null, ProjectUse>();
  for (const o of outcomes) {
    let p = byProject.get(o.project);
    if (!p) byProject.set(o.project, (p = { project: o.project, compactions: 0, windows: 0, injected: 0, used: 0, usedShare: null, needed: 0, missed: 0, lastMeasuredAt: 0 }));
    p.windows++;
    if (o.reason === 'compact') p.compactions++;
    p.injected += o.injected;
    p.used += o.used;
    p.needed += o.needed;
    p.missed += o.missed;
    p.lastMeasuredAt = Math.max(p.lastMeasuredAt, o.measuredAt);
  }
  const out = [...byProject.values()];
  for (const p of out) p.usedShare = p.injected === 0 ? null : Math.round((p.used / p.injected) * 1000) / 1000;
  return out.sort((a, b) => b.windows - a.windows || String(a.project).localeCompare(String(b.project)));
}

/** One line for a project: `3 compactions · 84 items injected · 31% used afterwards · 22 of 90 needed details missed`. */
export function useLine(p: ProjectUse): string {
  const parts = [`${p.compactions} compaction${p.compactions === 1 ? '' : 's'}${p.windows > p.compactions ? ` (+${p.windows - p.compactions} other windows)` : ''}`, `${p.injected} items injected`];
  if (p.usedShare !== null) parts.push(`${Math.round(p.usedShare * 100)}% used afterwards`);
  if (p.needed > 0) parts.push(`${p.missed} of ${p.needed} needed details missed`);
  return parts.join(' · ');
}
