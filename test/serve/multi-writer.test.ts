/**
 * Multi-writer safety: three `cairn serve` processes on one PostgreSQL database and eight
 * concurrent clients × 200 writes spread over them. Every write is present exactly once, the
 * texts all clients write at the same time are stored once, and a retried write adds nothing.
 * Runs on the real server when CAIRN_TEST_PG_URL is set, else on PGlite.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenStore } from '../../src/auth/tokens.js';
import { systemClock, ulidSource } from '../../src/runtime.js';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/store.js';
import { tempDir } from '../helpers/cli.js';
import { oneCpuHeavyFileAtATime } from '../helpers/cpu-heavy.js';
import { dropTestSchemas, realPgUrl, startPglite, withFreshSchema, type PgServer } from './pg.js';

await oneCpuHeavyFileAtATime(); // test/helpers/cpu-heavy.ts

const repo = resolve(import.meta.dirname, '../..');
const bin = join(repo, 'bin/cairn.js');
const SERVERS = 3;
const CLIENTS = 8;
const WRITES = 200;
const SHARED_EVERY = 10;

let pglite: PgServer | null = null;
let url: string;
let store: PostgresStore;
const children: ChildProcess[] = [];

function startServer(storeUrl: string, home: string): Promise<{ child: ChildProcess; base: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, '--home', home, '--store', storeUrl, 'serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let out = '';
    let err = '';
    const timer = setTimeout(() => fail(new Error(`serve did not start: ${err}`)), 30_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match?.[1]) {
        clearTimeout(timer);
        done({ child, base: match[1] });
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('exit', (code) => {
      if (code !== 0 && code !== null) process.stderr.write(`cairn serve exited with ${code}: ${err}\n`);
      fail(new Error(`serve exited with ${code}: ${err}`));
    });
  });
}

beforeAll(async () => {
  if (!existsSync(join(repo, 'dist/cli/main.js'))) throw new Error('dist/ is missing: run `npm run build` (npm test does it first)');
  if (realPgUrl) url = withFreshSchema(realPgUrl, 'mw');
  else {
    pglite = await startPglite();
    url = withFreshSchema(pglite.url, 'mw');
  }
  store = await openPostgresStore(url);
}, 60_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null)));
  await store?.close();
  await pglite?.stop();
  if (realPgUrl) await dropTestSchemas(realPgUrl, 'mw');
});

describe(`multi-writer: ${SERVERS} cairn serve processes, ${CLIENTS} clients × ${WRITES} writes, one ${realPgUrl ? 'PostgreSQL server' : 'PGlite database'}`, () => {
  it('stores every write exactly once', async () => {
    const tokens = new TokenStore(store, { clock: systemClock, ids: ulidSource() });
    const secrets = await Promise.all(
      Array.from({ length: CLIENTS }, async (_, i) => (await tokens.create({ name: `client${i}`, projects: ['team'], role: 'write' })).token),
    );
    const home = tempDir('cairn-mw-');
    const servers = await Promise.all(Array.from({ length: SERVERS }, () => startServer(url, home)));
    const post = async (base: string, token: string, text: string): Promise<number> => {
      for (let attempt = 0; ; attempt++) {
        try {
          const res = await fetch(`${base}/api/remember`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
            body: JSON.stringify({ text }),
          });
          await res.arrayBuffer();
          return res.status;
        } catch (error) {
          // a connection reset is retried, as a real client would; the write is idempotent
          if (attempt >= 3) throw error;
        }
      }
    };
    const statuses = await Promise.all(
      secrets.map(async (token, c) => {
        const seen: number[] = [];
        for (let j = 0; j < WRITES; j++) {
          const base = (servers[(c + j) % SERVERS] as { base: string }).base;
          seen.push(await post(base, token, `client ${c} wrote finding number ${j}: value ${j * 7 + c}`));
          if (j % SHARED_EVERY === 0) seen.push(await post(base, token, `shared finding ${j}: every client writes this at once`));
        }
        // a retry of a write that already succeeded adds nothing
        seen.push(await post((servers[0] as { base: string }).base, token, `client ${c} wrote finding number 0: value ${c}`));
        return seen;
      }),
    );
    const all = statuses.flat();
    expect(all.filter((s) => s !== 200 && s !== 201)).toEqual([]);
    const count = async (sql: string): Promise<number> => (await store.db.query<{ n: number }>(sql)).rows[0]?.n ?? -1;
    expect(await count("SELECT count(*) AS n FROM memories WHERE text LIKE 'client %'")).toBe(CLIENTS * WRITES);
    expect(await count("SELECT count(DISTINCT text) AS n FROM memories WHERE text LIKE 'client %'")).toBe(CLIENTS * WRITES);
    expect(await count("SELECT count(*) AS n FROM memories WHERE text LIKE 'shared finding %'")).toBe(WRITES / SHARED_EVERY);
    expect(await count("SELECT count(*) AS n FROM events WHERE type = 'create'")).toBe(CLIENTS * WRITES + WRITES / SHARED_EVERY);
    expect(await count("SELECT count(*) AS n FROM memories WHERE project IS DISTINCT FROM 'team'")).toBe(0);
    // each client's own writes were recorded with its token as the actor
    const actors = await store.db.query<{ actor: string; n: number }>(
      "SELECT e.actor, count(*) AS n FROM events e JOIN memories m ON m.id = e.memory_id WHERE e.type = 'create' AND m.text LIKE 'client %' GROUP BY e.actor ORDER BY e.actor",
    );
    expect(actors.rows).toEqual(Array.from({ length: CLIENTS }, (_, i) => ({ actor: `token:client${i}`, n: WRITES })));
  }, 170_000);
});
