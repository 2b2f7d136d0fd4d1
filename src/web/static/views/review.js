// The review queue: near-duplicates (merge / keep both), contradictions (keep one / both),
// stale memories (revise / forget). Every resolution is an ordinary change, so u undoes it.
import { api, seg } from '../api.js';
import { h, mount, num, time } from '../dom.js';
import { empty, errorBox, fileStatusBadge, kindBadge, select, spinner, staleBadges, whereItem } from '../ui.js';

const TABS = [
  ['near-duplicate', 'Near-duplicates'],
  ['contradiction', 'Contradictions'],
  ['stale', 'Stale'],
];

export async function render(root, route, app) {
  let params = route.params;
  const tabs = h('div', { class: 'segmented big', role: 'tablist', 'aria-label': 'What to review' });
  const list = h('ul', { class: 'list review-list', id: 'review-items', 'aria-label': 'Review items' });
  tabs.addEventListener('keydown', (e) => {
    if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
    e.preventDefault();
    const at = TABS.findIndex(([value]) => value === kind());
    const next = TABS[(at + (e.key === 'ArrowRight' ? 1 : TABS.length - 1)) % TABS.length][0];
    set({ kind: next }).then(() => tabs.querySelector(`#tab-${next}`)?.focus());
  });
  const scanBtn = h('button', { type: 'button', class: 'btn', title: 'Look for near-duplicates and stale file references among the newest memories' }, 'Scan recent memories');
  const resolvedToggle = h('label', { class: 'check' }, h('input', { type: 'checkbox', checked: params.get('resolved') === '1', onChange: (e) => set({ resolved: e.target.checked ? '1' : undefined }) }), ' Show resolved');
  mount(
    root,
    h(
      'div',
      { class: 'page review' },
      h('div', { class: 'page-head' }, h('h1', {}, 'Review'), h('div', { class: 'toolbar' }, resolvedToggle, scanBtn)),
      h('p', { class: 'muted lead' }, 'Decide what the agent should keep believing. Each choice is undoable with ', h('kbd', {}, 'u'), '.'),
      tabs,
      list,
    ),
  );

  const set = (changes) => app.go('review', null, { ...Object.fromEntries(params), ...changes }, { replace: true });
  // Without a tab in the address, the first one that has items (chosen once counts are known).
  let firstWithItems = null;
  const kind = () => params.get('kind') ?? firstWithItems ?? 'near-duplicate';

  scanBtn.addEventListener('click', async () => {
    scanBtn.disabled = true;
    scanBtn.textContent = 'Scanning…';
    try {
      const res = await api.post('/review/scan', { limit: 1000 });
      app.toast(`Scanned ${num(res.scanned)} memories: ${num(res.queued)} new item${res.queued === 1 ? '' : 's'} to review`, { kind: 'ok' });
      await load();
      app.refreshReviewCount();
    } catch (error) {
      app.toast(error.message, { kind: 'error' });
    } finally {
      scanBtn.disabled = false;
      scanBtn.textContent = 'Scan recent memories';
    }
  });

  // Keeping, merging and dismissing are undone by the review queue itself (it restores what it forgot).
  const undoReview = (item) => async () => {
    const res = await api.post(`/review/${seg(item.id)}/undo`);
    return `undid the review decision${res.restored.length ? ` — restored ${res.restored.length} memor${res.restored.length === 1 ? 'y' : 'ies'}` : ''}`;
  };
  const resolve = (item, body, message) =>
    app.change(() => api.post(`/review/${seg(item.id)}`, body), message, ['keep', 'merge', 'keep-both', 'dismiss'].includes(body.action) ? { undo: undoReview(item) } : {});

  function memoryCard(item, entry, index) {
    const m = entry.memory;
    const gone = m.deletedAt !== null || m.validTo !== null;
    const open = item.resolvedAt === null && !gone;
    const actions = [];
    if (open && item.kind !== 'stale') actions.push(h('button', { type: 'button', class: 'btn btn-small btn-primary', onClick: () => resolve(item, { action: 'keep', memoryId: m.id }, 'Kept one, forgot the other') }, 'Keep this one'));
    return h(
      'div',
      { class: ['rv-memory', gone ? 'dim' : ''], dataset: { id: m.id } },
      h('div', { class: 'rv-tag muted small' }, item.memoryIds.length > 1 ? (index === 0 ? 'A' : 'B') : ''),
      h('div', { class: 'rv-text', onClick: () => app.go('memories', null, { open: m.id }) }, m.text),
      h('div', { class: 'row-meta' }, kindBadge(m.kind), staleBadges(entry.staleness), whereItem(m), h('span', { class: 'meta-item' }, time(m.createdAt)), h('span', { class: 'grow' }), actions),
      item.kind === 'stale' && entry.staleness.files.length
        ? h('ul', { class: 'files' }, entry.staleness.files.map((f) => h('li', {}, h('code', {}, `${f.path}${f.line ? `:${f.line}` : ''}`), fileStatusBadge(f.status))))
        : null,
    );
  }

  function staleActions(item, body) {
    const target = item.memories[0]?.memory;
    if (!target || item.resolvedAt !== null) return null;
    const reviseForm = () => {
      const text = h('textarea', { rows: 3, 'aria-label': 'Revised text' });
      text.value = target.text;
      mount(
        body,
        h(
          'form',
          {
            class: 'editor',
            onSubmit: (e) => {
              e.preventDefault();
              resolve(item, { action: 'revise', memoryId: target.id, text: text.value.trim() }, 'Revised');
            },
          },
          text,
          h('div', { class: 'editor-actions' }, h('button', { type: 'submit', class: 'btn btn-primary' }, 'Save revision'), h('button', { type: 'button', class: 'btn', onClick: () => mount(body) }, 'Cancel')),
        ),
      );
      text.focus();
    };
    return [
      h('button', { type: 'button', class: 'btn btn-small btn-primary', onClick: reviseForm }, 'Revise…'),
      h('button', { type: 'button', class: 'btn btn-small btn-danger', onClick: () => resolve(item, { action: 'forget', memoryId: target.id }, 'Forgotten') }, 'Forget'),
    ];
  }

  function itemRow(item) {
    const body = h('div', { class: 'rv-body' });
    const open = item.resolvedAt === null;
    return h(
      'li',
      { class: ['row', 'rv-item', `rv-${item.kind}`, open ? '' : 'resolved'], tabindex: '-1', dataset: { id: item.id } },
      h('div', { class: 'rv-reason' }, item.reason),
      h('div', { class: 'rv-pair' }, item.memories.map((entry, i) => memoryCard(item, entry, i))),
      body,
      h(
        'div',
        { class: 'rv-actions' },
        open
          ? [
              item.kind === 'near-duplicate'
                ? h('button', { type: 'button', class: 'btn btn-small', title: 'Keep A, with B’s sources and the higher importance; forget B', onClick: () => resolve(item, { action: 'merge' }, 'Merged into A') }, 'Merge into A')
                : null,
              item.kind === 'stale' ? staleActions(item, body) : h('button', { type: 'button', class: 'btn btn-small', onClick: () => resolve(item, { action: 'keep-both' }, 'Kept both') }, 'Keep both'),
              item.kind === 'stale' ? h('button', { type: 'button', class: 'btn btn-small btn-ghost', onClick: () => resolve(item, { action: 'dismiss' }, 'Dismissed') }, 'Still true') : null,
            ]
          : [
              h('span', { class: 'muted small' }, `resolved: ${item.resolution} · `, time(item.resolvedAt)),
              item.resolution && item.resolution !== 'undone' && !/^(revised|forgotten):/.test(item.resolution)
                ? h('button', { type: 'button', class: 'btn btn-small btn-ghost', onClick: () => app.undo(undoReview(item)) }, 'Undo')
                : null,
            ],
        h('span', { class: 'grow' }),
        h('span', { class: 'muted small' }, 'queued ', time(item.createdAt)),
      ),
    );
  }

  async function load() {
    mount(list, spinner());
    try {
      const open = params.get('resolved') === '1' ? undefined : true;
      if (!params.get('kind') && firstWithItems === null) {
        const { counts } = await api.get('/review', { open, limit: 1 });
        firstWithItems = TABS.find(([value]) => counts[value] > 0)?.[0] ?? 'near-duplicate';
      }
      const res = await api.get('/review', { kinds: kind(), open, limit: 100 });
      const buttons = TABS.map(([value, label]) =>
        h(
          'button',
          {
            type: 'button',
            role: 'tab',
            id: `tab-${value}`,
            class: kind() === value ? 'on' : '',
            'aria-selected': kind() === value ? 'true' : 'false',
            'aria-controls': 'review-items',
            // One tab stop for the tab list; the arrow keys move between tabs (WAI-ARIA tabs).
            tabindex: kind() === value ? '0' : '-1',
            onClick: () => set({ kind: value }),
          },
          label,
          h('span', { class: 'chip-n' }, num(res.counts[value])),
        ),
      );
      mount(tabs, buttons);
      mount(
        list,
        res.items.length
          ? res.items.map(itemRow)
          : empty('Nothing to review here', 'Distillation queues what needs a person’s decision. “Scan recent memories” looks for near-duplicates and stale file references now.'),
      );
      select.use(list, (id) => list.querySelector(`[data-id="${CSS.escape(id)}"] .btn-primary`)?.focus());
    } catch (error) {
      mount(list, errorBox(error));
    }
  }

  await load();
  return {
    async update(next) {
      params = next.params;
      await load();
    },
    refresh: load,
  };
}
