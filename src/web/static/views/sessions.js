// Sessions: the list by project and agent, and one session's transcript with its corrections
// and compactions marked and the memories distilled from it — openable at any turn.
import { api, seg } from '../api.js';
import { ago, h, mount, num, projectName, time, when } from '../dom.js';
import { empty, errorBox, kindBadge, select, spinner, staleBadges } from '../ui.js';

const AGENTS = ['claude-code', 'codex', 'gemini', 'aider', 'cursor', 'generic'];
const PAGE = 50;

export async function render(root, route, app) {
  return route.view === 'session' ? renderSession(root, route, app) : renderList(root, route, app);
}

function duration(s) {
  if (!s.startedAt || !s.endedAt) return '—';
  const min = Math.round((s.endedAt - s.startedAt) / 60000);
  return min < 60 ? `${min} min` : `${Math.floor(min / 60)} h ${min % 60} min`;
}

function agentBadge(agent) {
  return h('span', { class: `agent agent-${agent}` }, agent);
}

async function renderList(root, route, app) {
  let params = route.params;
  let sessions = [];
  let nextOffset = null;
  const knownProjects = new Set();
  const controls = h('div', { class: 'toolbar' });
  const list = h('ul', { class: 'list sessions-list', 'aria-label': 'Sessions' });
  const more = h('div', { class: 'more' });
  const historyInput = h('input', { type: 'search', placeholder: 'Search what was said in past sessions — “flaky test retry”', 'aria-label': 'Search transcripts', value: params.get('q') ?? '' });
  const historyForm = h('form', { class: 'history-search', onSubmit: (e) => (e.preventDefault(), set('q', historyInput.value.trim())) }, historyInput, h('button', { type: 'submit', class: 'btn' }, 'Search turns'));
  mount(root, h('div', { class: 'page' }, h('div', { class: 'page-head' }, h('h1', {}, 'Sessions'), controls), historyForm, list, more));

  const set = (k, v) => app.go('sessions', null, { ...Object.fromEntries(params), [k]: v || undefined }, { replace: true });

  function renderControls() {
    mount(
      controls,
      h(
        'select',
        { 'aria-label': 'Project', onChange: (e) => set('project', e.target.value) },
        h('option', { value: '' }, 'All projects'),
        [...knownProjects].sort().map((p) => h('option', { value: p, selected: params.get('project') === p, title: p }, projectName(p))),
      ),
      h('select', { 'aria-label': 'Agent', onChange: (e) => set('agent', e.target.value) }, h('option', { value: '' }, 'All agents'), AGENTS.map((a) => h('option', { value: a, selected: params.get('agent') === a }, a))),
    );
  }

  function row(s) {
    return h(
      'li',
      { class: 'row session-row', tabindex: '-1', dataset: { id: s.id }, onClick: () => app.go('session', s.id) },
      h('div', { class: 'row-main' }, h('div', { class: 'row-text' }, s.title || h('span', { class: 'muted' }, s.id))),
      h(
        'div',
        { class: 'row-meta' },
        agentBadge(s.agent),
        h('span', { class: 'meta-item', title: s.project ?? '' }, projectName(s.project)),
        s.branch ? h('span', { class: 'meta-item' }, `⎇ ${s.branch}`) : null,
        s.parentId ? h('span', { class: 'badge' }, 'sub-agent') : null,
        s.compactions ? h('span', { class: 'badge compaction' }, `${s.compactions} compaction${s.compactions > 1 ? 's' : ''}`) : null,
        h('span', { class: 'meta-item grow' }),
        h('span', { class: 'meta-item' }, `${num(s.inputTokens + s.cacheReadTokens + s.cacheCreationTokens)} in · ${num(s.outputTokens)} out`),
        h('span', { class: 'meta-item' }, duration(s)),
        h('span', { class: 'meta-item' }, time(s.startedAt)),
      ),
    );
  }

  function hitRow(hit) {
    const t = hit.turn;
    return h(
      'li',
      { class: 'row hit-row', tabindex: '-1', dataset: { id: t.id, session: t.sessionId }, onClick: () => app.go('session', t.sessionId, { turn: t.id }) },
      h('div', { class: 'row-text' }, hit.snippet || t.text),
      h(
        'div',
        { class: 'row-meta' },
        h('span', { class: 'turn-role' }, t.role.replace('_', ' ')),
        agentBadge(hit.session.agent),
        h('span', { class: 'meta-item' }, hit.session.title || hit.session.id),
        h('span', { class: 'meta-item', title: hit.session.project ?? '' }, projectName(hit.session.project)),
        h('span', { class: 'meta-item grow' }),
        h('span', { class: 'meta-item' }, time(t.at)),
      ),
    );
  }

  async function searchTurns(q) {
    mount(list, spinner());
    mount(more);
    try {
      const { hits } = await api.get('/history', { q, limit: 50, project: params.get('project') || undefined });
      mount(list, hits.length ? hits.map(hitRow) : empty('No turn mentions that', 'Try other words; `cairn ingest` reads transcripts that are not in yet.'));
      select.use(list, (_id, row) => app.go('session', row.dataset.session, { turn: row.dataset.id }));
    } catch (error) {
      mount(list, errorBox(error));
    }
  }

  async function load(append = false) {
    if (params.get('q')) return searchTurns(params.get('q'));
    if (!append) mount(list, spinner());
    try {
      const res = await api.get('/sessions', { project: params.get('project') || undefined, agent: params.get('agent') || undefined, limit: PAGE, offset: append ? sessions.length : 0 });
      sessions = append ? sessions.concat(res.sessions) : res.sessions;
      nextOffset = res.nextOffset;
      for (const s of sessions) if (s.project) knownProjects.add(s.project);
      if (params.get('project')) knownProjects.add(params.get('project'));
      renderControls();
      mount(list, sessions.length ? sessions.map(row) : empty('No sessions', 'Run `cairn ingest` to read your agents’ transcripts.'));
      mount(more, nextOffset !== null ? h('button', { type: 'button', class: 'btn', onClick: () => load(true) }, 'Load more') : null);
      select.use(list, (id) => app.go('session', id));
    } catch (error) {
      mount(list, errorBox(error));
    }
  }

  renderControls();
  await load();
  return {
    async update(next) {
      params = next.params;
      await load();
    },
    refresh: () => load(),
  };
}

/* ------------------------------------------------------------------------- one session */

const ROLE_LABEL = { user: 'User', assistant: 'Agent', tool_call: 'Tool call', tool_result: 'Tool result', system: 'System', summary: 'Summary' };

async function renderSession(root, route, app) {
  const id = route.arg;
  let turnParam = route.params.get('turn');
  mount(root, spinner());
  let view;
  try {
    view = await api.get(`/sessions/${seg(id)}`);
  } catch (error) {
    mount(root, error.status === 404 ? empty('Session not found', id) : errorBox(error));
    return {};
  }
  const s = view.session;
  const transcript = h('ol', { class: 'turns list', 'aria-label': 'Turns' });
  const before = h('div', { class: 'more' });
  const after = h('div', { class: 'more' });
  let fromSeq = 0;
  let nextSeq = null;
  const shownCompactions = new Set();

  const side = h(
    'aside',
    { class: 'session-side' },
    h(
      'section',
      { class: 'd-section' },
      h('h3', {}, `Corrections (${view.corrections.length})`),
      view.corrections.length
        ? h(
            'ul',
            { class: 'side-list' },
            view.corrections.map((c) =>
              h('li', { class: 'side-correction', onClick: () => app.go('session', id, { turn: c.correctionTurnId }) }, h('span', { class: 'badge correction' }, c.kind), ' ', h('span', {}, c.text), h('div', { class: 'muted small' }, time(c.at))),
            ),
          )
        : h('p', { class: 'muted' }, 'None found in this session.'),
    ),
    h(
      'section',
      { class: 'd-section' },
      h('h3', {}, `Compactions (${view.compactions.length})`),
      view.compactions.length
        ? h(
            'ul',
            { class: 'side-list' },
            view.compactions.map((c) =>
              h('li', { onClick: () => jumpToSeq(c.seq) }, h('span', { class: 'badge compaction' }, c.trigger ?? 'compact'), ` ${c.preTokens ? `${num(c.preTokens)} tokens before` : ''}`, h('div', { class: 'muted small' }, time(c.at))),
            ),
          )
        : h('p', { class: 'muted' }, 'No /compact in this session.'),
    ),
    h(
      'section',
      { class: 'd-section' },
      h('h3', {}, `Memories from this session (${view.memories.length})`),
      view.memories.length
        ? h(
            'ul',
            { class: 'side-list' },
            view.memories.map((m) =>
              h(
                'li',
                { class: m.deletedAt || m.validTo ? 'dim' : '', onClick: () => app.go('memories', null, { open: m.id }) },
                kindBadge(m.kind),
                ' ',
                h('span', {}, m.text),
                m.provenance?.turnId
                  ? h('button', { type: 'button', class: 'btn btn-small btn-ghost', onClick: (e) => (e.stopPropagation(), app.go('session', id, { turn: m.provenance.turnId })) }, 'turn →')
                  : null,
                staleBadges({ stale: Boolean(m.deletedAt || m.validTo), reasons: [m.deletedAt ? 'forgotten' : null, m.validTo ? 'superseded' : null].filter(Boolean), files: [] }),
              ),
            ),
          )
        : h('p', { class: 'muted' }, 'Nothing was distilled from it yet.'),
    ),
  );

  mount(
    root,
    h(
      'div',
      { class: 'page session-page' },
      h(
        'div',
        { class: 'page-head' },
        h('a', { href: '#/sessions', class: 'back' }, '← Sessions'),
        h('h1', {}, s.title || s.id),
        h(
          'div',
          { class: 'session-facts' },
          agentBadge(s.agent),
          h('span', { class: 'full-name', title: s.project ?? 'its folder was unknown' }, s.project ?? 'no project'),
          s.branch ? h('span', {}, `⎇ ${s.branch}`) : null,
          h('span', {}, when(s.startedAt)),
          h('span', {}, duration(s)),
          h('span', {}, `${num(s.inputTokens + s.cacheReadTokens + s.cacheCreationTokens)} tokens in · ${num(s.outputTokens)} out`),
          h('code', { class: 'path', title: s.sourcePath }, s.sourcePath),
        ),
      ),
      h('div', { class: 'session-body' }, h('div', { class: 'session-main' }, before, transcript, after), side),
    ),
  );

  function compactionMarker(c) {
    return h(
      'li',
      { class: 'compaction-marker', dataset: { seq: c.seq } },
      h('div', { class: 'cm-line' }, h('span', {}, `Compacted${c.trigger ? ` (${c.trigger})` : ''}${c.preTokens ? ` · ${num(c.preTokens)} tokens before` : ''} · ${ago(c.at ?? Date.now())}`)),
      c.summary ? h('details', {}, h('summary', {}, 'What the summary kept'), h('div', { class: 'turn-text' }, c.summary)) : null,
    );
  }

  function turnItem(t) {
    const isCorrection = t.corrects.length > 0;
    const isPremise = t.correctedBy.length > 0;
    const classes = ['row', 'turn', `turn-${t.role}`, isCorrection ? 'is-correction' : '', isPremise ? 'is-premise' : '', t.flags.includes('compact-summary') ? 'is-summary' : '', t.isError ? 'is-error' : ''];
    const longTool = (t.role === 'tool_result' || t.role === 'tool_call') && (t.text.length > 400 || (t.toolInput ?? '').length > 200);
    const text = t.text ? h('div', { class: 'turn-text' }, t.text) : null;
    return h(
      'li',
      { class: classes, tabindex: '-1', dataset: { id: t.id, seq: t.seq } },
      h(
        'div',
        { class: 'turn-head' },
        h('span', { class: 'turn-role' }, ROLE_LABEL[t.role] ?? t.role),
        t.toolName ? h('code', { class: 'tool' }, t.toolName) : null,
        isCorrection ? h('span', { class: 'badge correction' }, `correction · ${t.corrects[0].kind}`) : null,
        isPremise ? h('span', { class: 'badge premise' }, 'corrected by the user') : null,
        t.flags.filter((f) => f !== 'compact-summary').map((f) => h('span', { class: 'badge' }, f)),
        h('span', { class: 'grow' }),
        h('span', { class: 'muted small' }, `#${t.seq} · `, time(t.at)),
      ),
      t.toolInput ? h('pre', { class: 'tool-input' }, t.toolInput) : null,
      longTool && text ? h('details', {}, h('summary', {}, `${t.text.length > 400 ? `${num(t.text.length)} characters` : 'output'}`), text) : text,
      t.truncated ? h('div', { class: 'muted small' }, 'cut here — the full text is in the transcript') : null,
    );
  }

  function itemsFor(turns, compactions) {
    const out = [];
    for (const t of turns) {
      for (const c of compactions) {
        if (c.seq === t.seq && !shownCompactions.has(c.id)) {
          shownCompactions.add(c.id);
          out.push(compactionMarker(c));
        }
      }
      out.push(turnItem(t));
    }
    return out;
  }

  function focusTurn(turnId) {
    const el = [...transcript.querySelectorAll('.turn')].find((li) => li.dataset.id === turnId);
    if (!el) return;
    for (const other of transcript.querySelectorAll('.focus')) other.classList.remove('focus');
    el.classList.add('focus');
    const rows = select.rows();
    select.move(rows.indexOf(el), true);
    el.scrollIntoView({ block: 'center' });
  }

  async function loadWindow(options) {
    mount(transcript, spinner());
    shownCompactions.clear();
    try {
      const w = await api.get(`/sessions/${seg(id)}/turns`, options);
      fromSeq = w.fromSeq;
      nextSeq = w.nextSeq;
      mount(transcript, w.turns.length ? itemsFor(w.turns, w.compactions) : empty('No turns', 'This session has no readable turns.'));
      renderEdges();
      select.use(transcript, null);
      if (w.focus) focusTurn(w.focus);
    } catch (error) {
      mount(transcript, errorBox(error));
    }
  }

  function renderEdges() {
    mount(
      before,
      fromSeq > 0
        ? h(
            'button',
            {
              type: 'button',
              class: 'btn btn-small',
              onClick: async () => {
                const start = Math.max(0, fromSeq - 100);
                const w = await api.get(`/sessions/${seg(id)}/turns`, { fromSeq: start, limit: fromSeq - start });
                transcript.prepend(...itemsFor(w.turns.filter((t) => t.seq < fromSeq), w.compactions));
                fromSeq = start;
                renderEdges();
              },
            },
            '↑ Earlier turns',
          )
        : null,
    );
    mount(
      after,
      nextSeq !== null
        ? h(
            'button',
            {
              type: 'button',
              class: 'btn btn-small',
              onClick: async () => {
                const w = await api.get(`/sessions/${seg(id)}/turns`, { fromSeq: nextSeq, limit: 100 });
                transcript.append(...itemsFor(w.turns, w.compactions));
                nextSeq = w.nextSeq;
                renderEdges();
              },
            },
            '↓ Later turns',
          )
        : null,
    );
  }

  async function jumpToSeq(seq) {
    const el = transcript.querySelector(`.compaction-marker[data-seq="${Number(seq)}"]`);
    if (el) return el.scrollIntoView({ block: 'center' });
    await loadWindow({ fromSeq: Math.max(0, seq - 5), limit: 100 });
    transcript.querySelector(`.compaction-marker[data-seq="${Number(seq)}"]`)?.scrollIntoView({ block: 'center' });
  }

  await loadWindow(turnParam ? { around: turnParam, limit: 100 } : { limit: 100 });

  return {
    async update(next) {
      const turn = next.params.get('turn');
      if (turn && turn !== turnParam) {
        turnParam = turn;
        if (transcript.querySelector(`.turn[data-id="${CSS.escape(turn)}"]`)) focusTurn(turn);
        else await loadWindow({ around: turn, limit: 100 });
      }
    },
  };
}
