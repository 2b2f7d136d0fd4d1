/**
 * How a large ingest run uses the cores: a pool of reader workers (pool.ts) when the changed
 * files are big enough to repay starting it, how many files are in flight, a byte budget that
 * bounds the memory they hold, and the gathering of finished batches so the store commits
 * several at once. The runner (runner.ts) decides what to read; this decides how.
 */
import { availableParallelism } from 'node:os';
import type { Logger, SubstrateBatch, SubstrateStore } from '../types.js';
import { createReaderPool, defaultWorkerUrl, workerScriptExists, type ReaderPool } from './pool.js';
import { warmUpReaders } from './warmup.js';

/** Worker threads for a large run (`IngestDeps.workers`). */
export interface WorkerOptions {
  /** @default 128 MiB ({@link WORKERS_MIN_BYTES}) */
  minBytes?: number;
  /**
   * Changed bytes per worker.
   * @default 64 MiB ({@link WORKER_BYTES}); `minBytes` when only that is given
   */
  bytesPerWorker?: number;
  /** @default os.availableParallelism(), up to 4, and one per `bytesPerWorker` of changed bytes */
  size?: number;
  /** The worker script. @default worker.js beside pool.js */
  url?: URL;
  /** Reads queued in one worker at most. @default 64 (see pool.ts) */
  depth?: number;
  /** Bytes queued in one worker before it is given no more. @default 4 MiB (see pool.ts) */
  queuedBytes?: number;
}

/**
 * Below this many changed bytes a run is read in this thread. A worker costs its start-up (~0.2 s of CPU: its modules and warm-up), the compiling
 * of the readers again in its isolate (~0.3 s more over its first files) and the structured clone
 * of every batch both ways, while the writing thread, which the reading would otherwise keep
 * busy, sits idle most of the run: reading takes about twice the CPU of writing. Over ../shared's
 * transcripts (21 MB) and three and five copies of them (62 and 108 MB) on 2 cores, reading in
 * this thread (warmed up: {@link WARM_MIN_BYTES}) used less CPU and less wall time than one worker
 * or two; over ten copies (216 MB) two workers took less wall time (docs/BENCHMARKS.md, ingest
 * notes, thirteenth round).
 */
export const WORKERS_MIN_BYTES = 128 * 1024 * 1024;

/**
 * Changed bytes per worker above {@link WORKERS_MIN_BYTES}, so a pool starts with two workers
 * where there are two cores: one worker alone pays the start-up and the clone and leaves the
 * writing thread idle, and lost to reading here at 108 MB in CPU and wall.
 */
export const WORKER_BYTES = 64 * 1024 * 1024;

/**
 * A run read in this thread of at least this many changed bytes warms the readers up first, as a
 * worker does (warmup.ts: ~0.1 s of CPU, repaid by fewer deopts and recompiles over a few MB).
 * A smaller run — a hook's one transcript — does not pay it.
 */
export const WARM_MIN_BYTES = 4 * 1024 * 1024;

/**
 * Warm this thread's readers up for a run of `bytes` changed bytes read here, when it is large
 * enough ({@link WARM_MIN_BYTES}). `warmUp` is warmup.ts's (tests pass a recorder).
 * @returns whether it warmed up
 */
export function warmUpHere(bytes: number, minBytes: number = WARM_MIN_BYTES, warmUp: () => unknown = warmUpReaders): boolean {
  if (bytes < minBytes) return false;
  warmUp();
  return true;
}


/** The worker pool for a run large enough to repay its start-up, or null to read in this thread. */
export function startPool(workers: false | WorkerOptions | undefined, logger: Logger, bytes: number, files: number): ReaderPool | null {
  if (workers === false || files === 0) return null;
  const options = workers ?? {};
  const minBytes = options.minBytes ?? WORKERS_MIN_BYTES;
  if (bytes < minBytes) return null;
  const url = options.url ?? defaultWorkerUrl();
  if (!workerScriptExists(url)) {
    logger.debug('ingest: no built worker script, reading in this thread', { url: url.href });
    return null;
  }
  // One worker per core up to 4 (one thread writes, at about what 2–3 workers read), never more
  // than files, and one per `bytesPerWorker` of changed bytes: each worker loads and warms up its
  // own copy of the readers and compiles them again in its own isolate (~0.5 s of CPU).
  const perWorker = options.bytesPerWorker ?? options.minBytes ?? WORKER_BYTES;
  const perBytes = perWorker > 0 ? Math.floor(bytes / perWorker) : Number.POSITIVE_INFINITY;
  const size = Math.max(1, Math.min(options.size ?? Math.min(availableParallelism(), MAX_WORKERS, perBytes), files));
  return createReaderPool({
    size,
    workerUrl: url,
    logger,
    ...(options.depth !== undefined ? { depth: options.depth } : {}),
    ...(options.queuedBytes !== undefined ? { queuedBytes: options.queuedBytes } : {}),
  });
}

/**
 * Files in flight per worker: enough for the reads queued in it (pool.ts queues ~4 MiB, a dozen
 * typical files) and the batches read but not yet committed. Memory is bounded by IN_FLIGHT_BYTES.
 */
export const LANES_PER_WORKER = 32;
/** Default pool size cap: the single writing thread keeps up with about 2–3 reading workers. */
const MAX_WORKERS = 4;
/** Bytes of passes read but not yet written, across lanes (bounds memory with many lanes over big files). */
export const IN_FLIGHT_BYTES = 256 * 1024 * 1024;

/** A byte count shared by the lanes; a pass larger than the whole budget still runs alone. */
export function byteBudget(limit: number): { take(n: number): Promise<void>; give(n: number): void } {
  let used = 0;
  let waiting: Array<() => void> = [];
  return {
    async take(n) {
      while (used > 0 && used + n > limit) await new Promise<void>((wake) => waiting.push(wake));
      used += n;
    },
    give(n) {
      used -= n;
      const woken = waiting;
      waiting = [];
      for (const wake of woken) wake();
    },
  };
}

/**
 * How long pooled reads' batches are gathered, while more reads are under way, before they are
 * handed to the store together. Each commit costs the writing thread more than its rows (SQLite's
 * full-text index writes a segment per transaction and merges them): over ../shared's 21 MB with
 * one worker, 20 ms made 8–16 commits a run and 250 ms 4–7, and the writing thread's CPU went
 * from ~800 to ~700 ms (docs/BENCHMARKS.md, ingest notes, tenth round).
 */
export const GATHER_MS = 250;
/** Text (chars) after which gathered batches are handed over at once. */
const GATHER_CHARS = 4_000_000;

/**
 * `substrate.writeSubstrate`, but calls arriving within `ms` of each other are made in the same
 * tick, so a store that commits same-tick writes together (SQLite) makes one transaction of them.
 * Each call still settles with its own batch's outcome. When `readsPending` says nothing more is
 * being read (the run's last file, or every lane waiting on its write), what is gathered is
 * written at once: waiting could only delay the run.
 */
export function gatheredWrites(
  substrate: SubstrateStore,
  ms: number = GATHER_MS,
  readsPending: () => number = () => 1,
): (batch: SubstrateBatch) => Promise<{ turnsAdded: number }> {
  let waiting: Array<{ batch: SubstrateBatch; resolve(result: { turnsAdded: number }): void; reject(error: unknown): void }> = [];
  let chars = 0;
  let timer: NodeJS.Timeout | null = null;
  const release = (): void => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    const group = waiting;
    waiting = [];
    chars = 0;
    for (const w of group) {
      try {
        substrate.writeSubstrate(w.batch).then(w.resolve, w.reject);
      } catch (error) {
        w.reject(error);
      }
    }
  };
  return (batch) =>
    new Promise((resolve, reject) => {
      waiting.push({ batch, resolve, reject });
      for (const turn of batch.turns) chars += turn.text.length;
      if (chars >= GATHER_CHARS || readsPending() === 0) release();
      else timer ??= setTimeout(release, ms);
    });
}
