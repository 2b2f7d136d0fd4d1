/**
 * Undo from the event log. Every change cairn makes is an event (create, revise, supersede,
 * forget, restore, update, pin, unpin); undoing one makes the opposite change, as new events —
 * history is never rewritten: a forget is undone by a restore, a revision by superseding back
 * to the earlier text, a metadata update by writing the earlier values back.
 *
 * Which events were undone, and which events undos produced, is kept in the store's state so
 * that "undo" again walks further back (instead of undoing the undo), across restarts.
 */
import type { Cairn } from '../cairn.js';
import { CairnError, invalid } from '../errors.js';
import type { UpdateInput } from '../memory/lifecycle.js';
import type { EventType, Kind, Memory, MemoryEvent } from '../types.js';

const STATE_KEY = 'web.undo';
const KEEP = 2000;
/** Events that are changes (access and merge are not undoable). */
export const UNDOABLE: readonly EventType[] = ['create', 'revise', 'supersede', 'forget', 'restore', 'update', 'pin', 'unpin'];
/** How far back "undo the last change" looks. */
const WINDOW = 500;

interface UndoState {
  undone: number[];
  produced: number[];
}

export interface UndoResult {
  /** The change that was undone (its primary event). */
  undone: MemoryEvent;
  /** One line saying what happened. */
  description: string;
  /** The memory to show afterwards. */
  memoryId: string;
  /** Events the undo wrote. */
  events: MemoryEvent[];
}

export interface UndoPreview {
  event: MemoryEvent;
  description: string;
}

function short(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > 60 ? `${one.slice(0, 59)}…` : one;
}

export class UndoLog {
  constructor(private readonly cairn: Cairn) {}

  private async state(): Promise<UndoState> {
    const raw = await this.cairn.deps.store.getState(STATE_KEY);
    if (!raw) return { undone: [], produced: [] };
    try {
      const parsed = JSON.parse(raw) as Partial<UndoState>;
      return { undone: parsed.undone ?? [], produced: parsed.produced ?? [] };
    } catch {
      return { undone: [], produced: [] };
    }
  }

  private async save(state: UndoState): Promise<void> {
    const trim = (ids: number[]): number[] => [...new Set(ids)].sort((a, b) => a - b).slice(-KEEP);
    await this.cairn.deps.store.setState(STATE_KEY, JSON.stringify({ undone: trim(state.undone), produced: trim(state.produced) }));
  }

  /** The newest event id, to find what an operation wrote. */
  async mark(): Promise<number> {
    const [latest] = await this.cairn.deps.store.listEvents({ limit: 1 });
    return latest?.id ?? 0;
  }

  /** Events written after `mark` (oldest first). */
  async since(mark: number): Promise<MemoryEvent[]> {
    const events = await this.cairn.deps.store.listEvents({ limit: 200, types: [...UNDOABLE] });
    return events.filter((e) => (e.id ?? 0) > mark).reverse();
  }

  /**
   * Which of `events` can still be undone. A revision writes three events (create, supersede,
   * revise) and is one change: only its last event is offered.
   */
  async undoable(events: MemoryEvent[]): Promise<Set<number>> {
    const state = await this.state();
    const done = new Set([...state.undone]);
    const revisedBy = new Set(events.filter((e) => e.type === 'revise' && typeof e.data.by === 'string').map((e) => e.data.by as string));
    const partOfRevision = (e: MemoryEvent): boolean =>
      (e.type === 'create' && typeof e.data.supersedes === 'string') || (e.type === 'supersede' && revisedBy.has(e.data.by as string));
    return new Set(
      events.filter((e) => e.id !== undefined && UNDOABLE.includes(e.type) && !done.has(e.id) && !partOfRevision(e)).map((e) => e.id as number),
    );
  }

  /** The change "undo" would undo now, or null when there is none. */
  async preview(): Promise<UndoPreview | null> {
    const target = await this.latest();
    if (!target) return null;
    const { change, effect } = await this.describe(target);
    return { event: target, description: `the ${change} (undo ${effect})` };
  }

  private async latest(): Promise<MemoryEvent | null> {
    const state = await this.state();
    const skip = new Set([...state.undone, ...state.produced]);
    const events = await this.cairn.deps.store.listEvents({ limit: WINDOW, types: [...UNDOABLE] });
    return events.find((e) => e.id !== undefined && !skip.has(e.id)) ?? null;
  }

  private async memory(id: string): Promise<Memory> {
    const memory = await this.cairn.deps.store.getMemory(id);
    if (!memory) throw new CairnError('NOT_FOUND', `memory ${id} not found`, { field: 'eventId' });
    return memory;
  }

  /** For a revision: the memory it replaced and the one that replaced it. */
  private pairOf(event: MemoryEvent): { oldId: string; newId: string } | null {
    if (event.type === 'create' && typeof event.data.supersedes === 'string') return { oldId: event.data.supersedes, newId: event.memoryId };
    if ((event.type === 'revise' || event.type === 'supersede') && typeof event.data.by === 'string') return { oldId: event.memoryId, newId: event.data.by };
    return null;
  }

  /** What the change was, and what undoing it does. */
  async describe(event: MemoryEvent): Promise<{ change: string; effect: string }> {
    const memory = await this.cairn.deps.store.getMemory(event.memoryId);
    const what = memory ? `“${short(memory.text)}”` : event.memoryId;
    if (this.pairOf(event)) return { change: `revision of ${what}`, effect: 'supersedes it back to the earlier text' };
    switch (event.type) {
      case 'forget':
        return { change: `forget of ${what}`, effect: 'restores it' };
      case 'restore':
        return { change: `restore of ${what}`, effect: 'forgets it again' };
      case 'create':
        return { change: `creation of ${what}`, effect: 'forgets it' };
      case 'pin':
        return { change: `pin of ${what}`, effect: 'unpins it' };
      case 'unpin':
        return { change: `unpin of ${what}`, effect: 'pins it again' };
      default:
        return { change: `${event.type} of ${what}`, effect: 'writes the earlier values back' };
    }
  }

  /** Undo event `eventId`, or the newest change not undone yet. */
  async undo(eventId?: number): Promise<UndoResult> {
    const deps = this.cairn.deps;
    let target: MemoryEvent | null;
    if (eventId === undefined) {
      target = await this.latest();
      if (!target) throw new CairnError('NOT_FOUND', 'nothing to undo');
    } else {
      const events = await deps.store.listEvents({ limit: WINDOW * 20, types: [...UNDOABLE] });
      target = events.find((e) => e.id === eventId) ?? null;
      if (!target) throw new CairnError('NOT_FOUND', `event ${eventId} not found among the recent changes`, { field: 'eventId' });
    }
    const state = await this.state();
    if (state.undone.includes(target.id as number)) throw new CairnError('CONFLICT', `event ${target.id} was already undone`, { field: 'eventId' });

    const { change } = await this.describe(target);
    const before = await this.mark();
    const group = new Set<number>([target.id as number]);
    let memoryId = target.memoryId;
    const pair = this.pairOf(target);

    if (pair) {
      const [older, newer] = await Promise.all([this.memory(pair.oldId), this.memory(pair.newId)]);
      if (newer.validTo !== null) throw new CairnError('CONFLICT', 'that memory was revised again since; undo the newer revision first');
      if (newer.deletedAt !== null) throw new CairnError('CONFLICT', 'the newer version is forgotten; restore it first');
      const result = await this.cairn.revise(newer.id, older.text, { kind: older.kind, tags: older.tags, importance: older.importance });
      memoryId = result.memory.id;
      // The create, supersede and revise events of one revision are one change.
      const recent = await deps.store.listEvents({ limit: WINDOW, types: ['create', 'supersede', 'revise'] });
      for (const e of recent) {
        const p = this.pairOf(e);
        if (e.id !== undefined && p && p.oldId === pair.oldId && p.newId === pair.newId) group.add(e.id);
      }
    } else {
      const memory = await this.memory(target.memoryId);
      switch (target.type) {
        case 'forget':
          if (memory.deletedAt === null) throw new CairnError('CONFLICT', 'that memory is not forgotten any more');
          await this.cairn.restore(memory.id);
          break;
        case 'restore':
        case 'create':
          if (memory.deletedAt !== null) throw new CairnError('CONFLICT', 'that memory is already forgotten');
          if (memory.validTo !== null) throw new CairnError('CONFLICT', 'that memory was revised since; undo the revision first');
          await this.cairn.forget([memory.id], `undo of ${target.type}`);
          break;
        case 'pin':
        case 'unpin':
          await this.cairn.update(memory.id, { pinned: target.type === 'unpin' });
          break;
        case 'update': {
          const prior = target.data.before as Partial<{ tags: string[]; importance: number; kind: Kind; pinned: boolean }> | undefined;
          if (!prior) throw invalid('this update did not record the earlier values', 'eventId');
          const back: UpdateInput = {};
          const after = (target.data.after ?? {}) as Record<string, unknown>;
          // Write back only what the update changed.
          if ('tags' in after && prior.tags) back.tags = prior.tags;
          if ('importance' in after && prior.importance !== undefined) back.importance = prior.importance;
          if ('kind' in after && prior.kind) back.kind = prior.kind;
          if ('pinned' in after && prior.pinned !== undefined) back.pinned = prior.pinned;
          await this.cairn.update(memory.id, back);
          break;
        }
        default:
          throw invalid(`a ${target.type} cannot be undone`, 'eventId');
      }
    }
    const events = await this.since(before);
    const fresh = await this.state();
    await this.save({
      undone: [...fresh.undone, ...group],
      produced: [...fresh.produced, ...events.map((e) => e.id as number)],
    });
    return { undone: target, description: `undid the ${change}`, memoryId, events };
  }
}
