/**
 * Every supported secret format planted through every entry point that stores text; then the
 * database file (with its WAL) and every export are searched for any piece of any secret.
 * 0 allowed. The entry points are listed in ENTRY_POINTS; the figures go to docs/RELIABILITY.md.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenStore } from '../../src/auth/tokens.js';
import { createCairn, type Cairn } from '../../src/cairn.js';
import { createMcpServer } from '../../src/mcp/server.js';
import { createMemoryTool } from '../../src/memorytool/memory-tool.js';
import { STORE_METHODS, SUBSTRATE_METHODS } from '../../src/privacy/guard.js';
import { sanitize } from '../../src/privacy/redact.js';
import { systemClock, ulidSource } from '../../src/runtime.js';
import { createServeApp } from '../../src/serve/app.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/store.js';
import { createWebApp } from '../../src/web/app.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { PLANTED, secretTag } from './corpus.js';

const PROJECT = 'proj-privacy';
const sanitizeText = (text: string): string => sanitize(text).text;
const UI_TOKEN = 'privacy-test-token-0123456789';

/** Entry points that store text; each test below plants every format through one of them. */
const ENTRY_POINTS = [
  'remember: text, tags, meta keys and values, file paths',
  'revise',
  'update: tags',
  'forget: reason',
  'snapshot: label',
  'import (library): text, tags, meta',
  'import (CLI, stdin)',
  'remember (CLI)',
  'ingest: Claude Code transcript (prompt, tool input, tool result, summary title)',
  'ingest: Codex rollout (function_call arguments as escaped JSON, output)',
  'MCP tools: remember, revise, forget reason, snapshot label',
  'HTTP cairn serve /api/remember and /api/forget',
  'browser API (cairn ui): remember, revise, tags, supersede, forget reason, snapshot label',
  'memory-tool backend: file text and path',
] as const;

let dir: string;
let home: string;
let dbPath: string;
let store: SqliteStore;
let cairn: Cairn;
let planted = 0;

/** Surfaces with a schema cap tags at 64 characters (a longer one is refused, not stored). */
const shortTag = (p: (typeof PLANTED)[number]): string[] => (secretTag(p).length <= 64 ? [secretTag(p)] : ['long']);

/** The pieces of a secret that must not survive: every 10-character window (short ones whole). */
function pieces(secret: string): string[] {
  if (secret.length <= 10) return [secret];
  const out: string[] = [];
  for (let i = 0; i + 10 <= secret.length; i++) out.push(secret.slice(i, i + 10));
  return out;
}

/** A snapshot label carrying the secret where it fits the 100-character limit (a cut secret is no test). */
function label(prefix: string, p: (typeof PLANTED)[number]): string {
  const full = `${prefix} ${p.kind} ${secretTag(p)}`;
  return full.length <= 100 ? full : `${prefix} ${p.kind}`;
}

function filesUnder(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** Every 10-character window of every secret (short ones whole), mapped to its kind. */
const PIECES = new Map<string, string>();

/** Kinds of which some piece occurs in `haystack`: one pass over it, a set look-up per position. */
function leaksIn(haystack: string): string[] {
  if (PIECES.size === 0) for (const p of PLANTED) for (const piece of pieces(p.secret)) PIECES.set(piece, p.kind);
  const leaked = new Set<string>();
  const short = PLANTED.filter((p) => p.secret.length < 10);
  for (const p of short) if (haystack.includes(p.secret)) leaked.add(p.kind);
  for (let i = 0; i + 10 <= haystack.length; i++) {
    const kind = PIECES.get(haystack.slice(i, i + 10));
    if (kind !== undefined) leaked.add(kind);
  }
  return PLANTED.map((p) => p.kind).filter((k) => leaked.has(k));
}

beforeAll(async () => {
  dir = tempDir('cairn-privacy-');
  home = join(dir, 'home');
  mkdirSync(home, { recursive: true });
  dbPath = join(home, 'cairn.db');
  store = await openSqliteStore(dbPath);
  cairn = createCairn({ store, project: PROJECT, actor: 'test' });
});

afterAll(async () => {
  await cairn?.close();
});

describe('privacy: every format through every entry point', () => {
  it('classifies every Store and SubstrateStore method (a new write method cannot skip redaction)', async () => {
    const methodsOf = (o: object): string[] => {
      const names = new Set<string>();
      for (let p: object | null = o; p && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) {
        for (const name of Object.getOwnPropertyNames(p)) if (name !== 'constructor' && typeof (o as Record<string, unknown>)[name] === 'function' && !name.startsWith('_')) names.add(name);
      }
      return [...names];
    };
    // The interface is enforced by the compiler; here, that the table names real methods.
    for (const name of Object.keys(STORE_METHODS)) expect(typeof (store as unknown as Record<string, unknown>)[name], name).toBe('function');
    for (const name of Object.keys(SUBSTRATE_METHODS)) expect(typeof (store.substrate as unknown as Record<string, unknown>)[name], name).toBe('function');
    expect(methodsOf(store).length).toBeGreaterThan(Object.keys(STORE_METHODS).length - 1);
  });

  it('the scan finds every planted secret when it is there (the check can fail)', () => {
    for (const p of PLANTED) expect(leaksIn(`x ${p.text} y`), p.kind).toContain(p.kind);
    expect(leaksIn(PLANTED.map((p) => sanitizeText(p.text)).join('\n'))).toEqual([]);
  });

  it('plants through the library operations', async () => {
    for (const p of PLANTED) {
      const made = await cairn.remember({ text: `note about ${p.kind}: ${p.text}`, tags: [secretTag(p)], meta: { [secretTag(p)]: p.text, nested: { list: [p.text] } }, files: [`src/${secretTag(p)}/index.ts`] });
      await cairn.revise(made.memory.id, `revised ${p.kind}: ${p.text}`);
      const current = (await cairn.list({ limit: 1 }))[0];
      if (current) {
        await cairn.update(current.id, { tags: ['x', secretTag(p)] });
        await cairn.forget([current.id], `forgot because ${p.text}`);
      }
      await cairn.snapshot(`snap ${p.kind} ${secretTag(p)}`).catch(() => cairn.snapshot(`snap ${p.kind}`));
      planted += 5;
    }
    const lines = PLANTED.map((p) => JSON.stringify({ text: `imported ${p.kind}: ${p.text}`, tags: [secretTag(p)], meta: { token: p.secret, note: p.text, [secretTag(p)]: 1 } }));
    const result = await cairn.importJsonl(lines);
    expect(result.imported).toBe(PLANTED.length);
    planted += PLANTED.length;
  });

  it('plants through the CLI (remember and import)', async () => {
    const env = { CAIRN_HOME: home };
    for (const p of PLANTED.slice(0, 12)) {
      const run = await runCli(['remember', `cli ${p.kind}: ${p.text}`, '--tags', `t,${secretTag(p)}`], { home, env });
      expect(run.code, run.stderr).toBe(0);
      planted++;
    }
    const stdin = PLANTED.map((p) => JSON.stringify({ text: `cli import ${p.kind}: ${p.text}`, meta: { secret: p.secret } })).join('\n');
    const run = await runCli(['import', '-'], { home, env, stdin });
    expect(run.code, run.stderr).toBe(0);
    planted += PLANTED.length;
  });

  it('plants through ingest (prompt, escaped tool input, tool result, title)', async () => {
    const session = '99999999-2222-4333-8444-555555555555';
    const base = { isSidechain: false, userType: 'external', cwd: '/home/dev/app', sessionId: session, version: '2.1.9' };
    const rows: unknown[] = [{ type: 'summary', summary: `secrets ${PLANTED[0]?.secret}`, leafUuid: 'p-0' }];
    PLANTED.forEach((p, i) => {
      rows.push({ ...base, parentUuid: null, uuid: `p-${i}`, timestamp: '2026-01-10T10:00:00.000Z', type: 'user', message: { role: 'user', content: `please use ${p.text}` } });
      rows.push({ ...base, parentUuid: `p-${i}`, uuid: `a-${i}`, timestamp: '2026-01-10T10:00:01.000Z', type: 'assistant', message: { role: 'assistant', model: 'm', id: `msg_${i}`, type: 'message', content: [{ type: 'tool_use', id: `toolu_${i}`, name: 'Bash', input: { command: `echo "${p.text}" > .env`, env: { API_KEY: p.secret } } }] } });
      rows.push({ ...base, parentUuid: `a-${i}`, uuid: `r-${i}`, timestamp: '2026-01-10T10:00:02.000Z', type: 'user', message: { role: 'user', content: [{ tool_use_id: `toolu_${i}`, type: 'tool_result', content: `wrote ${JSON.stringify({ value: p.text })}` }] } });
    });
    const folder = join(dir, 'transcripts', '-home-dev-app');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, `${session}.jsonl`), `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
    const summary = await cairn.ingest([join(dir, 'transcripts')]);
    expect(summary.turns).toBeGreaterThan(PLANTED.length);
    planted += PLANTED.length * 3;
  });

  it('plants through ingest of a Codex rollout (arguments are escaped JSON)', async () => {
    const id = '019a9999-1111-7222-8333-444455556666';
    const at = (n: number): string => new Date(Date.UTC(2026, 1, 2, 9, 0, n)).toISOString();
    const rows: unknown[] = [
      { timestamp: at(0), type: 'session_meta', payload: { id, timestamp: at(0), cwd: '/home/dev/svc', originator: 'codex_cli_rs', cli_version: '0.80.0', source: 'cli', model_provider: 'openai' } },
    ];
    PLANTED.forEach((p, i) => {
      rows.push({ timestamp: at(i * 3 + 1), type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: `codex ${p.kind}: ${p.text}` }] } });
      rows.push({ timestamp: at(i * 3 + 2), type: 'response_item', payload: { type: 'function_call', name: 'shell', arguments: JSON.stringify({ command: ['bash', '-lc', `cat > .env <<EOF\n${p.text}\nEOF`], env: { TOKEN: p.secret } }), call_id: `call_${i}` } });
      rows.push({ timestamp: at(i * 3 + 3), type: 'response_item', payload: { type: 'function_call_output', call_id: `call_${i}`, output: JSON.stringify({ output: p.text, metadata: { exit_code: 0 } }) } });
    });
    const folder = join(dir, 'codex', 'sessions', '2026', '02', '02');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, `rollout-2026-02-02T09-00-00-${id}.jsonl`), `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
    const summary = await cairn.ingest([join(dir, 'codex')]);
    expect(summary.turns).toBeGreaterThan(PLANTED.length * 2);
    planted += PLANTED.length * 3;
  });

  it('plants through the MCP remember tool', async () => {
    const server = createMcpServer(cairn, { version: 'test' });
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'privacy', version: '1' });
    await Promise.all([server.connect(a), client.connect(b)]);
    for (const p of PLANTED) {
      const result = await client.callTool({ name: 'remember', arguments: { text: `mcp ${p.kind}: ${p.text}`, tags: shortTag(p) } });
      expect(result.isError ?? false, JSON.stringify(result)).toBe(false);
      const id = /\b(01[0-9A-Z]{24})\b/.exec(JSON.stringify(result))?.[1];
      expect(id, JSON.stringify(result)).toBeDefined();
      const calls = [
        { name: 'revise', arguments: { id, text: `mcp revised ${p.kind}: ${p.text}` } },
        { name: 'snapshot', arguments: { label: label('mcp', p) } },
      ];
      for (const call of calls) {
        const out = await client.callTool(call);
        expect(out.isError ?? false, JSON.stringify(out)).toBe(false);
      }
      const current = (await cairn.list({ limit: 1 }))[0];
      const forgot = await client.callTool({ name: 'forget', arguments: { ids: [current!.id], reason: p.text.slice(0, 500) } });
      expect(forgot.isError ?? false, JSON.stringify(forgot)).toBe(false);
      planted += 4;
    }
    await client.close();
  });

  it('plants through cairn serve (HTTP) and the browser API', async () => {
    const tokens = new TokenStore(store, { clock: systemClock, ids: ulidSource() });
    const { token } = await tokens.create({ name: 'w', projects: [PROJECT], role: 'write' });
    const serve = createServeApp({ store, tokens, version: 'test' });
    const web = createWebApp(cairn, { token: UI_TOKEN });
    for (const p of PLANTED) {
      const res = await serve.request('/api/remember', { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ text: `http ${p.kind}: ${p.text}`, tags: shortTag(p) }) });
      expect(res.status, await res.clone().text()).toBeLessThan(300);
      const { id } = (await res.json()) as { id: string };
      await serve.request('/api/forget', { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ ids: [id], reason: p.text }) });
      const ui = await web.request('http://127.0.0.1:7000/api/memories', {
        method: 'POST',
        headers: { cookie: `cairn_token=${UI_TOKEN}`, 'X-Cairn-Token': UI_TOKEN, 'content-type': 'application/json' },
        body: JSON.stringify({ text: `ui ${p.kind}: ${p.text}`, tags: shortTag(p) }),
      });
      expect(ui.status, await ui.clone().text()).toBeLessThan(300);
      const made = ((await ui.json()) as { memory: { id: string } }).memory.id;
      const send = async (method: string, path: string, json: unknown): Promise<Response> => {
        const res = await web.request(`http://127.0.0.1:7000/api${path}`, {
          method,
          headers: { cookie: `cairn_token=${UI_TOKEN}`, 'X-Cairn-Token': UI_TOKEN, 'content-type': 'application/json' },
          body: JSON.stringify(json),
        });
        expect(res.status, `${method} ${path}: ${await res.clone().text()}`).toBeLessThan(300);
        return res;
      };
      const revised = (await (await send('PUT', `/memories/${made}`, { text: `ui revised ${p.kind}: ${p.text}` })).json()) as { memory: { id: string } };
      const current = revised.memory.id;
      await send('PATCH', `/memories/${current}`, { tags: shortTag(p) });
      const sup = (await (await send('POST', `/memories/${current}/supersede`, { text: `ui superseding ${p.kind}: ${p.text}` })).json()) as { memory: { id: string } };
      await send('POST', `/memories/${sup.memory.id}/forget`, { reason: p.text.slice(0, 500) });
      await send('POST', '/snapshots', { label: label('ui', p) });
      planted += 8;
    }
  }, 120_000);

  it('plants through the memory-tool backend', async () => {
    const tool = createMemoryTool(cairn);
    for (const p of PLANTED) {
      // The secret as a folder name where a path can hold it as is.
      const folder = /^[\w.-]+$/.test(secretTag(p)) ? secretTag(p) : p.kind;
      const out = await tool.handle({ command: 'create', path: `/memories/${p.kind}/${folder}/note.md`, file_text: `tool ${p.kind}:\n${p.text}` });
      expect(out.is_error ?? false, JSON.stringify(out)).toBe(false);
      planted++;
    }
  });

  it('finds no piece of any secret in the database file or any export', async () => {
    const jsonl: string[] = [];
    for await (const line of cairn.exportJsonl({ allProjects: true, includeDeleted: true } as never)) jsonl.push(line);
    const markdown = await cairn.exportMarkdown({ allProjects: true } as never);
    const cliExport = await runCli(['export', '--all-projects'], { home, env: { CAIRN_HOME: home } });
    const cliMarkdown = await runCli(['export', '--all-projects', '--format', 'markdown'], { home, env: { CAIRN_HOME: home } });
    expect(leaksIn(cliMarkdown.stdout)).toEqual([]);
    expect(jsonl.length).toBeGreaterThan(PLANTED.length * 4);
    expect(leaksIn(jsonl.join('\n')), jsonl.filter((l) => leaksIn(l).length > 0).slice(0, 3).join('\n')).toEqual([]);
    expect(leaksIn(markdown)).toEqual([]);
    expect(leaksIn(cliExport.stdout)).toEqual([]);
    const turns = await cairn.history({ query: 'please use', limit: 1000 } as never);
    expect(leaksIn(JSON.stringify(turns))).toEqual([]);

    // The WAL as it is while the store is open (closing checkpoints it into the database file).
    const wal = existsSync(`${dbPath}-wal`) ? readFileSync(`${dbPath}-wal`).toString('latin1') : '';
    expect(leaksIn(wal)).toEqual([]);
    await cairn.close();
    // The database, its WAL, and every other file cairn left in its home (vector files, caches).
    const files = [dbPath, `${dbPath}-wal`, ...filesUnder(home)].filter((f, i, all) => existsSync(f) && all.indexOf(f) === i);
    const bytes = files.map((f) => readFileSync(f).toString('latin1')).join('\n');
    const leakedKinds = leaksIn(bytes);
    if (leakedKinds.length > 0) {
      const p = PLANTED.find((x) => x.kind === leakedKinds[0])!;
      const piece = pieces(p.secret).find((x) => bytes.includes(x))!;
      const at = bytes.indexOf(piece);
      console.log(leakedKinds, JSON.stringify(bytes.slice(at - 300, at + 100)));
    }
    expect(leakedKinds).toEqual([]);
    // Figures for docs/RELIABILITY.md.
    console.log(`privacy: ${new Set(PLANTED.map((p) => p.kind)).size} kinds, ${ENTRY_POINTS.length} entry points, ${planted} plantings, ${((bytes.length + wal.length) / 1e6).toFixed(1)} MB searched (WAL open ${(wal.length / 1e6).toFixed(1)} MB, ${files.length} files after close), 0 leaked`);
  }, 120_000);
});
