/**
 * The incremental ingest runner: expands paths to transcript files, skips files whose size and
 * mtime match their cursor, reads the rest from their cursors and writes each reader pass with
 * its new cursor in one store transaction. Re-running it adds nothing; a transcript deleted from
 * disk keeps its history; bad input never throws (it is counted, with file and line).
 */
import { lstatSync, readdirSync, realpathSync, statSync, type Stats } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Clock, IngestCursor, Logger, SubstrateBatch, SubstrateStore } from '../types.js';
import { tuneJitForIngest } from './inlining.js';
import { readWithTerms } from './pool.js';
import { IN_FLIGHT_BYTES, LANES_PER_WORKER, byteBudget, gatheredWrites, startPool, warmUpHere, type WorkerOptions } from './schedule.js';
import { emptyOutcomes, type LineOutcomes, type ReadOptions, type ReadResult } from './types.js';

export { WORKERS_MIN_BYTES, type WorkerOptions } from './schedule.js';

/** Progress after each file. */
export interface IngestProgress {
  filesDone: number;
  filesTotal: number;
  bytesDone: number;
  /** Bytes still to read when the run started (changed files only). */
  bytesTotal: number;
}

export interface IngestDeps {
  substrate: SubstrateStore;
  clock: Clock;
  logger: Logger;
  onProgress?: (progress: IngestProgress) => void;
  /**
   * Project identity for a session's working directory (e.g. the git repository).
   * @default the working directory itself
   */
  resolveProject?: (cwd: string) => string | null;
  /** Reader limits (tests use small ones). */
  read?: Pick<ReadOptions, 'maxBytes' | 'maxLineBytes'>;
  /**
   * Reads one file from its cursor. When given, it is used as is (and `workers` is ignored).
   * @default readTranscript in this thread, or in worker threads for a large run (see `workers`)
   */
  reader?: TranscriptReader;
  /**
   * Files in flight at once: several workers read while this thread writes, and the passes that
   * finish together are committed together (see `SubstrateStore.writeSubstrate`).
   * @default 4; with the worker pool, 32 per worker (each worker holds several MB of files queued)
   */
  concurrency?: number;
  /**
   * Worker threads for a large run: when the changed files hold at least `minBytes`, they are
   * parsed and tokenized by a pool of `size` workers (see pool.ts) while this thread writes;
   * a smaller run — a hook's one transcript — stays in this thread and pays no start-up.
   * `false`: always in this thread. Runs from TypeScript sources (no built worker script) stay
   * in this thread too.
   * @default { minBytes: 128 MiB, size: os.availableParallelism() up to 4, one per 64 MiB } (see schedule.ts)
   */
  workers?: false | WorkerOptions;
}

/** The shape of {@link readTranscript}, possibly asynchronous (e.g. backed by a worker pool). */
export type TranscriptReader = (path: string, cursor: IngestCursor | null, options: ReadOptions) => ReadResult | Promise<ReadResult>;

/** What one run did. Counts are for this run; `turns` are the turns newly stored. */
export interface IngestSummary {
  /** Candidate files found under the paths. */
  files: number;
  /** Files read because they were new or changed. */
  filesChanged: number;
  /** Distinct sessions that received something. */
  sessions: number;
  /** Turns newly stored. */
  turns: number;
  /** Tool calls read. */
  toolCalls: number;
  corrections: number;
  compactions: number;
  /** Lines read (blank ones included). */
  lines: number;
  /** What became of them: every line read is stored, bad, of an unknown type, injected context, or passed over with a reason. */
  outcomes: LineOutcomes;
  /** Malformed lines passed over. */
  badLines: number;
  /** Up to 50 of them, with file and line number. */
  badLineSamples: Array<{ path: string; line: number; reason: string }>;
  /** Line types no reader knows, with counts. */
  unknownTypes: Record<string, number>;
  /** Files passed over (not a transcript, unreadable), with up to 50 reasons. */
  skipped: number;
  skippedSamples: Array<{ path: string; reason: string }>;
  /** Secrets redacted, by kind. */
  redactions: Record<string, number>;
  /** Session fact occurrences extracted (paths, commands, errors … from the full text of the turns read). */
  facts: number;
  /** Facts redacted or dropped because a secret overlapped them. */
  factsRedacted: number;
  /** Bytes read. */
  bytes: number;
  seconds: number;
  /** Read throughput in MB/s (10^6 bytes). */
  mbPerSecond: number;
  /** Worker threads that read this run; 0 when it was read in this thread (or by a given `reader`). */
  workers: number;
}

const MAX_SAMPLES = 50;

function addOutcomes(into: LineOutcomes, from: LineOutcomes | undefined): void {
  if (from === undefined) return;
  into.stored += from.stored;
  into.bad += from.bad;
  into.unknown += from.unknown;
  into.meta += from.meta;
  for (const [reason, n] of Object.entries(from.passed)) into.passed[reason] = (into.passed[reason] ?? 0) + n;
}

/**
 * The agents' standard transcript folders that exist on this machine. Aider keeps one history
 * per repository, so it is only read when given explicitly.
 * @example defaultTranscriptRoots(process.env, os.homedir())
 */
export function defaultTranscriptRoots(env: Record<string, string | undefined>, home: string): string[] {
  const claude = env.CLAUDE_CONFIG_DIR !== undefined && env.CLAUDE_CONFIG_DIR.length > 0 ? env.CLAUDE_CONFIG_DIR : join(home, '.claude');
  const codex = env.CODEX_HOME !== undefined && env.CODEX_HOME.length > 0 ? env.CODEX_HOME : join(home, '.codex');
  const candidates = [join(claude, 'projects'), join(codex, 'sessions'), join(home, '.gemini', 'tmp'), join(home, '.cursor', 'projects')];
  return candidates.filter((dir) => {
    try {
      return statSync(dir).isDirectory();
    } catch {
      return false;
    }
  });
}

/** A transcript candidate with the stat the skip decision is made on. */
export interface TranscriptFile {
  path: string;
  size: number;
  mtimeMs: number;
}

/** Whether a file found while walking a folder may be a transcript. */
function isCandidate(name: string): boolean {
  if (name.endsWith('.jsonl')) return true;
  if (name.endsWith('.json')) return true;
  if (name.endsWith('.md')) return name.endsWith('.aider.chat.history.md') || /chat.?history/i.test(name);
  return false;
}

const SKIP_DIRS = new Set(['node_modules', '.git']);

/**
 * Files under `paths`: folders are walked (transcript-like names only), files given explicitly
 * are taken as they are. Paths that cannot be read are reported, not thrown.
 */
export function expandTranscriptPaths(paths: string[]): { files: TranscriptFile[]; skipped: Array<{ path: string; reason: string }> } {
  const files: TranscriptFile[] = [];
  const skipped: Array<{ path: string; reason: string }> = [];
  const seen = new Set<string>();
  const add = (path: string, stat: Stats): void => {
    if (seen.has(path)) return;
    seen.add(path);
    files.push({ path, size: stat.size, mtimeMs: stat.mtimeMs });
  };
  const walk = (dir: string): void => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (error) {
      skipped.push({ path: dir, reason: `cannot list: ${(error as NodeJS.ErrnoException).code ?? String(error)}` });
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIP_DIRS.has(entry.name)) walk(path);
        continue;
      }
      if (!isCandidate(entry.name)) continue;
      if (!entry.isFile() && !entry.isSymbolicLink()) continue;
      try {
        const stat = statSync(path);
        if (stat.isFile()) add(path, stat);
      } catch (error) {
        skipped.push({ path, reason: `cannot stat: ${(error as NodeJS.ErrnoException).code ?? String(error)}` });
      }
    }
  };
  for (const given of paths) {
    let path = resolve(given);
    try {
      path = realpathSync(path);
    } catch {
      // Reported below by stat.
    }
    let stat: Stats;
    try {
      stat = lstatSync(path).isSymbolicLink() ? statSync(path) : lstatSync(path);
    } catch (error) {
      skipped.push({ path, reason: `cannot stat: ${(error as NodeJS.ErrnoException).code ?? String(error)}` });
      continue;
    }
    if (stat.isDirectory()) walk(path);
    else if (stat.isFile()) add(path, stat);
    else skipped.push({ path, reason: 'not a regular file or folder' });
  }
  return { files, skipped };
}

/**
 * Ingest every transcript under `paths` into `deps.substrate`, incrementally.
 * @example
 * const summary = await ingestPaths(defaultTranscriptRoots(process.env, homedir()), { substrate, clock, logger });
 */
export async function ingestPaths(paths: string[], deps: IngestDeps): Promise<IngestSummary> {
  const started = performance.now();
  const { substrate, logger } = deps;
  const summary: IngestSummary = {
    files: 0,
    filesChanged: 0,
    sessions: 0,
    turns: 0,
    toolCalls: 0,
    corrections: 0,
    compactions: 0,
    lines: 0,
    outcomes: emptyOutcomes(),
    badLines: 0,
    badLineSamples: [],
    unknownTypes: {},
    skipped: 0,
    skippedSamples: [],
    redactions: {},
    facts: 0,
    factsRedacted: 0,
    bytes: 0,
    seconds: 0,
    mbPerSecond: 0,
    workers: 0,
  };
  const skip = (path: string, reason: string): void => {
    summary.skipped++;
    if (summary.skippedSamples.length < MAX_SAMPLES) summary.skippedSamples.push({ path, reason });
  };

  const expanded = expandTranscriptPaths(paths);
  for (const { path, reason } of expanded.skipped) skip(path, reason);
  summary.files = expanded.files.length;

  // Decide what changed from the stat alone; an unchanged file costs one cursor lookup.
  const work: Array<{ file: TranscriptFile; cursor: IngestCursor | null }> = [];
  let bytesTotal = 0;
  for (const file of expanded.files) {
    const cursor = await substrate.getCursor(file.path);
    if (cursor !== null && cursor.size === file.size && cursor.mtimeMs === file.mtimeMs) continue;
    work.push({ file, cursor });
    bytesTotal += Math.max(0, file.size - (cursor !== null && cursor.offset <= file.size ? cursor.offset : 0));
  }

  const projects = new Map<string, string | null>();
  const projectOf = (cwd: string | null): string | null => {
    if (cwd === null) return null;
    let project = projects.get(cwd);
    if (project === undefined) {
      try {
        project = deps.resolveProject ? deps.resolveProject(cwd) : cwd;
      } catch (error) {
        logger.warn('ingest: cannot resolve project', { cwd, error: String(error) });
        project = cwd;
      }
      projects.set(cwd, project);
    }
    return project;
  };

  const sessions = new Set<string>();
  // A boundary read in one pass and its summary in the next are one compaction.
  const compactions = new Set<string>();
  // Set before the workers start (V8's flags are the process's): see inlining.ts.
  const restoreJit = work.length > 0 ? tuneJitForIngest() : () => {};
  const pool = deps.reader === undefined ? startPool(deps.workers, deps.logger, bytesTotal, work.length) : null;
  // Read here: the turns and facts come sealed, as from the workers (seal.ts); a given reader's do not.
  const read: TranscriptReader = deps.reader ?? pool?.read ?? ((path, cursor, options) => readWithTerms({ path, cursor, options, terms: false }));
  // A large run read here warms the readers up first, as a worker does (schedule.ts).
  if (deps.reader === undefined && pool === null) warmUpHere(bytesTotal);
  const concurrency = deps.concurrency ?? (pool !== null ? LANES_PER_WORKER * pool.size : 4);
  // Workers finish one file at a time: gathering their batches for a moment lets the store commit
  // several at once. Files read here finish together anyway (the lanes read in the same tick).
  const write = pool !== null ? gatheredWrites(substrate, undefined, () => pool.pending()) : (batch: SubstrateBatch) => substrate.writeSubstrate(batch);
  summary.workers = pool?.size ?? 0;
  const budget = byteBudget(IN_FLIGHT_BYTES);
  const maxPass = deps.read?.maxBytes ?? 64 * 1024 * 1024;
  let filesDone = 0;
  let bytesDone = 0;

  const ingestFile = async (file: TranscriptFile, initial: IngestCursor | null): Promise<void> => {
    let cursor = initial;
    let changed = false;
    let held = 0;
    try {
      for (;;) {
        held = Math.max(1, Math.min(maxPass, file.size - (cursor !== null && cursor.offset <= file.size ? cursor.offset : 0)));
        await budget.take(held);
        const result = await read(file.path, cursor, { now: deps.clock.now(), ...deps.read });
        if (result.skipped !== undefined) skip(file.path, result.skipped);
        const { batch, stats } = result;
        for (const session of batch.sessions) {
          session.project = projectOf(session.cwd);
          sessions.add(session.id);
        }
        if (batch.cursor !== null) {
          const { turnsAdded } = await write(batch);
          summary.turns += turnsAdded;
        }
        budget.give(held);
        held = 0;
        if (result.skipped === undefined) changed = true;
        summary.bytes += stats.bytes;
        bytesDone += stats.bytes;
        for (const turn of batch.turns) if (turn.role === 'tool_call') summary.toolCalls++;
        summary.corrections += batch.corrections.length;
        for (const compaction of batch.compactions) compactions.add(compaction.id);
        summary.lines += stats.lines;
        addOutcomes(summary.outcomes, stats.outcomes);
        summary.badLines += stats.badLines.length;
        for (const bad of stats.badLines) {
          if (summary.badLineSamples.length >= MAX_SAMPLES) break;
          summary.badLineSamples.push({ path: file.path, line: bad.line, reason: bad.reason });
        }
        for (const [type, count] of Object.entries(stats.unknownTypes)) summary.unknownTypes[type] = (summary.unknownTypes[type] ?? 0) + count;
        for (const [kind, count] of Object.entries(stats.redactions)) summary.redactions[kind] = (summary.redactions[kind] ?? 0) + count;
        summary.facts += stats.facts;
        summary.factsRedacted += stats.factsRedacted;
        const next = batch.cursor;
        if (result.done || next === null || (cursor !== null && next.offset <= cursor.offset && !result.restarted)) break;
        cursor = next;
      }
    } catch (error) {
      // The store refused a write (disk full, locked for too long…) or a reader worker died:
      // report it, go on with the other files. The file's cursor is unchanged, so it is retried.
      logger.error('ingest: cannot ingest file', { path: file.path, error: String(error) });
      skip(file.path, `error: ${error instanceof Error ? error.message : String(error)}`);
      budget.give(held);
    }
    if (changed) summary.filesChanged++;
    filesDone++;
    deps.onProgress?.({ filesDone, filesTotal: work.length, bytesDone, bytesTotal });
  };

  // Files are independent (each pass is written atomically): with an asynchronous reader
  // (worker threads), several are read at once while the store writes the finished ones.
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < work.length) {
      const item = work[next++] as (typeof work)[number];
      await ingestFile(item.file, item.cursor);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, work.length)) }, lane));
  } finally {
    await pool?.close();
    restoreJit();
  }

  summary.sessions = sessions.size;
  summary.compactions = compactions.size;
  summary.seconds = (performance.now() - started) / 1000;
  summary.mbPerSecond = summary.seconds > 0 ? summary.bytes / 1e6 / summary.seconds : 0;
  return summary;
}
