// Changes: what changed since a day (the event log, each change undoable), the snapshots
// timeline, and the diff between any two snapshots (or a snapshot and now).
import { api } from '../api.js';
import { day, h, mount, num, time, when } from '../dom.js';
import { empty, errorBox, kindBadge, select, spinner, whereItem } from '../ui.js';

const EVENT_VERB = { create: 'added', revise: 'revised', supersede: 'replaced', forget: 'forgot', restore: 'restored', update: 'changed', pin: 'pinned', unpin: 'unpinned', merge: 'merged' };

function mondayThisWeek() {
  const d = new Date();
  d.setHours(0, 0, 0, 0);
  d.setDate(d.getDate() - ((d.getDay() + 6) % 7));
  return d.getTime();
}

export async function render(root, route, app) {
  let params = route.params;
  let snapshots = [];
  const timeline = h('div', { class: 'timeline' });
  const diffBox = h('div', { class: 'diff' });
  const feed = h('ol', { class: 'list events-feed' });
  const feedHead = h('div', { class: 'toolbar' });
  const sealInput = h('input', { type: 'text', placeholder: 'label, e.g. before-refactor', 'aria-label': 'Snapshot label', maxlength: 100 });
  const seal = h(
    'form',
    {
      class: 'seal',
      onSubmit: async (e) => {
        e.preventDefault();
        const label = sealInput.value.trim();
        if (!label) return sealInput.focus();
        try {
          const snap = await api.post('/snapshots', { label });
          app.toast(`Sealed “${snap.label}” — ${num(snap.memoryCount)} memories`, { kind: 'ok' });
          sealInput.value = '';
          await loadSnapshots();
        } catch (error) {
          app.toast(error.message, { kind: 'error' });
        }
      },
    },
    sealInput,
    h('button', { type: 'submit', class: 'btn' }, 'Seal snapshot'),
  );

  mount(
    root,
    h(
      'div',
      { class: 'page changes' },
      h('div', { class: 'page-head' }, h('h1', {}, 'Changes')),
      h('section', { class: 'card' }, h('div', { class: 'card-head' }, h('h2', {}, 'Snapshots'), seal), timeline, diffBox),
      h('section', { class: 'card' }, h('div', { class: 'card-head' }, h('h2', {}, 'What changed'), feedHead), feed),
    ),
  );

  const set = (changes) => app.go('snapshots', null, { ...Object.fromEntries(params), ...changes }, { replace: true });

  function renderTimeline() {
    const from = params.get('from');
    const to = params.get('to') ?? 'now';
    const points = [...snapshots.map((s) => ({ ref: s.label, label: s.label, at: s.createdAt, count: s.memoryCount })), { ref: 'now', label: 'now', at: Date.now(), count: null }];
    const explicitTo = params.get('to');
    // The first pick diffs against now; the second sets the other end; a third starts over.
    const pick = (ref) => {
      if (ref === from) return set({ from: undefined, to: undefined });
      if (!from || explicitTo || ref === 'now') return set({ from: ref === 'now' ? undefined : ref, to: undefined });
      const a = points.findIndex((p) => p.ref === from);
      const b = points.findIndex((p) => p.ref === ref);
      return set(a < b ? { to: ref } : { from: ref, to: from });
    };
    const selectOf = (name, value) =>
      h(
        'select',
        { 'aria-label': name === 'from' ? 'Diff from' : 'Diff to', onChange: (e) => set({ [name]: e.target.value || undefined }) },
        name === 'from' ? h('option', { value: '' }, 'choose…') : null,
        points.map((p) => h('option', { value: p.ref, selected: p.ref === value }, p.ref === 'now' ? 'now' : `${p.label} · ${day(p.at)}`)),
      );
    mount(
      timeline,
      snapshots.length === 0
        ? h('p', { class: 'muted' }, 'No snapshots yet. Seal one before a refactor, then diff it against now.')
        : h(
            'ol',
            { class: 'tl', 'aria-label': 'Snapshots timeline' },
            points.map((p) =>
              h(
                'li',
                { class: ['tl-point', p.ref === from ? 'from' : '', p.ref === to && from ? 'to' : '', p.ref === 'now' ? 'now' : ''] },
                h('button', { type: 'button', class: 'tl-dot', title: `${p.label} — ${when(p.at)}`, onClick: () => pick(p.ref), 'aria-label': `Select ${p.label}` }),
                h('div', { class: 'tl-label' }, p.label),
                h('div', { class: 'tl-sub muted' }, p.ref === 'now' ? 'current' : `${day(p.at)} · ${num(p.count)} memories`),
              ),
            ),
          ),
      snapshots.length ? h('div', { class: 'diff-pick' }, 'Diff ', selectOf('from', from ?? ''), ' → ', selectOf('to', to)) : null,
    );
  }

  /** One memory of the diff as itself: sign, kind, its text (a changed one with its words struck and inserted), where it belongs. */
  function diffRow(m, cls, words) {
    const sign = { added: '+', removed: '−', revised: '~' }[cls];
    const text = words
      ? h('div', { class: 'row-text diff-words' }, words.map((w) => (w.op === 'add' ? h('ins', {}, w.text) : w.op === 'del' ? h('del', {}, w.text) : w.text)))
      : h('div', { class: 'row-text' }, m.text);
    return h(
      'li',
      { class: `row diff-row ${cls}`, tabindex: '-1', dataset: { id: m.id }, onClick: () => app.go('memories', null, { open: m.id }) },
      h('span', { class: 'diff-sign', 'aria-label': cls }, sign),
      h('div', { class: 'row-main' }, text, h('div', { class: 'row-meta' }, kindBadge(m.kind), whereItem(m), m.tags.length ? h('span', { class: 'meta-item' }, m.tags.map((t) => `#${t}`).join(' ')) : null, h('span', { class: 'grow' }), time(m.createdAt))),
    );
  }

  function diffGroup(title, rows) {
    return rows.length ? [h('li', { class: 'diff-group', 'aria-hidden': 'true' }, title), rows] : [];
  }

  async function loadDiff() {
    const from = params.get('from');
    const to = params.get('to') ?? 'now';
    if (!from) return mount(diffBox, snapshots.length ? h('p', { class: 'muted hint' }, 'Pick two points on the timeline to see the memories added, changed and removed between them.') : null);
    mount(diffBox, spinner());
    try {
      const d = await api.get('/diff', { from, to });
      const list = h(
        'ul',
        { class: 'list diff-list', 'aria-label': `Memories changed from ${from} to ${to}` },
        diffGroup(`Added (${num(d.added.length)})`, d.added.map((m) => diffRow(m, 'added'))),
        diffGroup(`Changed (${num(d.revised.length)})`, d.revised.map((r) => diffRow(r.after, 'revised', r.words))),
        diffGroup(`Removed (${num(d.removed.length)})`, d.removed.map((m) => diffRow(m, 'removed'))),
      );
      mount(
        diffBox,
        h(
          'div',
          { class: 'diff-summary' },
          h('b', {}, `${from} → ${to}`),
          h('span', { class: 'n-added' }, `+${num(d.added.length)} added`),
          h('span', { class: 'n-revised' }, `~${num(d.revised.length)} changed`),
          h('span', { class: 'n-removed' }, `−${num(d.removed.length)} removed`),
        ),
        d.added.length + d.removed.length + d.revised.length ? list : empty('No differences', 'The two memory sets are the same.'),
      );
      select.use(list, (id) => app.go('memories', null, { open: id }));
    } catch (error) {
      mount(diffBox, errorBox(error));
    }
  }

  async function loadSnapshots() {
    snapshots = (await api.get('/snapshots')).snapshots;
    renderTimeline();
    await loadDiff();
  }

  function renderFeedHead() {
    const since = params.get('since') ?? 'week';
    const options = [
      ['today', 'Today'],
      ['week', 'Since Monday'],
      ['7d', 'Last 7 days'],
      ['30d', 'Last 30 days'],
    ];
    mount(feedHead, h('div', { class: 'segmented' }, options.map(([v, l]) => h('button', { type: 'button', class: since === v ? 'on' : '', onClick: () => set({ since: v === 'week' ? undefined : v }) }, l))));
  }

  function sinceMs() {
    const since = params.get('since') ?? 'week';
    const startOfToday = new Date().setHours(0, 0, 0, 0);
    if (since === 'today') return startOfToday;
    if (since === '7d') return Date.now() - 7 * 86400e3;
    if (since === '30d') return Date.now() - 30 * 86400e3;
    return mondayThisWeek();
  }

  async function loadFeed() {
    renderFeedHead();
    try {
      const { events } = await api.get('/events', { since: sinceMs(), limit: 300 });
      mount(
        feed,
        events.length
          ? events.map((e) =>
              h(
                'li',
                { class: `ev-row ev-${e.type}` },
                h('span', { class: 'ev-type' }, EVENT_VERB[e.type] ?? e.type),
                e.memory ? kindBadge(e.memory.kind) : null,
                h('a', { class: 'ev-text', href: `#/memories?open=${encodeURIComponent(e.memoryId)}` }, e.memory ? e.memory.text : e.memoryId),
                h('span', { class: 'muted small' }, `${e.actor} · `, time(e.at)),
                e.undoable ? h('button', { type: 'button', class: 'btn btn-small btn-ghost', onClick: () => app.undo(e.id) }, 'Undo') : h('span', { class: 'undo-gap' }),
              ),
            )
          : empty('No changes in this period'),
      );
    } catch (error) {
      mount(feed, errorBox(error));
    }
  }

  await Promise.all([loadSnapshots(), loadFeed()]);
  return {
    async update(next) {
      const prev = params;
      params = next.params;
      if (prev.get('from') !== params.get('from') || prev.get('to') !== params.get('to')) {
        renderTimeline();
        await loadDiff();
      }
      if (prev.get('since') !== params.get('since')) await loadFeed();
    },
    async refresh() {
      await Promise.all([loadDiff(), loadFeed()]);
    },
  };
}
