// Overview: how much is stored and of what kind, how it grew, the top tags and projects, size.
import { api } from '../api.js';
import { bytes, h, mount, num, projectName, time } from '../dom.js';
import { barList, donut, growthChart } from '../charts.js';
import { KINDS, SCOPES, errorBox, spinner } from '../ui.js';

function tile(label, value, sub, href) {
  return h(href ? 'a' : 'div', { class: 'tile', href }, h('div', { class: 'tile-n' }, value), h('div', { class: 'tile-l' }, label), sub ? h('div', { class: 'tile-s muted' }, sub) : null);
}

export async function render(root, route, app) {
  mount(root, spinner());
  let onResize = null;
  let retry = 0;
  let timer = 0;
  const resized = () => {
    clearTimeout(timer);
    timer = setTimeout(() => onResize?.(), 120);
  };
  window.addEventListener('resize', resized);
  async function load() {
    let o;
    try {
      o = await api.get('/overview');
    } catch (error) {
      return mount(root, errorBox(error));
    }
    const st = o.status.stats;
    const kinds = KINDS.map((k) => ({ key: k, label: k, value: st.byKind[k] ?? 0 })).filter((p) => p.value > 0);
    const scopes = SCOPES.map((k) => ({ key: `scope-${k}`, label: k, value: st.byScope[k] ?? 0 }));
    const growthHost = h('div', { class: 'growth-host' });
    const cat = o.catalog;
    const counting = () => h('p', { class: 'muted' }, `Counting… (${num(o.indexing.scanned)} memories read so far)`);
    const sources = cat ? Object.entries(cat.sources).map(([k, v]) => ({ label: k, value: v })).sort((a, b) => b.value - a.value) : [];
    // Tags, projects and sources come from a scan that runs in the background: look again soon.
    if (!cat) retry = setTimeout(() => app.route.view === 'overview' && load(), 1500);
    mount(
      root,
      h(
        'div',
        { class: 'page overview' },
        h('div', { class: 'page-head' }, h('h1', {}, 'Overview'), h('span', { class: 'muted' }, o.status.project ? `this folder: ${projectName(o.status.project)}` : '')),
        h(
          'div',
          { class: 'tiles' },
          tile('active memories', num(st.active), `${num(st.superseded)} superseded · ${num(st.forgotten)} forgotten`, '#/memories'),
          tile('database', bytes(st.sizeBytes), `${num(st.events)} events · schema v${st.schemaVersion}`),
          tile('recall', o.status.recallMode === 'hybrid' ? 'hybrid' : 'BM25', o.status.embedder ? `${o.status.embedder.model} · ${num(st.vectors)} vectors` : 'no embedder configured'),
          tile('sessions', num(o.substrate?.sessions ?? 0), `${num(o.substrate?.turns ?? 0)} turns · ${num(o.substrate?.corrections ?? 0)} corrections`, '#/sessions'),
          tile('snapshots', num(st.snapshots), o.snapshots.length ? `last: ${o.snapshots.at(-1).label}` : 'none yet', '#/snapshots'),
          tile('to review', num(o.openReview), o.openReview ? 'decisions waiting' : 'all clear', '#/review'),
        ),
        h(
          'section',
          { class: 'card' },
          h('div', { class: 'card-head' }, h('h2', {}, 'Growth'), h('span', { class: 'muted small' }, h('span', { class: 'key key-bar' }), ` written per ${o.growth.unit}  `, h('span', { class: 'key key-line' }), ' in all')),
          growthHost,
        ),
        h(
          'div',
          { class: 'grid-2' },
          h('section', { class: 'card' }, h('h2', {}, 'By kind'), donut(kinds, { center: 'active' })),
          h(
            'section',
            { class: 'card' },
            h('h2', {}, 'By scope'),
            donut(scopes, { center: 'active' }),
            h('h2', { class: 'sub' }, 'By source'),
            cat ? barList(sources) : counting(),
          ),
        ),
        h(
          'div',
          { class: 'grid-2' },
          h(
            'section',
            { class: 'card' },
            h('h2', {}, 'Top tags'),
            !cat ? counting() : cat.tags.length ? barList(cat.tags.slice(0, 15).map((t) => ({ label: `#${t.tag}`, value: t.count, onClick: () => app.go('memories', null, { tags: t.tag }) }))) : h('p', { class: 'muted' }, 'No tags yet.'),
          ),
          h(
            'section',
            { class: 'card' },
            h('h2', {}, 'Projects'),
            cat ? barList(cat.projects.slice(0, 15).map((p) => ({ label: p.project === null ? 'user scope' : projectName(p.project), title: p.project ?? 'user scope', value: p.count, cls: 'alt', onClick: () => app.go('memories', null, { project: p.project ?? '~' }) }))) : counting(),
          ),
        ),
        h('p', { class: 'muted small foot' }, cat ? `Tags, projects and sources from a scan of ${num(cat.total)} memories (${num(cat.scanMs)} ms), kept current from the event log · ` : '', 'last ingest ', time(o.lastIngestAt)),
      ),
    );
    // Drawn at the width it is shown at, so its text stays at its real size.
    const drawGrowth = () => mount(growthHost, growthChart(o.growth, { width: Math.max(320, growthHost.clientWidth), height: 220 }));
    drawGrowth();
    onResize = drawGrowth;
  }
  await load();
  return {
    refresh: load,
    destroy: () => {
      clearTimeout(retry);
      window.removeEventListener('resize', resized);
    },
  };
}
