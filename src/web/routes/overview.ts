/** Overview: counts, composition by kind and scope, growth over time, top tags, size, sessions. */
import { growth } from '../growth.js';
import type { Routes } from '../state.js';

export const overviewRoutes: Routes = (api, state) => {
  const { cairn } = state;
  const store = cairn.deps.store;

  api.get('/overview', async (c) => {
    const [status, catalog, timeline, snapshots, substrate, lastIngest, openReview] = await Promise.all([
      state.status(),
      state.catalog.within(1000),
      growth(cairn),
      cairn.snapshots(),
      store.substrate?.substrateStats() ?? Promise.resolve(null),
      store.getState('last_ingest_at'),
      store.countReview({ open: true }),
    ]);
    const aggregates = catalog ? (({ bySession: _bySession, ...rest }) => rest)(catalog) : null;
    return c.json({
      status,
      growth: timeline,
      // Tags, projects and sources come from a background scan; null until it is done.
      catalog: aggregates,
      indexing: state.catalog.progress(),
      snapshots,
      substrate,
      lastIngestAt: lastIngest ? Number(lastIngest) : null,
      openReview,
    });
  });

  /** Small and cheap: what the header and filters need on first paint. */
  api.get('/meta', async (c) => {
    const status = await state.status();
    return c.json({
      project: status.project,
      recallMode: status.recallMode,
      embedder: status.embedder,
      active: status.stats.active,
      byKind: status.stats.byKind,
      byScope: status.stats.byScope,
    });
  });

  /** Projects and top tags for the filters (from the background scan; partial until it is done). */
  api.get('/projects', async (c) => {
    // Not worth starting the scan for: the filters work without counts.
    const catalog = await state.catalog.peek();
    if (catalog) return c.json({ projects: catalog.projects, tags: catalog.tags, partial: false });
    const known = new Set<string>();
    if (cairn.deps.project) known.add(cairn.deps.project);
    for (const s of (await store.substrate?.listSessions({ limit: 200 })) ?? []) if (s.project) known.add(s.project);
    return c.json({ projects: [...known].map((project) => ({ project, count: null })), tags: [], partial: true });
  });
};
