// One memory in full: text, why it ranked, files and their staleness, provenance back to the
// transcript turn, versions, the audit trail with undo, similar memories — and editing.
import { api, seg } from '../api.js';
import { h, mount, time, when } from '../dom.js';
import { KINDS, empty, errorBox, fileStatusBadge, kindBadge, spinner, staleBadges, tagList, whereLabel, whyBreakdown } from '../ui.js';

const SCOPE_MEANS = {
  user: 'recalled in every project',
  project: 'recalled in its project',
  session: 'recalled in its session only',
};

const EVENT_LABEL = {
  create: 'created',
  revise: 'revised',
  supersede: 'superseded',
  forget: 'forgotten',
  restore: 'restored',
  update: 'updated',
  pin: 'pinned',
  unpin: 'unpinned',
  merge: 'merged',
  access: 'accessed',
};

function section(title, ...children) {
  return h('section', { class: 'd-section' }, h('h3', {}, title), children);
}

function eventDetail(e) {
  const d = e.data || {};
  if (e.type === 'forget' && d.reason) return `— ${d.reason}`;
  if (e.type === 'update' && d.after) return `— ${Object.keys(d.after).join(', ')}`;
  if ((e.type === 'revise' || e.type === 'supersede') && d.by) return `→ ${String(d.by).slice(-6)}`;
  if (e.type === 'create' && d.source) return `— ${d.source}${d.supersedes ? `, replacing ${String(d.supersedes).slice(-6)}` : ''}`;
  return '';
}

/**
 * Show memory `id` in `container`. Returns the actions the keyboard uses (edit, forget, pin,
 * close) once loaded.
 */
export async function showDetail(container, id, app, { why = null, weights = null, onClose } = {}) {
  mount(container, spinner());
  let data;
  try {
    data = await api.get(`/memories/${seg(id)}`);
  } catch (error) {
    mount(container, error.status === 404 ? empty('Memory not found', id) : errorBox(error));
    return null;
  }
  const m = data.memory;
  const live = m.deletedAt === null && m.validTo === null;
  const newest = data.versions.at(-1);

  const open = (other) => app.go('memories', null, { ...Object.fromEntries(app.route.params), open: other });
  const forget = () => app.change(() => api.post(`/memories/${seg(m.id)}/forget`, { reason: 'forgotten in the browser' }), 'Forgotten');
  const restore = () => app.change(() => api.post(`/memories/${seg(m.id)}/restore`), 'Restored');
  const pin = () => app.change(() => api.post(`/memories/${seg(m.id)}/${m.pinned ? 'unpin' : 'pin'}`), m.pinned ? 'Unpinned' : 'Pinned');

  const textBox = h('div', { class: 'd-text', 'data-testid': 'memory-text' }, m.text);
  const body = h('div', { class: 'd-body' });

  function editor(mode) {
    const isSupersede = mode === 'supersede';
    const text = h('textarea', { class: 'editor-text', rows: Math.min(14, Math.max(4, Math.ceil(m.text.length / 60))), 'aria-label': 'Memory text' });
    text.value = m.text;
    const kind = h('select', { 'aria-label': 'Kind' }, KINDS.map((k) => h('option', { value: k, selected: k === m.kind }, k)));
    const tags = h('input', { type: 'text', value: m.tags.join(', '), placeholder: 'tags, comma separated', 'aria-label': 'Tags' });
    const importance = h('input', { type: 'range', min: 0, max: 1, step: 0.05, value: m.importance, 'aria-label': 'Importance' });
    const impOut = h('output', {}, Number(m.importance).toFixed(2));
    importance.addEventListener('input', () => (impOut.textContent = Number(importance.value).toFixed(2)));
    const error = h('p', { class: 'form-error', role: 'alert' });
    const save = async () => {
      const newText = text.value.trim();
      const newTags = tags.value.split(',').map((t) => t.trim()).filter(Boolean);
      const meta = {};
      if (kind.value !== m.kind) meta.kind = kind.value;
      if (newTags.join(',') !== m.tags.join(',')) meta.tags = newTags;
      if (Number(importance.value) !== m.importance) meta.importance = Number(importance.value);
      if (!newText) return (error.textContent = 'The text cannot be empty.');
      let target = m.id;
      if (isSupersede) {
        const res = await app.change(
          () => api.post(`/memories/${seg(m.id)}/supersede`, { text: newText, kind: kind.value, tags: newTags, scope: m.scope }),
          'Superseded by a new memory',
        );
        if (res) open(res.memory.id);
        return;
      }
      if (newText !== m.text) {
        const res = await app.change(() => api.put(`/memories/${seg(m.id)}`, { text: newText }), 'Saved as a new version');
        if (!res) return;
        target = res.memory.id;
      }
      if (Object.keys(meta).length) {
        const res = await app.change(() => api.patch(`/memories/${seg(target)}`, meta), 'Updated');
        if (!res) return;
      }
      if (target !== m.id) open(target);
      else if (!Object.keys(meta).length) render();
    };
    const form = h(
      'form',
      {
        class: 'editor',
        onSubmit: (e) => (e.preventDefault(), save()),
        onKeydown: (e) => {
          if (e.key === 'Escape') (e.preventDefault(), e.stopPropagation(), render());
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) (e.preventDefault(), save());
        },
      },
      h('label', { class: 'editor-label' }, isSupersede ? 'A new memory that replaces this one' : 'Text — saving keeps the current text as an older version'),
      text,
      h('div', { class: 'editor-meta' }, h('label', {}, 'Kind ', kind), h('label', { class: 'grow' }, 'Tags ', tags), isSupersede ? null : h('label', {}, 'Importance ', importance, impOut)),
      error,
      h(
        'div',
        { class: 'editor-actions' },
        h('button', { type: 'submit', class: 'btn btn-primary' }, isSupersede ? 'Supersede' : 'Save'),
        h('button', { type: 'button', class: 'btn', onClick: () => render() }, 'Cancel'),
        h('span', { class: 'muted small' }, h('kbd', {}, 'Ctrl'), '+', h('kbd', {}, 'Enter'), ' to save, ', h('kbd', {}, 'Esc'), ' to cancel'),
      ),
    );
    mount(body, form);
    text.focus();
    text.setSelectionRange(text.value.length, text.value.length);
  }

  const edit = () => {
    if (!live) return app.toast(m.deletedAt ? 'Restore it first to edit it' : 'This is an older version: edit the newest one', { kind: 'info' });
    editor('revise');
  };

  function actionsBar() {
    return h(
      'div',
      { class: 'd-actions' },
      live ? h('button', { type: 'button', class: 'btn', onClick: edit, title: 'Edit (e)' }, 'Edit') : null,
      live ? h('button', { type: 'button', class: 'btn', onClick: () => editor('supersede'), title: 'Replace with a new memory' }, 'Supersede') : null,
      live ? h('button', { type: 'button', class: 'btn', onClick: pin, title: 'Pin / unpin (p)' }, m.pinned ? 'Unpin' : 'Pin') : null,
      m.deletedAt === null
        ? h('button', { type: 'button', class: 'btn btn-danger', onClick: forget, title: 'Forget (#) — undo with u' }, 'Forget')
        : h('button', { type: 'button', class: 'btn btn-primary', onClick: restore }, 'Restore'),
      m.validTo !== null && newest && newest.id !== m.id ? h('button', { type: 'button', class: 'btn', onClick: () => open(newest.id) }, 'Newest version →') : null,
    );
  }

  function render() {
    const files = m.files.length
      ? section(
          'Files',
          h(
            'ul',
            { class: 'files' },
            m.files.map((f) => {
              const status = data.staleness.files.find((s) => s.path === f.path && s.line === f.line);
              return h(
                'li',
                {},
                h('code', {}, `${f.path}${f.line ? `:${f.line}` : ''}`),
                status ? fileStatusBadge(status.status) : h('span', { class: 'badge file-unknown' }, 'not checked'),
                status?.movedTo ? h('span', { class: 'muted' }, ` now at line ${status.movedTo}`) : null,
                f.lineText ? h('div', { class: 'line-text' }, h('code', {}, f.lineText)) : null,
              );
            }),
          ),
        )
      : null;

    const p = m.provenance;
    const provenance =
      p && (p.sessionId || p.transcript)
        ? section(
            'Where it came from',
            data.session
              ? h(
                  'p',
                  {},
                  h('span', { class: `agent agent-${data.session.agent}` }, data.session.agent),
                  ' ',
                  h('b', {}, data.session.title || data.session.id),
                  ' ',
                  h('span', { class: 'muted' }, when(data.session.startedAt)),
                )
              : null,
            p.transcript ? h('p', {}, h('code', { class: 'path' }, `${p.transcript}${p.line ? `:${p.line}` : ''}`)) : null,
            p.sessionId
              ? h(
                  'a',
                  { class: 'btn btn-small', href: `#/session/${encodeURIComponent(p.sessionId)}${p.turnId ? `?turn=${encodeURIComponent(p.turnId)}` : ''}` },
                  p.turnId ? 'Open the session at this turn →' : 'Open the session →',
                )
              : null,
          )
        : null;

    const versions =
      data.versions.length > 1
        ? section(
            `Versions (${data.versions.length})`,
            h(
              'ol',
              { class: 'versions' },
              data.versions.map((v) =>
                h(
                  'li',
                  { class: v.id === m.id ? 'current' : '', onClick: () => v.id !== m.id && open(v.id) },
                  h('div', { class: 'v-text' }, v.text),
                  h('div', { class: 'v-meta' }, time(v.createdAt), v.validTo ? h('span', { class: 'muted' }, ' · replaced ', time(v.validTo)) : h('span', { class: 'badge ok' }, 'current')),
                ),
              ),
            ),
          )
        : null;

    const events = section(
      'History',
      h(
        'ol',
        { class: 'events' },
        data.events.map((e) =>
          h(
            'li',
            { class: `ev ev-${e.type}` },
            h('span', { class: 'ev-type' }, EVENT_LABEL[e.type] ?? e.type),
            h('span', { class: 'ev-detail' }, eventDetail(e)),
            h('span', { class: 'muted' }, ` by ${e.actor} · `, time(e.at)),
            e.undoable ? h('button', { type: 'button', class: 'btn btn-small btn-ghost', onClick: () => app.undo(e.id) }, 'Undo') : null,
          ),
        ),
      ),
    );

    const similar = data.similar.length
      ? section(
          'Similar memories',
          h(
            'ul',
            { class: 'similar' },
            data.similar.map((sm) =>
              h('li', { onClick: () => open(sm.id) }, kindBadge(sm.kind), h('span', { class: 'sim-text' }, sm.text), h('span', { class: 'muted' }, `${Math.round(sm.similarity * 100)}%`)),
            ),
          ),
        )
      : null;

    mount(
      body,
      textBox,
      m.tags.length ? tagList(m.tags, (t) => app.go('memories', null, { tags: t })) : null,
      why && weights ? section('Why it ranked', whyBreakdown(why, weights)) : null,
      files,
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Scope'),
        h('dd', {}, m.scope, h('span', { class: 'muted' }, ` — ${SCOPE_MEANS[m.scope] ?? ''}`)),
        h('dt', {}, 'Project'),
        // The full name: lists shorten it, this is where it can be read (and copied) whole.
        h('dd', { class: 'full-name' }, m.project === null ? h('span', { class: 'muted' }, whereLabel(m).title) : h('code', { class: 'path' }, m.project)),
        h('dt', {}, 'Importance'),
        h('dd', {}, h('span', { class: 'imp' }, h('span', { style: { width: `${Math.round(m.importance * 100)}%` } })), ` ${m.importance.toFixed(2)}`),
        h('dt', {}, 'Source'),
        h('dd', {}, m.source),
        h('dt', {}, 'Created'),
        h('dd', {}, time(m.createdAt)),
        h('dt', {}, 'Used'),
        h('dd', {}, `${m.accessCount}× `, m.lastRecalledAt ? h('span', { class: 'muted' }, '· last recalled ', time(m.lastRecalledAt)) : null),
        h('dt', {}, 'Id'),
        h('dd', {}, h('code', { class: 'id' }, m.id)),
      ),
      provenance,
      versions,
      events,
      similar,
    );
  }

  mount(
    container,
    h(
      'article',
      { class: 'detail', 'aria-label': 'Memory' },
      h(
        'header',
        { class: 'd-head' },
        h('div', { class: 'd-badges' }, kindBadge(m.kind), m.pinned ? h('span', { class: 'badge pinned' }, 'pinned') : null, staleBadges(data.staleness)),
        onClose ? h('button', { type: 'button', class: 'icon-btn close', 'aria-label': 'Close (Esc)', title: 'Close (Esc)', onClick: onClose }, '×') : null,
      ),
      actionsBar(),
      body,
    ),
  );
  render();
  return { memory: m, edit, forget: () => (m.deletedAt === null ? forget() : null), pin: () => (live ? pin() : null), close: onClose };
}
