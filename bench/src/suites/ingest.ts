/**
 * `ingest`: transcript throughput of the public ingest path (`cairn ingest`, distillation off)
 * over the real transcripts of `<data>/transcripts`, replicated to at least 500 MB with fresh
 * session ids, uuids and paths per copy so nothing deduplicates, next to a bare read +
 * `JSON.parse`-every-line loop over the same files in the same run; the CPU cores the ingest kept
 * busy; and the time to re-ingest an unchanged set of 1,000 files. `--quick` uses one copy.
 * The replica lives in a temporary folder under the bench cache and is deleted afterwards.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, extname, join, relative } from 'node:path';
import { type IngestSummary, createCairn, openSqliteStore } from 'cairn-memory';
import { expandTranscriptPaths } from 'cairn-memory/testing';
import { atLeast, atMost, metric } from '../metrics.js';
import { suiteSpec } from '../spec.js';
import { round, summarize } from '../stats.js';
import type { BenchContext, Dataset, Metric, Suite, SuiteOutcome } from '../types.js';

const ANCHOR = suiteSpec('ingest')?.anchor ?? null;
const TARGET_MB_S = 250;
const TARGET_RATIO = 0.5;
const TARGET_REINGEST_MS = 100;
const FULL_BYTES = 500e6;
const REINGEST_FILES = 1000;
/** Files of the re-ingest set are cut to their first lines up to this size (the cost is per file). */
const REINGEST_FILE_BYTES = 32 * 1024;

interface SourceFile {
  rel: string;
  text: string;
}

interface Replica {
  dir: string;
  copies: number;
  files: string[];
  bytes: number;
  buildMs: number;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const AIDER_STARTED = /^(# aider chat started at )(\d{4})/gm;
/** Session ids that are not uuids: Claude Code / Gemini `sessionId`, Codex `session_meta` ids. */
const SESSION_ID = /("(?:sessionId|session_id)"\s*:\s*"|"type"\s*:\s*"session_meta"\s*,\s*"payload"\s*:\s*\{\s*"id"\s*:\s*")([^"]*)"/g;

/** The transcript-like files under `root` (what ingest looks at), in a stable order, and their hash. */
function readSource(root: string): { files: SourceFile[]; bytes: number; sha256: string } {
  const hash = createHash('sha256');
  const files: SourceFile[] = [];
  let bytes = 0;
  const found = expandTranscriptPaths([root]).files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const file of found) {
    const content = readFileSync(file.path);
    const rel = relative(root, file.path);
    hash.update(`${rel}\0${content.length}\0`).update(content);
    files.push({ rel, text: content.toString('utf8') });
    bytes += content.length;
  }
  return { files, bytes, sha256: hash.digest('hex') };
}

/**
 * Copy `k` of a source file: every uuid gets a copy-specific prefix (session ids, message uuids,
 * file names), other session ids a suffix, Aider sessions start `k` years later (their ids come
 * from the start time), and the path gets a copy folder and a suffix (Cursor and generic logs
 * take ids from the path). The suite checks that no turn of one copy collides with another's.
 */
function copyOf(file: SourceFile, k: number): { rel: string; text: string } {
  const tag = k.toString(16).padStart(4, '0');
  const swap = (s: string): string => s.replace(UUID, (uuid) => tag + uuid.slice(4));
  const text = swap(file.text)
    .replace(AIDER_STARTED, (_m, head: string, year: string) => `${head}${Number(year) + k}`)
    .replace(SESSION_ID, (_m, key: string, id: string) => `${key}${id}-r${tag}"`);
  const rel = swap(file.rel);
  const ext = rel.endsWith('.aider.chat.history.md') ? '.aider.chat.history.md' : extname(rel);
  return { rel: join(`copy-${tag}`, `${rel.slice(0, rel.length - ext.length)}-r${tag}${ext}`), text };
}

/** `copies` copies of `files` under `dir`: the first {@link REINGEST_FILES} written go under `a/`, the rest under `b/`. */
function writeReplica(dir: string, files: SourceFile[], copies: number, transform: (file: SourceFile, k: number) => SourceFile = copyOf): Replica {
  const started = performance.now();
  const written: string[] = [];
  let bytes = 0;
  for (let k = 0; k < copies; k++) {
    for (const file of files) {
      const copy = transform(file, k);
      const path = join(dir, written.length < REINGEST_FILES ? 'a' : 'b', copy.rel);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, copy.text);
      written.push(path);
      bytes += statSync(path).size;
    }
  }
  return { dir, copies, files: written, bytes, buildMs: performance.now() - started };
}

/** The first lines of `text` up to `max` bytes (at least one line). */
function head(text: string, max: number): string {
  if (Buffer.byteLength(text) <= max) return text;
  const cut = text.lastIndexOf('\n', max);
  return cut > 0 ? text.slice(0, cut + 1) : text.slice(0, text.indexOf('\n') + 1 || text.length);
}

/**
 * The baseline: read every file and `JSON.parse` every line that can be JSON (lines starting
 * with `{` or `[`; Aider's Markdown has none), in one thread. Returns the values parsed.
 */
function bareLoop(files: string[]): number {
  let parsed = 0;
  for (const path of files) {
    const text = readFileSync(path, 'utf8');
    let start = 0;
    while (start < text.length) {
      let end = text.indexOf('\n', start);
      if (end < 0) end = text.length;
      const c = text.charCodeAt(start);
      if (c === 123 || c === 91) {
        try {
          JSON.parse(text.slice(start, end));
          parsed++;
        } catch {
          // a partial or non-JSON line: the readers count those too
        }
      }
      start = end + 1;
    }
  }
  return parsed;
}

interface IngestRun {
  ms: number;
  cpuMs: number;
  summary: IngestSummary;
  storedTurns: number;
}

/**
 * One `cairn ingest` of `paths` into a fresh store in `dir` (distillation off), timed as a whole;
 * then, when asked, `again.times` timed ingests of the unchanged `again.paths`.
 */
async function timedIngest(dir: string, paths: string[], again: { paths: string[]; times: number } | null = null): Promise<{ first: IngestRun; again: number[] }> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const store = await openSqliteStore(join(dir, 'cairn.db'));
  try {
    const cairn = createCairn({ store, actor: 'bench' });
    const cpu = process.cpuUsage();
    const started = performance.now();
    const summary = await cairn.ingest(paths, { distill: false });
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const storedTurns = (await store.substrate?.substrateStats())?.turns ?? 0;
    const times: number[] = [];
    for (let i = 0; i < (again?.times ?? 0); i++) {
      const t = performance.now();
      const second = await cairn.ingest(again?.paths ?? paths, { distill: false });
      times.push(performance.now() - t);
      if (second.filesChanged !== 0 || second.turns !== 0) throw new Error(`re-ingest of an unchanged set read ${second.filesChanged} files`);
    }
    return { first: { ms, cpuMs: (used.user + used.system) / 1000, summary, storedTurns }, again: times };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (values: number[]): number => summarize(values).p50;
const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;

export const ingestSuite: Suite = {
  name: 'ingest',
  description: `transcript throughput of cairn ingest over the real transcripts replicated to ≥ 500 MB (fresh ids), against a bare read + JSON.parse loop; cores used; unchanged re-ingest of ${REINGEST_FILES.toLocaleString('en-US')} files`,
  async run(ctx: BenchContext): Promise<SuiteOutcome> {
    const root = join(ctx.dataDir, 'transcripts');
    let isDir = false;
    try {
      isDir = statSync(root).isDirectory();
    } catch {
      // reported below
    }
    if (!isDir) return { status: 'skipped', reason: `no transcripts at ${root} (pass --data DIR, the shared data folder)` };
    const source = readSource(root);
    if (source.files.length === 0 || source.bytes === 0) return { status: 'skipped', reason: `no transcript files under ${root}` };

    const work = join(ctx.cacheDir, 'work', `ingest-${process.pid}-${randomBytes(4).toString('hex')}`);
    const load = [loadavg()];
    try {
      const copies = ctx.quick ? 1 : Math.ceil(FULL_BYTES / source.bytes);
      ctx.log(`ingest: replicating ${source.files.length} files (${mb(source.bytes)}) ×${copies}`);
      const replica = writeReplica(join(work, 'replica'), source.files, copies);
      const cores = availableParallelism();
      const reps = ctx.quick ? 1 : 3;

      // Nothing may deduplicate: every copy must store as many turns as one copy alone.
      const oneCopy = await timedIngest(join(work, 'db-one'), [join(replica.dir, 'a', 'copy-0000')]);
      // The unchanged re-ingest: the replica's first 1,000 files, whole, after the last run; a
      // quick replica is smaller, so then 1,000 real files cycled with fresh ids, cut to their first lines.
      const wholeFiles = replica.files.length >= REINGEST_FILES;
      const againTimes = ctx.quick ? 3 : 7;
      let unchanged: number[] = [];

      const bare: number[] = [];
      const runs: IngestRun[] = [];
      for (let rep = 0; rep < reps; rep++) {
        ctx.log(`ingest: run ${rep + 1}/${reps}: bare loop, then cairn ingest of ${mb(replica.bytes)}`);
        const started = performance.now();
        bareLoop(replica.files);
        bare.push(performance.now() - started);
        const again = wholeFiles && rep === reps - 1 ? { paths: [join(replica.dir, 'a')], times: againTimes } : null;
        if (again !== null) ctx.log(`ingest: re-ingesting the unchanged first ${REINGEST_FILES} files`);
        const run = await timedIngest(join(work, 'db'), [replica.dir], again);
        runs.push(run.first);
        if (again !== null) unchanged = run.again;
      }
      const mbPerS = (ms: number): number => replica.bytes / 1e6 / (ms / 1000);
      const ingestMbS = median(runs.map((r) => mbPerS(r.ms)));
      const bareMbS = median(bare.map(mbPerS));
      const busy = median(runs.map((r) => r.cpuMs / r.ms));
      const workers = Math.max(...runs.map((r) => r.summary.workers));
      const last = runs[runs.length - 1] as IngestRun;
      const dedup = last.storedTurns / (copies * oneCopy.first.storedTurns);

      let reSet: Replica = { ...replica, files: replica.files.slice(0, REINGEST_FILES), buildMs: 0 };
      let unchangedFirstMs: number | null = null;
      if (!wholeFiles) {
        const cycles = Math.ceil(REINGEST_FILES / source.files.length);
        reSet = writeReplica(join(work, 'unchanged'), source.files, cycles, (file, k) => {
          const copy = copyOf(file, k);
          return { rel: copy.rel, text: head(copy.text, REINGEST_FILE_BYTES) };
        });
        ctx.log(`ingest: re-ingesting an unchanged set of ${REINGEST_FILES} files (cut to ≤ ${REINGEST_FILE_BYTES / 1024} KB)`);
        const re = await timedIngest(join(work, 'db-unchanged'), [join(reSet.dir, 'a')], { paths: [join(reSet.dir, 'a')], times: againTimes });
        unchanged = re.again;
        unchangedFirstMs = re.first.ms;
      }
      const reFiles = reSet.files.slice(0, REINGEST_FILES);
      const reBytes = reFiles.reduce((sum, path) => sum + statSync(path).size, 0);
      load.push(loadavg());

      const cpuNote = `CPU time of all threads / wall time; ${workers} reader worker${workers === 1 ? '' : 's'} on ${cores} cores`;
      const metrics: Metric[] = [
        metric(`ingest throughput (median of ${reps})`, ingestMbS, 'MB/s', { target: atLeast(TARGET_MB_S), anchor: ANCHOR, note: `${mb(replica.bytes)}, ${replica.files.length.toLocaleString('en-US')} files` }),
        metric('bare read + JSON.parse loop', bareMbS, 'MB/s', { note: 'one thread, same files, same run' }),
        metric('ingest / bare loop', ingestMbS / bareMbS, 'share', { target: atLeast(TARGET_RATIO) }),
        metric('cores busy during ingest', busy, 'cores', { target: cores >= 2 ? atLeast(1.5) : null, note: cpuNote }),
        metric(`unchanged re-ingest, ${REINGEST_FILES.toLocaleString('en-US')} files (p50)`, median(unchanged), 'ms', {
          target: atMost(TARGET_REINGEST_MS),
          note: `${unchanged.length} runs, ${mb(reBytes)}${wholeFiles ? ', whole replica files' : `, files cut to ≤ ${REINGEST_FILE_BYTES / 1024} KB`}`,
        }),
        metric('turns stored / (copies × one copy)', dedup, 'share', { target: atLeast(1), note: `${last.storedTurns.toLocaleString('en-US')} turns; nothing deduplicated or dropped` }),
      ];
      const datasets: Dataset[] = [
        { name: `transcripts ×${copies} (${mb(replica.bytes)}, ${replica.files.length} files, fresh ids per copy)`, sha256: source.sha256, generator: null, buildMs: replica.buildMs, cachedBuildMs: null },
        ...(wholeFiles ? [] : [{ name: `unchanged set (${REINGEST_FILES} files, ${mb(reBytes)}, cut to ≤ ${REINGEST_FILE_BYTES / 1024} KB)`, sha256: source.sha256, generator: null, buildMs: reSet.buildMs, cachedBuildMs: null }]),
      ];
      return {
        status: 'ok',
        datasets,
        metrics,
        details: {
          source: { root, files: source.files.length, bytes: source.bytes, sha256: source.sha256 },
          replica: { copies, files: replica.files.length, bytes: replica.bytes, buildMs: round(replica.buildMs) },
          cores,
          workers,
          loadAverage: { before: load[0], after: load[1] },
          bareLoop: { definition: 'readFileSync(utf8), then JSON.parse of every line starting with { or [, one thread', ms: bare.map((v) => round(v)) },
          ingest: runs.map((r) => ({
            ms: round(r.ms),
            cpuMs: round(r.cpuMs),
            mbPerSecond: round(mbPerS(r.ms)),
            files: r.summary.files,
            filesChanged: r.summary.filesChanged,
            sessions: r.summary.sessions,
            turns: r.summary.turns,
            storedTurns: r.storedTurns,
            badLines: r.summary.badLines,
            skipped: r.summary.skipped,
            workers: r.summary.workers,
          })),
          oneCopy: { turns: oneCopy.first.storedTurns, ms: round(oneCopy.first.ms) },
          unchanged: { files: reFiles.length, bytes: reBytes, wholeFiles, firstMs: unchangedFirstMs === null ? null : round(unchangedFirstMs), againMs: unchanged.map((v) => round(v)) },
        },
      };
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  },
};
