// Overview: how much is stored and of what kind, how it grew, the top tags and projects, size.
import { api } from '../api.js';
import { bytes, h, mount, num, projectName, time, when } from '../dom.js';
import { barList, donut, growthChart, projectLines, shareBars } from '../charts.js';
import { KINDS, SCOPES, errorBox, spinner } from '../ui.js';

function tile(label, value, sub, href) {
  return h(href ? 'a' : 'div', { class: 'tile', href }, h('div', { class: 'tile-n' }, value), h('div', { class: 'tile-l' }, label), sub ? h('div', { class: 'tile-s muted' }, sub) : null);
}

/** What each group of memories is called, and what it holds (on hover). */
const GROUP_LABEL = {
  'user-wide': { label: 'user-wide', title: 'user scope: recalled in every project' },
  'no-project': { label: 'no project', title: "memories whose session's folder was unknown: no project recalls them" },
  other: { label: 'other projects', title: 'every smaller project, summed' },
};

/** Series labelled by what they are: a project (short; full on hover), user-wide, no project, the rest. */
function named(growth) {
  return {
    ...growth,
    series: growth.series.map((sr) => (sr.group === 'project' ? { ...sr, label: projectName(sr.project), title: sr.project } : { ...sr, ...(GROUP_LABEL[sr.group] ?? { label: sr.group, title: sr.group }) })),
  };
}

/** Where a series' name leads: the memories of that project, the user-wide ones, or those without a project. */
function seriesHref(sr) {
  if (sr.group === 'project') return `#/memories?project=${encodeURIComponent(sr.project)}`;
  if (sr.group === 'user-wide') return '#/memories?project=~&scopes=user';
  if (sr.group === 'no-project') return '#/memories?project=~&scopes=project%2Csession';
  return null;
}

function legend(series) {
  return h(
    'ul',
    { class: 'legend series-legend' },
    named({ series }).series.map((sr, k) => {
      const href = seriesHref(sr);
      const label = h('bdi', {}, sr.label);
      return h('li', { title: sr.title }, h('span', { class: `swatch series-sw-${k}` }), href ? h('a', { class: 'lg-label cut-start', href }, label) : h('span', { class: 'lg-label cut-start' }, label), h('span', { class: 'lg-n' }, num(sr.total)));
    }),
  );
}

const EVENT_LABEL = { 'session-start': 'session start', prompt: 'prompt', 'pre-compact': 'before /compact', recall: 'recall (MCP)', context: 'context (MCP)', get: 'get (MCP)' };
const WINDOW_REASON = { startup: 'session started', compact: 'after /compact', clear: 'after /clear', resume: 'resumed' };

/** What gave it: a hook by its event, a tool by its name (and how it was reached). */
function injectionLabel(inj) {
  if (inj.via === 'hook') return EVENT_LABEL[inj.name] ?? inj.name;
  return `${inj.name} (${inj.via === 'mcp' ? 'MCP' : inj.via})`;
}

const plural = (n, one, many = `${one}s`) => `${num(n)} ${n === 1 ? one : many}`;

/** What each hook and tool gave the agent in the last sessions: from the ledger, else the hook log. */
function hookCard(data) {
  const head = h('div', { class: 'card-head' }, h('h2', {}, 'What the hooks gave the agent'), h('span', { class: 'muted small' }, 'last sessions, newest first'));
  if (data.source === 'ledger' && data.ledger.length > 0) return h('section', { class: 'card', id: 'hooks' }, head, useSummary(data.use ?? []), ledgerKey(data.ledger), ledgerSessions(data.ledger));
  const hooks = data.hookLog;
  const why =
    data.source === 'ledger'
      ? 'The injection ledger has nothing yet (the hooks and tools record each injection from this version on), so this is the hook log'
      : 'This store has no injection ledger, so this is the hook log';
  if (hooks.sessions.length === 0) {
    return h('section', { class: 'card', id: 'hooks' }, head, h('p', { class: 'muted' }, 'No hook has run yet. ', h('code', {}, 'cairn install claude'), ' wires them; then what each session start, prompt and /compact gives the agent shows here.'));
  }
  return h(
    'section',
    { class: 'card', id: 'hooks' },
    head,
    h(
      'ul',
      { class: 'hook-sessions' },
      hooks.sessions.map((sess) => {
        const injected = sess.runs.filter((r) => r.output === 'json' || r.output === 'text').length;
        return h(
          'li',
          { class: 'hook-session' },
          h(
            'div',
            { class: 'hs-head' },
            sess.session ? h('a', { class: 'full-name', href: `#/session/${encodeURIComponent(sess.session)}`, title: sess.session }, sess.session) : h('span', { class: 'muted' }, 'no session id'),
            h('span', { class: 'muted small' }, `${plural(sess.runs.length, 'run')} · ${num(injected)} injected context · `, time(sess.last)),
          ),
          h(
            'ol',
            { class: 'hook-runs', 'aria-label': 'Hook runs' },
            sess.runs.map((r) =>
              h(
                'li',
                {
                  class: ['hook-run', `hr-${r.event}`, r.error ? 'failed' : r.output === 'none' ? 'nothing' : 'gave'],
                  title: `${EVENT_LABEL[r.event] ?? r.event} · ${when(r.at)}${r.ms !== null ? ` · ${r.ms} ms` : ''} · ${r.error ? `failed: ${r.error}` : r.output === 'none' ? 'nothing relevant to inject' : 'context injected'}`,
                },
                EVENT_LABEL[r.event] ?? r.event,
              ),
            ),
          ),
        );
      }),
    ),
    h('p', { class: 'muted small' }, `${why} (${hooks.path}): each run and whether it injected context, not the tokens, the items or which of them the agent used afterwards.`),
  );
}

const pct = (share) => `${Math.round(share * 100)}%`;

/** Learn from use, per project: what the agent did with the injections afterwards (measured at ingest). */
function useSummary(use) {
  if (use.length === 0) {
    return h('p', { class: 'use-summary muted small' }, 'Used afterwards: measured when ', h('code', {}, 'cairn ingest'), ' (the Stop hook runs it after each turn) reads a session again after a /compact or session start; nothing measured yet.');
  }
  return h(
    'ul',
    { class: 'use-summary', 'aria-label': 'Used afterwards, per project' },
    use.map((p) =>
      h(
        'li',
        { title: `${p.project ?? 'project unknown'} · measured ${when(p.lastMeasuredAt)}` },
        h('bdi', { class: 'full-name' }, p.project === null ? 'project unknown' : projectName(p.project)),
        h(
          'span',
          { class: 'small' },
          `: ${plural(p.compactions, 'compaction')} · ${plural(p.injected, 'item')} injected` +
            (p.usedShare !== null ? ` · ${pct(p.usedShare)} used afterwards` : '') +
            (p.needed > 0 ? ` · ${num(p.missed)} of ${plural(p.needed, 'needed detail')} missed` : '') +
            learnedText(p.learned),
        ),
      ),
    ),
  );
}

/**
 * What learning from use changed in the project's post-compact ranking:
 * ` · learned: symbol +0.12, path −0.08 · 41 details needed again`.
 */
function learnedText(learned) {
  const moved = Object.entries(learned?.weights ?? {}).sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]));
  const parts = [];
  if (moved.length > 0) parts.push(moved.map(([kind, d]) => `${kind} ${d > 0 ? '+' : '−'}${Math.abs(d).toFixed(2)}`).join(', '));
  if (learned?.details > 0) parts.push(`${plural(learned.details, 'detail')} needed again`);
  return parts.length === 0 ? '' : ` · learned: ${parts.join(' · ')}`;
}

/** What the bars' colours mean. */
function ledgerKey(sessions) {
  const measured = sessions.some((s) => s.usageKnown);
  return h(
    'p',
    { class: 'quality-key muted' },
    h('span', {}, 'a bar per injection, as long as its tokens; a segment per item:'),
    measured ? h('span', {}, h('span', { class: 'key-swatch inj-used' }), 'used afterwards') : null,
    measured ? h('span', {}, h('span', { class: 'key-swatch inj-unused' }), 'not used') : null,
    h('span', {}, h('span', { class: 'key-swatch inj-unmeasured' }), measured ? 'not measured yet' : 'use afterwards not measured yet'),
    sessions.some((s) => s.injections.some((i) => i.target === 'summary')) ? h('span', {}, h('span', { class: 'key-swatch inj-for-summary' }), 'guidance for the /compact summary') : null,
  );
}

/** One injection: its bar (open it for the items, each marked used or not, memories linked). */
function injectionRow(inj, maxTokens) {
  const usedHere = inj.items.filter((it) => it.used).length;
  const measured = inj.items.some((it) => it.used !== null);
  const label = injectionLabel(inj);
  const counts = `${num(inj.tokens)} tok · ${plural(inj.items.length, 'item')}${measured ? ` · ${num(usedHere)} used` : ''}`;
  const itemText = (it) => (it.kind === 'memory' ? (it.text ?? `memory ${it.id} (no longer stored)`) : it.kind === 'fact' ? (it.text ? `session fact: ${it.text}` : `session fact ${it.id}`) : it.id.startsWith('core:') ? `core memory: ${it.id.slice(5)}` : it.id.startsWith('call:') ? `call ${it.id.slice(5)}(` : it.id === 'working-set' ? 'the working set (files and commands in play)' : `block ${it.id}`);
  return h(
    'li',
    { class: ['inj', `inj-${inj.name}`, inj.target === 'summary' ? 'inj-summary' : ''] },
    h(
      'details',
      {},
      h(
        'summary',
        { title: `${label} · ${when(inj.at)} · ${counts}${inj.target === 'summary' ? ' · guidance for the compaction summary' : ''}` },
        h('span', { class: 'inj-name' }, label),
        h(
          'span',
          { class: 'inj-track' },
          h(
            'span',
            { class: 'inj-bar', style: { width: `${Math.max(2, (inj.tokens / maxTokens) * 100)}%` } },
            inj.items.map((it) => h('span', { class: ['inj-item', it.used === true ? 'used' : it.used === false ? 'unused' : ''] })),
          ),
        ),
        h('span', { class: 'inj-n' }, counts),
      ),
      h(
        'div',
        { class: 'inj-detail' },
        h('p', { class: 'muted small' }, `${when(inj.at)} · ${inj.target === 'summary' ? 'guidance for the compaction summary (not part of the next window)' : `into context window ${inj.window}`}`),
        inj.items.length
          ? h(
              'ul',
              { class: 'inj-items' },
              inj.items.map((it) =>
                h(
                  'li',
                  { class: it.used === true ? 'used' : it.used === false ? 'unused' : '' },
                  h('span', { class: 'inj-mark', title: it.used === true ? 'used afterwards' : it.used === false ? 'not used afterwards' : 'not measured' }, it.used === true ? '✓' : it.used === false ? '·' : '?'),
                  it.kind === 'memory' && it.text ? h('a', { href: `#/memories?open=${encodeURIComponent(it.id)}` }, itemText(it)) : h('span', { class: 'muted' }, itemText(it)),
                ),
              ),
            )
          : h('p', { class: 'muted small' }, 'no items (text only)'),
      ),
    ),
  );
}

/** One bar per injection, as long as its tokens, its items marked used or not; a line where a new context window began. */
function ledgerSessions(sessions) {
  const maxTokens = Math.max(1, ...sessions.flatMap((s) => s.injections.map((i) => i.tokens)));
  return h(
    'ul',
    { class: 'hook-sessions' },
    sessions.map((sess) => {
      const items = sess.injections.reduce((n, i) => n + i.items.length, 0);
      const used = sess.injections.reduce((n, i) => n + i.items.filter((it) => it.used).length, 0);
      let window = sess.injections[0]?.window ?? 0;
      const rows = [];
      if (sess.injectionCount > sess.injections.length) rows.push(h('li', { class: 'inj-window' }, `the last ${num(sess.injections.length)} of ${num(sess.injectionCount)} injections`));
      for (const inj of sess.injections) {
        if (inj.window !== window) {
          const w = sess.windows.find((x) => x.window === inj.window);
          rows.push(h('li', { class: 'inj-window' }, `new context window — ${w ? (WINDOW_REASON[w.reason] ?? w.reason) : 'compacted'}`));
          window = inj.window;
        }
        rows.push(injectionRow(inj, maxTokens));
      }
      return h(
        'li',
        { class: 'hook-session' },
        h(
          'div',
          { class: 'hs-head' },
          sess.ingested
            ? h('a', { class: 'full-name', href: `#/session/${encodeURIComponent(sess.session)}`, title: sess.session }, sess.session)
            : h('span', { class: 'full-name', title: `${sess.session} — its transcript is not ingested yet (cairn ingest reads it)` }, sess.session),
          sess.project ? h('span', { class: 'where', title: sess.project }, projectName(sess.project)) : null,
          h('span', { class: 'muted small' }, `${num(sess.tokens)} tokens · ${plural(items, 'item')}${sess.usageKnown ? ` · ${num(used)} used afterwards` : ''} · ${plural(sess.windows.length || 1, 'window')} · `, time(sess.lastAt)),
        ),
        h('ol', { class: 'injections', 'aria-label': `Injections into ${sess.session}` }, rows),
      );
    }),
  );
}

/**
 * A suite's figures side by side: "SciFact nDCG@10 (bm25)", "… (vector …)", "… (hybrid …)" become
 * one group, "SciFact nDCG@10", with a bar per method, so the methods compare at a glance.
 */
function metricGroups(metrics) {
  const groups = new Map();
  for (const m of metrics) {
    const split = /^(.*?) \(([^()]+)\)$/.exec(m.name);
    const key = split ? split[1] : m.name;
    if (!groups.has(key)) groups.set(key, []);
    // "vector hash:v1:1024": the method names the bar, the embedder is said once under the heading.
    const [method, ...rest] = (split ? split[2] : m.name).split(' ');
    groups.get(key).push({ label: method, with: rest.join(' '), title: m.name, value: m.value, target: m.target, pass: m.pass, note: m.note ?? m.anchor });
  }
  return h(
    'div',
    { class: 'metric-groups' },
    [...groups.entries()].map(([name, rows]) => {
      const used = [...new Set(rows.map((r) => r.with).filter(Boolean))];
      return h('div', { class: 'metric-group' }, h('h4', {}, name), used.length ? h('p', { class: 'muted small full-name', title: used.join(', ') }, `embedder ${used.join(', ')}`) : null, shareBars(rows));
    }),
  );
}

/** Recall quality from the latest bench result of each suite, or how to produce one. */
function qualityCard(quality) {
  const head = h('div', { class: 'card-head' }, h('h2', {}, 'Recall quality on the built-in benchmarks'));
  if (quality.results.length === 0) {
    return h(
      'section',
      { class: 'card', id: 'quality' },
      head,
      h('p', { class: 'muted' }, 'No benchmark results yet. Run one (it needs the shared datasets) and look again:'),
      h('pre', { class: 'commands' }, quality.commands.join('\n')),
    );
  }
  const anyTarget = quality.results.some((r) => r.metrics.some((m) => m.target));
  return h(
    'section',
    { class: 'card', id: 'quality' },
    head,
    h(
      'p',
      { class: 'quality-key muted' },
      h('span', {}, h('span', { class: 'key-swatch' }), 'score from 0 to 1'),
      anyTarget ? h('span', {}, h('span', { class: 'key-tick' }), 'the target') : null,
      anyTarget ? h('span', {}, h('span', { class: 'key-swatch pass' }), 'meets it') : null,
      anyTarget ? h('span', {}, h('span', { class: 'key-swatch miss' }), 'misses it') : null,
    ),
    quality.results.map((r) =>
      h(
        'div',
        { class: 'quality' },
        h('h3', {}, r.suite, h('span', { class: 'muted small' }, ` — ${r.description}`)),
        metricGroups(r.metrics),
        h(
          'p',
          { class: 'muted small' },
          h('code', {}, r.command),
          ` · ${when(Date.parse(r.date))}${r.commit ? ` · ${r.commit.slice(0, 8)}${r.dirty ? ' (uncommitted changes)' : ''}` : ''} · load ${r.load.toFixed(1)}${r.quick ? ' · quick run' : ''}`,
        ),
      ),
    ),
  );
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
    let quality;
    let hooks;
    try {
      [o, quality, hooks] = await Promise.all([api.get('/overview'), api.get('/quality'), api.get('/injections')]);
    } catch (error) {
      return mount(root, errorBox(error));
    }
    const st = o.status.stats;
    const kinds = KINDS.map((k) => ({ key: k, label: k, value: st.byKind[k] ?? 0 })).filter((p) => p.value > 0);
    const scopes = SCOPES.map((k) => ({ key: `scope-${k}`, label: k, value: st.byScope[k] ?? 0 }));
    const growthHost = h('div', { class: 'growth-host' });
    const linesHost = h('div', { class: 'growth-host' });
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
        h('div', { class: 'page-head' }, h('h1', {}, 'Overview'), h('span', { class: 'muted full-name' }, o.status.project ? `this folder's project: ${o.status.project}` : '')),
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
          { class: 'card', id: 'by-project' },
          h('div', { class: 'card-head' }, h('h2', {}, 'Memories over time, by project'), h('span', { class: 'muted small' }, `written, in all, per ${cat?.projectGrowth.unit ?? 'day'}`)),
          cat ? [linesHost, legend(cat.projectGrowth.series)] : counting(),
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
            { class: 'card', id: 'projects' },
            h('h2', {}, 'Projects'),
            cat
              ? barList([
                  ...cat.projects.slice(0, 15).map((p) => ({ label: projectName(p.project), title: p.project, cutStart: true, value: p.count, cls: 'alt', onClick: () => app.go('memories', null, { project: p.project }) })),
                  ...(cat.userWide ? [{ label: 'user-wide', title: 'user scope: recalled in every project', value: cat.userWide, cls: 'alt', onClick: () => app.go('memories', null, { project: '~', scopes: 'user' }) }] : []),
                  ...(cat.noProject ? [{ label: 'no project', title: 'memories whose session had no known folder: no project recalls them', value: cat.noProject, cls: 'alt', onClick: () => app.go('memories', null, { project: '~', scopes: 'project,session' }) }] : []),
                ])
              : counting(),
          ),
        ),
        hookCard(hooks),
        qualityCard(quality),
        h('p', { class: 'muted small foot' }, cat ? `Tags, projects and sources from a scan of ${num(cat.total)} memories (${num(cat.scanMs)} ms), kept current from the event log · ` : '', 'last ingest ', time(o.lastIngestAt)),
      ),
    );
    // Drawn at the width it is shown at, so its text stays at its real size.
    const drawGrowth = () => mount(growthHost, growthChart(o.growth, { width: Math.max(320, growthHost.clientWidth), height: 220 }));
    const drawLines = () => cat && mount(linesHost, projectLines(named(cat.projectGrowth), { width: Math.max(300, linesHost.clientWidth), height: 220 }));
    drawGrowth();
    drawLines();
    onResize = () => (drawGrowth(), drawLines());
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
