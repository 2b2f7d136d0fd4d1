/**
 * The review queue: near-duplicates, contradictions and stale file references that need a
 * person. Resolving never destroys anything — the memories not kept are forgotten (restorable),
 * and every resolution, including the automatic supersedes distillation made, can be undone.
 */
import { CairnError, invalid } from '../errors.js';
import type { Deps } from '../deps.js';
import { forget, restore } from '../memory/lifecycle.js';
import type { Memory, ReviewItem, ReviewKind } from '../types.js';
import { subjectStateKey } from './ladder.js';

export interface ReviewEntry {
  item: ReviewItem;
  /** The memories the item is about, in the item's order (missing ones left out). */
  memories: Memory[];
}

export interface ReviewListInput {
  /** Resolved items too (auto-supersedes included). @default false */
  all?: boolean;
  kinds?: ReviewKind[];
  /** Every project's items, not only the current project's and the user's. @default false */
  allProjects?: boolean;
  limit?: number;
  offset?: number;
}

/** Review items with their memories: open ones, or all with `all`. */
export async function listReview(deps: Deps, input: ReviewListInput = {}): Promise<ReviewEntry[]> {
  const items = await deps.store.listReview({
    ...(input.all ? {} : { open: true }),
    ...(input.allProjects || deps.project === null ? {} : { project: deps.project }),
    ...(input.kinds ? { kinds: input.kinds } : {}),
    limit: input.limit ?? 100,
    offset: input.offset ?? 0,
  });
  return Promise.all(items.map(async (item) => ({ item, memories: await deps.store.getMemories(item.memoryIds) })));
}

/** Open review items (of the current project and the user's). */
export async function countOpenReview(deps: Deps): Promise<number> {
  return deps.store.countReview({ open: true, ...(deps.project === null ? {} : { project: deps.project }) });
}

/** How to resolve an item: keep one memory (forget the others), merge them into the first, or dismiss. */
export type ReviewAction = { keep: string } | { merge: true } | { dismiss: true };

export interface ReviewResolution {
  item: ReviewItem;
  forgotten: string[];
  restored: string[];
}

async function mustGetItem(deps: Deps, id: string): Promise<ReviewItem> {
  const item = await deps.store.getReview(id);
  if (!item) throw new CairnError('NOT_FOUND', `review item ${id} not found (see \`cairn review\`)`, { field: 'id' });
  return item;
}

/** Resolve an open review item. */
export async function resolveReview(deps: Deps, id: string, action: ReviewAction): Promise<ReviewResolution> {
  const item = await mustGetItem(deps, id);
  if (item.resolvedAt !== null) throw new CairnError('CONFLICT', `review item ${id} was already resolved (${item.resolution ?? 'unknown'})`, { field: 'id' });
  const at = deps.clock.now();
  if ('dismiss' in action) return { item: await deps.store.resolveReview(id, 'dismissed', at), forgotten: [], restored: [] };
  const memories = (await deps.store.getMemories(item.memoryIds)).filter((m) => m.deletedAt === null && m.validTo === null);
  let keep: Memory;
  if ('keep' in action) {
    const found = memories.find((m) => m.id === action.keep);
    if (!found) throw invalid(`memory ${action.keep} is not an active memory of review item ${id}`, 'keep');
    keep = found;
  } else {
    const first = memories[0];
    if (!first || memories.length < 2) throw new CairnError('CONFLICT', `review item ${id} has fewer than two active memories left to merge`);
    keep = first;
  }
  const others = memories.filter((m) => m.id !== keep.id);
  if ('merge' in action) {
    const { also = [], ...primary } = keep.provenance ?? {};
    const moved = others.flatMap((m) => {
      const { also: more = [], ...p } = m.provenance ?? {};
      return m.provenance ? [p, ...more] : [];
    });
    await deps.store.patchMemory(
      keep.id,
      {
        updatedAt: at,
        importance: Math.max(keep.importance, ...others.map((m) => m.importance)),
        provenance: keep.provenance === null && moved.length === 0 ? null : { ...primary, also: [...also, ...moved].slice(-50) },
      },
      { memoryId: keep.id, type: 'merge', at, actor: deps.actor, data: { review: id, merged: others.map((m) => m.id) } },
    );
  }
  const verb = 'merge' in action ? `merged into ${keep.id}` : `kept ${keep.id}`;
  const forgotten = others.length > 0 ? (await forget(deps, others.map((m) => m.id), `review ${id}: ${verb}`)).forgotten : [];
  const resolved = await deps.store.resolveReview(id, `${'merge' in action ? 'merged' : 'kept'}:${keep.id}`, at);
  return { item: resolved, forgotten, restored: [] };
}

/**
 * Undo a resolution: memories it forgot are restored; an automatic supersede is reversed (the
 * newer memory forgotten, the older one current again).
 */
export async function undoReview(deps: Deps, id: string): Promise<ReviewResolution> {
  const item = await mustGetItem(deps, id);
  const resolution = item.resolution;
  if (resolution === null) throw new CairnError('CONFLICT', `review item ${id} is still open; nothing to undo`, { field: 'id' });
  if (resolution === 'undone') throw new CairnError('CONFLICT', `review item ${id} was already undone`, { field: 'id' });
  const at = deps.clock.now();
  const forgotten: string[] = [];
  const restored: string[] = [];
  if (resolution === 'auto-superseded') {
    const [olderId, newerId] = item.memoryIds as [string, string];
    const newer = await deps.store.getMemory(newerId);
    if (newer && newer.deletedAt === null) forgotten.push(...(await forget(deps, [newerId], `review ${id} undone: ${olderId} restored`)).forgotten);
    const older = await deps.store.getMemory(olderId);
    if (older && older.validTo !== null) {
      await deps.store.patchMemory(olderId, { validTo: null, updatedAt: at }, { memoryId: olderId, type: 'restore', at, actor: deps.actor, data: { review: id, unsupersededBy: newerId } });
      restored.push(olderId);
    }
    const subject = typeof item.data.subject === 'string' ? item.data.subject : null;
    if (subject && older) await deps.store.setState(subjectStateKey(older.project, subject), olderId);
  } else if (resolution.startsWith('kept:') || resolution.startsWith('merged:')) {
    const kept = resolution.slice(resolution.indexOf(':') + 1);
    for (const memoryId of item.memoryIds) {
      if (memoryId === kept) continue;
      const memory = await deps.store.getMemory(memoryId);
      if (memory && memory.deletedAt !== null) {
        await restore(deps, memoryId);
        restored.push(memoryId);
      }
    }
  }
  return { item: await deps.store.resolveReview(id, 'undone', at), forgotten, restored };
}
