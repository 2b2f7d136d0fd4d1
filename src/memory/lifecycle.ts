import { CairnError, invalid, notFound } from '../errors.js';
import type { Deps } from '../deps.js';
import type { Kind, Memory, MemoryEvent, Snapshot } from '../types.js';
import { normalizeTags } from './normalize.js';
import { remember, type RememberResult } from './remember.js';

async function mustGet(deps: Deps, id: string): Promise<Memory> {
  const memory = await deps.store.getMemory(id);
  if (!memory) throw new CairnError('NOT_FOUND', `memory ${id} not found`, { field: 'id' });
  return memory;
}

function event(deps: Deps, memoryId: string, type: MemoryEvent['type'], data: Record<string, unknown> = {}): MemoryEvent {
  return { memoryId, type, at: deps.clock.now(), actor: deps.actor, data };
}

export interface ForgetResult {
  forgotten: string[];
  /** Ids that were already forgotten. */
  unchanged: string[];
}

/** Soft delete: the memory stops being recalled; `restore` undoes it. Unknown ids are an error (nothing changes). */
export async function forget(deps: Deps, ids: string[], reason?: string): Promise<ForgetResult> {
  if (ids.length === 0) throw invalid('give at least one memory id', 'ids');
  const memories = await Promise.all(ids.map((id) => mustGet(deps, id)));
  const result: ForgetResult = { forgotten: [], unchanged: [] };
  for (const memory of memories) {
    if (memory.deletedAt !== null) {
      result.unchanged.push(memory.id);
      continue;
    }
    const at = deps.clock.now();
    await deps.store.patchMemory(memory.id, { deletedAt: at, updatedAt: at }, event(deps, memory.id, 'forget', reason ? { reason } : {}));
    result.forgotten.push(memory.id);
  }
  return result;
}

/** Undo a forget. */
export async function restore(deps: Deps, id: string): Promise<Memory> {
  const memory = await mustGet(deps, id);
  if (memory.deletedAt === null) return memory;
  const at = deps.clock.now();
  return deps.store.patchMemory(id, { deletedAt: null, updatedAt: at }, event(deps, id, 'restore', { forgottenAt: memory.deletedAt }));
}

export interface ReviseOptions {
  tags?: string[];
  kind?: Kind;
  importance?: number;
}

/** A new version with `text` that supersedes `id` (the old one is closed, kept, and listed in versions). */
export async function revise(deps: Deps, id: string, text: string, options: ReviseOptions = {}): Promise<RememberResult> {
  const old = await mustGet(deps, id);
  if (old.validTo !== null) {
    throw new CairnError('CONFLICT', `memory ${id} was already superseded; revise its newest version instead`, { field: 'id' });
  }
  if (old.deletedAt !== null) throw new CairnError('CONFLICT', `memory ${id} is forgotten; restore it first`, { field: 'id' });
  const result = await remember(deps, {
    text,
    kind: options.kind ?? old.kind,
    tags: options.tags ?? old.tags,
    importance: options.importance ?? old.importance,
    scope: old.scope,
    project: old.project,
    session: old.session,
    files: old.files.map((f) => (f.line === undefined ? f.path : `${f.path}:${f.line}`)),
    supersedes: old.id,
    source: old.source,
    provenance: old.provenance,
    context: old.context,
    pinned: old.pinned,
    meta: old.meta,
  });
  await deps.store.appendEvents([event(deps, old.id, 'revise', { by: result.memory.id })]);
  return result;
}

export interface UpdateInput {
  tags?: string[];
  importance?: number;
  kind?: Kind;
  pinned?: boolean;
}

/** Change a memory's metadata in place (text changes go through `revise`, which keeps history). */
export async function update(deps: Deps, id: string, input: UpdateInput): Promise<Memory> {
  const memory = await mustGet(deps, id);
  if (input.importance !== undefined && !(input.importance >= 0 && input.importance <= 1)) {
    throw invalid(`importance must be between 0 and 1 (got ${input.importance})`, 'importance');
  }
  const at = deps.clock.now();
  const patch = {
    updatedAt: at,
    ...(input.tags !== undefined ? { tags: normalizeTags(input.tags) } : {}),
    ...(input.importance !== undefined ? { importance: input.importance } : {}),
    ...(input.kind !== undefined ? { kind: input.kind } : {}),
    ...(input.pinned !== undefined ? { pinned: input.pinned } : {}),
  };
  const before = { tags: memory.tags, importance: memory.importance, kind: memory.kind, pinned: memory.pinned };
  const type = input.pinned !== undefined && Object.keys(input).length === 1 ? (input.pinned ? 'pin' : 'unpin') : 'update';
  return deps.store.patchMemory(id, patch, event(deps, id, type, { before, after: input }));
}

/** Seal the current set of active memories (of this project and the user's) under a label. */
export async function snapshot(deps: Deps, label: string): Promise<Snapshot> {
  const clean = label.trim();
  if (clean.length === 0 || clean.length > 100) throw invalid('snapshot label must be 1–100 characters', 'label');
  const at = deps.clock.now();
  const filter = deps.project === null ? {} : { project: deps.project };
  return deps.store.createSnapshot({ id: deps.ids.next(at), label: clean, createdAt: at, memoryCount: 0 }, filter);
}

export async function resolveSnapshot(deps: Deps, idOrLabel: string): Promise<Snapshot> {
  const found = await deps.store.getSnapshot(idOrLabel);
  if (!found) throw new CairnError('NOT_FOUND', `snapshot "${idOrLabel}" not found (see \`cairn snapshots\`)`, { field: 'snapshot' });
  return found;
}

export interface SnapshotDiff {
  from: Snapshot | null;
  to: Snapshot | null;
  added: Memory[];
  removed: Memory[];
  /** Removed memories replaced by an added newer version. */
  revised: Array<{ before: Memory; after: Memory }>;
}

/** The set of memory ids at a snapshot, or now (active memories) when `ref` is 'now'. */
async function membersAt(deps: Deps, ref: string): Promise<{ snapshot: Snapshot | null; ids: Set<string> }> {
  if (ref === 'now') {
    const filter = deps.project === null ? {} : { project: deps.project };
    const all = await deps.store.listMemories({ ...filter, limit: 10_000_000 });
    return { snapshot: null, ids: new Set(all.map((m) => m.id)) };
  }
  const snap = await resolveSnapshot(deps, ref);
  return { snapshot: snap, ids: await deps.store.snapshotMemberIds(snap.id) };
}

/** What changed between two snapshots (`now` names the current state). */
export async function diff(deps: Deps, fromRef: string, toRef: string): Promise<SnapshotDiff> {
  const [from, to] = await Promise.all([membersAt(deps, fromRef), membersAt(deps, toRef)]);
  const addedIds = [...to.ids].filter((id) => !from.ids.has(id));
  const removedIds = [...from.ids].filter((id) => !to.ids.has(id));
  const added = await deps.store.getMemories(addedIds);
  const removed = await deps.store.getMemories(removedIds);
  const removedById = new Map(removed.map((m) => [m.id, m]));
  const revised: SnapshotDiff['revised'] = [];
  const replaced = new Set<string>();
  for (const after of added) {
    // Follow the supersedes chain back to a removed ancestor (several revisions may lie between).
    let cursor = after.supersedes;
    const seen = new Set<string>();
    while (cursor && !seen.has(cursor)) {
      seen.add(cursor);
      const before = removedById.get(cursor);
      if (before) {
        revised.push({ before, after });
        replaced.add(before.id);
        replaced.add(after.id);
        break;
      }
      cursor = (await deps.store.getMemory(cursor))?.supersedes ?? null;
    }
  }
  return {
    from: from.snapshot,
    to: to.snapshot,
    added: added.filter((m) => !replaced.has(m.id)),
    removed: removed.filter((m) => !replaced.has(m.id)),
    revised,
  };
}

export interface MemoryDetail {
  memory: Memory;
  versions: Memory[];
  events: MemoryEvent[];
}

/** One memory with all its versions and its audit trail; counts as an access. */
export async function getDetail(deps: Deps, id: string): Promise<MemoryDetail> {
  const memory = await deps.store.getMemory(id);
  if (!memory) throw notFound(`memory ${id}`);
  const versions = await deps.store.versions(id);
  const events = (
    await Promise.all(versions.map((v) => deps.store.listEvents({ memoryId: v.id, limit: 1000 })))
  ).flat();
  events.sort((a, b) => a.at - b.at || (a.id ?? 0) - (b.id ?? 0));
  await deps.store.touch([id], deps.clock.now(), false);
  return { memory, versions, events };
}
