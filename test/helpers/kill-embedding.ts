/**
 * Kill -9 of a real `cairn reindex` process mid-embedding, for the resumability tests: fill a store
 * with memories, start the CLI, wait for its first vectors, SIGKILL it, and check that it stopped
 * part-way with the store consistent.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'vitest';
import { createCairn } from '../../src/cairn.js';
import type { SqliteStore } from '../../src/store/sqlite/store.js';

export const CAIRN_BIN = join(process.cwd(), 'bin', 'cairn.js');

/** `count` distinct memories in project `p`, written without vectors. */
export async function fillMemories(store: SqliteStore, count: number): Promise<void> {
  const cairn = createCairn({ store, project: 'p' });
  for (let i = 0; i < count; i++) await cairn.remember({ text: `finding ${i}: module m${i % 97} calls helper h${i % 89} with flag f${i % 13}` });
}

/**
 * Run `cairn --home <home> <args>` until the store holds its first vector, then SIGKILL it.
 * Returns the child's pid and the vectors it left (more than none, fewer than `total`).
 * `count` says what to watch: the index's vectors by default; a model switch's staged ones.
 */
export async function killAfterFirstVectors(
  store: SqliteStore,
  home: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  total: number,
  count: () => Promise<number> = async () => (await store.stats()).vectors,
): Promise<{ pid: number; vectors: number }> {
  const child = spawn(process.execPath, [CAIRN_BIN, '--home', home, ...args], { env: { ...process.env, ...env }, stdio: 'ignore' });
  const exited = new Promise<NodeJS.Signals | null>((done) => child.on('exit', (_code, signal) => done(signal)));
  let before = 0;
  for (let waited = 0; waited < 60_000 && before === 0; waited += 20) {
    await new Promise((r) => setTimeout(r, 20));
    before = await count();
  }
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  const vectors = await count();
  expect(vectors).toBeGreaterThan(0);
  expect(vectors).toBeLessThan(total);
  expect((await store.integrityCheck?.()) ?? []).toEqual([]);
  return { pid: child.pid!, vectors };
}
