/** Overview: counts, composition by kind and scope, growth over time, top tags, size, sessions. */
import type { Routes } from '../state.js';

export const overviewRoutes: Routes = (api, state) => {
  const { cairn } = state;

  api.get('/overview', async (c) => {
    const [status, catalog, snapshots, substrate, lastIngest, openReview] = await Promise.all([
      cairn.status(),
      state.catalog.get(),
      cairn.snapshots(),
      cairn.deps.store.substrate?.substrateStats() ?? Promise.resolve(null),
      cairn.deps.store.getState('last_ingest_at'),
      cairn.deps.store.countReview({ open: true }),
    ]);
    const { bySession: _bySession, ...aggregates } = catalog;
    return c.json({
      status,
      catalog: aggregates,
      snapshots,
      substrate,
      lastIngestAt: lastIngest ? Number(lastIngest) : null,
      openReview,
    });
  });

  /** Small and cheap: what the header and filters need on first paint. */
  api.get('/meta', async (c) => {
    const status = await cairn.status();
    return c.json({
      project: status.project,
      recallMode: status.recallMode,
      embedder: status.embedder,
      active: status.stats.active,
      byKind: status.stats.byKind,
      byScope: status.stats.byScope,
    });
  });

  api.get('/projects', async (c) => {
    const catalog = await state.catalog.get();
    return c.json({ projects: catalog.projects, tags: catalog.tags });
  });
};
