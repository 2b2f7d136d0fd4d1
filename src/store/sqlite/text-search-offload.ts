/**
 * The SQLite store's full-text search in a worker thread (./text-search-worker.ts), for processes
 * that recall with vectors and stay up (the MCP server, `cairn serve`, the bench): better-sqlite3
 * and usearch both block the thread that calls them, so in one thread a hybrid recall runs BM25,
 * the query embedding and the vector search one after the other; with BM25 in a worker the two
 * legs overlap on two cores. The worker starts on the first search (its own module load and
 * connection: its first answer 0.34 s later at load 8) and holds the process open only while a
 * search is in flight. When no worker can run here (no
 * worker script on disk, the worker died), `search` returns null and the store searches in-thread.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { CairnError, type CairnErrorCode } from '../../errors.js';
import type { ScoredId, TextSearchOptions } from '../../types.js';
import type { TextSearchReply, TextSearchRequest, TextSearchWorkerData } from './text-search-worker.js';

interface Waiting {
  resolve(hits: ScoredId[] | null): void;
  reject(error: Error): void;
}

export class TextSearchOffload {
  private worker: Worker | null = null;
  /** Set once the worker cannot start or stopped: searches stay in-thread from then on. */
  private unavailable = false;
  private readonly pending = new Map<number, Waiting>();
  private nextId = 0;

  /**
   * @param path the database file (never `:memory:`: another connection would see another database)
   * @param url the worker script @default ./text-search-worker.js beside this module
   */
  constructor(
    private readonly path: string,
    private readonly url: URL = new URL('./text-search-worker.js', import.meta.url),
  ) {}

  /**
   * The search's hits from the worker, or null (now or once the promise settles) when no worker
   * can run it: search in-thread instead. Errors of the search itself are rejected as in-thread.
   */
  search(query: string, options: TextSearchOptions): Promise<ScoredId[] | null> | null {
    const worker = this.start();
    if (!worker) return null;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.pending.size === 1) worker.ref();
      worker.postMessage({ id, query, options } satisfies TextSearchRequest);
    });
  }

  /** Stop the worker (searches in flight are rejected). */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    await worker?.terminate();
  }

  private start(): Worker | null {
    if (this.worker || this.unavailable) return this.worker;
    if (this.url.protocol === 'file:' && !existsSync(fileURLToPath(this.url))) {
      this.unavailable = true;
      return null;
    }
    let worker: Worker;
    try {
      // Not the parent's --input-type (a `node -e` parent): the worker is a module file.
      const execArgv = process.execArgv.filter((arg) => !arg.startsWith('--input-type'));
      worker = new Worker(this.url, { workerData: { path: this.path } satisfies TextSearchWorkerData, execArgv });
    } catch {
      this.unavailable = true;
      return null;
    }
    worker.unref();
    worker.on('message', (reply: TextSearchReply) => {
      const waiting = this.pending.get(reply.id);
      if (!waiting) return;
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      if ('hits' in reply) waiting.resolve(reply.hits);
      else waiting.reject(new CairnError((reply.error.code as CairnErrorCode | null) ?? 'STORE_FAILED', reply.error.message));
    });
    // The worker stopped (it could not open the database, or was terminated by close): what was
    // in flight is searched in-thread by the caller, and so is everything after a failure.
    const stopped = (): void => {
      if (this.worker === worker) {
        this.worker = null;
        this.unavailable = true;
      }
      for (const waiting of this.pending.values()) waiting.resolve(null);
      this.pending.clear();
    };
    worker.on('error', stopped);
    worker.on('exit', stopped);
    this.worker = worker;
    return worker;
  }
}
