/**
 * The review queue in the browser: near-duplicates (merge / keep one / keep both), contradictions
 * (keep one / keep both) and stale memories (revise / forget). Listing, keeping, merging,
 * dismissing and undoing go through cairn's review operations (distill/review.ts); revising and
 * forgetting a stale memory are ordinary changes that then close the item. `scan` adds what the
 * browser can find itself among recent memories — near-duplicates by term overlap
 * (memory/similar.ts) and stale file references — under the same keys `cairn maintain` uses, so a
 * finding is queued once whichever found it, even after it was resolved.
 */
import type { Cairn } from '../cairn.js';
import type { ReviewResolution } from '../distill/review.js';
import { CairnError, invalid } from '../errors.js';
import { findSimilar } from '../memory/similar.js';
import { sha256 } from '../memory/normalize.js';
import { stalenessOf, type Staleness } from '../recall/recall.js';
import type { Memory, ReviewItem, ReviewKind } from '../types.js';

export interface ReviewEntry extends ReviewItem {
  memories: Array<{ memory: Memory; staleness: Staleness }>;
}

export interface ReviewPage {
  items: ReviewEntry[];
  total: number;
  counts: Record<ReviewKind, number>;
}

export const REVIEW_ACTIONS = ['merge', 'keep', 'keep-both', 'revise', 'forget', 'dismiss'] as const;
export type ReviewAction = (typeof REVIEW_ACTIONS)[number];

export async function listReview(
  cairn: Cairn,
  query: { kinds?: ReviewKind[]; open: boolean; limit: number; offset: number },
): Promise<ReviewPage> {
  const store = cairn.deps.store;
  const open = query.open ? { open: true } : {};
  const [entries, total, dup, contra, stale] = await Promise.all([
    cairn.review({ all: !query.open, allProjects: true, limit: query.limit, offset: query.offset, ...(query.kinds?.length ? { kinds: query.kinds } : {}) }),
    store.countReview({ ...open, ...(query.kinds?.length ? { kinds: query.kinds } : {}) }),
    store.countReview({ ...open, kinds: ['near-duplicate'] }),
    store.countReview({ ...open, kinds: ['contradiction'] }),
    store.countReview({ ...open, kinds: ['stale'] }),
  ]);
  return {
    items: entries.map(({ item, memories }) => ({ ...item, memories: memories.map((memory) => ({ memory, staleness: stalenessOf(cairn.deps, memory) })) })),
    total,
    counts: { 'near-duplicate': dup, contradiction: contra, stale },
  };
}

/** Queue near-duplicates and stale file references found among the `limit` newest memories. */
export async function scanForReview(cairn: Cairn, limit: number): Promise<{ scanned: number; queued: number }> {
  const deps = cairn.deps;
  const recent = await deps.store.listMemories({ order: 'created-desc', limit });
  const now = deps.clock.now();
  const items: ReviewItem[] = [];
  const seen = new Set<string>();
  const item = (kind: ReviewKind, key: string, memories: Memory[], reason: string, data: Record<string, unknown>): ReviewItem => ({
    id: deps.ids.next(now),
    kind,
    key,
    project: memories[0]?.project ?? null,
    memoryIds: memories.map((m) => m.id),
    reason,
    data,
    createdAt: now,
    resolvedAt: null,
    resolution: null,
  });
  const byId = new Map(recent.map((m) => [m.id, m]));
  for (const memory of recent) {
    if (memory.kind === 'continuation') continue;
    const stale = stalenessOf(deps, memory).files.filter((f) => f.status === 'file-missing' || f.status === 'file-changed');
    if (stale.length > 0) {
      const summary = stale.map((f) => `${f.path}${f.line ? `:${f.line}` : ''} ${f.status}`).join(', ');
      items.push(item('stale', `stale:${memory.id}:${sha256(summary).slice(0, 16)}`, [memory], `its files changed since it was written (${summary}): revise or forget it`, { files: stale }));
    }
    for (const near of await findSimilar(deps, memory.text, null, memory.project, memory.id)) {
      const other = byId.get(near.id) ?? (await deps.store.getMemory(near.id));
      if (!other || other.kind === 'continuation') continue;
      // Older first (A), as `cairn maintain` orders them: merging keeps A.
      const [a, b] = memory.createdAt < other.createdAt || (memory.createdAt === other.createdAt && memory.id < other.id) ? [memory, other] : [other, memory];
      const key = `dup:${[a.id, b.id].sort().join(':')}`;
      if (seen.has(key)) continue;
      seen.add(key);
      items.push(item('near-duplicate', key, [a, b], 'these memories say nearly the same thing: merge them, or keep both', { similarity: Math.round(near.similarity * 100) / 100 }));
    }
  }
  return { scanned: recent.length, queued: await deps.store.queueReview(items) };
}

export interface ResolveInput {
  action: ReviewAction;
  /** keep: the memory to keep. revise / forget: the memory acted on (default: the first). */
  memoryId?: string;
  /** revise: the new text. */
  text?: string;
}

/** Act on an item and mark it resolved. */
export async function resolveReview(cairn: Cairn, id: string, input: ResolveInput): Promise<ReviewResolution> {
  const store = cairn.deps.store;
  switch (input.action) {
    case 'merge':
      return cairn.resolveReview(id, { merge: true });
    case 'keep':
      if (!input.memoryId) throw invalid('say which memory to keep', 'memoryId');
      return cairn.resolveReview(id, { keep: input.memoryId });
    case 'keep-both':
    case 'dismiss':
      return cairn.resolveReview(id, { dismiss: true });
    default:
      break;
  }
  // revise / forget: a stale memory is changed like any other, then its item is closed.
  const item = await store.getReview(id);
  if (!item) throw new CairnError('NOT_FOUND', `review item ${id} not found`, { field: 'id' });
  if (item.resolvedAt !== null) throw new CairnError('CONFLICT', `review item ${id} was already resolved (${item.resolution})`, { field: 'id' });
  const target = input.memoryId ?? item.memoryIds[0];
  if (!target || !item.memoryIds.includes(target)) throw invalid(`memoryId must be one of ${item.memoryIds.join(', ')}`, 'memoryId');
  if (input.action === 'revise') {
    if (!input.text) throw invalid('give the new text', 'text');
    const revised = await cairn.revise(target, input.text);
    return { item: await store.resolveReview(id, `revised:${revised.memory.id}`, cairn.deps.clock.now()), forgotten: [], restored: [] };
  }
  const { forgotten } = await cairn.forget([target], `review ${id}: ${item.kind}`);
  return { item: await store.resolveReview(id, `forgotten:${target}`, cairn.deps.clock.now()), forgotten, restored: [] };
}
