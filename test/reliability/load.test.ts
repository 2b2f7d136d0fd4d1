/**
 * Load on one SQLite home: 8 `cairn import` processes × 500 memories each, at the same time as a
 * `cairn serve` (in this process, on the same database file) whose client writes and recalls over
 * HTTP until the importers are done. 0 lost, 0 errors. Figures go to docs/RELIABILITY.md.
 */
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TokenStore } from '../../src/auth/tokens.js';
import { systemClock, ulidSource } from '../../src/runtime.js';
import { startServe } from '../../src/serve/server.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { tempDir } from '../helpers/cli.js';
import { oneCpuHeavyFileAtATime } from '../helpers/cpu-heavy.js';

await oneCpuHeavyFileAtATime(); // test/helpers/cpu-heavy.ts

const repo = resolve(import.meta.dirname, '../..');
const bin = join(repo, 'bin/cairn.js');
const built = existsSync(join(repo, 'dist/cli/main.js'));
const WRITERS = 8;
const EACH = 500;

function run(home: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, '--home', home, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr })); // 'close': after stdout's last chunk ('exit' can come before it)
  });
}

describe.skipIf(!built)('load: 8 writers × 500 and a concurrent serve client (needs `npm run build`)', () => {
  it('loses nothing and answers every request', async () => {
    const home = tempDir('cairn-load-');
    const store = await openSqliteStore(join(home, 'cairn.db'));
    const tokens = new TokenStore(store, { clock: systemClock, ids: ulidSource() });
    const server = await startServe({ store, tokens, version: 'test', port: 0 });
    const auth = { Authorization: `Bearer ${server.localToken}`, 'Content-Type': 'application/json', 'X-Cairn-Project': 'load' };
    const files: string[] = [];
    for (let w = 0; w < WRITERS; w++) {
      const file = join(home, `writer-${w}.jsonl`);
      const lines = Array.from({ length: EACH }, (_, i) => JSON.stringify({ text: `load writer ${w} memory ${i}: queue ${i % 13} drains in ${i * 3} ms`, project: 'load' }));
      writeFileSync(file, `${lines.join('\n')}\n`);
      files.push(file);
    }

    let writersDone = false;
    const served = { writes: 0, recalls: 0, errors: [] as string[] };
    const client = (async () => {
      for (let i = 0; !writersDone || i < 20; i++) {
        const write = await fetch(`${server.url}/api/remember`, { method: 'POST', headers: auth, body: JSON.stringify({ text: `load serve client memory ${i}` }) });
        if (write.status !== 201) served.errors.push(`remember ${write.status} ${await write.text()}`);
        else served.writes++;
        const recall = await fetch(`${server.url}/api/recall`, { method: 'POST', headers: auth, body: JSON.stringify({ query: `writer ${i % WRITERS} queue`, k: 5 }) });
        if (recall.status !== 200) served.errors.push(`recall ${recall.status} ${await recall.text()}`);
        else served.recalls++;
      }
    })();
    const started = performance.now();
    const results = await Promise.all(files.map((file) => run(home, ['import', file])));
    const seconds = (performance.now() - started) / 1000;
    writersDone = true;
    await client;
    await server.close();

    for (const r of results) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(`imported ${EACH} of ${EACH} lines`);
    }
    expect(served.errors).toEqual([]);
    const stored = await store.countMemories({});
    const expected = WRITERS * EACH + served.writes;
    expect(stored).toBe(expected);
    const all = await store.listMemories({ limit: 10_000 });
    for (let w = 0; w < WRITERS; w++) {
      const hits = all;
      expect(hits.filter((m) => m.text.startsWith(`load writer ${w} `))).toHaveLength(EACH);
    }
    expect(await store.integrityCheck?.()).toEqual([]);
    await store.close();
    console.log(`load: ${WRITERS} writers × ${EACH} in ${seconds.toFixed(1)} s with ${served.writes} serve writes and ${served.recalls} recalls alongside; ${stored}/${expected} stored, 0 lost, ${served.errors.length} errors`);
  }, 600_000);
});
