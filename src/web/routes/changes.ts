/**
 * What changed: the event log (with undo), snapshots (timeline, sealing a new one) and the
 * diff between any two of them or a snapshot and now.
 */
import { diffWords } from 'diff';
import { z } from 'zod';
import { snapshotInput } from '../../mcp/schemas.js';
import { EVENT_TYPES } from '../../types.js';
import { body, defined, listParam, numberParam, parseWith, stringParam } from '../http.js';
import type { Routes } from '../state.js';
import { UNDOABLE } from '../undo.js';
import { tracked } from './memories.js';

const eventsQuery = {
  since: z.number().min(0).optional(),
  limit: z.number().int().min(1).max(1000).default(100),
  types: z.array(z.enum(EVENT_TYPES)).optional(),
};

const diffQuery = { from: snapshotInput.label, to: snapshotInput.label.default('now') };

/** Word-level changes from `before` to `after`: runs of kept, inserted and deleted text. */
export function wordDiff(before: string, after: string): Array<{ op: 'same' | 'add' | 'del'; text: string }> {
  return diffWords(before, after).map((part) => ({ op: part.added ? 'add' : part.removed ? 'del' : 'same', text: part.value }));
}

export const changeRoutes: Routes = (api, state) => {
  const { cairn } = state;
  const store = cairn.deps.store;

  api.get('/events', async (c) => {
    const query = parseWith(
      eventsQuery,
      defined({ since: numberParam(c, 'since'), limit: numberParam(c, 'limit'), types: listParam(c, 'types') ?? [...UNDOABLE] }),
    );
    const events = await store.listEvents({ limit: query.limit, ...(query.since !== undefined ? { since: query.since } : {}), ...(query.types ? { types: query.types } : {}) });
    const [memories, undoable] = await Promise.all([store.getMemories([...new Set(events.map((e) => e.memoryId))]), state.undo.undoable(events)]);
    const byId = new Map(memories.map((m) => [m.id, m]));
    return c.json({
      events: events.map((e) => {
        const m = byId.get(e.memoryId);
        return { ...e, undoable: e.id !== undefined && undoable.has(e.id), memory: m ? { id: m.id, text: m.text, kind: m.kind } : null };
      }),
    });
  });

  api.get('/undo', async (c) => c.json({ next: await state.undo.preview() }));

  api.post('/undo', async (c) => {
    const input = await body(c, { eventId: z.number().int().min(1).optional() });
    const { result, events } = await tracked(state, () => state.undo.undo(input.eventId));
    return c.json({ ...result, events });
  });

  api.get('/snapshots', async (c) => {
    const snapshots = await cairn.snapshots();
    return c.json({ snapshots });
  });

  api.post('/snapshots', async (c) => {
    const input = await body(c, snapshotInput);
    const snapshot = await cairn.snapshot(input.label);
    state.changed();
    return c.json(snapshot, 201);
  });

  api.get('/diff', async (c) => {
    const query = parseWith(diffQuery, defined({ from: stringParam(c, 'from'), to: stringParam(c, 'to') }));
    const result = await cairn.diff(query.from, query.to);
    // A revision shows as the memory with its words struck and inserted, not as two texts to compare.
    return c.json({ ...result, revised: result.revised.map((r) => ({ ...r, words: wordDiff(r.before.text, r.after.text) })) });
  });
};
