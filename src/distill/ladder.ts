/**
 * The write path of distilled candidates: quality gate → scope → subject (contradictions) →
 * exact duplicate (normalised hash) → near duplicate (shingle Jaccard, cosine when an embedder
 * is present) → merge into the existing memory or store a new one.
 *
 * Unlike an explicit `remember`, which only reports similar memories, what comes from
 * transcripts merges automatically: the existing memory gains importance, usage and the new
 * provenance in `provenance.also`. A claim about a subject that an active memory already claims
 * differently supersedes it when the evidence is strong and newer, and is queued for review
 * otherwise. Merging is idempotent: a turn already in a memory's provenance changes nothing.
 */
import { statSync } from 'node:fs';
import { embedAll, type Deps } from '../deps.js';
import { CairnError } from '../errors.js';
import { contentHash, sha256 } from '../memory/normalize.js';
import { prepareMemory } from '../memory/remember.js';
import { cosine } from '../memory/similar.js';
import type { Kind, Memory, MemoryEvent, Provenance, ReviewItem } from '../types.js';
import { gateReason } from './gate.js';
import { assignScope } from './scope.js';
import { NEAR_DUPLICATE_COSINE, NEAR_DUPLICATE_JACCARD, SAME_TOPIC_JACCARD, opposite, textSimilarity } from './similarity.js';
import type { Candidate, Outcome } from './types.js';

/** Provenance entries kept per memory (the oldest drop off). */
const MAX_ALSO = 50;
/** Importance a merge adds (a thing seen again matters more), up to {@link MAX_MERGED_IMPORTANCE}. */
const MERGE_BOOST = 0.05;
const MAX_MERGED_IMPORTANCE = 0.95;
/** Sightings after which a correction becomes a standing rule (`procedure`). */
const CORRECTION_TO_PROCEDURE = 2;

/** Kinds that may be merged into each other when their texts nearly match. */
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

export interface LadderContext {
  deps: Deps;
  /** Project identity of the session the candidates come from. */
  project: string | null;
  sessionId: string | null;
  /** Folder file references resolve against (the session's, when it exists here). */
  workspaceRoot: string | null;
  dryRun: boolean;
}

/** The session's folder when it exists on this machine (file hashes are captured against it). */
export function existingDir(path: string | null): string | null {
  if (path === null) return null;
  try {
    return statSync(path).isDirectory() ? path : null;
  } catch {
    return null;
  }
}

/** State key of the subject index: which memory currently holds a claim about `key`. */
export function subjectStateKey(project: string | null, key: string): string {
  return `distill:subject:${sha256(`${project ?? ''}\0${key}`).slice(0, 32)}`;
}

function sameValue(a: unknown, b: string): boolean {
  return typeof a === 'string' && a.replace(/\s+/g, ' ').trim() === b.replace(/\s+/g, ' ').trim();
}

/** The memory a subject points at, following revisions to the active version. */
async function subjectHolder(deps: Deps, project: string | null, key: string): Promise<Memory | null> {
  const id = await deps.store.getState(subjectStateKey(project, key));
  if (id === null) return null;
  const memory = await deps.store.getMemory(id);
  if (!memory) return null;
  if (memory.validTo === null) return memory;
  const versions = await deps.store.versions(id);
  return versions.filter((v) => v.validTo === null).at(-1) ?? null;
}

function provenanceIds(memory: Memory): Set<string> {
  const ids = new Set<string>();
  const p = memory.provenance;
  if (p?.turnId) ids.add(p.turnId);
  for (const also of p?.also ?? []) if (also.turnId) ids.add(also.turnId);
  return ids;
}

/** Fold a candidate into an existing memory: importance and usage up, provenance appended. */
async function merge(ctx: LadderContext, existing: Memory, candidate: Candidate, how: 'exact' | 'near' | 'subject'): Promise<Outcome> {
  const turnId = candidate.provenance.turnId;
  if (turnId !== undefined && provenanceIds(existing).has(turnId)) return { action: 'unchanged', id: existing.id };
  if (ctx.dryRun) return { action: 'merged', id: existing.id, how };
  const { deps } = ctx;
  const at = deps.clock.now();
  const { also: previous = [], ...primary } = existing.provenance ?? {};
  const { also: _ignored, ...incoming } = candidate.provenance;
  const provenance: Provenance = existing.provenance === null ? incoming : { ...primary, also: [...previous, incoming].slice(-MAX_ALSO) };
  const seen = (typeof existing.meta.seen === 'number' ? existing.meta.seen : 1) + 1;
  const importance = Math.min(MAX_MERGED_IMPORTANCE, Math.max(existing.importance, candidate.importance) + MERGE_BOOST);
  const promote = existing.kind === 'correction' && existing.source === 'distill' && seen >= CORRECTION_TO_PROCEDURE;
  await deps.store.patchMemory(
    existing.id,
    {
      updatedAt: at,
      importance,
      provenance,
      meta: { ...existing.meta, seen, lastSeenAt: candidate.at ?? at },
      ...(promote ? { kind: 'procedure' as const, tags: [...new Set([...existing.tags, 'repeated-correction'])] } : {}),
    },
    { memoryId: existing.id, type: 'merge', at, actor: deps.actor, data: { how, from: incoming, extractor: candidate.extractor, ...(promote ? { kind: { from: 'correction', to: 'procedure' } } : {}) } },
  );
  await deps.store.touch([existing.id], at, false);
  return { action: 'merged', id: existing.id, how };
}

/** Store a prepared memory (closing `closes` when it supersedes one). */
async function write(ctx: LadderContext, memory: Memory, candidate: Candidate, closes: Memory | null): Promise<{ memory: Memory; inserted: boolean }> {
  const { deps } = ctx;
  const [vector] = await embedAll(deps, [memory.text]);
  const at = memory.createdAt;
  const events: MemoryEvent[] = [
    { memoryId: memory.id, type: 'create', at, actor: deps.actor, data: { source: 'distill', kind: memory.kind, extractor: candidate.extractor, supersedes: memory.supersedes } },
  ];
  if (closes) events.push({ memoryId: closes.id, type: 'supersede', at, actor: deps.actor, data: { by: memory.id, subject: candidate.subject?.key ?? null } });
  return deps.store.writeMemory({
    memory,
    ...(vector && deps.embedder ? { embedding: { model: deps.embedder, vector } } : {}),
    events,
    ...(closes ? { closes: { id: closes.id, at } } : {}),
  });
}

async function queue(ctx: LadderContext, item: Omit<ReviewItem, 'id' | 'createdAt' | 'resolvedAt' | 'resolution'> & { resolution?: string }): Promise<string> {
  const at = ctx.deps.clock.now();
  const id = ctx.deps.ids.next(at);
  await ctx.deps.store.queueReview([{ ...item, id, createdAt: at, resolvedAt: item.resolution ? at : null, resolution: item.resolution ?? null }]);
  return id;
}

/** Near-duplicates of a text among active memories of the same project (and the user's), most similar first. */
export async function nearest(ctx: Pick<LadderContext, 'deps'>, memory: Pick<Memory, 'text' | 'project'>): Promise<Array<{ memory: Memory; similarity: number }>> {
  const { deps } = ctx;
  const filter = memory.project === null ? { project: null } : { project: memory.project };
  const ids = new Set((await deps.store.searchText(memory.text, { ...filter, limit: 12 })).map((h) => h.id));
  let vector: Float32Array | null = null;
  if (deps.embedder) {
    [vector] = (await embedAll(deps, [memory.text])) as [Float32Array | null];
    if (vector) for (const hit of await deps.store.searchVector(vector, deps.embedder, { ...filter, limit: 6 })) ids.add(hit.id);
  }
  if (ids.size === 0) return [];
  const memories = await deps.store.getMemories([...ids]);
  const vectors = vector && deps.embedder ? await deps.store.getVectors([...ids], deps.embedder) : new Map<string, Float32Array>();
  const out: Array<{ memory: Memory; similarity: number }> = [];
  for (const other of memories) {
    if (other.kind === 'continuation') continue;
    const otherVector = vectors.get(other.id);
    const cos = vector && otherVector ? cosine(vector, otherVector) : 0;
    const jac = textSimilarity(memory.text, other.text);
    out.push({ memory: other, similarity: Math.max(jac, cos >= NEAR_DUPLICATE_COSINE ? cos : 0) });
  }
  return out.sort((a, b) => b.similarity - a.similarity);
}

/**
 * Run one candidate down the ladder and report what happened to it. Another process may have
 * superseded the same memory in between (two hooks distilling one session): the candidate is then
 * run once more against what is current.
 */
export async function applyCandidate(ctx: LadderContext, candidate: Candidate): Promise<Outcome> {
  try {
    return await applyOnce(ctx, candidate);
  } catch (error) {
    if (!(error instanceof CairnError) || error.code !== 'CONFLICT') throw error;
    return applyOnce(ctx, candidate);
  }
}

async function applyOnce(ctx: LadderContext, candidate: Candidate): Promise<Outcome> {
  const rejected = gateReason(candidate);
  if (rejected) return { action: 'rejected', reason: rejected };
  const scope = assignScope(candidate, ctx.project);
  if (scope === null) return { action: 'rejected', reason: 'no-scope' };
  const { deps } = ctx;
  const now = deps.clock.now();
  const createdAt = candidate.at !== null && candidate.at <= now ? candidate.at : now;
  const { memory } = prepareMemory(
    { ...deps, workspaceRoot: ctx.workspaceRoot },
    {
      text: candidate.text,
      kind: candidate.kind,
      scope,
      project: scope === 'user' ? null : ctx.project,
      session: ctx.sessionId,
      tags: candidate.tags,
      importance: candidate.importance,
      files: candidate.files,
      source: 'distill',
      provenance: candidate.provenance,
      createdAt,
      meta: { extractor: candidate.extractor, ...(candidate.subject ? { subject: candidate.subject.key, value: candidate.subject.value } : {}) },
    },
  );

  // 1. Subject: a claim about something an active memory already makes a claim about.
  const subject = candidate.subject;
  let holder: Memory | null = null;
  if (subject) {
    holder = await subjectHolder(deps, memory.project, subject.key);
    if (holder && holder.deletedAt !== null) {
      // Forgotten by the user: the same claim stays forgotten; a new one is stored afresh.
      if (sameValue(holder.meta.value, subject.value)) return { action: 'unchanged', id: holder.id };
      holder = null;
    }
    if (holder) {
      if (candidate.kind === 'continuation' && holder.text === memory.text) return { action: 'unchanged', id: holder.id };
      if (candidate.kind !== 'continuation' && (sameValue(holder.meta.value, subject.value) || subject.onConflict === 'merge')) return merge(ctx, holder, candidate, 'subject');
      if (holder.validFrom > createdAt) return { action: 'outdated', id: holder.id };
    }
  }

  // 2. Exact duplicate (the store refuses a second active row with the same normalised text).
  const exact = await deps.store.findByContentHash(contentHash(memory.text), memory.project);
  if (exact && exact.id !== holder?.id) {
    return candidate.kind === 'continuation' ? { action: 'unchanged', id: exact.id } : merge(ctx, exact, candidate, 'exact');
  }

  // 3. Near duplicate, or a near text saying the opposite (a weak contradiction).
  let contradicts: Memory | null = null;
  if (candidate.kind !== 'continuation') {
    for (const near of await nearest(ctx, memory)) {
      if (near.memory.id === holder?.id || FAMILY[near.memory.kind] !== FAMILY[memory.kind]) continue;
      // Claims about different subjects (two files' signatures, two settings) are not duplicates.
      if (subject && typeof near.memory.meta.subject === 'string' && near.memory.meta.subject !== subject.key) continue;
      if (memory.files.length > 0 && near.memory.files.length > 0 && !memory.files.some((f) => near.memory.files.some((g) => g.path === f.path))) continue;
      const flips = (FAMILY[memory.kind] === 'rule' || memory.kind === 'decision') && opposite(memory.text, near.memory.text);
      if (near.similarity >= NEAR_DUPLICATE_JACCARD && !flips) return merge(ctx, near.memory, candidate, 'near');
      if (flips && near.similarity >= SAME_TOPIC_JACCARD) {
        contradicts = near.memory;
        break;
      }
    }
  }

  // 4. Store: superseding the subject's holder, or alongside it with a review item.
  const supersedes = holder && subject && (subject.onConflict === 'supersede' || candidate.kind === 'continuation') ? holder : null;
  if (ctx.dryRun) {
    if (candidate.kind === 'continuation') return { action: 'replaced', id: memory.id, replaced: supersedes?.id ?? null };
    if (supersedes) return { action: 'superseded', id: memory.id, replaced: supersedes.id, scope };
    if (holder || contradicts) return { action: 'queued', id: memory.id, reviewId: '(dry run)', scope };
    return { action: 'added', id: memory.id, scope };
  }
  const stored = await write(ctx, supersedes ? { ...memory, supersedes: supersedes.id } : memory, candidate, supersedes);
  if (!stored.inserted) return merge(ctx, stored.memory, candidate, 'exact');
  const id = stored.memory.id;
  if (subject) await deps.store.setState(subjectStateKey(memory.project, subject.key), id);
  if (candidate.kind === 'continuation') return { action: 'replaced', id, replaced: supersedes?.id ?? null };
  if (supersedes) {
    await queue(ctx, {
      kind: 'contradiction',
      key: `superseded:${supersedes.id}:${id}`,
      project: memory.project,
      memoryIds: [supersedes.id, id],
      reason: `newer claim about ${subject?.key} replaced the older one (undo with \`cairn review undo\`)`,
      data: { subject: subject?.key, before: supersedes.meta.value ?? null, after: subject?.value, evidence: candidate.provenance },
      resolution: 'auto-superseded',
    });
    return { action: 'superseded', id, replaced: supersedes.id, scope };
  }
  const other = holder ?? contradicts;
  if (other) {
    const pair = [other.id, id].sort();
    const reviewId = await queue(ctx, {
      kind: 'contradiction',
      key: `contradiction:${pair.join(':')}`,
      project: memory.project,
      memoryIds: [other.id, id],
      reason: holder ? `two claims about ${subject?.key}: keep one, or both if both hold` : 'these memories seem to say opposite things: keep one, or both if both hold',
      data: { subject: subject?.key ?? null, evidence: candidate.provenance },
    });
    return { action: 'queued', id, reviewId, scope };
  }
  return { action: 'added', id, scope };
}
