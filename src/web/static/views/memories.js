// Memories: the filtered, paged list (or search results with their why), filters beside it,
// and the open memory beside that.
import { api, seg } from '../api.js';
import { h, mount, num, projectName } from '../dom.js';
import { KINDS, SCOPES, empty, errorBox, memoryRow, select, spinner } from '../ui.js';
import { showDetail } from './detail.js';

const STATUSES = [
  ['active', 'Active'],
  ['forgotten', 'Forgotten'],
  ['superseded', 'Superseded'],
  ['all', 'All'],
];
const SORTS = [
  ['created-desc', 'Newest'],
  ['created-asc', 'Oldest'],
  ['updated-desc', 'Recently changed'],
  ['importance-desc', 'Most important'],
  ['access-desc', 'Most used'],
];
const PAGE = 50;
const LIST_KEYS = ['q', 'kinds', 'scopes', 'project', 'tags', 'status', 'stale', 'file', 'since', 'until', 'sort'];

function csv(params, key) {
  return (params.get(key) ?? '').split(',').filter(Boolean);
}

function listKey(params) {
  return LIST_KEYS.map((k) => `${k}=${params.get(k) ?? ''}`).join('&');
}

export async function render(root, route, app) {
  let params = route.params;
  let items = [];
  let nextCursor = null;
  let total = null;
  let weights = null;
  const whyById = new Map();
  let detail = null;
  let loading = 0;

  const setParams = (changes, options = { replace: true }) => {
    const next = Object.fromEntries(params);
    for (const [k, v] of Object.entries(changes)) {
      if (v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0)) delete next[k];
      else next[k] = Array.isArray(v) ? v.join(',') : String(v);
    }
    app.go('memories', null, next, options);
  };

  /* ---------------------------------------------------------------- filters */

  const filters = h('aside', { class: 'filters', 'aria-label': 'Filters' });
  const kindCounts = {};
  let projects = [];
  let topTags = [];

  function chipGroup(title, key, values, counts) {
    const selected = new Set(csv(params, key));
    return h(
      'fieldset',
      { class: 'f-group' },
      h('legend', {}, title),
      h(
        'div',
        { class: 'chips' },
        values.map((v) =>
          h(
            'button',
            {
              type: 'button',
              class: ['chip', selected.has(v) ? 'on' : '', key === 'kinds' ? `chip-${v}` : ''],
              'aria-pressed': selected.has(v) ? 'true' : 'false',
              onClick: () => {
                selected.has(v) ? selected.delete(v) : selected.add(v);
                setParams({ [key]: [...selected], open: undefined });
              },
            },
            v,
            counts && counts[v] !== undefined ? h('span', { class: 'chip-n' }, num(counts[v])) : null,
          ),
        ),
      ),
    );
  }

  function renderFilters() {
    const searching = Boolean(params.get('q'));
    const status = params.get('status') ?? 'active';
    const project = params.get('project') ?? '';
    const tagInput = h('input', { type: 'text', placeholder: 'tag, tag', value: params.get('tags') ?? '', 'aria-label': 'Tags' });
    tagInput.addEventListener('change', () => setParams({ tags: tagInput.value.split(',').map((t) => t.trim()).filter(Boolean) }));
    const fileInput = h('input', { type: 'text', placeholder: 'src/config.py', value: params.get('file') ?? '', 'aria-label': 'File path contains' });
    fileInput.addEventListener('change', () => setParams({ file: fileInput.value.trim() }));
    const dateInput = (key, label) => {
      const raw = params.get(key);
      const el = h('input', { type: 'date', value: raw ? new Date(Number.isNaN(Number(raw)) ? raw : Number(raw)).toISOString().slice(0, 10) : '', 'aria-label': label });
      el.addEventListener('change', () => setParams({ [key]: el.value || undefined }));
      return el;
    };
    const active = LIST_KEYS.some((k) => k !== 'q' && k !== 'sort' && params.get(k));
    mount(
      filters,
      h(
        'div',
        { class: 'f-head' },
        h('h2', {}, 'Filters'),
        h('button', { type: 'button', class: 'btn btn-small f-toggle', 'aria-expanded': filters.classList.contains('open') ? 'true' : 'false', onClick: () => (filters.classList.toggle('open'), renderFilters()) }, filters.classList.contains('open') ? 'Hide' : 'Show'),
        active ? h('button', { type: 'button', class: 'btn btn-small btn-ghost', onClick: () => setParams(Object.fromEntries(LIST_KEYS.filter((k) => k !== 'q').map((k) => [k, undefined]))) }, 'Clear') : null,
      ),
      h(
        'fieldset',
        { class: ['f-group', searching ? 'disabled' : ''], title: searching ? 'Search covers active memories' : '' },
        h('legend', {}, 'Status'),
        h(
          'div',
          { class: 'segmented', role: 'group' },
          STATUSES.map(([value, label]) =>
            h('button', { type: 'button', class: status === value ? 'on' : '', 'aria-pressed': status === value ? 'true' : 'false', disabled: searching, onClick: () => setParams({ status: value === 'active' ? undefined : value }) }, label),
          ),
        ),
      ),
      chipGroup('Kind', 'kinds', KINDS, kindCounts),
      chipGroup('Scope', 'scopes', SCOPES, null),
      h(
        'fieldset',
        { class: 'f-group' },
        h('legend', {}, 'Project'),
        h(
          'select',
          { 'aria-label': 'Project', onChange: (e) => setParams({ project: e.target.value }) },
          h('option', { value: '', selected: project === '' }, 'All projects'),
          h('option', { value: '~', selected: project === '~' }, 'Without a project (user-wide, unknown)'),
          projects.filter((p) => p.project !== null).map((p) => h('option', { value: p.project, selected: project === p.project, title: p.project }, `${projectName(p.project)} (${num(p.count)})`)),
        ),
      ),
      h(
        'fieldset',
        { class: 'f-group' },
        h('legend', {}, 'Tags'),
        tagInput,
        topTags.length
          ? h(
              'div',
              { class: 'chips small' },
              topTags.slice(0, 10).map((t) => h('button', { type: 'button', class: 'chip', onClick: () => setParams({ tags: [...new Set([...csv(params, 'tags'), t.tag])] }) }, `#${t.tag}`, h('span', { class: 'chip-n' }, num(t.count)))),
            )
          : null,
      ),
      h(
        'fieldset',
        { class: ['f-group', searching ? 'disabled' : ''] },
        h('legend', {}, 'Files'),
        h(
          'label',
          { class: 'check' },
          h('input', { type: 'checkbox', checked: params.get('stale') === '1', disabled: searching, onChange: (e) => setParams({ stale: e.target.checked ? '1' : undefined }) }),
          ' Stale file references only',
        ),
        fileInput,
      ),
      h(
        'fieldset',
        { class: ['f-group', searching ? 'disabled' : ''] },
        h('legend', {}, 'Created'),
        h('div', { class: 'dates' }, h('label', {}, 'from ', dateInput('since', 'Created from')), h('label', {}, 'to ', dateInput('until', 'Created before'))),
        h(
          'div',
          { class: 'chips small' },
          [
            ['today', 1],
            ['7 days', 7],
            ['30 days', 30],
          ].map(([label, days]) =>
            h('button', { type: 'button', class: 'chip', onClick: () => setParams({ since: new Date(Date.now() - days * 86400e3).toISOString().slice(0, 10), until: undefined }) }, label),
          ),
        ),
      ),
    );
  }

  /* ---------------------------------------------------------------- list */

  const head = h('div', { class: 'results-head' });
  const list = h('ul', { class: 'list', role: 'listbox', 'aria-label': 'Memories' });
  const more = h('div', { class: 'more' });
  const results = h('section', { class: 'results' }, head, list, more);
  const pane = h('section', { class: 'detail-pane', 'aria-live': 'polite', 'aria-label': 'Memory', tabindex: '-1' });
  mount(root, h('div', { class: 'memories' }, filters, results, pane));

  const openMemory = (id) => setParams({ open: id }, { replace: false });
  const onTag = (tag) => setParams({ tags: [tag], open: undefined });

  function renderHead(extra) {
    const q = params.get('q');
    const sort = params.get('sort') ?? 'created-desc';
    mount(
      head,
      h('div', { class: 'rh-title' }, ...extra),
      q
        ? null
        : h(
            'label',
            { class: 'sort' },
            'Sort ',
            h('select', { 'aria-label': 'Sort', onChange: (e) => setParams({ sort: e.target.value === 'created-desc' ? undefined : e.target.value }) }, SORTS.map(([v, l]) => h('option', { value: v, selected: v === sort }, l))),
          ),
    );
  }

  function renderRows(append = false) {
    const rows = (append ? items.slice(list.children.length) : items).map((item) => memoryRow(item, { onOpen: openMemory, onTag, why: whyById.get(item.memory.id), weights }));
    if (append) list.append(...rows);
    else mount(list, rows);
    const openId = params.get('open');
    for (const row of list.children) row.classList.toggle('open', row.dataset.id === openId);
  }

  async function load({ keepSelection = false } = {}) {
    const ticket = ++loading;
    const q = params.get('q');
    const selected = keepSelection ? select.index : -1;
    if (!keepSelection) {
      mount(list, spinner());
      mount(more);
    }
    try {
      if (q) {
        const res = await api.get('/search', { q, kinds: csv(params, 'kinds'), scopes: csv(params, 'scopes'), tags: csv(params, 'tags'), project: params.get('project') || undefined, k: 50 });
        if (ticket !== loading) return;
        weights = res.weights;
        whyById.clear();
        for (const hit of res.hits) whyById.set(hit.memory.id, hit.why);
        items = res.hits.map((hit) => ({ memory: hit.memory, staleness: hit.staleness }));
        nextCursor = null;
        total = items.length;
        renderHead([h('b', {}, num(items.length)), ` result${items.length === 1 ? '' : 's'} for `, h('q', {}, q), h('span', { class: 'muted' }, ` · ${res.mode} recall · ${num(res.considered)} candidates`)]);
      } else {
        const limit = Math.min(200, keepSelection ? Math.max(PAGE, items.length) : PAGE);
        const filterParams = Object.fromEntries(LIST_KEYS.filter((k) => k !== 'q').map((k) => [k, params.get(k) ?? undefined]));
        let res = await api.get('/memories', { ...filterParams, limit });
        if (ticket !== loading) return;
        whyById.clear();
        items = res.items;
        // Scanning filters (stale, file, superseded) answer a few thousand rows at a time: keep going a while.
        for (let more = 0; res.total === null && res.nextCursor !== null && items.length < limit && more < 12; more++) {
          renderHead([h('span', { class: 'muted' }, `Scanning… ${num(items.length)} found`)]);
          res = await api.get('/memories', { ...filterParams, limit: limit - items.length, cursor: res.nextCursor });
          if (ticket !== loading) return;
          items = items.concat(res.items);
        }
        nextCursor = res.nextCursor;
        total = res.total;
        renderCount();
      }
      renderRows();
      if (items.length === 0) mount(list, empty(q ? 'Nothing matches' : 'No memories here', q ? 'Try other words, an identifier or a file name — or clear the filters.' : 'Change the filters, or remember something with `cairn remember`.'));
      renderMore();
      select.use(list, (id) => openMemory(id), selected >= 0 ? Math.min(selected, items.length - 1) : -1);
    } catch (error) {
      if (ticket === loading) mount(list, errorBox(error));
    }
  }

  function renderCount() {
    const status = params.get('status') ?? 'active';
    const noun = status === 'active' ? 'memories' : `${status} memories`;
    renderHead(total === null ? [h('b', {}, num(items.length)), ` ${noun} found`, nextCursor !== null ? h('span', { class: 'muted' }, ' so far') : null] : [items.length ? `1–${num(items.length)} of ` : '', h('b', {}, num(total)), ` ${noun}`]);
  }

  function renderMore() {
    mount(
      more,
      nextCursor !== null
        ? h(
            'button',
            {
              type: 'button',
              class: 'btn',
              onClick: async (e) => {
                e.target.disabled = true;
                const res = await api.get('/memories', { ...Object.fromEntries(LIST_KEYS.filter((k) => k !== 'q').map((k) => [k, params.get(k) ?? undefined])), limit: PAGE, cursor: nextCursor });
                items = items.concat(res.items);
                nextCursor = res.nextCursor;
                renderRows(true);
                renderCount();
                renderMore();
              },
            },
            'Load more',
          )
        : null,
    );
  }

  /* ---------------------------------------------------------------- detail */

  // Until the open memory's detail has loaded, the keys act on it (or on the selected row).
  let editWhenOpen = false;
  const targetId = () => params.get('open') ?? select.current()?.dataset.id ?? null;
  const selectedRowActions = {
    edit: () => {
      const id = targetId();
      if (!id) return;
      editWhenOpen = true;
      if (id !== params.get('open')) setParams({ open: id }, { replace: false });
    },
    forget: () => {
      const id = targetId();
      if (id) app.change(() => api.post(`/memories/${seg(id)}/forget`, { reason: 'forgotten in the browser' }), 'Forgotten');
    },
    pin: () => {
      const item = items.find((i) => i.memory.id === targetId());
      if (item) app.change(() => api.post(`/memories/${seg(item.memory.id)}/${item.memory.pinned ? 'unpin' : 'pin'}`), item.memory.pinned ? 'Unpinned' : 'Pinned');
    },
    close: () => (params.get('open') ? setParams({ open: undefined }, { replace: false }) : document.activeElement?.blur()),
  };

  async function renderDetail() {
    const id = params.get('open');
    root.classList.toggle('has-detail', Boolean(id));
    for (const row of list.children) row.classList.toggle('open', row.dataset.id === id);
    if (!id) {
      // Closed (Esc, ×, back): the keyboard goes back to the row it was on.
      const focusLost = detail !== null && (pane.contains(document.activeElement) || document.activeElement === document.body);
      editWhenOpen = false;
      detail = null;
      app.actions = selectedRowActions;
      mount(pane, h('div', { class: 'pane-hint' }, h('p', {}, 'Select a memory to see why it ranked, its files, where it came from and its history.'), h('p', { class: 'muted' }, h('kbd', {}, 'j'), ' ', h('kbd', {}, 'k'), ' to move, ', h('kbd', {}, 'Enter'), ' to open, ', h('kbd', {}, '?'), ' for all keys')));
      if (focusLost) (select.current() ?? list.querySelector(':scope > .row'))?.focus({ preventScroll: true });
      return;
    }
    const fromRow = list.contains(document.activeElement);
    detail = await showDetail(pane, id, app, { why: whyById.get(id) ?? null, weights, onClose: () => setParams({ open: undefined }, { replace: false }) });
    if (params.get('open') !== id) return;
    // Opened from the list with the keyboard: Tab goes on into the memory (Esc comes back).
    if (fromRow && detail) pane.focus({ preventScroll: true });
    app.actions = detail ?? selectedRowActions;
    if (editWhenOpen) {
      editWhenOpen = false;
      detail?.edit();
    }
  }

  /* ---------------------------------------------------------------- meta (non-blocking) */

  renderFilters();
  app.actions = selectedRowActions;
  await Promise.all([load(), renderDetail()]);

  // Counts for the filters after the list: the store answers one query at a time, rows first.
  Promise.all([api.get('/meta').catch(() => null), api.get('/projects').catch(() => null)]).then(([meta, proj]) => {
    if (meta) Object.assign(kindCounts, meta.byKind);
    if (proj) {
      projects = proj.projects;
      topTags = proj.tags;
    }
    renderFilters();
  });

  return {
    async update(next) {
      const prev = params;
      params = next.params;
      // Another memory is being opened: from now on the keys act on it, not on the detail still
      // shown while the list reloads (an `e` pressed now edits it once it has loaded).
      if ((prev.get('open') ?? '') !== (params.get('open') ?? '') && params.get('open')) app.actions = selectedRowActions;
      if (listKey(prev) !== listKey(params)) {
        renderFilters();
        await load();
      }
      if ((prev.get('open') ?? '') !== (params.get('open') ?? '')) await renderDetail();
    },
    async refresh() {
      await Promise.all([load({ keepSelection: true }), renderDetail()]);
    },
    destroy() {
      loading++;
    },
  };
}
