/**
 * The review queue in the browser: near-duplicates (merge / keep both), contradictions (keep
 * one / keep both) and stale memories (revise / forget). Items come from the store's queue,
 * which distillation fills; `scan` adds what the browser can find itself among recent memories
 * — near-duplicates by term overlap (memory/similar.ts) and stale file references — keyed so
 * the same finding is queued once, even after it was resolved.
 */
import type { Cairn } from '../cairn.js';
import { CairnError, invalid } from '../errors.js';
import { findSimilar } from '../memory/similar.js';
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

export const REVIEW_ACTIONS = ['merge', 'keep-both', 'keep', 'revise', 'forget', 'dismiss'] as const;
export type ReviewAction = (typeof REVIEW_ACTIONS)[number];

export async function listReview(
  cairn: Cairn,
  query: { kinds?: ReviewKind[]; open: boolean; limit: number; offset: number },
): Promise<ReviewPage> {
  const store = cairn.deps.store;
  const filter = { open: query.open, ...(query.kinds?.length ? { kinds: query.kinds } : {}) };
  const [items, total, dup, contra, stale] = await Promise.all([
    store.listReview({ ...filter, limit: query.limit, offset: query.offset }),
    store.countReview(filter),
    store.countReview({ open: query.open, kinds: ['near-duplicate'] }),
    store.countReview({ open: query.open, kinds: ['contradiction'] }),
    store.countReview({ open: query.open, kinds: ['stale'] }),
  ]);
  const memories = new Map((await store.getMemories([...new Set(items.flatMap((i) => i.memoryIds))])).map((m) => [m.id, m]));
  return {
    items: items.map((item) => ({
      ...item,
      memories: item.memoryIds.flatMap((id) => {
        const memory = memories.get(id);
        return memory ? [{ memory, staleness: stalenessOf(cairn.deps, memory) }] : [];
      }),
    })),
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
  for (const memory of recent) {
    const staleness = stalenessOf(deps, memory);
    const bad = staleness.files.filter((f) => f.status === 'file-missing' || f.status === 'file-changed' || f.status === 'line-moved');
    if (bad.length > 0) {
      const signature = memory.files.map((f) => f.hash ?? '').join(',');
      items.push({
        id: deps.ids.next(now),
        kind: 'stale',
        key: `stale:${memory.id}:${signature}`,
        project: memory.project,
        memoryIds: [memory.id],
        reason: `${bad.map((f) => `${f.path} ${f.status.replace('file-', '')}`).join(', ')}: revise it, or forget it`,
        data: { files: bad },
        createdAt: now,
        resolvedAt: null,
        resolution: null,
      });
    }
    for (const near of await findSimilar(deps, memory.text, null, memory.project, memory.id)) {
      const pair = [memory.id, near.id].sort();
      const key = `near-duplicate:${pair.join(':')}`;
      if (seen.has(key)) continue;
      seen.add(key);
      items.push({
        id: deps.ids.next(now),
        kind: 'near-duplicate',
        key,
        project: memory.project,
        memoryIds: pair,
        reason: `these say nearly the same thing (${Math.round(near.similarity * 100)}% overlap): merge into one, or keep both`,
        data: { similarity: near.similarity },
        createdAt: now,
        resolvedAt: null,
        resolution: null,
      });
    }
  }
  return { scanned: recent.length, queued: await deps.store.queueReview(items) };
}

export interface ResolveInput {
  action: ReviewAction;
  /** merge / keep: the memory to keep. revise / forget: the memory acted on (default: the first). */
  memoryId?: string;
  /** revise: the new text. */
  text?: string;
}

/** Act on an item and mark it resolved; returns the item and the memories changed. */
export async function resolveReview(cairn: Cairn, id: string, input: ResolveInput): Promise<{ item: ReviewItem; changed: string[] }> {
  const store = cairn.deps.store;
  const item = await store.getReview(id);
  if (!item) throw new CairnError('NOT_FOUND', `review item ${id} not found`, { field: 'id' });
  if (item.resolvedAt !== null) throw new CairnError('CONFLICT', `review item ${id} was already resolved (${item.resolution})`);
  const pick = (): string => {
    const target = input.memoryId ?? item.memoryIds[0];
    if (!target || !item.memoryIds.includes(target)) throw invalid(`memoryId must be one of ${item.memoryIds.join(', ')}`, 'memoryId');
    return target;
  };
  const changed: string[] = [];
  let resolution: string;
  switch (input.action) {
    case 'merge':
    case 'keep': {
      const keep = pick();
      const others = item.memoryIds.filter((m) => m !== keep);
      const live = (await store.getMemories(others)).filter((m) => m.deletedAt === null && m.validTo === null).map((m) => m.id);
      if (live.length > 0) {
        const reason = input.action === 'merge' ? `near-duplicate of ${keep}` : `contradicted by ${keep}`;
        changed.push(...(await cairn.forget(live, reason)).forgotten);
      }
      resolution = `${input.action === 'merge' ? 'merged' : 'kept'}:${keep}`;
      break;
    }
    case 'revise': {
      if (!input.text) throw invalid('give the new text', 'text');
      const result = await cairn.revise(pick(), input.text);
      changed.push(result.memory.id);
      resolution = `revised:${result.memory.id}`;
      break;
    }
    case 'forget': {
      const target = pick();
      changed.push(...(await cairn.forget([target], `review: ${item.kind}`)).forgotten);
      resolution = `forgotten:${target}`;
      break;
    }
    case 'keep-both':
      resolution = 'kept-both';
      break;
    default:
      resolution = 'dismissed';
  }
  return { item: await store.resolveReview(id, resolution, cairn.deps.clock.now()), changed };
}
