/**
 * Growth over time without reading the memories: one indexed count per time bucket (days,
 * weeks or months, whichever keeps the chart under ~120 bars).
 */
import type { Cairn } from '../cairn.js';

const DAY = 86_400_000;

export interface GrowthBucket {
  /** Bucket start, epoch ms (UTC midnight). */
  start: number;
  /** Memories written in the bucket (every version, forgotten ones too). */
  created: number;
}

export interface Growth {
  unit: 'day' | 'week' | 'month';
  buckets: GrowthBucket[];
  /** Memories written before the first bucket (none: the first bucket holds the oldest). */
  total: number;
}

function startOfDay(ms: number): number {
  return Math.floor(ms / DAY) * DAY;
}

function nextMonth(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

export async function growth(cairn: Cairn): Promise<Growth> {
  const store = cairn.deps.store;
  const all = { includeSuperseded: true, includeDeleted: true } as const;
  const [first] = await store.listMemories({ ...all, order: 'created-asc', limit: 1 });
  const [last] = await store.listMemories({ ...all, order: 'created-desc', limit: 1 });
  if (!first || !last) return { unit: 'day', buckets: [], total: 0 };
  const spanDays = (last.createdAt - first.createdAt) / DAY;
  const unit = spanDays <= 120 ? 'day' : spanDays <= 800 ? 'week' : 'month';
  const starts: number[] = [];
  let at = unit === 'month' ? Date.UTC(new Date(first.createdAt).getUTCFullYear(), new Date(first.createdAt).getUTCMonth(), 1) : startOfDay(first.createdAt);
  while (at <= last.createdAt) {
    starts.push(at);
    at = unit === 'month' ? nextMonth(at) : at + (unit === 'week' ? 7 : 1) * DAY;
  }
  const buckets = await Promise.all(
    starts.map(async (start, i) => ({
      start,
      created: await store.countMemories({ ...all, createdAfter: start, createdBefore: starts[i + 1] ?? last.createdAt + 1 }),
    })),
  );
  return { unit, buckets, total: buckets.reduce((sum, b) => sum + b.created, 0) };
}
