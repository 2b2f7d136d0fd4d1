/**
 * kill -9 during the near-duplicate bands' fill (`cairn migrate up` on a store written before
 * migration 012, the built CLI in a child process): after every kill the store passes
 * `PRAGMA integrity_check` and holds exactly the bands of the memories up to its committed cursor
 * (a chunk and its cursor commit together); a plain re-run completes it, equal to the bands
 * computed from the texts.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadMigrations, openDatabase } from '../../src/store/sqlite/database.js';
import { BANDS_STATE_KEY, BANDS_VERSION, bandKeys } from '../../src/store/sqlite/memory-bands.js';
import { spawnBuiltCli, type BuiltCliExit } from '../helpers/built-cli.js';
import { tempDir } from '../helpers/cli.js';
import { readDatabaseCopy } from '../helpers/db-copy.js';
import { oneCpuHeavyFileAtATime } from '../helpers/cpu-heavy.js';

await oneCpuHeavyFileAtATime(); // test/helpers/cpu-heavy.ts

const repo = resolve(import.meta.dirname, '../..');
const built = existsSync(join(repo, 'dist/cli/main.js'));
const MEMORIES = 12_000;
const KILL_AFTER_MS = [500, 900, 1300, 1800, 2400];

function migrateUp(home: string, killAfterMs: number | null): Promise<BuiltCliExit> {
  return spawnBuiltCli(home, ['migrate', 'up'], { killAfterMs });
}

interface Inspected {
  integrity: string;
  state: { v: string; next?: number; done?: boolean } | null;
  bands: Set<string>;
}

function inspect(home: string): Inspected {
  return readDatabaseCopy(join(home, 'cairn.db'), (db) => {
    const integrity = (db.pragma('integrity_check', { simple: true }) as string) ?? '';
    const hasTable = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'memory_bands'").get() !== undefined;
    const row = db.prepare('SELECT value FROM state WHERE key = ?').get(BANDS_STATE_KEY) as { value: string } | undefined;
    const bands = new Set<string>();
    if (hasTable) for (const r of db.prepare('SELECT key, memory_rowid FROM memory_bands').raw(true).iterate() as Iterable<[number, number]>) bands.add(`${r[0]}:${r[1]}`);
    return { integrity, state: row ? (JSON.parse(row.value) as Inspected['state']) : null, bands };
  });
}

describe.skipIf(!built)('crash: kill -9 during the bands fill, then resume (needs `npm run build`)', () => {
  it(`migrate up on ${MEMORIES} memories: killed ${KILL_AFTER_MS.length} times, the bands always match the committed cursor, then complete`, async () => {
    const home = tempDir('cairn-crash-bands-');
    const db = openDatabase(join(home, 'cairn.db'), { migrations: loadMigrations().filter((m) => m.version <= 11) });
    const insert = db.prepare(
      "INSERT INTO memories (id, text, kind, scope, project, tags, importance, source, created_at, updated_at, valid_from, content_hash) VALUES (?, ?, 'note', ?, ?, '[]', 0.5, 'manual', 1, 1, 1, ?)",
    );
    // Every rowid's expected bands, from the texts.
    const expected = new Map<number, string[]>();
    db.transaction(() => {
      for (let i = 0; i < MEMORIES; i++) {
        const project = i % 5 === 0 ? null : `/repo/p${i % 4}`;
        const text = `bands crash memory ${i}: the retry budget of worker ${i % 37} in service${i % 11} is ${i * 7} ms`;
        const r = insert.run(`01BANDS${String(i).padStart(19, '0')}`, text, project === null ? 'user' : 'project', project, `h${i}`);
        const rowid = Number(r.lastInsertRowid);
        expected.set(rowid, [...new Set(bandKeys(text, project))].map((key) => `${key}:${rowid}`));
      }
    })();
    db.close();

    let killed = 0;
    let cursor = 0;
    for (const ms of KILL_AFTER_MS) {
      const exit = await migrateUp(home, ms);
      if (exit.signal === 'SIGKILL') killed++;
      else expect(exit.code, exit.stderr).toBe(0);
      const seen = inspect(home);
      expect(seen.integrity).toBe('ok');
      if (seen.state?.done) break;
      // What a kill leaves: the bands of the rows up to the committed cursor, nothing else.
      const next = seen.state === null ? 0 : (seen.state.next ?? 0);
      if (seen.state !== null) expect(seen.state.v).toBe(BANDS_VERSION);
      expect(next).toBeGreaterThanOrEqual(cursor);
      cursor = next;
      const upTo = [...expected].filter(([rowid]) => rowid <= next).flatMap(([, keys]) => keys);
      expect(seen.bands.size).toBe(upTo.length);
      for (const band of upTo) expect(seen.bands.has(band)).toBe(true);
    }
    const last = await migrateUp(home, null);
    expect(last.code, last.stderr).toBe(0);
    const after = inspect(home);
    expect(after.integrity).toBe('ok');
    expect(after.state).toEqual({ v: BANDS_VERSION, done: true });
    const all = [...expected.values()].flat();
    expect(after.bands.size).toBe(all.length);
    for (const band of all) expect(after.bands.has(band)).toBe(true);
    console.log(`crash bands fill: ${killed}/${KILL_AFTER_MS.length} runs killed (last cursor rowid ${cursor} of ${MEMORIES}), complete after the re-run`);
  }, 300_000);
});
