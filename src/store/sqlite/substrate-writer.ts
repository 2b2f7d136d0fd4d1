/**
 * The substrate's write thread, this side (SqliteSubstrate.startWriteThread): the group commits
 * that `writeSubstrate` would make in this thread are posted to a worker
 * (./substrate-writer-worker.ts) that makes them on its own connection to the same file, so a
 * bulk ingest reads and seals the next files here while the store inserts the last ones, their
 * rows and index terms, there. Each batch still settles with its own outcome, and a group's
 * batches commit together or, when the group is refused, one by one, as in this thread
 * (`SqliteSubstrate.commitBatches` runs on either side).
 *
 * It never hangs: a worker that stops (a crash, `process.exit`, a connection it cannot open)
 * rejects every write in flight and every later one with one line saying so; the runner reports
 * those files and keeps their cursors, so the next run reads them again. Groups it committed
 * before it stopped stay committed (each group is one transaction, its cursors in it) and are
 * confirmed: its answers come on a channel of their own, read to the end before anything is
 * rejected.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import type { Logger, SubstrateBatch } from '../../types.js';
import type { SubstrateWriterData, WriteReply, WriteRequest } from './substrate-writer-worker.js';

/** One `writeSubstrate` call waiting for its commit. */
export interface PendingWrite {
  batch: SubstrateBatch;
  resolve(result: { turnsAdded: number }): void;
  reject(error: unknown): void;
}

/** The worker script beside this module: present in a build, absent when running from TypeScript sources. */
export function defaultWriterUrl(): URL {
  return new URL('./substrate-writer-worker.js', import.meta.url);
}

/** Whether the worker script exists at `url`. */
export function writerScriptExists(url: URL): boolean {
  try {
    return url.protocol === 'file:' && existsSync(fileURLToPath(url));
  } catch {
    return false;
  }
}

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** An error from the worker, with SQLite's code kept (`SQLITE_BUSY`, `SQLITE_CONSTRAINT_…`). */
function revived(error: { message: string; code: string | null }): Error {
  const out = new Error(error.message);
  if (error.code !== null) Object.assign(out, { code: error.code });
  return out;
}

export class SubstrateWriter {
  private readonly worker: Worker;
  /** Where the worker's answers arrive (its own channel, so they can be read after it is gone). */
  private readonly replies: MessagePort;
  private readonly inFlight = new Map<number, PendingWrite[]>();
  private nextId = 1;
  /** Why the worker stopped, once it has: every write from then on is rejected with it. */
  private stopped: Error | null = null;
  private closing = false;
  private readonly exited: Promise<void>;
  private drained: (() => void) | null = null;

  /**
   * @param path the database file the other connection opens
   * @param busyTimeoutMs that connection's wait for another writer's lock (this connection's)
   */
  constructor(path: string, busyTimeoutMs: number, url: URL = defaultWriterUrl(), logger: Logger = silent) {
    // Not the parent's --input-type (a `node -e` parent): the worker is a module file.
    const execArgv = process.execArgv.filter((arg) => !arg.startsWith('--input-type'));
    const { port1, port2 } = new MessageChannel();
    this.replies = port1;
    this.worker = new Worker(url, { workerData: { path, busyTimeoutMs, replies: port2 } satisfies SubstrateWriterData, transferList: [port2], execArgv });
    this.worker.unref();
    // The worker, while it has writes in flight, keeps the process alive; its channel never does.
    port1.on('message', (reply: WriteReply) => this.settle(reply));
    port1.unref();
    this.worker.on('error', (error) => {
      logger.warn('ingest: the store write thread failed', { error: String(error) });
      this.stop(new Error(`the store's write thread failed: ${error.message}`));
    });
    this.exited = new Promise((resolve) => {
      this.worker.on('exit', (code) => {
        if (!this.closing) logger.warn('ingest: the store write thread exited', { code });
        this.stop(new Error(`the store's write thread stopped (exit code ${code}) before committing this file; it is read again next run`));
        resolve();
      });
    });
  }

  private settle(reply: WriteReply): void {
    if (reply.type === 'failed') {
      this.stop(new Error(`the store's write thread stopped: ${reply.error}`));
      return;
    }
    const group = this.inFlight.get(reply.id);
    if (group === undefined) return;
    this.inFlight.delete(reply.id);
    if (this.inFlight.size === 0) this.idle();
    reply.outcomes.forEach((outcome, i) => {
      const write = group[i];
      if (write === undefined) return;
      if ('turnsAdded' in outcome) write.resolve({ turnsAdded: outcome.turnsAdded });
      else write.reject(revived(outcome.error));
    });
  }

  /** Commit `group` (one transaction when it can be) in the worker; each write settles with its batch's outcome. */
  post(group: PendingWrite[]): void {
    if (this.stopped !== null) {
      for (const write of group) write.reject(this.stopped);
      return;
    }
    const id = this.nextId++;
    try {
      this.worker.postMessage({ type: 'write', id, batches: group.map((write) => write.batch) } satisfies WriteRequest);
    } catch (error) {
      // A batch that cannot be cloned (not plain data): refused as the store would refuse it.
      for (const write of group) write.reject(error);
      return;
    }
    this.inFlight.set(id, group);
    // Writes in flight keep the process alive until they are answered; an idle worker does not.
    if (this.inFlight.size === 1) this.worker.ref();
  }

  /** Wait for the groups in flight, then stop the worker (it closes its connection). */
  async close(): Promise<void> {
    if (this.inFlight.size > 0 && this.stopped === null) await new Promise<void>((resolve) => (this.drained = resolve));
    this.closing = true;
    // Held open until the worker has closed its connection.
    this.worker.ref();
    if (this.stopped === null) this.worker.postMessage({ type: 'close' } satisfies WriteRequest);
    await this.exited;
    this.replies.close();
  }

  private idle(): void {
    this.worker.unref();
    const drained = this.drained;
    this.drained = null;
    drained?.();
  }

  private stop(reason: Error): void {
    if (this.stopped !== null) return;
    this.stopped = reason;
    // What it answered before it stopped is settled first: a group it committed is confirmed.
    for (let next = receiveMessageOnPort(this.replies); next !== undefined; next = receiveMessageOnPort(this.replies)) this.settle(next.message as WriteReply);
    const groups = [...this.inFlight.values()];
    this.inFlight.clear();
    for (const group of groups) for (const write of group) write.reject(reason);
    this.idle();
  }
}
