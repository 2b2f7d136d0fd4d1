/**
 * `maintain`: housekeeping run on demand or from a hook, never by a daemon.
 *
 * - decay by kind: durable facts, decisions, preferences, corrections and procedures keep their
 *   importance; operational context (continuation state, session-scope memories) halves every
 *   {@link MaintainOptions.halfLifeDays} days since it was last written or used;
 * - importance re-evaluated from usage (a memory recalled often rises);
 * - soft pruning below a floor, through the normal forget (restorable);
 * - the review queue rebuilt: items whose memories are gone closed, near-duplicates,
 *   contradictions and stale file references queued;
 * - the injection ledger of sessions idle for {@link MaintainOptions.ledgerDays} days dropped, and
 *   learn-from-use outcomes older than {@link MaintainOptions.outcomeDays} days;
 * - VACUUM.
 * Importance is recomputed from a base kept in `meta.baseImportance`, so running it twice in a
 * row changes nothing the second time.
 */
import type { Deps } from '../deps.js';
import { forget } from '../memory/lifecycle.js';
import { sha256 } from '../memory/normalize.js';
import type { Kind, LedgerPruneCounts, Memory, ReviewItem, ReviewKind } from '../types.js';
import { checkStaleness } from '../workspace/files.js';
import { NEAR_DUPLICATE_JACCARD, SAME_TOPIC_JACCARD, jaccard, lshPairs, minhash, opposite, shingles } from './similarity.js';

export interface MaintainOptions {
  /** Report what would change without changing anything. @default false */
  dryRun?: boolean;
  /** Importance below which a memory is forgotten (restorable). @default 0.1 */
  floor?: number;
  /** Half-life of operational context, in days. @default 7 */
  halfLifeDays?: number;
  /** Check file references against the workspace for stale ones. @default true (needs a workspace root) */
  checkFiles?: boolean;
  /** Reclaim space at the end. @default true */
  vacuum?: boolean;
  /** Keep the injection ledger of sessions active within this many days. @default 90 */
  ledgerDays?: number;
  /** Keep learn-from-use outcomes (counts per context window, what `status` sums) this many days. @default 365 */
  outcomeDays?: number;
}

export interface MaintainChange {
  id: string;
  kind: Kind;
  text: string;
  from: number;
  to: number;
}

export interface MaintainReport {
  dryRun: boolean;
  /** Active memories looked at. */
  scanned: number;
  /** Importance lowered by age (operational context). */
  decayed: MaintainChange[];
  /** Importance raised or restored by usage. */
  reweighted: MaintainChange[];
  /** Forgotten below the floor (restore with `cairn restore ID`). */
  pruned: MaintainChange[];
  review: {
    /** Open items closed because their memories are gone. */
    closed: number;
    queued: Record<ReviewKind, number>;
    open: number;
  };
  vacuum: { beforeBytes: number | null; afterBytes: number | null } | null;
  /** What the injection ledger dropped (null: the store keeps no ledger). */
  ledger: (LedgerPruneCounts & { days: number; outcomeDays: number }) | null;
}

const DAY = 86_400_000;
/** Kinds never pruned by age or disuse (only the user forgets them). */
const NEVER_PRUNED: ReadonlySet<Kind> = new Set(['correction', 'preference', 'decision']);
const PAGE = 2_000;

/** Whether a memory is operational context that fades (continuation state, session scope). */
export function isOperational(memory: Pick<Memory, 'kind' | 'scope'>): boolean {
  return memory.kind === 'continuation' || memory.scope === 'session';
}

/** Importance from usage: up to +0.2 for a memory used often. */
export function usageBoost(accessCount: number): number {
  return Math.min(0.2, 0.05 * Math.log2(1 + Math.max(0, accessCount)));
}

/** The importance a memory should have now, from its base, its age and its use. */
export function targetImportance(memory: Memory, now: number, halfLifeDays: number): { base: number; target: number } {
  const base = typeof memory.meta.baseImportance === 'number' ? memory.meta.baseImportance : memory.importance;
  const lastTouched = Math.max(memory.updatedAt, memory.lastAccessedAt ?? 0, memory.createdAt);
  const ageDays = Math.max(0, (now - lastTouched) / DAY);
  const decay = isOperational(memory) ? 0.5 ** (ageDays / halfLifeDays) : 1;
  const target = Math.round(Math.min(1, base * decay + usageBoost(memory.accessCount)) * 1000) / 1000;
  return { base, target };
}

async function allActive(deps: Deps): Promise<Memory[]> {
  const out: Memory[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const page = await deps.store.listMemories({ order: 'created-asc', limit: PAGE, offset });
    out.push(...page);
    if (page.length < PAGE) return out;
  }
}

const FAMILY: Record<Kind, string> = {
  correction: 'rule',
  preference: 'rule',
  procedure: 'rule',
  decision: 'decision',
  fact: 'fact',
  entity: 'fact',
  note: 'fact',
  continuation: 'continuation',
};

/** Near-duplicate and contradiction pairs among active memories, project by project. */
function findPairs(memories: Memory[]): Array<{ kind: ReviewKind; a: Memory; b: Memory; similarity: number }> {
  const out: Array<{ kind: ReviewKind; a: Memory; b: Memory; similarity: number }> = [];
  const byProject = new Map<string, Memory[]>();
  for (const m of memories) {
    if (m.kind === 'continuation') continue;
    const key = m.project ?? '';
    const list = byProject.get(key);
    if (list) list.push(m);
    else byProject.set(key, [m]);
  }
  for (const group of byProject.values()) {
    const sets = group.map((m) => shingles(m.text));
    const pairs = lshPairs(sets.map((s) => minhash(s)));
    for (const [i, j] of pairs) {
      const a = group[i] as Memory;
      const b = group[j] as Memory;
      if (FAMILY[a.kind] !== FAMILY[b.kind]) continue;
      // Claims about different subjects (two symbols, two settings) or different files are not duplicates.
      if (typeof a.meta.subject === 'string' && typeof b.meta.subject === 'string' && a.meta.subject !== b.meta.subject) continue;
      if (a.files.length > 0 && b.files.length > 0 && !a.files.some((f) => b.files.some((g) => g.path === f.path))) continue;
      const similarity = jaccard(sets[i] as Set<string>, sets[j] as Set<string>);
      const rule = FAMILY[a.kind] === 'rule' || a.kind === 'decision';
      if (rule && similarity >= SAME_TOPIC_JACCARD && opposite(a.text, b.text)) out.push({ kind: 'contradiction', a, b, similarity });
      else if (similarity >= NEAR_DUPLICATE_JACCARD) out.push({ kind: 'near-duplicate', a, b, similarity });
    }
    // The same subject (file + symbol, setting, preference target) claimed twice differently.
    const bySubject = new Map<string, Memory[]>();
    for (const m of group) {
      if (typeof m.meta.subject !== 'string' || m.kind === 'continuation') continue;
      const list = bySubject.get(m.meta.subject);
      if (list) list.push(m);
      else bySubject.set(m.meta.subject, [m]);
    }
    for (const list of bySubject.values()) {
      for (let x = 0; x + 1 < list.length; x++) {
        const a = list[x] as Memory;
        const b = list[x + 1] as Memory;
        if (a.meta.value !== b.meta.value) out.push({ kind: 'contradiction', a, b, similarity: 1 });
      }
    }
  }
  return out;
}

/** Run maintenance and report what was (or, with `dryRun`, would be) done. */
export async function maintain(deps: Deps, options: MaintainOptions = {}): Promise<MaintainReport> {
  const dryRun = options.dryRun ?? false;
  const floor = options.floor ?? 0.1;
  const halfLifeDays = options.halfLifeDays ?? 7;
  const now = deps.clock.now();
  const report: MaintainReport = {
    dryRun,
    scanned: 0,
    decayed: [],
    reweighted: [],
    pruned: [],
    review: { closed: 0, queued: { 'near-duplicate': 0, contradiction: 0, stale: 0 }, open: 0 },
    vacuum: null,
    ledger: null,
  };

  // 1. Decay, usage, pruning.
  const memories = await allActive(deps);
  report.scanned = memories.length;
  const survivors: Memory[] = [];
  const toForget: MaintainChange[] = [];
  for (const memory of memories) {
    if (memory.pinned) {
      survivors.push(memory);
      continue;
    }
    const { base, target } = targetImportance(memory, now, halfLifeDays);
    const change: MaintainChange = { id: memory.id, kind: memory.kind, text: memory.text, from: memory.importance, to: target };
    if (target < floor && memory.source !== 'manual' && !NEVER_PRUNED.has(memory.kind)) {
      toForget.push(change);
      continue;
    }
    survivors.push(memory);
    if (Math.abs(target - memory.importance) < 0.01) continue;
    (target < memory.importance ? report.decayed : report.reweighted).push(change);
    if (!dryRun) {
      await deps.store.patchMemory(
        memory.id,
        { importance: target, meta: { ...memory.meta, baseImportance: base }, updatedAt: memory.updatedAt },
        { memoryId: memory.id, type: 'update', at: now, actor: deps.actor, data: { maintain: true, importance: { from: memory.importance, to: target } } },
      );
    }
  }
  report.pruned = toForget;
  if (!dryRun && toForget.length > 0) await forget(deps, toForget.map((c) => c.id), `maintain: importance below ${floor}`);

  // 2. The review queue: close what no longer applies, queue what is found now.
  const open = await deps.store.listReview({ open: true, limit: 100_000 });
  const active = new Set(survivors.map((m) => m.id));
  for (const item of open) {
    if (item.memoryIds.every((id) => active.has(id))) continue;
    report.review.closed++;
    if (!dryRun) await deps.store.resolveReview(item.id, 'obsolete', now);
  }
  const items: ReviewItem[] = [];
  const queue = (kind: ReviewKind, key: string, memoriesOf: Memory[], reason: string, data: Record<string, unknown>): void => {
    items.push({ id: deps.ids.next(now), kind, key, project: memoriesOf[0]?.project ?? null, memoryIds: memoriesOf.map((m) => m.id), reason, data, createdAt: now, resolvedAt: null, resolution: null });
  };
  for (const pair of findPairs(survivors)) {
    const [a, b] = pair.a.createdAt <= pair.b.createdAt ? [pair.a, pair.b] : [pair.b, pair.a];
    const key = `${pair.kind === 'contradiction' ? 'contradiction' : 'dup'}:${[a.id, b.id].sort().join(':')}`;
    queue(
      pair.kind,
      key,
      [a, b],
      pair.kind === 'contradiction' ? 'these memories seem to disagree: keep one, or both if both hold' : 'these memories say nearly the same thing: merge them, or keep both',
      { similarity: Math.round(pair.similarity * 100) / 100, ...(typeof a.meta.subject === 'string' ? { subject: a.meta.subject } : {}) },
    );
  }
  if ((options.checkFiles ?? true) && deps.workspaceRoot !== null) {
    for (const memory of survivors) {
      if (memory.files.length === 0 || memory.kind === 'continuation' || (memory.project !== null && memory.project !== deps.project)) continue;
      const stale = checkStaleness(memory.files, deps.workspaceRoot).filter((s) => s.status === 'file-missing' || s.status === 'file-changed');
      if (stale.length === 0) continue;
      const summary = stale.map((s) => `${s.path}${s.line ? `:${s.line}` : ''} ${s.status}`).join(', ');
      queue('stale', `stale:${memory.id}:${sha256(summary).slice(0, 16)}`, [memory], `its files changed since it was written (${summary}): revise or forget it`, { files: stale });
    }
  }
  if (dryRun) {
    const known = new Set((await deps.store.listReview({ limit: 1_000_000 })).map((i) => i.key));
    for (const item of items) if (!known.has(item.key)) report.review.queued[item.kind]++;
  } else {
    for (const item of items) report.review.queued[item.kind] += await deps.store.queueReview([item]);
  }
  report.review.open = dryRun ? open.length - report.review.closed + Object.values(report.review.queued).reduce((a, b) => a + b, 0) : await deps.store.countReview({ open: true });

  // 3. The injection ledger: ids only, but one row per injected item per hook adds up.
  if (deps.store.ledger) {
    const days = options.ledgerDays ?? 90;
    const outcomeDays = options.outcomeDays ?? 365;
    const counts = await deps.store.ledger.prune({ sessionsBefore: now - days * DAY, outcomesBefore: now - outcomeDays * DAY, dryRun });
    report.ledger = { ...counts, days, outcomeDays };
  }

  // 4. Space.
  if (!dryRun && (options.vacuum ?? true)) report.vacuum = await deps.store.vacuum();
  return report;
}
