/** Sessions by project and agent; one session with its turns, corrections, compactions and memories. */
import { z } from 'zod';
import { historyInput } from '../../mcp/schemas.js';
import { AGENTS } from '../../types.js';
import { defined, numberParam, parseWith, stringParam } from '../http.js';
import { sessionView, turnWindow } from '../sessions.js';
import type { Routes } from '../state.js';

const sessionsQuery = {
  project: z.string().max(2000).optional(),
  agent: z.enum(AGENTS).optional(),
  limit: z.number().int().min(1).max(500).default(50),
  offset: z.number().int().min(0).default(0),
};

const turnsQuery = {
  fromSeq: z.number().int().min(0).optional(),
  limit: z.number().int().min(1).max(500).default(100),
  around: z.string().max(1000).optional(),
};

const historyQuery = {
  query: historyInput.query,
  sessionId: historyInput.sessionId,
  limit: historyInput.limit,
  project: z.string().max(2000).optional(),
};

export const sessionRoutes: Routes = (api, state) => {
  const { cairn } = state;

  api.get('/sessions', async (c) => {
    const query = parseWith(
      sessionsQuery,
      defined({ project: stringParam(c, 'project'), agent: stringParam(c, 'agent'), limit: numberParam(c, 'limit'), offset: numberParam(c, 'offset') }),
    );
    const sessions = await cairn.sessions(defined(query));
    return c.json({ sessions, nextOffset: sessions.length === query.limit ? query.offset + query.limit : null });
  });

  api.get('/sessions/:id', async (c) => c.json(await sessionView(cairn, state.catalog, c.req.param('id'))));

  api.get('/sessions/:id/turns', async (c) => {
    const query = parseWith(turnsQuery, defined({ fromSeq: numberParam(c, 'fromSeq'), limit: numberParam(c, 'limit'), around: stringParam(c, 'around') }));
    return c.json(await turnWindow(cairn, c.req.param('id'), defined(query) as { limit: number }));
  });

  api.get('/history', async (c) => {
    const query = parseWith(
      historyQuery,
      defined({ query: stringParam(c, 'q') ?? '', sessionId: stringParam(c, 'sessionId'), limit: numberParam(c, 'limit'), project: stringParam(c, 'project') }),
    );
    const hits = await cairn.history(defined({ query: query.query, sessionId: query.sessionId, limit: query.limit ?? 20, project: query.project }) as { query: string });
    return c.json({ hits });
  });
};
