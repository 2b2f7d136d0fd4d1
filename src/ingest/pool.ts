/**
 * A pool of worker threads that read transcripts for the ingest runner: each worker parses a
 * file from its cursor ({@link readTranscript}) and computes its turns' full-text index terms,
 * so parsing and tokenizing use every core while the main thread only writes to the store.
 *
 * It never loses a file and never hangs: a worker that dies (a crash, out of memory, a script
 * that cannot load) hands its file back to this thread, which reads it, and is replaced; when
 * workers cannot be kept alive, the pool reads everything in this thread. A reader that throws
 * inside a worker (a bug: readers do not throw for bad input) rejects that one read, exactly as
 * it would in this thread, and the runner reports the file and keeps its cursor.
 */
import { existsSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { factIndexText, turnIndexText } from '../store/substrate-rows.js';
import type { IngestCursor, Logger } from '../types.js';
import { readTranscript } from './read.js';
import { adoptReadBatch, sealReadBatch } from './seal.js';
import type { ReadOptions, ReadResult } from './types.js';

/** One read, as posted to a worker. */
export interface ReadRequest {
  id: number;
  path: string;
  cursor: IngestCursor | null;
  options: ReadOptions;
  /** Attach each turn's index terms (`TurnRecord.terms`). */
  terms: boolean;
}

/**
 * What a worker posts: once `ready` (loaded, with the ruleset it redacts with), then one answer
 * per {@link ReadRequest}.
 */
export type WorkerMessage =
  | { type: 'ready'; ruleset?: string }
  | { type: 'result'; id: number; result: ReadResult }
  | { type: 'error'; id: number; error: string };

/**
 * What a worker does for one request (also run in this thread when a worker dies, or for a run
 * too small for workers): read, compute the index terms, seal the turns and facts (seal.ts).
 * `posted`: the result is posted to another thread at once (a worker), so its turns and facts
 * are sanitized as sealing would but not sealed: the receiver adopts them (`adoptReadBatch`).
 */
export function readWithTerms(request: Pick<ReadRequest, 'path' | 'cursor' | 'options' | 'terms'>, posted = false): ReadResult {
  const result = readTranscript(request.path, request.cursor, request.options);
  if (request.terms) for (const turn of result.batch.turns) turn.terms = turnIndexText(turn);
  sealReadBatch(result.batch, request.terms ? factIndexText : undefined, posted);
  return result;
}

export interface ReaderPoolOptions {
  /**
   * Worker threads.
   * @default os.availableParallelism()
   */
  size?: number;
  /**
   * The worker script (tests point it at a build of worker.ts).
   * @default worker.js beside this module
   */
  workerUrl?: URL;
  /**
   * Compute each turn's index terms in the workers.
   * @default true
   */
  terms?: boolean;
  /** Where worker failures are reported. @default silent */
  logger?: Logger;
  /**
   * Reads queued in one worker at most (see {@link QUEUED_BYTES}).
   * @default 64
   */
  depth?: number;
  /**
   * Bytes of transcript queued in one worker before it is given no more (see {@link QUEUED_BYTES}).
   * @default 4 MiB
   */
  queuedBytes?: number;
  /**
   * How many dead workers are replaced before the pool stops starting new ones.
   * @default 2 × size
   */
  maxRestarts?: number;
}

/** Counters of a pool's life, for summaries and tests. */
export interface ReaderPoolStats {
  /** Workers started (replacements included). */
  started: number;
  /** Workers that died while the pool was open. */
  died: number;
  /** Reads done in this thread because a worker died or none could start. */
  readsHere: number;
}

export interface ReaderPool {
  /** Worker threads asked for. */
  readonly size: number;
  /** A `TranscriptReader` for the runner: resolves with the file's next pass. */
  read(path: string, cursor: IngestCursor | null, options: ReadOptions): Promise<ReadResult>;
  stats(): ReaderPoolStats;
  /** Reads asked for and not yet answered (queued here or posted to a worker). */
  pending(): number;
  /** Stop the workers; reads still queued are rejected. */
  close(): Promise<void>;
}

/** worker.js beside this module: present in the built package, absent when running from sources. */
export function defaultWorkerUrl(): URL {
  return new URL('./worker.js', import.meta.url);
}

/** Whether a worker script exists at `url` (false when running from TypeScript sources without a build). */
export function workerScriptExists(url: URL = defaultWorkerUrl()): boolean {
  try {
    return url.protocol === 'file:' && existsSync(fileURLToPath(url));
  } catch {
    return false;
  }
}

interface Job {
  request: ReadRequest;
  /** Bytes it is expected to read (what the file holds past its cursor). */
  bytes: number;
  resolve(result: ReadResult): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  /** Reads posted to it and not yet answered, by request id (at most the pool's depth). */
  jobs: Map<number, Job>;
  /** Their bytes. */
  bytes: number;
  /** Loaded and listening: only then is it given reads. One that dies before cannot load, and is not replaced. */
  ready: boolean;
  /** The ruleset it redacts with (from its `ready` message): its seals are adopted only when it is this thread's. */
  ruleset: string | null;
}

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * Work queued in each worker: the reads after the current one wait in the worker's own queue, so
 * it does not sit idle while the main thread is busy writing and cannot hand it more work. The
 * main thread commits up to ~15 MB of transcript at once (~0.1 s); with two reads queued per
 * worker (~10 ms of work for a typical file) the workers sat idle through most of each commit.
 * A worker is given reads until it holds this many bytes, so it has work for the longest commit.
 */
const QUEUED_BYTES = 4 * 1024 * 1024;
const DEFAULT_DEPTH = 64;

/** What a read from `cursor` will read, for balancing the workers; 1 when the file cannot be seen. */
function expectedBytes(path: string, cursor: IngestCursor | null, options: ReadOptions): number {
  try {
    const size = statSync(path).size;
    const from = cursor !== null && cursor.offset <= size ? cursor.offset : 0;
    return Math.max(1, Math.min(size - from, options.maxBytes ?? Number.POSITIVE_INFINITY));
  } catch {
    return 1;
  }
}

/**
 * Start a pool of transcript-reading workers. Close it when done (idle workers do not keep the
 * process alive, but they hold memory).
 * @example
 * const pool = createReaderPool();
 * try {
 *   await ingestPaths(paths, { substrate, clock, logger, reader: pool.read, concurrency: 2 * pool.size });
 * } finally {
 *   await pool.close();
 * }
 */
export function createReaderPool(options: ReaderPoolOptions = {}): ReaderPool {
  const size = Math.max(1, Math.floor(options.size ?? availableParallelism()));
  const url = options.workerUrl ?? defaultWorkerUrl();
  const terms = options.terms ?? true;
  const logger = options.logger ?? silent;
  const maxRestarts = options.maxRestarts ?? 2 * size;
  const depth = Math.max(1, Math.floor(options.depth ?? DEFAULT_DEPTH));
  const queuedBytes = options.queuedBytes ?? QUEUED_BYTES;
  const queue: Job[] = [];
  const slots = new Set<Slot>();
  const stats: ReaderPoolStats = { started: 0, died: 0, readsHere: 0 };
  let restarts = 0;
  let closed = false;
  let nextId = 1;

  const readHere = (job: Job): void => {
    stats.readsHere++;
    try {
      job.resolve(readWithTerms(job.request));
    } catch (error) {
      job.reject(error instanceof Error ? error : new Error(String(error)));
    }
  };

  const pump = (): void => {
    while (queue.length > 0) {
      // The ready worker with the least work queued, while it may take more.
      let target: Slot | null = null;
      for (const slot of slots) {
        if (!slot.ready || slot.jobs.size >= depth || (slot.jobs.size > 0 && slot.bytes >= queuedBytes)) continue;
        if (target === null || slot.bytes < target.bytes) target = slot;
      }
      if (target === null) break;
      const job = queue.shift() as Job;
      target.jobs.set(job.request.id, job);
      target.bytes += job.bytes;
      // Busy workers keep the process alive until they answer; idle ones do not.
      target.worker.ref();
      target.worker.postMessage(job.request);
    }
    // No worker left: read here rather than wait forever.
    if (slots.size === 0) for (let job = queue.shift(); job !== undefined; job = queue.shift()) readHere(job);
  };

  const spawn = (): void => {
    let worker: Worker;
    try {
      worker = new Worker(url);
    } catch (error) {
      logger.warn('ingest: cannot start a reader worker', { error: String(error) });
      return;
    }
    stats.started++;
    const slot: Slot = { worker, jobs: new Map(), bytes: 0, ready: false, ruleset: null };
    slots.add(slot);
    worker.unref();
    worker.on('message', (message: WorkerMessage) => {
      if (message.type === 'ready') {
        slot.ready = true;
        slot.ruleset = message.ruleset ?? null;
        pump();
        return;
      }
      const job = slot.jobs.get(message.id);
      if (job === undefined) return;
      slot.jobs.delete(message.id);
      slot.bytes -= job.bytes;
      if (slot.jobs.size === 0) worker.unref();
      if (message.type === 'error') job.reject(new Error(message.error));
      else {
        adoptReadBatch(message.result.batch, slot.ruleset);
        job.resolve(message.result);
      }
      pump();
    });
    worker.on('error', (error) => {
      logger.warn('ingest: reader worker failed', { error: String(error) });
    });
    worker.on('exit', (code) => {
      slots.delete(slot);
      const jobs = [...slot.jobs.values()];
      slot.jobs.clear();
      slot.bytes = 0;
      if (closed) {
        for (const job of jobs) job.reject(new Error('reader pool closed'));
        return;
      }
      stats.died++;
      logger.warn('ingest: reader worker exited', { code, path: jobs[0]?.request.path ?? null });
      // The files it held are read here: a dead worker never costs a file.
      for (const job of jobs) readHere(job);
      if (slot.ready && restarts < maxRestarts) {
        restarts++;
        spawn();
      }
      pump();
    });
  };

  for (let i = 0; i < size; i++) spawn();

  return {
    size,
    read(path, cursor, readOptions) {
      if (closed) return Promise.reject(new Error('reader pool closed'));
      return new Promise<ReadResult>((resolve, reject) => {
        queue.push({ request: { id: nextId++, path, cursor, options: readOptions, terms }, bytes: expectedBytes(path, cursor, readOptions), resolve, reject });
        pump();
      });
    },
    stats: () => ({ ...stats }),
    pending() {
      let n = queue.length;
      for (const slot of slots) n += slot.jobs.size;
      return n;
    },
    async close() {
      if (closed) return;
      closed = true;
      for (let job = queue.shift(); job !== undefined; job = queue.shift()) job.reject(new Error('reader pool closed'));
      await Promise.all([...slots].map((slot) => slot.worker.terminate()));
    },
  };
}
