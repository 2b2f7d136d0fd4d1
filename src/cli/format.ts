import type { SimilarMemory } from '../memory/similar.js';
import type { SnapshotDiff } from '../memory/lifecycle.js';
import type { RecallHit } from '../recall/recall.js';
import type { Memory, Snapshot } from '../types.js';

export function day(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export function when(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 16);
}

function oneLine(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** `01J… [fact · project] text  #tag` */
export function memoryLine(memory: Memory, max = 160): string {
  const tags = memory.tags.length > 0 ? `  ${memory.tags.map((t) => `#${t}`).join(' ')}` : '';
  const flags = [memory.pinned ? 'pinned' : '', memory.deletedAt !== null ? 'forgotten' : '', memory.validTo !== null ? 'superseded' : '']
    .filter(Boolean)
    .join(', ');
  return `${memory.id} [${memory.kind} · ${memory.scope}${flags ? ` · ${flags}` : ''}] ${oneLine(memory.text, max)}${tags}`;
}

export function similarLines(similar: SimilarMemory[]): string[] {
  if (similar.length === 0) return [];
  return [
    'similar memories already stored (not merged — forget or revise if this repeats one):',
    ...similar.map((s) => `  ${s.id} (${Math.round(s.similarity * 100)}%) ${oneLine(s.text, 120)}`),
  ];
}

const pct = (x: number): string => x.toFixed(2);

/** A recall hit with its score broken down, as shown by `cairn recall`. */
export function recallHitLines(hit: RecallHit, rank: number): string[] {
  const { memory, why, staleness } = hit;
  const lines = [`${rank}. ${memoryLine(memory)}`];
  const parts = [
    `score ${pct(why.score)}`,
    `relevance ${pct(why.relevance)} (bm25 #${why.bm25Rank ?? '–'}${why.vectorRank !== null ? `, vector #${why.vectorRank} cos ${pct(why.cosine ?? 0)}` : ''}, coverage ${pct(why.coverage)}${why.neighbour > 0 ? `, +${pct(why.neighbour)} from adjacent turns` : ''})`,
    `recency ${pct(why.recency)} (half-life ${why.halfLifeDays}d)`,
    `importance ${pct(why.importance)}`,
    `usage ${pct(why.usage)}`,
  ];
  if (why.recentlyRecalledPenalty > 0) parts.push(`recently recalled −${pct(why.recentlyRecalledPenalty)}`);
  if (why.matchedTags.length > 0) parts.push(`tags ×${pct(why.tagBoost)} (${why.matchedTags.join(', ')})`);
  if (why.scopeFactor !== 1) parts.push(`${why.scope} scope ×${pct(why.scopeFactor)}`);
  if (why.pinned) parts.push('pinned first');
  lines.push(`   why: ${parts.join(' · ')}`);
  if (staleness.stale) {
    const files = staleness.files
      .filter((f) => f.status !== 'ok' && f.status !== 'unknown')
      .map((f) => `${f.path}${f.line ? `:${f.line}` : ''} ${f.status}${f.movedTo ? ` → line ${f.movedTo}` : ''}`);
    lines.push(`   STALE: ${staleness.reasons.join(', ')}${files.length ? ` (${files.join('; ')})` : ''}`);
  }
  return lines;
}

export function snapshotLine(snapshot: Snapshot): string {
  return `${snapshot.label}  ${when(snapshot.createdAt)}  ${snapshot.memoryCount} memories  (${snapshot.id})`;
}

export function diffLines(result: SnapshotDiff): string[] {
  const name = (s: Snapshot | null): string => (s ? s.label : 'now');
  const lines = [`diff ${name(result.from)} → ${name(result.to)}: +${result.added.length} −${result.removed.length} ~${result.revised.length}`];
  for (const m of result.added) lines.push(`+ ${memoryLine(m)}`);
  for (const m of result.removed) lines.push(`- ${memoryLine(m)}`);
  for (const r of result.revised) {
    lines.push(`~ ${r.before.id} → ${r.after.id}`);
    lines.push(`    was: ${oneLine(r.before.text, 140)}`);
    lines.push(`    now: ${oneLine(r.after.text, 140)}`);
  }
  return lines;
}

export function bytes(n: number | null): string {
  if (n === null) return '–';
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}
