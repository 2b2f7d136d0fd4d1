// Pieces every view uses: badges, the why bars, memory rows, toasts, keyboard-navigable lists.
import { h, s, time, projectName } from './dom.js';

export const KINDS = ['fact', 'decision', 'preference', 'procedure', 'correction', 'entity', 'continuation', 'note'];
export const SCOPES = ['session', 'project', 'user'];

/**
 * Where a memory belongs, labelled by what it is: user-wide (recalled in every project), a
 * project (short name; the full one on hover), or no project (its session's folder was unknown).
 */
export function whereLabel(m) {
  if (m.scope === 'user' && m.project === null) return { text: 'user-wide', title: 'user scope: recalled in every project' };
  if (m.project === null) return { text: 'no project', title: `${m.scope} scope without a project: its session's folder was unknown, so no project's context or recall includes it` };
  return { text: `${projectName(m.project)}${m.scope === 'session' ? ' · session' : ''}`, title: `${m.project}${m.scope === 'session' ? ' (session scope: only that session)' : ''}` };
}

export function whereItem(m) {
  const { text, title } = whereLabel(m);
  return h('span', { class: 'meta-item where', title }, text);
}

export function kindBadge(kind) {
  return h('span', { class: `kind kind-${kind}`, title: `kind: ${kind}` }, kind);
}

const STALE_LABEL = {
  'file-changed': 'file changed',
  'file-missing': 'file missing',
  'line-moved': 'line moved',
  superseded: 'superseded',
  forgotten: 'forgotten',
};

export function staleBadges(staleness) {
  if (!staleness || !staleness.stale) return [];
  return staleness.reasons.map((r) => h('span', { class: `badge stale stale-${r}`, title: staleTitle(r, staleness) }, STALE_LABEL[r] ?? r));
}

function staleTitle(reason, staleness) {
  const files = staleness.files.filter((f) => f.status === reason).map((f) => `${f.path}${f.line ? `:${f.line}` : ''}`);
  return files.length ? `${STALE_LABEL[reason]}: ${files.join(', ')}` : STALE_LABEL[reason] ?? reason;
}

export function fileStatusBadge(status) {
  const label = { ok: 'current', unknown: 'not checked', 'file-changed': 'changed', 'file-missing': 'missing', 'line-moved': 'line moved' }[status] ?? status;
  return h('span', { class: `badge file-${status}` }, label);
}

export function tagList(tags, onTag) {
  return h(
    'span',
    { class: 'tags' },
    tags.map((t) => (onTag ? h('button', { type: 'button', class: 'tag', onClick: (e) => (e.stopPropagation(), onTag(t)) }, `#${t}`) : h('span', { class: 'tag' }, `#${t}`))),
  );
}

/** The score's parts as weighted contributions. */
export function contributions(why, weights) {
  return [
    { key: 'relevance', label: 'Relevance', value: why.relevance, weight: weights.relevance },
    { key: 'importance', label: 'Importance', value: why.importance, weight: weights.importance },
    { key: 'recency', label: 'Recency', value: why.recency, weight: weights.recency, note: `half-life ${why.halfLifeDays} d` },
    { key: 'usage', label: 'Usage', value: why.usage, weight: weights.usage },
  ];
}

/** A compact stacked bar of the score's parts, for result rows. */
export function whyMini(why, weights) {
  const parts = contributions(why, weights);
  const base = parts.reduce((sum, p) => sum + p.value * p.weight, 0);
  const width = 96;
  let x = 0;
  const rects = parts.map((p) => {
    const w = Math.max(0, p.value * p.weight * width);
    const rect = s('rect', { x: x.toFixed(2), y: 0, width: w.toFixed(2), height: 8, class: `why-${p.key}` }, s('title', {}, `${p.label} ${(p.value * p.weight).toFixed(3)}`));
    x += w;
    return rect;
  });
  const penalty = why.recentlyRecalledPenalty > 0 ? s('rect', { x: Math.max(0, x - why.recentlyRecalledPenalty * width).toFixed(2), y: 0, width: (why.recentlyRecalledPenalty * width).toFixed(2), height: 8, class: 'why-penalty' }) : null;
  return h(
    'span',
    { class: 'why-mini', title: `score ${why.score.toFixed(3)} — base ${base.toFixed(3)} × tags ${why.tagBoost.toFixed(2)} × scope ${why.scopeFactor.toFixed(2)}` },
    s('svg', { viewBox: `0 0 ${width} 8`, width, height: 8, class: 'why-svg', 'aria-hidden': 'true' }, s('rect', { x: 0, y: 0, width, height: 8, class: 'why-track' }), rects, penalty),
    h('span', { class: 'score' }, why.score.toFixed(2)),
  );
}

/** The full breakdown: one bar per part, then the multipliers and the retrievers' ranks. */
export function whyBreakdown(why, weights) {
  const rows = contributions(why, weights).map((p) =>
    h(
      'div',
      { class: 'why-row', dataset: { part: p.key } },
      h('span', { class: 'why-label' }, p.label),
      h('span', { class: 'why-bar' }, h('span', { class: `why-fill why-${p.key}`, style: { width: `${Math.round(Math.min(1, p.value) * 100)}%` } })),
      h('span', { class: 'why-num' }, `${p.value.toFixed(2)} × ${p.weight} = `, h('b', {}, (p.value * p.weight).toFixed(3))),
      p.note ? h('span', { class: 'why-note' }, p.note) : null,
    ),
  );
  if (why.recentlyRecalledPenalty > 0) {
    rows.push(
      h(
        'div',
        { class: 'why-row', dataset: { part: 'penalty' } },
        h('span', { class: 'why-label' }, 'Recently recalled'),
        h('span', { class: 'why-bar' }, h('span', { class: 'why-fill why-penalty', style: { width: `${Math.round(why.recentlyRecalledPenalty * 400)}%` } })),
        h('span', { class: 'why-num' }, '− ', h('b', {}, why.recentlyRecalledPenalty.toFixed(3))),
      ),
    );
  }
  const signals = [
    why.bm25Rank !== null ? `BM25 #${why.bm25Rank}` : 'no full-text match',
    why.vectorRank !== null ? `vector #${why.vectorRank} (cos ${why.cosine.toFixed(2)})` : null,
    `query terms matched ${Math.round(why.coverage * 100)}%`,
  ].filter(Boolean);
  return h(
    'div',
    { class: 'why' },
    rows,
    h(
      'div',
      { class: 'why-mult' },
      h('span', {}, 'Tag boost ', h('b', {}, `×${why.tagBoost.toFixed(2)}`), why.matchedTags.length ? ` (${why.matchedTags.map((t) => `#${t}`).join(' ')})` : ''),
      h('span', {}, `Scope ${why.scope} `, h('b', {}, `×${why.scopeFactor.toFixed(2)}`)),
      why.pinned ? h('span', {}, h('b', {}, 'pinned'), ' — ranked first') : null,
      h('span', { class: 'why-total' }, 'Score ', h('b', {}, why.score.toFixed(3))),
    ),
    h('div', { class: 'why-signals' }, signals.join(' · ')),
  );
}

/** One memory as a list row. */
export function memoryRow(item, { onOpen, onTag, why, weights } = {}) {
  const m = item.memory;
  const row = h(
    'li',
    {
      class: ['row', m.deletedAt ? 'is-forgotten' : '', m.validTo ? 'is-superseded' : ''],
      tabindex: '-1',
      dataset: { id: m.id },
      onClick: () => onOpen?.(m.id),
    },
    h('div', { class: 'row-main' }, h('div', { class: 'row-text' }, m.text)),
    h(
      'div',
      { class: 'row-meta' },
      kindBadge(m.kind),
      m.pinned ? h('span', { class: 'badge pinned', title: 'pinned: always recalled first' }, 'pinned') : null,
      staleBadges(item.staleness),
      whereItem(m),
      tagList(m.tags.slice(0, 5), onTag),
      h('span', { class: 'meta-item grow' }),
      why ? whyMini(why, weights) : null,
      h('span', { class: 'meta-item' }, time(m.createdAt)),
    ),
  );
  return row;
}

/* ------------------------------------------------------------------------- toasts */

export function toast(message, { action, onAction, kind = 'info', timeout = action ? 8000 : 4000 } = {}) {
  const host = document.getElementById('toasts');
  const el = h(
    'div',
    { class: `toast toast-${kind}` },
    h('span', {}, message),
    action ? h('button', { type: 'button', class: 'btn btn-small', onClick: () => (el.remove(), onAction?.()) }, action) : null,
    h('button', { type: 'button', class: 'toast-close', 'aria-label': 'Dismiss', onClick: () => el.remove() }, '×'),
  );
  host.append(el);
  while (host.children.length > 3) host.firstElementChild?.remove();
  setTimeout(() => el.remove(), timeout);
  return el;
}

/* ------------------------------------------------------------------------- j/k lists */

/** Lists already listening for a row taking focus (from Tab or a click). */
const watched = new WeakSet();

/**
 * Keyboard selection over a list's rows: j/k or the arrow keys move, Enter opens. One list is
 * active at a time; views hand theirs to `select.use()` after rendering. The list is one stop in
 * the tab order (a roving tabindex): Tab lands on its selected row, or its first.
 */
export const select = {
  list: null,
  index: -1,
  onOpen: null,
  use(list, onOpen, index = -1) {
    this.list = list;
    this.onOpen = onOpen;
    this.index = -1;
    const rows = this.rows();
    rows.forEach((row, i) => (row.tabIndex = i === 0 ? 0 : -1));
    if (list && !watched.has(list)) {
      watched.add(list);
      list.addEventListener('focusin', (e) => {
        if (this.list !== list) return;
        const i = this.rows().indexOf(e.target);
        if (i >= 0 && i !== this.index) this.move(i, false);
      });
    }
    if (index >= 0) this.move(index, false);
  },
  rows() {
    return this.list ? [...this.list.querySelectorAll(':scope > .row')] : [];
  },
  move(to, focus = true) {
    const rows = this.rows();
    if (rows.length === 0) return;
    const i = Math.max(0, Math.min(rows.length - 1, to));
    const before = rows[this.index];
    before?.classList.remove('selected');
    if (before) before.tabIndex = -1;
    for (const row of rows) if (row !== rows[i] && row.tabIndex === 0) row.tabIndex = -1;
    this.index = i;
    const row = rows[i];
    row.classList.add('selected');
    row.tabIndex = 0;
    row.scrollIntoView({ block: 'nearest' });
    if (focus) row.focus({ preventScroll: true });
  },
  next() {
    this.move(this.index + 1);
  },
  prev() {
    this.move(this.index < 0 ? 0 : this.index - 1);
  },
  current() {
    return this.rows()[this.index] ?? null;
  },
  open() {
    const row = this.current();
    if (row && this.onOpen) this.onOpen(row.dataset.id, row);
  },
};

export function empty(title, detail) {
  return h('div', { class: 'empty' }, h('p', { class: 'empty-title' }, title), detail ? h('p', { class: 'muted' }, detail) : null);
}

export function errorBox(error) {
  return h('div', { class: 'error-box', role: 'alert' }, h('b', {}, error.code ?? 'Error'), ' ', error.message);
}

export function spinner() {
  return h('div', { class: 'loading', 'aria-busy': 'true' }, h('span', { class: 'dot' }), h('span', { class: 'dot' }), h('span', { class: 'dot' }));
}
