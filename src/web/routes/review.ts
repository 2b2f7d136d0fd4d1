/** The review queue: near-duplicates, contradictions, stale memories, and acting on them. */
import { z } from 'zod';
import { reviseInput } from '../../mcp/schemas.js';
import { REVIEW_KINDS } from '../../types.js';
import { body, boolParam, defined, listParam, numberParam, parseWith } from '../http.js';
import { listReview, resolveReview, REVIEW_ACTIONS, scanForReview } from '../review.js';
import type { Routes } from '../state.js';
import { tracked } from './memories.js';

const reviewQuery = {
  kinds: z.array(z.enum(REVIEW_KINDS)).optional(),
  open: z.boolean().default(true),
  limit: z.number().int().min(1).max(200).default(50),
  offset: z.number().int().min(0).default(0),
};

const resolveBody = {
  action: z.enum(REVIEW_ACTIONS),
  memoryId: reviseInput.id.optional(),
  text: reviseInput.text.optional(),
};

export const reviewRoutes: Routes = (api, state) => {
  const { cairn } = state;

  api.get('/review', async (c) => {
    const query = parseWith(
      reviewQuery,
      defined({ kinds: listParam(c, 'kinds'), open: boolParam(c, 'open'), limit: numberParam(c, 'limit'), offset: numberParam(c, 'offset') }),
    );
    return c.json(await listReview(cairn, defined(query) as { open: boolean; limit: number; offset: number }));
  });

  api.post('/review/scan', async (c) => {
    const input = await body(c, { limit: z.number().int().min(1).max(5000).default(500) });
    return c.json(await scanForReview(cairn, input.limit));
  });

  api.post('/review/:id/undo', async (c) => {
    await body(c, {});
    const { result, events } = await tracked(state, () => cairn.undoReview(c.req.param('id')));
    return c.json({ ...result, events });
  });

  api.post('/review/:id', async (c) => {
    const input = await body(c, resolveBody);
    const { result, events } = await tracked(state, () => resolveReview(cairn, c.req.param('id'), defined(input) as typeof input));
    return c.json({ ...result, events });
  });
};
