/**
 * kill -9 at random points of `cairn ingest` (reading, writing, distilling), then a plain
 * `cairn ingest` again: the final memories must be the ones an uninterrupted run leaves.
 * The transcripts are the fixtures copied with fresh session ids (or `CAIRN_CRASH_DATA`, e.g.
 * ../shared/data/transcripts, for the figures in docs/RELIABILITY.md); `CAIRN_CRASH_TRIALS` sets
 * the number of kills (default 4) and `CAIRN_CRASH_SEED` the seed.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures, repoRoot, tempDir } from './helpers.js';
import { readDatabaseCopy } from '../helpers/db-copy.js';
import { mulberry32 } from '../helpers/prng.js';
import { oneCpuHeavyFileAtATime } from '../helpers/cpu-heavy.js';

await oneCpuHeavyFileAtATime(); // test/helpers/cpu-heavy.ts

const bin = join(repoRoot, 'bin/cairn.js');
const built = existsSync(join(repoRoot, 'dist/cli/main.js'));
const TRIALS = Number(process.env.CAIRN_CRASH_TRIALS ?? 4);
const SEED = Number(process.env.CAIRN_CRASH_SEED ?? 20261126);


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

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  ms: number;
}

function ingest(home: string, data: string, killAfterMs: number | null = null): Promise<Exit> {
  return new Promise((resolvePromise, reject) => {
    mkdirSync(home, { recursive: true });
    const started = performance.now();
    const child = spawn(process.execPath, [bin, '--home', home, 'ingest', data], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = killAfterMs === null ? null : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (timer) clearTimeout(timer);
      if (killAfterMs === null && code !== 0) reject(new Error(`ingest exited ${code}: ${stderr}`));
      else resolvePromise({ code, signal, ms: performance.now() - started });
    });
  });
}

interface Snapshot {
  memories: string[];
  turns: number;
  /** Every session fact with its packed occurrences (migration 017, in turn id order), sorted. */
  facts: string[];
  /** Occurrences that break the store's rules: refs not a non-empty JSON array, or naming a turn not stored in the fact's session. */
  brokenRefs: number;
}

/**
 * The live memories (kind, scope, project, text), sorted, and the number of turns stored. The
 * session a memory is credited to is left out: when copies say the same thing, the first session
 * distilled gets it, and a run killed mid-distillation has already distilled some.
 */
function snapshot(home: string): Snapshot {
  const path = join(home, 'cairn.db');
  if (!existsSync(path)) return { memories: [], turns: 0, facts: [], brokenRefs: 0 };
  // A copy: the original's WAL is left for the re-run to recover (test/helpers/db-copy.ts).
  return readDatabaseCopy(path, (db) => {
    // Killed before its schema was committed: the file exists and holds nothing yet.
    if (db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'memories'").get() === undefined) return { memories: [], turns: 0, facts: [], brokenRefs: 0 };
    const memories = db
      .prepare('SELECT kind, scope, project, text FROM memories WHERE deleted_at IS NULL AND valid_to IS NULL')
      .all()
      .map((row) => JSON.stringify(row))
      .sort();
    const hasTurns = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'turns'").get() !== undefined;
    const turns = hasTurns ? (db.prepare('SELECT COUNT(*) AS n FROM turns').get() as { n: number }).n : 0;
    const hasFacts = db.prepare("SELECT 1 FROM pragma_table_info('session_facts') WHERE name = 'refs'").get() !== undefined;
    if (!hasFacts) return { memories, turns, facts: [], brokenRefs: 0 };
    // Occurrences in turn id order: a fact's are packed in the order written, which a kill changes.
    const facts = db
      .prepare(
        `SELECT f.id, f.session_id, f.kind, f.text, f.path, f.line, (SELECT json_group_array(json(r.value) ORDER BY r.value ->> 0) FROM json_each(f.refs) r)
           FROM session_facts f`,
      )
      .raw()
      .all()
      .map((row) => JSON.stringify(row))
      .sort();
    const brokenRefs = (
      db
        .prepare(
          `SELECT (SELECT count(*) FROM session_facts WHERE NOT json_valid(refs) OR json_type(refs) <> 'array' OR json_array_length(refs) = 0)
                + (SELECT count(*) FROM session_facts f, json_each(f.refs) r
                    WHERE NOT EXISTS (SELECT 1 FROM turns t WHERE t.id = r.value ->> 0 AND t.session_id = f.session_id)) AS n`,
        )
        .get() as { n: number }
    ).n;
    return { memories, turns, facts, brokenRefs };
  });
}

describe.skipIf(!built)('ingest resumed after kill -9 leaves the memories of an uninterrupted run', () => {
  const root = tempDir('cairn-crash-');
  const data = process.env.CAIRN_CRASH_DATA ?? join(root, 'transcripts');
  let reference: Snapshot;
  let referenceMs = 0;

  beforeAll(async () => {
    if (process.env.CAIRN_CRASH_DATA === undefined) replicate(data, 8);
    const home = join(root, 'reference');
    referenceMs = (await ingest(home, data)).ms;
    reference = snapshot(home);
  }, 120_000);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it(`${TRIALS} kills at random points (seed ${SEED})`, async () => {
    expect(reference.memories.length).toBeGreaterThan(0);
    expect(reference.facts.length).toBeGreaterThan(0);
    expect(reference.brokenRefs).toBe(0);
    const random = mulberry32(SEED);
    const landed = { beforeWrites: 0, midIngest: 0, afterTurns: 0 };
    for (let trial = 0; trial < TRIALS; trial++) {
      const home = join(root, `trial-${trial}`);
      // Node's start-up is most of a small run: kill anywhere from 20% to 100% of its time.
      const at = Math.round(referenceMs * (0.2 + 0.8 * random()));
      const killed = await ingest(home, data, at);
      const after = snapshot(home);
      // Whatever a kill left is whole: every fact row has its occurrences, each in a stored turn.
      expect(after.brokenRefs, `trial ${trial}: killed at ${at} ms`).toBe(0);
      if (killed.signal === 'SIGKILL') {
        if (after.turns === 0) landed.beforeWrites++;
        else if (after.turns < reference.turns) landed.midIngest++;
        else landed.afterTurns++;
      }
      await ingest(home, data);
      const resumed = snapshot(home);
      expect(resumed.turns, `trial ${trial}: killed at ${at} ms`).toBe(reference.turns);
      const missing = reference.memories.filter((m) => !resumed.memories.includes(m));
      const extra = resumed.memories.filter((m) => !reference.memories.includes(m));
      expect({ trial, at, missing, extra }).toEqual({ trial, at, missing: [], extra: [] });
      // Facts and their occurrences as an uninterrupted run leaves them, occurrence for occurrence.
      expect(resumed.brokenRefs).toBe(0);
      expect(resumed.facts, `trial ${trial}: killed at ${at} ms`).toEqual(reference.facts);
      rmSync(home, { recursive: true, force: true });
    }
    // The figures for docs/RELIABILITY.md when run by hand.
    console.info(`crash-resume: ${TRIALS} kills (${JSON.stringify(landed)}), reference ${reference.memories.length} memories, ${reference.turns} turns, ${Math.round(referenceMs)} ms, data ${relative(repoRoot, data)}`);
  }, 600_000);
});

describe('the register of runs that wrote turns', () => {
  it('a run whose process is gone is crashed; a live one is not; release removes only the ids given', async () => {
    const { crashedRuns, readRuns, registerRun, releaseRuns, RUNS_KEY } = await import('../../src/history/resume.js');
    const state = new Map<string, string>();
    const store = { getState: async (k: string) => state.get(k) ?? null, setState: async (k: string, v: string) => void state.set(k, v) };
    await registerRun(store, { id: 'a', pid: process.pid, at: 1 });
    await registerRun(store, { id: 'b', pid: 999_999_999, at: 2 });
    expect((await readRuns(store)).map((r) => r.id)).toEqual(['a', 'b']);
    expect(crashedRuns(await readRuns(store)).map((r) => r.id)).toEqual(['b']);
    expect(crashedRuns(await readRuns(store), () => true)).toEqual([]);
    await releaseRuns(store, new Set(['b']));
    expect((await readRuns(store)).map((r) => r.id)).toEqual(['a']);
    await releaseRuns(store, new Set(['a']));
    expect(state.get(RUNS_KEY)).toBe('');
    state.set(RUNS_KEY, '{not json');
    expect(crashedRuns(await readRuns(store)).length).toBe(1);
  });
});
