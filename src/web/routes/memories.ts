/**
 * Memories: search (the CLI's recall, with `why`), the filtered list, one memory in full, and
 * every change (add, edit, supersede, forget, restore, pin, metadata). Each change answers with
 * the events it wrote, so the page can undo exactly that change.
 */
import { z } from 'zod';
import { CairnError } from '../../errors.js';
import { findSimilar } from '../../memory/similar.js';
import { forgetInput, recallInput, rememberInput, reviseInput } from '../../mcp/schemas.js';
import { stalenessOf } from '../../recall/recall.js';
import { WEIGHTS } from '../../recall/score.js';
import { SOURCES, type MemoryEvent } from '../../types.js';
import { body, boolParam, defined, listParam, numberParam, parseWith, stringParam } from '../http.js';
import { listMemories, SORTS, STATUSES } from '../listing.js';
import type { Routes, WebState } from '../state.js';

const ID = { id: reviseInput.id };

/** A date as epoch ms or anything Date.parse reads (2026-03-02, an ISO time). */
const dateParam = z.union([z.number(), z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'not a date').transform((s) => Date.parse(s))]);

const listQuery = {
  project: z.string().max(2000).optional(),
  kinds: recallInput.kinds,
  scopes: recallInput.scopes,
  sources: z.array(z.enum(SOURCES)).optional(),
  tags: rememberInput.tags,
  status: z.enum(STATUSES).default('active'),
  stale: z.boolean().optional(),
  file: z.string().max(1000).optional(),
  pinned: z.boolean().optional(),
  since: dateParam.optional(),
  until: dateParam.optional(),
  sort: z.enum(SORTS).default('created-desc'),
  limit: z.number().int().min(1).max(200).default(50),
  cursor: z.number().int().min(0).default(0),
};

const searchQuery = { ...recallInput, project: z.string().max(2000).optional() };

/** Metadata edits: the shared schemas' fields, plus importance and pinning. */
const updateBody = {
  tags: rememberInput.tags,
  kind: rememberInput.kind,
  importance: z.number().min(0).max(1).optional(),
  pinned: z.boolean().optional(),
};

/** Run a change and collect the events it wrote. */
export async function tracked<T>(state: WebState, change: () => Promise<T>): Promise<{ result: T; events: MemoryEvent[] }> {
  const mark = await state.undo.mark();
  try {
    const result = await change();
    return { result, events: await state.undo.since(mark) };
  } finally {
    state.changed();
  }
}

export async function memoryDetail(state: WebState, id: string) {
  const store = state.cairn.deps.store;
  const memory = await store.getMemory(id);
  if (!memory) throw new CairnError('NOT_FOUND', `memory ${id} not found`, { field: 'id' });
  // Read without counting an access: browsing must not change what recall ranks first.
  const versions = await store.versions(id);
  const events = (await Promise.all(versions.map((v) => store.listEvents({ memoryId: v.id, limit: 1000 })))).flat();
  events.sort((a, b) => (a.id ?? 0) - (b.id ?? 0));
  const undoable = await state.undo.undoable(events);
  const provenance = memory.provenance;
  const session = provenance?.sessionId && store.substrate ? await store.substrate.getSession(provenance.sessionId) : null;
  const similar = memory.deletedAt === null ? await findSimilar(state.cairn.deps, memory.text, null, memory.project, memory.id) : [];
  return {
    memory,
    staleness: stalenessOf(state.cairn.deps, memory),
    versions: versions.map((v) => ({ ...v, current: v.id === id })),
    // Creating an older version is not undone on its own: its revision is.
    events: events.map((e) => ({
      ...e,
      undoable: e.id !== undefined && undoable.has(e.id) && !(e.type === 'create' && versions.some((v) => v.id === e.memoryId && v.validTo !== null)),
    })),
    session,
    similar: similar.filter((s) => !versions.some((v) => v.id === s.id)),
  };
}

export const memoryRoutes: Routes = (api, state) => {
  const { cairn } = state;

  api.get('/search', async (c) => {
    const input = parseWith(
      searchQuery,
      defined({
        query: stringParam(c, 'q') ?? '',
        k: numberParam(c, 'k'),
        tags: listParam(c, 'tags'),
        kinds: listParam(c, 'kinds'),
        scopes: listParam(c, 'scopes'),
        asOf: stringParam(c, 'asOf'),
        project: stringParam(c, 'project'),
      }),
    );
    const { project, ...recall } = input;
    const result = await cairn.recall({
      ...recall,
      k: recall.k ?? 20,
      // Browsing is not using: searches here do not count as accesses.
      touch: false,
      ...(project === undefined ? { allProjects: true } : { project: project === '~' ? null : project }),
    });
    // The weights let the page show each part of the score as its share of the total.
    return c.json({ ...result, weights: WEIGHTS });
  });

  api.get('/memories', async (c) => {
    const query = parseWith(
      listQuery,
      defined({
        project: stringParam(c, 'project'),
        kinds: listParam(c, 'kinds'),
        scopes: listParam(c, 'scopes'),
        sources: listParam(c, 'sources'),
        tags: listParam(c, 'tags'),
        status: stringParam(c, 'status'),
        stale: boolParam(c, 'stale'),
        file: stringParam(c, 'file'),
        pinned: boolParam(c, 'pinned'),
        since: numberParam(c, 'since'),
        until: numberParam(c, 'until'),
        sort: stringParam(c, 'sort'),
        limit: numberParam(c, 'limit'),
        cursor: numberParam(c, 'cursor'),
      }),
    );
    return c.json(await listMemories(cairn, state.counts, query));
  });

  api.get('/memories/:id', async (c) => c.json(await memoryDetail(state, c.req.param('id'))));

  api.post('/memories', async (c) => {
    const input = await body(c, rememberInput);
    const { result, events } = await tracked(state, () => cairn.remember(input));
    return c.json({ ...result, events }, result.created ? 201 : 200);
  });

  api.put('/memories/:id', async (c) => {
    const input = await body(c, { text: reviseInput.text });
    const { id } = parseWith(ID, { id: c.req.param('id') });
    const { result, events } = await tracked(state, () => cairn.revise(id, input.text));
    return c.json({ ...result, events });
  });

  api.patch('/memories/:id', async (c) => {
    const input = await body(c, updateBody);
    const { result, events } = await tracked(state, () => cairn.update(c.req.param('id'), defined(input)));
    return c.json({ memory: result, events });
  });

  api.post('/memories/:id/supersede', async (c) => {
    const { supersedes: _ignored, ...shape } = rememberInput;
    const input = await body(c, shape);
    const { result, events } = await tracked(state, () => cairn.remember({ ...input, supersedes: c.req.param('id') }));
    return c.json({ ...result, events }, 201);
  });

  api.post('/forget', async (c) => {
    const input = await body(c, forgetInput);
    const { result, events } = await tracked(state, () => cairn.forget(input.ids, input.reason));
    return c.json({ ...result, events });
  });

  api.post('/memories/:id/forget', async (c) => {
    const input = await body(c, { reason: forgetInput.reason });
    const { result, events } = await tracked(state, () => cairn.forget([c.req.param('id')], input.reason));
    return c.json({ ...result, events });
  });

  api.post('/memories/:id/restore', async (c) => {
    await body(c, {});
    const { result, events } = await tracked(state, () => cairn.restore(c.req.param('id')));
    return c.json({ memory: result, events });
  });

  for (const pin of [true, false]) {
    api.post(`/memories/:id/${pin ? 'pin' : 'unpin'}`, async (c) => {
      await body(c, {});
      const { result, events } = await tracked(state, () => cairn.update(c.req.param('id'), { pinned: pin }));
      return c.json({ memory: result, events });
    });
  }
};

