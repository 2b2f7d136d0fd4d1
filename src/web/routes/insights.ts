/** What people would rather look at than read: recall quality on the benchmarks, and what the hooks injected. */
import { benchQuality, injections } from '../insights.js';
import type { Routes } from '../state.js';

export const insightRoutes: Routes = (api, state) => {
  api.get('/quality', (c) => c.json(benchQuality(state.home)));
  api.get('/injections', async (c) => c.json(await injections(state.cairn, state.home)));
};
