// The browser's shell: a hash router over the views, the keyboard, and changes with undo.
import { api } from './api.js';
import { h, mount } from './dom.js';
import { errorBox, select, toast } from './ui.js';

const VIEWS = {
  memories: () => import('./views/memories.js'),
  sessions: () => import('./views/sessions.js'),
  session: () => import('./views/sessions.js'),
  snapshots: () => import('./views/snapshots.js'),
  review: () => import('./views/review.js'),
  overview: () => import('./views/overview.js'),
};

const main = document.getElementById('main');
const search = document.getElementById('search');

/** What views share: the API, navigation, changes (undoable), and the keyboard's targets. */
export const app = {
  api,
  toast,
  route: { view: 'memories', arg: null, params: new URLSearchParams() },
  /** Set by the view showing a memory: what e / # / p act on. */
  actions: null,
  /** Primary events of the changes made here, newest last: what `u` undoes first. */
  changes: [],
  view: null,

  /** Go to `#/view/arg?params` (params as an object; empty values dropped). */
  go(view, arg, params, { replace = false } = {}) {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {})) {
      if (v === undefined || v === null || v === '' || v === false || (Array.isArray(v) && v.length === 0)) continue;
      qs.set(k, Array.isArray(v) ? v.join(',') : String(v));
    }
    const hash = `#/${view}${arg ? `/${encodeURIComponent(arg)}` : ''}${qs.toString() ? `?${qs}` : ''}`;
    if (hash === location.hash) return app.settled;
    if (replace) history.replaceState(null, '', hash);
    else history.pushState(null, '', hash);
    return route();
  },

  /** Resolves when the current route has rendered. */
  settled: Promise.resolve(),

  /**
   * Make a change through the API, remember how to undo it, offer Undo in a toast, and refresh
   * what is on screen. By default undo is the event log's (the change's last event); `undo`
   * replaces it (e.g. a review resolution has its own). Returns the response, or null when it
   * failed (the toast says why).
   */
  async change(run, message, { undo } = {}) {
    try {
      const res = await run();
      const primary = res?.events?.at(-1)?.id;
      const entry = undo ?? primary ?? null;
      if (entry) app.changes.push(entry);
      const text = typeof message === 'function' ? message(res) : message;
      if (text) toast(text, { action: entry ? 'Undo' : undefined, onAction: () => app.undo(entry), kind: 'ok' });
      await app.refresh();
      refreshReviewCount();
      return res;
    } catch (error) {
      toast(error.message, { kind: 'error' });
      return null;
    }
  },

  /** Undo `target` (an event id or an undo function), else this page's last change, else the newest change in the log. */
  async undo(target) {
    const next = target ?? app.changes.at(-1);
    app.changes = app.changes.filter((c) => c !== next);
    try {
      let description;
      if (typeof next === 'function') description = await next();
      else {
        const res = await api.post('/undo', next ? { eventId: next } : {});
        app.changes = app.changes.filter((id) => id !== res.undone.id);
        description = res.description;
      }
      toast(description.charAt(0).toUpperCase() + description.slice(1), { kind: 'ok' });
      await app.refresh();
      refreshReviewCount();
      return true;
    } catch (error) {
      toast(error.status === 404 && !next ? 'Nothing to undo' : error.message, { kind: error.status === 404 && !next ? 'info' : 'error' });
      return null;
    }
  },

  refreshReviewCount: () => refreshReviewCount(),

  /** Re-render the current view with the same route (after a change). */
  async refresh() {
    await app.view?.refresh?.();
  },
};

function parseHash() {
  const [path, qs = ''] = location.hash.replace(/^#\/?/, '').split('?');
  const [view = 'memories', ...rest] = path.split('/').filter(Boolean);
  return { view: VIEWS[view] ? view : 'memories', arg: rest.length ? decodeURIComponent(rest.join('/')) : null, params: new URLSearchParams(qs) };
}

let routing = 0;
function route() {
  app.settled = renderRoute();
  return app.settled;
}

async function renderRoute() {
  const next = parseHash();
  const prev = app.route;
  app.route = next;
  for (const a of document.querySelectorAll('.tabs a')) {
    const active = a.dataset.view === next.view || (next.view === 'session' && a.dataset.view === 'sessions');
    a.classList.toggle('active', active);
    if (active) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  if (next.view === 'memories' && document.activeElement !== search) search.value = next.params.get('q') ?? '';
  const ticket = ++routing;
  try {
    const mod = await VIEWS[next.view]();
    if (ticket !== routing) return;
    // Same view: let it update in place (keeps scroll, selection and loaded pages).
    if (app.view && app.view.name === next.view && app.view.update && prev.view === next.view && prev.arg === next.arg) {
      await app.view.update(next, prev);
      return;
    }
    app.view?.destroy?.();
    app.actions = null;
    select.use(null, null);
    const root = h('div', { class: `view view-${next.view}` });
    mount(main, root);
    // Another page starts at its top, not at the scroll position the last one was left at.
    window.scrollTo(0, 0);
    app.view = { name: next.view, ...(await mod.render(root, next, app)) };
  } catch (error) {
    mount(main, errorBox(error));
  }
}

/* ------------------------------------------------------------------ header search */

if (matchMedia('(max-width: 860px)').matches) search.placeholder = 'Search memories';

let searchTimer = 0;
function runSearch(replace) {
  const q = search.value.trim();
  const params = app.route.view === 'memories' ? Object.fromEntries(app.route.params) : {};
  delete params.open;
  if (q) params.q = q;
  else delete params.q;
  return app.go('memories', null, params, { replace });
}
search.addEventListener('input', () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => runSearch(app.route.view === 'memories'), 250);
});
document.getElementById('search-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  clearTimeout(searchTimer);
  await runSearch(false);
  // Enter in the search box moves to the first result (j / k / Enter from there).
  await app.settled;
  select.move(0);
});

/* ------------------------------------------------------------------ theme, help */

function toggleTheme() {
  const root = document.documentElement;
  const dark = root.dataset.theme ? root.dataset.theme === 'dark' : matchMedia('(prefers-color-scheme: dark)').matches;
  root.dataset.theme = dark ? 'light' : 'dark';
  try {
    localStorage.setItem('cairn.theme', root.dataset.theme);
  } catch {
    /* not saved: fine */
  }
  app.view?.themeChanged?.();
}
document.getElementById('theme-btn').addEventListener('click', toggleTheme);
const help = document.getElementById('help');
document.getElementById('help-btn').addEventListener('click', () => help.showModal());

/* ------------------------------------------------------------------ keyboard */

const GO = { m: 'memories', s: 'sessions', c: 'snapshots', r: 'review', o: 'overview' };
let pendingG = 0;

/** A control that Enter and the arrow keys already act on (a button, a link, a tab): leave them to it. */
function control(target) {
  return target instanceof HTMLElement && !target.classList.contains('row') && (['A', 'BUTTON', 'SUMMARY'].includes(target.tagName) || ['tab', 'link', 'button'].includes(target.getAttribute('role') ?? ''));
}

function typing(target) {
  return target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));
}

document.addEventListener('keydown', (e) => {
  if (e.defaultPrevented || e.metaKey || e.ctrlKey || e.altKey) return;
  if (typing(e.target)) {
    if (e.key === 'Escape') {
      e.target.blur();
      if (e.target === search) select.move(Math.max(0, select.index));
    } else if (e.target === search && e.key === 'ArrowDown') {
      e.preventDefault();
      select.move(0);
    }
    return;
  }
  if (help.open) return;
  if (pendingG) {
    clearTimeout(pendingG);
    pendingG = 0;
    if (GO[e.key]) {
      e.preventDefault();
      app.go(GO[e.key]);
    }
    return;
  }
  const act = (fn) => {
    e.preventDefault();
    fn();
  };
  switch (e.key) {
    case '/':
      return act(() => {
        search.focus();
        search.select();
      });
    case 'ArrowDown':
    case 'ArrowUp':
      if (control(e.target) || !select.list) return;
      return act(() => (e.key === 'ArrowDown' ? select.next() : select.prev()));
    case 'j':
      return act(() => select.next());
    case 'k':
      return act(() => select.prev());
    case 'Enter':
      if (!control(e.target) && select.current()) act(() => select.open());
      return;
    case 'e':
      if (app.actions?.edit) act(() => app.actions.edit());
      return;
    case '#':
      if (app.actions?.forget) act(() => app.actions.forget());
      return;
    case 'p':
      if (app.actions?.pin) act(() => app.actions.pin());
      return;
    case 'u':
      return act(() => app.undo());
    case 't':
      return act(toggleTheme);
    case '?':
      return act(() => help.showModal());
    case 'g':
      pendingG = setTimeout(() => (pendingG = 0), 1200);
      return;
    case 'Escape':
      if (app.actions?.close) act(() => app.actions.close());
      return;
  }
});

/* ------------------------------------------------------------------ boot */

async function refreshReviewCount() {
  try {
    const { counts } = await api.get('/review', { limit: 1 });
    const n = Object.values(counts).reduce((a, b) => a + b, 0);
    const badge = document.getElementById('review-count');
    badge.textContent = String(n);
    badge.hidden = n === 0;
  } catch {
    /* the badge is a nicety */
  }
}

window.addEventListener('hashchange', route);
route();
refreshReviewCount();
