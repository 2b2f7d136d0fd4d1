/**
 * A new SQLite store appears whole: openDatabase makes it beside its path and links it into place,
 * so a second process opening the same new store at that moment never meets a 0-byte file (which
 * is refused as a lost database). The race itself runs in test/store/concurrency.test.ts.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDatabaseFile, openDatabase } from '../../src/store/sqlite/database.js';
import { tempDirs } from '../helpers/cli.js';

const dir = tempDirs();
const built = resolve(import.meta.dirname, '../../dist/store/sqlite/database.js');

describe('creating a new SQLite store', () => {
  it('links a database file with its header written, and leaves no temporary file', () => {
    const home = dir('cairn-create-');
    const path = join(home, 'cairn.db');
    createDatabaseFile(path);
    expect(statSync(path).size).toBeGreaterThan(0);
    expect(readFileSync(path).subarray(0, 16).toString('latin1')).toBe('SQLite format 3\u0000');
    expect(readdirSync(home)).toEqual(['cairn.db']);
    const db = openDatabase(path);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
  });

  it('leaves a file another process linked first as it is', () => {
    const home = dir('cairn-create-');
    const path = join(home, 'cairn.db');
    const first = openDatabase(path);
    first.exec("CREATE TABLE kept (v TEXT); INSERT INTO kept VALUES ('mine')");
    first.close();
    createDatabaseFile(path);
    const again = openDatabase(path);
    expect(again.prepare('SELECT v FROM kept').pluck().all()).toEqual(['mine']);
    again.close();
    expect(readdirSync(home).filter((name) => name.includes('.new-'))).toEqual([]);
  });

  it('still refuses a 0-byte file that is already there', () => {
    const home = dir('cairn-create-');
    const path = join(home, 'cairn.db');
    writeFileSync(path, '');
    expect(() => openDatabase(path)).toThrow(/empty file \(0 bytes\)/);
    expect(statSync(path).size).toBe(0);
  });

  it.skipIf(!existsSync(built))('8 processes opening one new store at once all succeed (needs `npm run build`)', async () => {
    const home = dir('cairn-create-');
    const path = join(home, 'cairn.db');
    const script = `const { openDatabase } = await import(${JSON.stringify(built)}); openDatabase(${JSON.stringify(path)}).close();`;
    const exits = await Promise.all(
      Array.from({ length: 8 }, () =>
        new Promise<{ code: number | null; stderr: string }>((done) => {
          const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
          let stderr = '';
          child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
          child.on('close', (code) => done({ code, stderr }));
        }),
      ),
    );
    for (const exit of exits) expect(exit.code, exit.stderr).toBe(0);
    expect(readdirSync(home).filter((name) => name.includes('.new-'))).toEqual([]);
  });
});
