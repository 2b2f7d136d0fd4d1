import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hono } from 'hono';
import { createWebApp } from '../../src/web/app.js';
import { loadStatic } from '../../src/web/static.js';
import { createFixture, PROJECT, SESSION_ID, XSS, type Fixture } from './fixture.js';

const TOKEN = 'test-token-0123456789abcdef';
const HOST = 'http://127.0.0.1:7000';

let fx: Fixture;
let app: Hono;

/** A request as the page makes it: the cookie, and the header on changes. */
async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return app.request(`${HOST}${path}`, {
    method,
    headers: {
      cookie: `cairn_token=${TOKEN}`,
      ...(method === 'GET' ? {} : { 'X-Cairn-Token': TOKEN }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function json<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await call(method, path, body);
  const data = (await res.json()) as T;
  if (res.status >= 400) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(data)}`);
  return data;
}

beforeAll(async () => {
  fx = await createFixture({ extraMemories: 120 });
  app = createWebApp(fx.cairn, { token: TOKEN });
});
afterAll(async () => {
  await fx.close();
});

describe('the token', () => {
  it('answers 401 without it, on the page, the API and the static files', async () => {
    for (const path of ['/', '/api/memories', '/app.js', '/style.css']) {
      const res = await app.request(`${HOST}${path}`);
      expect(res.status, path).toBe(401);
    }
    const res = await app.request(`${HOST}/api/memories`, { headers: { cookie: 'cairn_token=wrong-token-0123456789' } });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
  });

  it('trades the URL token for an HttpOnly SameSite=Strict cookie and drops it from the address bar', async () => {
    const res = await app.request(`${HOST}/?token=${TOKEN}`);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/');
    const cookie = res.headers.get('set-cookie') ?? '';
    expect(cookie).toContain(`cairn_token=${TOKEN}`);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    const page = await app.request(`${HOST}/`, { headers: { cookie: `cairn_token=${TOKEN}` } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>cairn');
  });

  it('answers 403 to a change without the header, even with the cookie', async () => {
    for (const [method, path] of [
      ['POST', '/api/forget'],
      ['PUT', `/api/memories/${fx.ids.pnpm}`],
      ['PATCH', `/api/memories/${fx.ids.pnpm}`],
      ['POST', '/api/undo'],
      ['POST', '/api/snapshots'],
    ] as const) {
      const res = await app.request(`${HOST}${path}`, {
        method,
        headers: { cookie: `cairn_token=${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ids: [fx.ids.pnpm], text: 'x', label: 'x' }),
      });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(await res.json()).toMatchObject({ error: { code: 'FORBIDDEN' } });
    }
    expect((await fx.cairn.deps.store.getMemory(fx.ids.pnpm))?.deletedAt).toBeNull();
  });

  it('sends no CORS headers, refuses foreign Host headers, and sets a strict CSP', async () => {
    const res = await call('GET', '/api/memories', undefined, { origin: 'https://evil.example' });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    const preflight = await app.request(`${HOST}/api/forget`, { method: 'OPTIONS', headers: { origin: 'https://evil.example' } });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const rebound = await app.request('http://evil.example/api/memories', { headers: { cookie: `cairn_token=${TOKEN}` } });
    expect(rebound.status).toBe(403);
  });
});

describe('escaping', () => {
  it('returns a script tag as data, and the page renders memory text with textContent only', async () => {
    const detail = await json('GET', `/api/memories/${fx.ids.xss}`);
    expect(detail.memory.text).toBe(XSS);
    const res = await call('GET', '/api/memories?limit=200');
    expect(res.headers.get('content-type')).toContain('application/json');
    // The page itself never turns data into HTML: every script builds nodes with textContent.
    const scripts = [...loadStatic().entries()].filter(([path]) => path.endsWith('.js'));
    expect(scripts.length).toBeGreaterThan(8);
    for (const [path, file] of scripts) {
      expect(file.body, path).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/);
      expect((await call('GET', path)).status, path).toBe(200);
    }
    // The one server-side substitution (the token into the page) is attribute-escaped.
    const page = await (await call('GET', '/')).text();
    expect(page).toContain(`content="${TOKEN}"`);
    expect(page).not.toContain('__CAIRN_TOKEN');
  });
});

describe('search', () => {
  it('runs recall with the why breakdown and staleness, without counting an access', async () => {
    const result = await json('GET', '/api/search?q=parse_config%20signature');
    const hit = result.hits.find((h: any) => h.memory.id === fx.ids.parseConfig);
    expect(hit).toBeDefined();
    expect(hit.why).toMatchObject({ importance: expect.any(Number), recency: expect.any(Number), relevance: expect.any(Number), tagBoost: 1 });
    expect(hit.staleness.stale).toBe(true);
    expect(hit.staleness.reasons).toContain('file-changed');
    expect((await fx.cairn.deps.store.getMemory(fx.ids.parseConfig))?.accessCount).toBe(0);
  });

  it('validates with the MCP schema and names the field', async () => {
    const res = await call('GET', '/api/search?q=x&k=500');
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 'INVALID_INPUT', field: 'k' } });
    const empty = await call('GET', '/api/search?q=');
    expect(empty.status).toBe(400);
    const kinds = await call('GET', '/api/search?q=x&kinds=bogus');
    expect((await kinds.json()).error.field).toMatch(/^kinds/);
  });

  it('boosts matching tags and filters by kind', async () => {
    const result = await json('GET', '/api/search?q=workspace%20race&tags=concurrency&kinds=fact');
    expect(result.hits.every((h: any) => h.memory.kind === 'fact')).toBe(true);
    expect(result.hits[0].memory.id).toBe(fx.ids.lock);
    expect(result.hits[0].why.matchedTags).toEqual(['concurrency']);
  });
});

describe('the list', () => {
  it('pages on the server with a total and a cursor', async () => {
    const first = await json('GET', '/api/memories?limit=50');
    expect(first.items).toHaveLength(50);
    expect(first.total).toBeGreaterThan(120);
    const second = await json('GET', `/api/memories?limit=50&cursor=${first.nextCursor}`);
    expect(second.items).toHaveLength(50);
    const seen = new Set([...first.items, ...second.items].map((i: any) => i.memory.id));
    expect(seen.size).toBe(100);
    let cursor: number | null = second.nextCursor;
    let count = 100;
    while (cursor !== null) {
      const page = await json('GET', `/api/memories?limit=50&cursor=${cursor}`);
      count += page.items.length;
      cursor = page.nextCursor;
    }
    expect(count).toBe(first.total);
  });

  it('filters by kind, scope, project, tags, date, status and sorts', async () => {
    const facts = await json('GET', '/api/memories?kinds=fact&limit=200');
    expect(facts.items.every((i: any) => i.memory.kind === 'fact')).toBe(true);
    const user = await json('GET', '/api/memories?scopes=user');
    expect(user.items.map((i: any) => i.memory.id)).toEqual([fx.ids.pnpm]);
    const infra = await json('GET', '/api/memories?project=github.com/acme/infra');
    expect(infra.items.map((i: any) => i.memory.id)).toEqual([fx.ids.infra]);
    const userOnly = await json('GET', '/api/memories?project=~');
    expect(userOnly.items.map((i: any) => i.memory.id)).toEqual([fx.ids.pnpm]);
    const tagged = await json('GET', '/api/memories?tags=workspace,deploy');
    expect(tagged.items.length).toBe(4);
    const forgotten = await json('GET', '/api/memories?status=forgotten');
    expect(forgotten.items.map((i: any) => i.memory.id)).toEqual([fx.ids.forgotten]);
    const superseded = await json('GET', '/api/memories?status=superseded');
    expect(superseded.items).toHaveLength(1);
    expect(superseded.total).toBeNull();
    const early = await json('GET', `/api/memories?until=${encodeURIComponent('2026-02-21T05:00:00Z')}`);
    expect(early.items.map((i: any) => i.memory.id).sort()).toEqual([fx.ids.parseConfig, fx.ids.lock].sort());
    const byImportance = await json('GET', '/api/memories?sort=importance-desc&limit=5');
    const values = byImportance.items.map((i: any) => i.memory.importance);
    expect([...values].sort((a: number, b: number) => b - a)).toEqual(values);
    const bad = await call('GET', '/api/memories?sort=sideways');
    expect((await bad.json()).error.field).toBe('sort');
  });

  it('finds stale memories and memories about a file', async () => {
    const stale = await json('GET', '/api/memories?stale=1');
    expect(stale.items.map((i: any) => i.memory.id).sort()).toEqual([fx.ids.parseConfig, fx.ids.stale].sort());
    expect(stale.items[0].staleness.files[0]).toMatchObject({ path: 'src/config.py', status: 'file-changed' });
    const file = await json('GET', '/api/memories?file=ws.rs');
    expect(file.items.map((i: any) => i.memory.id)).toContain(fx.ids.lock);
  });
});

describe('memory detail', () => {
  it('has versions, events, provenance to the session turn, and file staleness', async () => {
    const detail = await json('GET', `/api/memories/${fx.ids.revised}`);
    expect(detail.versions).toHaveLength(2);
    expect(detail.versions[0].validTo).not.toBeNull();
    expect(detail.events.map((e: any) => e.type)).toEqual(expect.arrayContaining(['create', 'supersede', 'revise']));
    const lock = await json('GET', `/api/memories/${fx.ids.lock}`);
    expect(lock.session).toMatchObject({ id: SESSION_ID, agent: 'claude-code' });
    expect(lock.memory.provenance.turnId).toBe(`${SESSION_ID}:u003`);
    expect(lock.staleness.files[0]).toMatchObject({ path: 'src/ws.rs', line: 214, status: 'ok' });
    const missing = await call('GET', '/api/memories/01NOPE');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: 'NOT_FOUND' } });
  });
});

describe('changes and undo', () => {
  it('edits (a new version), and undo supersedes back to the earlier text', async () => {
    const edited = await json('PUT', `/api/memories/${fx.ids.retry}`, { text: 'cargo test -p ws runs the 48 workspace tests in about 3 s' });
    const newId = edited.memory.id;
    expect(newId).not.toBe(fx.ids.retry);
    expect(edited.events.map((e: any) => e.type).sort()).toEqual(['create', 'revise', 'supersede']);
    const undone = await json('POST', '/api/undo', { eventId: edited.events.at(-1).id });
    expect(undone.description).toMatch(/revision/);
    const back = await json('GET', `/api/memories/${undone.memoryId}`);
    expect(back.memory.text).toBe('cargo test -p ws runs the workspace tests (48 tests, ~3 s)');
    expect(back.versions).toHaveLength(3);
  });

  it('forgets and restores, and u walks back through changes without undoing its own undos', async () => {
    const forgot = await json('POST', `/api/memories/${fx.ids.pnpm}/forget`, { reason: 'testing' });
    expect(forgot.forgotten).toEqual([fx.ids.pnpm]);
    const pinned = await json('POST', `/api/memories/${fx.ids.lock}/pin`, {});
    expect(pinned.memory.pinned).toBe(true);
    const preview = await json('GET', '/api/undo');
    expect(preview.next.event.type).toBe('pin');
    expect((await json('POST', '/api/undo', {})).undone.type).toBe('pin');
    expect((await fx.cairn.deps.store.getMemory(fx.ids.lock))?.pinned).toBe(false);
    expect((await json('POST', '/api/undo', {})).undone.type).toBe('forget');
    expect((await fx.cairn.deps.store.getMemory(fx.ids.pnpm))?.deletedAt).toBeNull();
    const again = await call('POST', '/api/undo', { eventId: forgot.events[0].id });
    expect(again.status).toBe(409);
  });

  it('restores a forgotten memory, updates metadata, and undoes the update', async () => {
    const restored = await json('POST', `/api/memories/${fx.ids.forgotten}/restore`, {});
    expect(restored.memory.deletedAt).toBeNull();
    const updated = await json('PATCH', `/api/memories/${fx.ids.forgotten}`, { tags: ['db', 'staging'], importance: 0.9 });
    expect(updated.memory).toMatchObject({ tags: ['db', 'staging'], importance: 0.9 });
    await json('POST', '/api/undo', { eventId: updated.events[0].id });
    const after = await fx.cairn.deps.store.getMemory(fx.ids.forgotten);
    expect(after?.tags).toEqual(['db']);
    const bad = await call('PATCH', `/api/memories/${fx.ids.forgotten}`, { importance: 3 });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.field).toBe('importance');
    const unknown = await call('PATCH', `/api/memories/${fx.ids.forgotten}`, { colour: 'red' });
    expect(unknown.status).toBe(400);
  });

  it('supersedes with a new memory and adds memories', async () => {
    const added = await json('POST', '/api/memories', { text: 'The CI runs on Node 20 and 22', kind: 'fact', tags: ['ci'] });
    expect(added.created).toBe(true);
    const replaced = await json('POST', `/api/memories/${added.memory.id}/supersede`, { text: 'The CI runs on Node 22 only', kind: 'decision' });
    expect(replaced.memory).toMatchObject({ supersedes: added.memory.id, kind: 'decision' });
    const conflict = await call('PUT', `/api/memories/${added.memory.id}`, { text: 'again' });
    expect(conflict.status).toBe(409);
    const empty = await call('POST', '/api/memories', { text: '' });
    expect(empty.status).toBe(400);
    expect((await empty.json()).error.field).toBe('text');
  });
});

describe('snapshots', () => {
  it('lists the timeline and diffs two snapshots', async () => {
    const { snapshots } = await json('GET', '/api/snapshots');
    expect(snapshots.map((s: any) => s.label)).toEqual(['before-cleanup', 'after-cleanup']);
    const diff = await json('GET', '/api/diff?from=before-cleanup&to=after-cleanup');
    expect(diff.removed.map((m: any) => m.id)).toEqual([fx.ids.forgotten]);
    expect(diff.revised).toHaveLength(1);
    expect(diff.revised[0].after.id).toBe(fx.ids.revised);
    expect(diff.added.length).toBeGreaterThan(100);
    const missing = await call('GET', '/api/diff?from=nope');
    expect(missing.status).toBe(404);
    const sealed = await json('POST', '/api/snapshots', { label: 'from-the-browser' });
    expect(sealed.label).toBe('from-the-browser');
    const dup = await call('POST', '/api/snapshots', { label: 'from-the-browser' });
    expect(dup.status).toBe(409);
  });
});

describe('sessions', () => {
  it('lists sessions by project and agent', async () => {
    const all = await json('GET', '/api/sessions');
    expect(all.sessions.map((s: any) => s.id).sort()).toEqual([SESSION_ID, 'sess-infra-1']);
    const codex = await json('GET', '/api/sessions?agent=codex');
    expect(codex.sessions.map((s: any) => s.id)).toEqual(['sess-infra-1']);
    const app2 = await json('GET', `/api/sessions?project=${encodeURIComponent(PROJECT)}`);
    expect(app2.sessions.map((s: any) => s.id)).toEqual([SESSION_ID]);
  });

  it('shows a session with corrections, compactions and the memories distilled from it', async () => {
    const view = await json('GET', `/api/sessions/${SESSION_ID}`);
    expect(view.corrections).toHaveLength(1);
    expect(view.compactions).toHaveLength(1);
    expect(view.memories.map((m: any) => m.id)).toEqual(expect.arrayContaining([fx.ids.lock, fx.ids.corrected]));
  });

  it('opens the turns at a correction', async () => {
    const window = await json('GET', `/api/sessions/${SESSION_ID}/turns?around=${encodeURIComponent(fx.correctionTurnId)}`);
    expect(window.focus).toBe(fx.correctionTurnId);
    const corrected = window.turns.find((t: any) => t.id === fx.correctionTurnId);
    expect(corrected.corrects[0]).toMatchObject({ kind: 'pushback' });
    const premise = window.turns.find((t: any) => t.id === `${SESSION_ID}:u001`);
    expect(premise.correctedBy).toHaveLength(1);
    expect(window.compactions[0].seq).toBe(6);
    const paged = await json('GET', `/api/sessions/${SESSION_ID}/turns?limit=4`);
    expect(paged.turns).toHaveLength(4);
    expect(paged.nextSeq).toBe(4);
    expect((await call('GET', `/api/sessions/${SESSION_ID}/turns?around=nope`)).status).toBe(404);
    const { hits } = await json('GET', '/api/history?q=sleep%20retry');
    expect(hits[0].turn.id).toBe(`${SESSION_ID}:u001`);
    expect(hits[0].session.id).toBe(SESSION_ID);
    expect((await call('GET', '/api/sessions/nope')).status).toBe(404);
  });
});

describe('review queue and overview', () => {
  it('scans for near-duplicates and stale memories and resolves them', async () => {
    const scan = await json('POST', '/api/review/scan', { limit: 500 });
    expect(scan.queued).toBeGreaterThan(0);
    const stale = await json('GET', '/api/review?kinds=stale');
    expect(stale.items.map((i: any) => i.memoryIds[0]).sort()).toEqual([fx.ids.parseConfig, fx.ids.stale].sort());
    const item = stale.items.find((i: any) => i.memoryIds[0] === fx.ids.stale);
    const resolved = await json('POST', `/api/review/${item.id}`, { action: 'forget' });
    expect(resolved.item.resolution).toBe(`forgotten:${fx.ids.stale}`);
    expect((await fx.cairn.deps.store.getMemory(fx.ids.stale))?.deletedAt).not.toBeNull();
    const again = await call('POST', `/api/review/${item.id}`, { action: 'dismiss' });
    expect(again.status).toBe(409);
    const rescan = await json('POST', '/api/review/scan', { limit: 500 });
    expect(rescan.queued).toBe(0);
  });

  it('keeps one of two near-duplicates through cairn.resolveReview, and undoes it', async () => {
    const a = await json('POST', '/api/memories', { text: 'The release job publishes the npm package from the tag pipeline', kind: 'fact' });
    const b = await json('POST', '/api/memories', { text: 'The release job publishes the npm package from the tag pipeline only', kind: 'fact' });
    expect(b.similar.map((s: any) => s.id)).toContain(a.memory.id);
    await json('POST', '/api/review/scan', { limit: 10 });
    const { total } = await json('GET', '/api/review?kinds=near-duplicate&limit=1');
    const { items } = await json('GET', `/api/review?kinds=near-duplicate&limit=50&offset=${Math.max(0, total - 50)}`);
    const item = items.find((i: any) => i.memoryIds.includes(a.memory.id) && i.memoryIds.includes(b.memory.id));
    expect(item.key).toBe(`dup:${[a.memory.id, b.memory.id].sort().join(':')}`);
    expect(item.memories.map((m: any) => m.memory.id)).toEqual([a.memory.id, b.memory.id]);
    const kept = await json('POST', `/api/review/${item.id}`, { action: 'keep', memoryId: b.memory.id });
    expect(kept.item.resolution).toBe(`kept:${b.memory.id}`);
    expect(kept.forgotten).toEqual([a.memory.id]);
    const undone = await json('POST', `/api/review/${item.id}/undo`, {});
    expect(undone.restored).toEqual([a.memory.id]);
    expect((await fx.cairn.deps.store.getMemory(a.memory.id))?.deletedAt).toBeNull();
    const bad = await call('POST', `/api/review/${item.id}`, { action: 'explode' });
    expect((await bad.json()).error.field).toBe('action');
  });

  it('gives the overview: counts, composition, growth, tags, size', async () => {
    const o = await json('GET', '/api/overview');
    expect(o.status.stats.active).toBeGreaterThan(100);
    expect(o.status.stats.byKind.fact).toBeGreaterThan(0);
    expect(o.status.stats.sizeBytes).toBeGreaterThan(0);
    expect(o.growth.unit).toBe('day');
    expect(o.growth.buckets.length).toBeGreaterThan(2);
    expect(o.growth.total).toBe(o.status.stats.memories);
    expect(o.catalog.tags[0]).toMatchObject({ tag: expect.any(String), count: expect.any(Number) });
    expect(o.catalog.projects.map((p: any) => p.project)).toEqual(expect.arrayContaining([PROJECT]));
    // Memories without a project are told apart: user-wide ones (recalled everywhere) and unknown ones.
    expect(o.catalog.userWide).toBeGreaterThan(0);
    expect(o.catalog.noProject).toBe(0);
    const series = o.catalog.projectGrowth.series.map((s: any) => [s.group, s.project]);
    expect(series).toEqual(expect.arrayContaining([['project', PROJECT], ['user-wide', null]]));
    expect(series.map(([group]: [string]) => group)).not.toContain('no-project');
    expect(o.substrate).toMatchObject({ sessions: 2, corrections: 1 });
  });
});
