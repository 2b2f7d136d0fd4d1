/**
 * Size limits on every input channel this helper owns (issue #17.5): `cairn serve` and `cairn ui`
 * request bodies (413 before the body is read, before the token is checked — a read-only token
 * cannot make the server hold a large body) and `cairn import` lines (a line over 1 MiB is
 * reported with its number and never held whole).
 */
import { request } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenStore } from '../../src/auth/tokens.js';
import { createCairn, type Cairn } from '../../src/cairn.js';
import { boundedLines, IMPORT_MAX_LINE_BYTES } from '../../src/memory/bounded-lines.js';
import { systemClock, ulidSource } from '../../src/runtime.js';
import { createServeApp } from '../../src/serve/app.js';
import { DEFAULT_MAX_BODY_BYTES } from '../../src/serve/body-limit.js';
import { startServe, type RunningServer } from '../../src/serve/server.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/store.js';
import { createWebApp } from '../../src/web/app.js';
import { runCli, tempDir } from '../helpers/cli.js';

const MiB = 1024 * 1024;
const UI_TOKEN = 'limits-test-token-0123456789';

let store: SqliteStore;
let cairn: Cairn;
let tokens: TokenStore;
let reader: string;
let writer: string;

/** A body that streams `total` bytes in 64 KiB chunks (no Content-Length) and counts what was pulled. */
function streamingBody(total: number): { body: ReadableStream<Uint8Array>; pulled: () => number } {
  let sent = 0;
  const chunk = new Uint8Array(64 * 1024).fill(0x61);
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= total) return controller.close();
      sent += chunk.length;
      controller.enqueue(chunk);
    },
  });
  return { body, pulled: () => sent };
}

beforeAll(async () => {
  const dir = tempDir('cairn-limits-');
  store = await openSqliteStore(join(dir, 'cairn.db'));
  cairn = createCairn({ store, project: 'p', actor: 'test' });
  tokens = new TokenStore(store, { clock: systemClock, ids: ulidSource() });
  reader = (await tokens.create({ name: 'r', projects: ['p'], role: 'read' })).token;
  writer = (await tokens.create({ name: 'w', projects: ['p'], role: 'write' })).token;
});

afterAll(async () => {
  await cairn?.close();
});

describe('cairn serve: request body limit', () => {
  const big = 'x'.repeat(DEFAULT_MAX_BODY_BYTES + 1);

  it('answers 413 TOO_LARGE from Content-Length alone, for a read-only token and for no token', async () => {
    const app = createServeApp({ store, tokens, version: 'test' });
    for (const auth of [{ Authorization: `Bearer ${reader}` }, {}] as Array<Record<string, string>>) {
      const res = await app.request('/api/remember', { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: big });
      expect(res.status).toBe(413);
      expect(res.headers.get('connection')).toBe('close');
      const json = (await res.json()) as { error: { code: string; message: string } };
      expect(json.error.code).toBe('TOO_LARGE');
      expect(json.error.message).toBe('the request body is over the 1 MiB limit');
    }
  });

  it('stops reading a chunked body at the limit', async () => {
    const app = createServeApp({ store, tokens, version: 'test' });
    const { body, pulled } = streamingBody(64 * MiB);
    const res = await app.request('/mcp', { method: 'POST', headers: { Authorization: `Bearer ${reader}`, 'Content-Type': 'application/json' }, body, duplex: 'half' } as RequestInit);
    expect(res.status).toBe(413);
    expect(pulled()).toBeLessThan(DEFAULT_MAX_BODY_BYTES + 512 * 1024);
  });

  it('still serves bodies under the limit, and the limit is configurable', async () => {
    const app = createServeApp({ store, tokens, version: 'test', maxBodyBytes: 2048 });
    const ok = await app.request('/api/remember', { method: 'POST', headers: { Authorization: `Bearer ${writer}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ text: 'limits: a small body is fine' }) });
    expect(ok.status).toBe(201);
    const over = await app.request('/api/remember', { method: 'POST', headers: { Authorization: `Bearer ${writer}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ text: 'y'.repeat(3000) }) });
    expect(over.status).toBe(413);
    expect(((await over.json()) as { error: { message: string } }).error.message).toBe('the request body is over the 2 KiB limit');
  });

  describe('over a real socket', () => {
    let server: RunningServer;
    beforeAll(async () => {
      server = await startServe({ store, tokens, version: 'test', port: 0 });
    });
    afterAll(async () => {
      await server?.close();
    });

    it('answers a 512 MiB upload from a read-only token with 413 long before it is sent, without holding it', async () => {
      const rssBefore = process.memoryUsage().rss;
      const declared = 512 * MiB;
      const chunk = Buffer.alloc(256 * 1024, 0x61);
      let written = 0;
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(`${server.url}/api/recall`, { method: 'POST', headers: { Authorization: `Bearer ${reader}`, 'Content-Type': 'application/json', 'Content-Length': declared } });
        let answered = false;
        req.on('response', (res) => {
          answered = true;
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', (error) => (answered ? undefined : reject(error)));
        const pump = (): void => {
          while (!answered && written < declared) {
            written += chunk.length;
            if (!req.write(chunk)) return void req.once('drain', pump);
          }
        };
        pump();
      });
      expect(status).toBe(413);
      expect(written).toBeLessThan(64 * MiB);
      expect(process.memoryUsage().rss - rssBefore).toBeLessThan(200 * MiB);
    });
  });
});

describe('cairn ui: request body limit', () => {
  it('answers 413 before the token is checked, JSON in the API error shape', async () => {
    const web = createWebApp(cairn, { token: UI_TOKEN });
    const res = await web.request('http://127.0.0.1:7000/api/memories', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'z'.repeat(DEFAULT_MAX_BODY_BYTES) }),
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('TOO_LARGE');
    const { body, pulled } = streamingBody(32 * MiB);
    const chunked = await web.request('http://127.0.0.1:7000/api/memories', { method: 'POST', headers: { cookie: `cairn_token=${UI_TOKEN}`, 'X-Cairn-Token': UI_TOKEN }, body, duplex: 'half' } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(pulled()).toBeLessThan(DEFAULT_MAX_BODY_BYTES + 512 * 1024);
  });
});

describe('cairn import: line limit', () => {
  async function collect(chunks: Array<string | Buffer>, max?: number): Promise<unknown[]> {
    const out: unknown[] = [];
    async function* source(): AsyncGenerator<string | Buffer> {
      yield* chunks;
    }
    for await (const line of boundedLines(source(), max)) out.push(line);
    return out;
  }

  it('reports a line over the limit with its size and keeps the lines around it', async () => {
    expect(await collect(['ab\nc', 'defgh', 'ij\r\nkl'], 4)).toEqual(['ab', { tooLong: 9 }, 'kl']);
    expect(await collect(['toolong'], 4)).toEqual([{ tooLong: 7 }]);
    expect(await collect(['\n\nx\n'], 4)).toEqual(['', '', 'x']);
  });

  it('keeps a UTF-8 character split across chunks whole', async () => {
    const bytes = Buffer.from('é日本🙂\n', 'utf8');
    const chunks = [...bytes].map((b) => Buffer.from([b]));
    expect(await collect(chunks)).toEqual(['é日本🙂']);
  });

  it('cairn import skips a 3 MiB line with its number and imports the rest', async () => {
    const home = tempDir('cairn-limits-import-');
    const file = join(home, 'in.jsonl');
    const lines = [
      JSON.stringify({ text: 'limits import: first line' }),
      JSON.stringify({ text: 'q'.repeat(3 * MiB) }),
      JSON.stringify({ text: 'limits import: third line' }),
    ];
    writeFileSync(file, `${lines.join('\n')}\n`);
    const run = await runCli(['import', file], { home, env: { CAIRN_HOME: home } });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('imported 2 of 3 lines');
    expect(run.stderr).toContain(`line 2: line of ${3 * MiB + 11} bytes is over the 1 MiB limit`);
    expect(IMPORT_MAX_LINE_BYTES).toBe(MiB);
  });
});
