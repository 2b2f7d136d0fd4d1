/**
 * `cairn reindex` killed with SIGKILL mid-run (a real process, kill -9): the store stays
 * consistent, the vectors written so far stay, and the next run embeds only the rest.
 */
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createCairn } from '../../src/cairn.js';
import { createHashEmbedder } from '../../src/embed/hash.js';
import { reindex } from '../../src/embed/reindex.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { tempDir } from '../helpers/cli.js';

const BIN = join(process.cwd(), 'bin', 'cairn.js');
const BUILT = existsSync(join(process.cwd(), 'dist', 'cli', 'main.js'));
if (!BUILT) console.warn('skipping the reindex kill -9 test: dist/ is not built (npm run build; npm test does)');

const dir = tempDir('cairn-reindex-kill-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const MEMORIES = 400;

describe.skipIf(!BUILT)('cairn reindex after kill -9', () => {
  it('keeps what was written and finishes the rest on the next run', async () => {
    const db = join(dir, 'cairn.db');
    const store = await openSqliteStore(db);
    const cairn = createCairn({ store, project: 'p' });
    for (let i = 0; i < MEMORIES; i++) await cairn.remember({ text: `finding ${i}: module m${i % 97} calls helper h${i % 89} with flag f${i % 13}` });
    const child = spawn(process.execPath, [BIN, '--home', dir, 'reindex', '--embedder', 'hash:64', '--batch', '1'], {
      env: { ...process.env, CAIRN_DEFAULT_EMBEDDER: 'none' },
      stdio: 'ignore',
    });
    const exited = new Promise<NodeJS.Signals | null>((done) => child.on('exit', (_code, signal) => done(signal)));
    let before = 0;
    for (let waited = 0; waited < 60_000 && before === 0; waited += 20) {
      await new Promise((r) => setTimeout(r, 20));
      before = (await store.stats()).vectors;
    }
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const after = (await store.stats()).vectors;
    expect(after).toBeGreaterThan(0);
    expect(after).toBeLessThan(MEMORIES);
    expect((await store.integrityCheck?.()) ?? []).toEqual([]);
    const summary = await reindex(store, createHashEmbedder({ dimension: 64 }));
    expect(summary).toMatchObject({ cleared: false, embedded: MEMORIES - after, vectors: MEMORIES, remaining: 0, complete: true });
    await store.close();
  }, 240_000);
});
