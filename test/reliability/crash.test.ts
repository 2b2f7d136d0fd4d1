/**
 * kill -9 at random points of `cairn import`, `cairn reindex` and `cairn migrate` (the built CLI
 * in a child process), then a plain re-run: the store passes `PRAGMA integrity_check` after every
 * kill and ends with exactly what an uninterrupted run leaves. Figures go to docs/RELIABILITY.md.
 * (Ingest and distil crash tests are in test/ingest/resume.test.ts.)
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadMigrations, openDatabase } from '../../src/store/sqlite/database.js';
import { spawnBuiltCli, type BuiltCliExit } from '../helpers/built-cli.js';
import { tempDir } from '../helpers/cli.js';
import { readDatabaseCopy } from '../helpers/db-copy.js';
import { oneCpuHeavyFileAtATime } from '../helpers/cpu-heavy.js';

await oneCpuHeavyFileAtATime(); // test/helpers/cpu-heavy.ts

const repo = resolve(import.meta.dirname, '../..');
const bin = join(repo, 'bin/cairn.js');
const built = existsSync(join(repo, 'dist/cli/main.js'));
const LINES = 1500;
const KILLS = 6;

/** Deterministic delays (xorshift), so a failure can be replayed. */
function delays(seed: number, n: number, max: number): number[] {
  let s = seed;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    out.push(20 + ((s >>> 0) % max));
  }
  return out;
}

type Exit = BuiltCliExit;

function cairn(home: string, args: string[], killAfterMs: number | null = null): Promise<Exit> {
  return spawnBuiltCli(home, args, { killAfterMs, env: { NO_COLOR: '1' } });
}

function inspect(home: string): { integrity: string; texts: string[]; vectors: number; version: number } {
  // A copy: the original's WAL is left for the re-run to recover (test/helpers/db-copy.ts).
  return readDatabaseCopy(join(home, 'cairn.db'), (db) => {
    const integrity = (db.pragma('integrity_check', { simple: true }) as string) ?? '';
    const texts = db.prepare<[], { text: string }>('SELECT text FROM memories WHERE deleted_at IS NULL ORDER BY text').all().map((r) => r.text);
    const hasVectors = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'vectors'").get() !== undefined;
    const vectors = hasVectors ? (db.prepare('SELECT count(*) AS n FROM vectors').get() as { n: number }).n : 0;
    return { integrity, texts, vectors, version: db.pragma('user_version', { simple: true }) as number };
  });
}

function importFile(dir: string): string {
  const file = join(dir, 'memories.jsonl');
  const lines: string[] = [];
  for (let i = 0; i < LINES; i++) lines.push(JSON.stringify({ text: `crash test memory ${i}: the retry budget of worker ${i % 37} is ${i * 7} ms`, tags: [`t${i % 11}`], meta: { n: i } }));
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** Kill `args` at the given delays, checking integrity after each, then run it to the end. */
async function killThenFinish(home: string, args: string[], kills: number[]): Promise<{ killed: number }> {
  let killed = 0;
  for (const ms of kills) {
    const exit = await cairn(home, args, ms);
    if (exit.signal === 'SIGKILL') killed++;
    else expect(exit.code, exit.stderr).toBe(0);
    if (existsSync(join(home, 'cairn.db'))) expect(inspect(home).integrity).toBe('ok');
  }
  const last = await cairn(home, args);
  expect(last.code, last.stderr).toBe(0);
  return { killed };
}

describe.skipIf(!built)('crash: kill -9 at random points, then resume (needs `npm run build`)', () => {
  it(`import of ${LINES} lines: ${KILLS} kills, then the same memories as an uninterrupted import`, async () => {
    const dir = tempDir('cairn-crash-import-');
    const file = importFile(dir);
    const reference = join(dir, 'reference');
    mkdirSync(reference);
    expect((await cairn(reference, ['import', file])).code).toBe(0);
    const expected = inspect(reference).texts;
    expect(expected).toHaveLength(LINES);

    const home = join(dir, 'killed');
    mkdirSync(home);
    const { killed } = await killThenFinish(home, ['import', file], delays(20261126, KILLS, 2500));
    const after = inspect(home);
    expect(after.integrity).toBe('ok');
    expect(after.texts).toEqual(expected);
    console.log(`crash import: ${killed}/${KILLS} runs killed mid-import, ${after.texts.length} memories, 0 lost, 0 duplicated`);
  }, 300_000);

  it(`reindex: ${KILLS} kills, then every memory has its vector`, async () => {
    const dir = tempDir('cairn-crash-reindex-');
    const home = join(dir, 'home');
    mkdirSync(home);
    expect((await cairn(home, ['import', importFile(dir)])).code).toBe(0);
    const args = ['reindex', '--embedder', 'hash:256', '--batch', '64'];
    const { killed } = await killThenFinish(home, args, delays(7, KILLS, 2500));
    const after = inspect(home);
    expect(after.integrity).toBe('ok');
    expect(after.texts).toHaveLength(LINES);
    expect(after.vectors).toBe(LINES);
    console.log(`crash reindex: ${killed}/${KILLS} runs killed, ${after.vectors}/${LINES} vectors after the re-run`);
  }, 300_000);

  it(`migrate from schema v4: ${KILLS} kills, then the latest schema and every memory searchable`, async () => {
    const migrations = loadMigrations();
    const latest = migrations.at(-1)?.version ?? 0;
    let killed = 0;
    for (const [trial, ms] of delays(99, KILLS, 400).entries()) {
      const home = tempDir(`cairn-crash-migrate-${trial}-`);
      const db = openDatabase(join(home, 'cairn.db'), { migrations: migrations.filter((m) => m.version <= 4) });
      const insert = db.prepare(
        "INSERT INTO memories (id, text, kind, scope, tags, importance, source, created_at, updated_at, valid_from, content_hash) VALUES (?, ?, 'note', 'user', '[]', 0.5, 'manual', 1, 1, 1, ?)",
      );
      const fts = db.prepare('INSERT INTO memories_fts (rowid, terms) VALUES (?, ?)');
      for (let i = 0; i < 300; i++) {
        const r = insert.run(`01MIGRATE${String(i).padStart(17, '0')}`, `migrate crash memory ${i} 数据库 ${i}`, `h${i}`);
        fts.run(r.lastInsertRowid, `migrate crash memory ${i}`);
      }
      db.close();
      const exit = await cairn(home, ['migrate', 'up'], ms);
      if (exit.signal === 'SIGKILL') killed++;
      expect(inspect(home).integrity).toBe('ok');
      const again = await cairn(home, ['migrate', 'up']);
      expect(again.code, again.stderr).toBe(0);
      const after = inspect(home);
      expect(after.version).toBe(latest);
      expect(after.texts).toHaveLength(300);
      const recall = await new Promise<string>((done) => {
        const child = spawn(process.execPath, [bin, '--home', home, 'recall', '数据库', '--json', '-n', '3'], { stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
        child.on('close', () => done(out)); // after stdout's last chunk ('exit' can come first)
      });
      expect(recall).toContain('migrate crash memory');
    }
    console.log(`crash migrate: ${killed}/${KILLS} runs killed, schema v4 -> v${latest}, integrity ok, FTS re-indexed`);
  }, 300_000);
});
