import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenStore } from '../../src/auth/tokens.js';
import { ulidSource, systemClock } from '../../src/runtime.js';
import { createServeApp } from '../../src/serve/app.js';
import { startServe } from '../../src/serve/server.js';
import { loadPgMigrations } from '../../src/store/postgres/migrate.js';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/store.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { startPglite, withFreshSchema, type PgServer } from './pg.js';

let pglite: PgServer;
let store: PostgresStore;
let tokens: TokenStore;
let app: ReturnType<typeof createServeApp>;
const secret: Record<string, string> = {};

beforeAll(async () => {
  pglite = await startPglite();
  store = await openPostgresStore(withFreshSchema(pglite.url, 'serve'));
  tokens = new TokenStore(store, { clock: systemClock, ids: ulidSource() });
  for (const [name, projects, role] of [
    ['alice', ['proj-a'], 'write'],
    ['bob', ['proj-b'], 'write'],
    ['reader', ['proj-a'], 'read'],
    ['both', ['proj-a', 'proj-b'], 'write'],
    ['gone', ['proj-a'], 'admin'],
  ] as const) {
    secret[name] = (await tokens.create({ name, projects: [...projects], role })).token;
  }
  await tokens.revoke('gone');
  app = createServeApp({ store, tokens, version: 'test' });
}, 60_000);

afterAll(async () => {
  await store?.close();
  await pglite?.stop();
});

function call(method: string, path: string, token: string | null, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return Promise.resolve(
    app.request(path, {
      method,
      headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    }),
  );
}

describe('cairn serve: authentication and permissions', () => {
  it('refuses requests without a token, with an unknown token, or with a revoked one', async () => {
    expect((await call('GET', '/api/status', null)).status).toBe(401);
    expect((await call('GET', '/api/status', 'cairn_nope')).status).toBe(401);
    const revoked = await call('GET', '/api/status', secret.gone!);
    expect(revoked.status).toBe(401);
    expect(revoked.headers.get('WWW-Authenticate')).toMatch(/Bearer/);
    expect((await call('GET', '/health', null)).status).toBe(200);
  });

  it('stores only hashes of tokens', async () => {
    const listed = await tokens.list();
    expect(listed.map((t) => t.name).sort()).toEqual(['alice', 'bob', 'both', 'gone', 'reader']);
    const everything = JSON.stringify(await store.db.query('SELECT value FROM state'));
    for (const token of Object.values(secret)) expect(everything).not.toContain(token);
  });

  it('lets a read token recall but never write', async () => {
    const denied = await call('POST', '/api/remember', secret.reader!, { text: 'readers cannot write this' });
    expect(denied.status).toBe(403);
    expect(((await denied.json()) as { error: { code: string } }).error.code).toBe('FORBIDDEN');
    expect((await call('POST', '/api/forget', secret.reader!, { ids: ['X'] })).status).toBe(403);
    expect((await call('GET', '/api/recall?query=anything', secret.reader!)).status).toBe(200);
    expect(await store.countMemories({ includeDeleted: true, includeSuperseded: true })).toBe(0);
  });

  it('records the token that made each write in the event log', async () => {
    const made = await call('POST', '/api/remember', secret.alice!, { text: 'alice found: parse_config lives in src/config.py:42', kind: 'fact' });
    expect(made.status).toBe(201);
    const { id } = (await made.json()) as { id: string };
    const events = await store.listEvents({ memoryId: id });
    expect(events.map((e) => [e.type, e.actor])).toEqual([['create', 'token:alice']]);
    expect((await store.getMemory(id))?.project).toBe('proj-a');
  });

  it('never shows project B to a token for project A', async () => {
    const b = (await (await call('POST', '/api/remember', secret.bob!, { text: 'bob secret: the staging password rotates on fridays' })).json()) as { id: string };
    await call('POST', '/api/remember', secret.alice!, { text: 'alice note: the staging deploy runs on fridays' });
    const recallA = (await (await call('POST', '/api/recall', secret.alice!, { query: 'staging fridays' })).json()) as { hits: Array<{ id: string; project: string }> };
    expect(recallA.hits.length).toBeGreaterThan(0);
    expect(recallA.hits.every((h) => h.project === 'proj-a')).toBe(true);
    expect(recallA.hits.map((h) => h.id)).not.toContain(b.id);
    // naming project B, reading B's memory by id, or forgetting it: all refused or not found
    expect((await call('GET', '/api/recall?query=staging', secret.alice!, undefined, { 'X-Cairn-Project': 'proj-b' })).status).toBe(403);
    expect((await call('GET', `/api/memories/${b.id}`, secret.alice!)).status).toBe(404);
    const forgot = (await (await call('POST', '/api/forget', secret.alice!, { ids: [b.id] })).json()) as unknown;
    expect((await store.getMemory(b.id))?.deletedAt).toBeNull();
    expect(JSON.stringify(forgot)).not.toContain('"forgotten":["');
    // user-scope writes would be visible to every project: a project token cannot make them
    expect((await call('POST', '/api/remember', secret.alice!, { text: 'a user-wide preference', scope: 'user' })).status).toBe(403);
    // status counts only the token's project
    const status = (await (await call('GET', '/api/status', secret.alice!)).json()) as { stats: { active: number } };
    expect(status.stats.active).toBe(2);
    // a token for both projects must say which one
    expect((await call('GET', '/api/status', secret.both!)).status).toBe(400);
    expect((await call('GET', '/api/status', secret.both!, undefined, { 'X-Cairn-Project': 'proj-b' })).status).toBe(200);
  });
});

describe('cairn serve: the memory browser', () => {
  const cookies = (res: Response): string =>
    res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');

  it('trades /ui?token= for cookies, then serves the page and its API confined to the token’s project', async () => {
    const opened = await call('GET', `/ui?token=${secret.alice}`, null);
    expect(opened.status).toBe(303);
    expect(opened.headers.get('Location')).toBe('/');
    const jar = cookies(opened);
    expect(jar).toContain('cairn_serve_project=proj-a');
    expect(opened.headers.getSetCookie().every((c) => /HttpOnly/i.test(c) && /SameSite=Strict/i.test(c))).toBe(true);
    const page = await call('GET', '/', null, undefined, { Cookie: jar });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<html');
    const everything = await call('GET', '/api/search?q=staging%20fridays%20secret', null, undefined, { Cookie: jar });
    expect(everything.status).toBe(200);
    const body = await everything.text();
    expect(body).toContain('alice note');
    expect(body).not.toContain('bob secret');
    const listed = await (await call('GET', '/api/memories?project=proj-b', null, undefined, { Cookie: jar })).text();
    expect(listed).not.toContain('bob secret');
    // changes from the page need the token header too (the web app's CSRF guard)
    expect((await call('POST', '/api/forget', null, { ids: ['X'] }, { Cookie: jar })).status).toBe(403);
  });

  it('refuses a cookie naming another project, a revoked token, and a bad /ui token', async () => {
    const jar = cookies(await call('GET', `/ui?token=${secret.alice}`, null)).replace('cairn_serve_project=proj-a', 'cairn_serve_project=proj-b');
    expect((await call('GET', '/api/memories', null, undefined, { Cookie: jar })).status).toBe(403);
    expect((await call('GET', '/', null, undefined, { Cookie: `cairn_serve_token=${secret.gone}` })).status).toBe(401);
    expect((await call('GET', '/ui?token=cairn_wrong', null)).status).toBe(401);
    expect((await call('GET', `/ui?token=${secret.alice}&project=proj-b`, null)).status).toBe(403);
  });
});

describe('cairn serve: MCP over Streamable HTTP', () => {
  it('serves the MCP tools statelessly to the official client, scoped and permissioned by token', async () => {
    const server = await startServe({ store, tokens, version: 'test', port: 0 });
    const connect = async (token: string): Promise<Client> => {
      const client = new Client({ name: 'test', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
      return client;
    };
    try {
      const alice = await connect(secret.alice!);
      expect((await alice.listTools()).tools.map((t) => t.name)).toContain('recall');
      const remembered = await alice.callTool({ name: 'remember', arguments: { text: 'mcp over http: acquire_lock() before touching workspace metadata' } });
      expect(remembered.isError).toBeFalsy();
      const recalled = await alice.callTool({ name: 'recall', arguments: { query: 'acquire_lock workspace' } });
      expect(JSON.stringify(recalled.content)).toContain('acquire_lock');
      const bob = await connect(secret.bob!);
      const bobRecall = await bob.callTool({ name: 'recall', arguments: { query: 'acquire_lock workspace' } });
      expect(JSON.stringify(bobRecall.content)).not.toContain('acquire_lock()');
      const reader = await connect(secret.reader!);
      const denied = await reader.callTool({ name: 'remember', arguments: { text: 'a reader tries to write over MCP' } });
      expect(denied.isError).toBe(true);
      expect(JSON.stringify(denied.content)).toContain('FORBIDDEN');
      for (const c of [alice, bob, reader]) await c.close();
      const unauthenticated = await fetch(`${server.url}/mcp`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
      expect(unauthenticated.status).toBe(401);
    } finally {
      await server.close();
    }
  });

  it('listens on loopback by default and refuses another address while no tokens exist', async () => {
    const empty = await openPostgresStore(withFreshSchema(pglite.url, 'serve'));
    try {
      const none = new TokenStore(empty, { clock: systemClock, ids: ulidSource() });
      await expect(startServe({ store: empty, tokens: none, version: 'test', port: 0, host: '0.0.0.0' })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      const local = await startServe({ store: empty, tokens: none, version: 'test', port: 0 });
      try {
        expect(local.host).toBe('127.0.0.1');
        expect(local.localToken).toMatch(/^cairn_/);
        const ok = await fetch(`${local.url}/api/status`, { headers: { Authorization: `Bearer ${local.localToken}` } });
        expect(ok.status).toBe(200);
      } finally {
        await local.close();
      }
    } finally {
      await empty.close();
    }
  });
});

describe('cairn CLI with --store postgres://', () => {
  it('creates, lists and revokes tokens, migrates, and reports status', async () => {
    const home = tempDir('cairn-serve-cli-');
    const url = withFreshSchema(pglite.url, 'serve');
    const cli = (args: string[]) => runCli(['--store', url, ...args], { home });
    const status0 = await cli(['migrate', 'status', '--json']);
    expect(status0.code).toBe(0);
    expect(status0.json<{ current: number; pending: unknown[] }>()).toMatchObject({ current: 0 });
    const up = await cli(['migrate', 'up', '--json']);
    expect(up.json<{ current: number; pending: unknown[]; applied: number[] }>()).toMatchObject({ pending: [], applied: loadPgMigrations().map((m) => m.version) });
    const created = await cli(['token', 'create', '--name', 'ci', '--projects', 'proj-a', '--role', 'read', '--json']);
    expect(created.code).toBe(0);
    expect(created.json<{ token: string }>().token).toMatch(/^cairn_/);
    const listed = await cli(['token', 'list']);
    expect(listed.stdout).toContain('ci  read  projects: proj-a');
    expect(listed.stdout).not.toContain(created.json<{ token: string }>().token);
    expect((await cli(['token', 'revoke', 'ci'])).code).toBe(0);
    expect((await cli(['token', 'create', '--name', 'x', '--projects', 'p', '--role', 'root'])).code).toBe(1);
    const remembered = await cli(['remember', 'cli writes go to postgres too', '--json']);
    expect(remembered.code).toBe(0);
    const status = await cli(['status', '--json']);
    expect(status.json<{ store: { name: string } }>().store.name).toBe('postgres');
  });
});
