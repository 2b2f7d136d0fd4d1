/**
 * kill -9 of a process ingesting with the store's write thread (src/store/sqlite/substrate-writer*.ts)
 * at random points, then the same ingest again: the store must hold exactly what an uninterrupted
 * run leaves (sessions, turns and their index, facts with every occurrence, cursors) and pass
 * `PRAGMA integrity_check` after every kill. The process is the built package's ingest (dist/),
 * forced onto the write thread whatever the run's size; a build is needed (skipped without).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDatabaseCopy } from '../helpers/db-copy.js';
import { mulberry32 } from '../helpers/prng.js';
import { oneCpuHeavyFileAtATime } from '../helpers/cpu-heavy.js';
import { tempDir } from '../helpers/cli.js';

await oneCpuHeavyFileAtATime(); // test/helpers/cpu-heavy.ts

const repo = resolve(import.meta.dirname, '../..');
const fixtures = join(repo, 'test/fixtures/transcripts');
const built = existsSync(join(repo, 'dist/store/sqlite/substrate-writer-worker.js'));
const TRIALS = Number(process.env.CAIRN_CRASH_TRIALS ?? 5);
const SEED = Number(process.env.CAIRN_CRASH_SEED ?? 20261127);

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** `copies` copies of the fixture transcripts, every uuid (session ids, file names) made unique per copy. */
function replicate(dir: string, copies: number): void {
  const files = readdirSync(fixtures, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.jsonl') && !f.includes('expected'))
    .filter((f) => statSync(join(fixtures, f)).isFile());
  for (let k = 0; k < copies; k++) {
    const tag = k.toString(16).padStart(4, '0');
    for (const file of files) {
      const text = readFileSync(join(fixtures, file), 'utf8').replace(UUID, (u) => tag + u.slice(4));
      const path = join(dir, `copy-${tag}`, file.replace(UUID, (u) => tag + u.slice(4)).replace(/\.jsonl$/, `-${tag}.jsonl`));
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text.replace(/"(sessionId|session_id)":"([^"]*)"/g, (_m, key: string, id: string) => `"${key}":"${id.startsWith(tag) ? id : `${id}-${tag}`}"`));
    }
  }
}

/** The ingest as `cairn ingest` wires it (the store's write boundary, the recording substrate), on the write thread. */
const SCRIPT = `
const [db, data] = process.argv.slice(1);
const dist = (p) => import(${JSON.stringify(`${repo}/dist/`)} + p);
const { openSqliteStore } = await dist('store/sqlite/store.js');
const { createCairn } = await dist('cairn.js');
const { ingestPaths } = await dist('ingest/runner.js');
const { recordingSubstrate } = await dist('distill/after-ingest.js');
const store = await openSqliteStore(db);
const cairn = createCairn({ store, actor: 'test' });
const logger = { debug() {}, info() {}, warn() {}, error() {} };
const summary = await ingestPaths([data], { substrate: recordingSubstrate(cairn.deps.store.substrate, new Set()), clock: { now: () => Date.now() }, logger, writeThread: { minBytes: 0 } });
await store.close();
process.stdout.write(JSON.stringify({ writeThread: summary.writeThread, skipped: summary.skipped, turns: summary.turns }));
`;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  ms: number;
}

function run(db: string, data: string, killAfterMs: number | null = null): Promise<Exit> {
  return new Promise((resolvePromise, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--input-type=module', '-e', SCRIPT, db, data], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = killAfterMs === null ? null : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (timer) clearTimeout(timer);
      if (killAfterMs === null && code !== 0) reject(new Error(`ingest exited ${code}: ${stderr}`));
      else resolvePromise({ code, signal, stdout, ms: performance.now() - started });
    });
  });
}

interface Held {
  integrity: string;
  rows: Record<string, string[]>;
}

/** Every table ingest writes, rows as JSON sorted (rowids and write times aside); empty before the schema exists. */
function held(db: string): Held {
  if (!existsSync(db)) return { integrity: 'ok', rows: {} };
  return readDatabaseCopy(db, (conn) => {
    const integrity = conn.pragma('integrity_check', { simple: true }) as string;
    if (conn.prepare("SELECT 1 FROM sqlite_master WHERE name = 'turns'").get() === undefined) return { integrity, rows: {} };
    const all = (sql: string) =>
      conn
        .prepare(sql)
        .raw()
        .all()
        .map((row) => JSON.stringify(row))
        .sort();
    conn.exec("CREATE VIRTUAL TABLE temp.vt USING fts5vocab(main, turns_fts, 'instance'); CREATE VIRTUAL TABLE temp.vf USING fts5vocab(main, session_facts_fts, 'instance')");
    return {
      integrity,
      rows: {
        sessions: all('SELECT * FROM sessions'),
        sources: all('SELECT * FROM session_sources'),
        turns: all('SELECT id, session_id, seq, role, text, tool_name, tool_input, tool_use_id, is_error, flags, at FROM turns'),
        turnTerms: all('SELECT t.id, v.term, v.col, v.offset FROM temp.vt v JOIN turns t ON t.pk = v.doc'),
        compactions: all('SELECT * FROM compactions'),
        corrections: all('SELECT * FROM corrections'),
        // Occurrences in turn id order: a fact's are packed in the order written, which a kill changes.
        facts: all(
          `SELECT f.id, f.session_id, f.kind, f.text, f.path, f.line, (SELECT json_group_array(json(r.value) ORDER BY r.value ->> 0) FROM json_each(f.refs) r) FROM session_facts f`,
        ),
        factTerms: all('SELECT f.id, v.term, v.col, v.offset FROM temp.vf v JOIN session_facts f ON f.pk = v.doc'),
        cursors: all('SELECT path, size, mtime_ms, "offset", head_hash, state FROM ingest_cursors'),
      },
    };
  });
}

describe.skipIf(!built)('ingest on the store write thread, killed (kill -9) and run again, stores what an uninterrupted run stores', () => {
  const root = tempDir('cairn-wt-kill-');
  const data = join(root, 'transcripts');
  let reference: Held;
  let referenceMs = 0;

  beforeAll(async () => {
    replicate(data, 80);
    const db = join(root, 'reference', 'cairn.db');
    mkdirSync(dirname(db), { recursive: true });
    const exit = await run(db, data);
    referenceMs = exit.ms;
    expect(JSON.parse(exit.stdout)).toMatchObject({ writeThread: true, skipped: 0 });
    reference = held(db);
  }, 120_000);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it(`${TRIALS} kills at random points (seed ${SEED})`, async () => {
    expect(reference.integrity).toBe('ok');
    expect(reference.rows.turns?.length).toBeGreaterThan(1000);
    expect(reference.rows.facts?.length).toBeGreaterThan(100);
    const random = mulberry32(SEED);
    const landed = { beforeWrites: 0, midIngest: 0, afterAll: 0 };
    for (let trial = 0; trial < TRIALS; trial++) {
      const db = join(root, `trial-${trial}`, 'cairn.db');
      mkdirSync(dirname(db), { recursive: true });
      // Node's start-up is a good part of the run: kill anywhere from 45% to 100% of its time.
      const at = Math.round(referenceMs * (0.45 + 0.55 * random()));
      const killed = await run(db, data, at);
      const after = held(db);
      expect(after.integrity, `trial ${trial}: killed at ${at} ms`).toBe('ok');
      const turns = after.rows.turns?.length ?? 0;
      if (killed.signal === 'SIGKILL') {
        if (turns === 0) landed.beforeWrites++;
        else if (turns < (reference.rows.turns?.length ?? 0)) landed.midIngest++;
        else landed.afterAll++;
      }
      const again = await run(db, data);
      expect(JSON.parse(again.stdout)).toMatchObject({ skipped: 0 });
      expect(held(db), `trial ${trial}: killed at ${at} ms`).toEqual(reference);
      rmSync(dirname(db), { recursive: true, force: true });
    }
    console.info(`write-thread kill: ${TRIALS} kills (${JSON.stringify(landed)}), reference ${reference.rows.turns?.length} turns, ${Math.round(referenceMs)} ms`);
  }, 600_000);
});
