/**
 * The precomputed session-start context: every candidate of a project's no-query context,
 * gathered and prepared (src/context/prepare.ts) off the agent's critical path — by the detached
 * process after Stop / SessionEnd, `cairn hook refresh-context` — and read by the SessionStart hook
 * of a new session, which then only ranks and packs them, with its own clock, exactly as a fresh
 * build would (gathering and preparing were ~60% of that hook at 100K memories).
 *
 * An entry is used only when everything it was made from is unchanged:
 * - the key: project, workspace root, kind, budget, the code that made it (package version and the
 *   hook module's file stamp) — another project's entry is never read (the file name is a hash of
 *   the key and the key inside is compared in full);
 * - the store's generation: the SQLite database and write-ahead log as files (size, mtime, inode)
 *   plus the log's frame count, salts and last frame checksum from the wal-index header, so any
 *   commit by any process since (a touch, a ledger row, an ingest, a checkpoint) is a miss. Only
 *   SQLite stores have one; other stores always build fresh;
 * - the files the candidates' staleness checks read (size, mtime, inode, or absent).
 * The clock is not an input: ranking (recency, the recently-recalled penalty) runs at serve time.
 * Core memory files are read at serve time too. Anything else — an unreadable or foreign entry,
 * any mismatch — reads as a miss, and the caller builds the context as if there were no cache.
 *
 * The same entries, kind `compact`, hold one session's post-compact candidate pool (the memories
 * its context's queries return, nothing prepared), written by the PreCompact hook's detached child
 * and keyed to that session too (src/hooks/events.ts prepareCompactContext).
 */
import { closeSync, fstatSync, mkdirSync, openSync, readSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, sep } from 'node:path';
import { FileReader } from '../workspace/files.js';
import type { PreparedContext, PreparedItem } from './prepare.js';

/**
 * 4: a head line, the prepared context without the items' terms, then one `id<TAB>terms` line per
 * item, read on demand. 3 (earlier versions): the terms inside the items; still read.
 */
const FORMAT = 4;
const FORMATS_READ = new Set([3, FORMAT]);

/** What a cached context was built for; compared in full before anything is served. */
export interface ContextCacheKey {
  /**
   * `startup`: a new session's context, every candidate prepared. `compact`: the candidate pool of
   * one session's context after /compact, gathered by the PreCompact hook's detached child.
   */
  kind: 'startup' | 'compact';
  /** The session it is for (`compact`); another session's entry is never served. */
  session?: string;
  project: string | null;
  workspaceRoot: string | null;
  budget: number;
  /** The code and configuration that built it (package version, hook module stamp, embedder spec). */
  code: string;
}

/** A file's size and modification time, or null when it is not there. */
export type FileStamp = { path: string; stamp: string | null };

export interface CachedContext {
  format: number;
  key: ContextCacheKey;
  /** The store's generation when preparing started and ended (equal, or nothing was written). */
  generation: string;
  files: FileStamp[];
  /** When it was prepared (for people reading the file; not an input). */
  builtAt: number;
  prepared: PreparedContext;
}

export type CacheLookup = { hit: true; prepared: PreparedContext } | { hit: false; reason: string };

function stampOf(path: string): string | null {
  const stat = statSync(path, { throwIfNoEntry: false, bigint: true });
  if (!stat) return null;
  return `${stat.isFile() ? 'f' : 'o'}:${stat.size}:${stat.mtimeNs}:${stat.ino}`;
}

/** Bytes 16–40 of the wal-index header: last commit frame, database pages, last frame checksum, salts. Rebuilt identically by a reader's recovery (unlike the change counter at 8). */
function walIndexCore(shmPath: string): string | null {
  let fd: number | null = null;
  try {
    fd = openSync(shmPath, 'r');
    const bytes = Buffer.alloc(24);
    if (readSync(fd, bytes, 0, 24, 16) !== 24) return null;
    return bytes.toString('hex');
  } catch {
    return null;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/**
 * The generation of a SQLite store at `dbPath`: changes with every commit and checkpoint, and not
 * when a process only reads. A log that is absent or empty counts the same (opening creates it).
 */
export function sqliteGeneration(dbPath: string): string | null {
  const db = stampOf(dbPath);
  if (db === null) return null;
  const wal = statSync(`${dbPath}-wal`, { throwIfNoEntry: false, bigint: true });
  // Header only (32 bytes) or nothing: the database file alone holds the data.
  if (!wal || wal.size <= 32n) return `${db}|empty`;
  return `${db}|${wal.size}:${wal.mtimeNs}:${wal.ino}|${walIndexCore(`${dbPath}-shm`) ?? 'no-index'}`;
}

/** A short stable hash of a string (FNV-1a, two seeds), for a file name; node:crypto costs a hook ~3 ms to load. */
function nameHash(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
  }
  return `${(a >>> 0).toString(16).padStart(8, '0')}${(b >>> 0).toString(16).padStart(8, '0')}`;
}

/** Where the entry for `key` lives under the data home. */
export function contextCachePath(home: string, key: ContextCacheKey): string {
  return join(home, 'cache', 'context', `${key.kind}-${nameHash(JSON.stringify([key.project, key.workspaceRoot]))}.json`);
}

function sameKey(a: ContextCacheKey, b: ContextCacheKey): boolean {
  return a.kind === b.kind && (a.session ?? null) === (b.session ?? null) && a.project === b.project && a.workspaceRoot === b.workspaceRoot && a.budget === b.budget && a.code === b.code;
}

/** Bytes read at a time until the entry's first line is whole (the head is ~1 KB plus a line per file checked). */
const HEAD_CHUNK = 16 * 1024;

/**
 * An entry's first line, and a function reading the rest. Only the head is read to decide: a
 * session start after any write (the usual miss, "store changed") does not read the 0.5–1 MB of
 * prepared candidates behind it. The file is replaced by a rename, never rewritten in place, so
 * the open descriptor reads one whole entry.
 */
function openEntry(path: string): { head: string; rest: () => { bytes: Buffer; start: number; end: number }; close: () => void } | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null;
  }
  let closed = false;
  const close = (): void => {
    if (!closed) closeSync(fd);
    closed = true;
  };
  try {
    const size = fstatSync(fd).size;
    const bytes = Buffer.allocUnsafe(size);
    let read = 0;
    let newline = -1;
    while (read < size && newline < 0) {
      const n = readSync(fd, bytes, read, Math.min(HEAD_CHUNK, size - read), read);
      if (n === 0) break;
      newline = bytes.subarray(0, read + n).indexOf(10, read);
      read += n;
    }
    const head = bytes.toString('utf8', 0, newline < 0 ? read : newline);
    const rest = (): { bytes: Buffer; start: number; end: number } => {
      while (read < size) {
        const n = readSync(fd, bytes, read, size - read, read);
        if (n === 0) break;
        read += n;
      }
      return { bytes, start: newline < 0 ? read : newline + 1, end: read };
    };
    return { head, rest, close };
  } catch {
    close();
    return null;
  }
}

/** The prepared context for `key` if it was made from the store and files as they are now, else why not. */
export function readCachedContext(path: string, key: ContextCacheKey, generation: string | null): CacheLookup {
  if (generation === null) return { hit: false, reason: 'no store generation' };
  const entry = openEntry(path);
  if (entry === null) return { hit: false, reason: 'no entry' };
  // The first line says what the entry was made from; the (large) rest is read and parsed only when it is used.
  let head: Omit<CachedContext, 'prepared'> & { restBytes?: number };
  let prepared: PreparedContext;
  try {
    try {
      head = JSON.parse(entry.head) as Omit<CachedContext, 'prepared'>;
      if (head === null || typeof head !== 'object' || !FORMATS_READ.has(head.format) || !head.key || !Array.isArray(head.files)) return { hit: false, reason: 'unreadable entry' };
      if (!sameKey(head.key, key)) return { hit: false, reason: 'other key' };
      if (head.generation !== generation) return { hit: false, reason: 'store changed' };
      for (const file of head.files) if (stampOf(file.path) !== file.stamp) return { hit: false, reason: 'file changed' };
      const { bytes, start, end } = entry.rest();
      if (head.format === FORMAT && head.restBytes !== end - start) return { hit: false, reason: 'unreadable entry' };
      // Format 4: the terms lines after the second line are left as bytes until asked for.
      const split = head.format === FORMAT ? bytes.indexOf(10, start) : -1;
      const bodyEnd = split < 0 || split > end ? end : split;
      prepared = JSON.parse(bytes.toString('utf8', start, bodyEnd)) as PreparedContext;
      if (head.format === FORMAT && prepared !== null && typeof prepared === 'object') prepared.termsOf = termsReader(bytes, bodyEnd + 1, end);
    } finally {
      entry.close();
    }
  } catch {
    return { hit: false, reason: 'unreadable entry' };
  }
  if (prepared === null || typeof prepared !== 'object' || !Array.isArray(prepared.candidates) || typeof prepared.items !== 'object' || prepared.items === null) return { hit: false, reason: 'unreadable entry' };
  return { hit: true, prepared };
}

/**
 * The terms of the `id<TAB>terms` lines in `bytes[start, end)`, decoded one at a time when asked
 * for; the line index is built on the first request (a scan for newlines, no decoding).
 */
function termsReader(bytes: Buffer, start: number, end: number): (id: string) => string | undefined {
  let lines: Map<string, [number, number]> | null = null;
  return (id) => {
    if (lines === null) {
      lines = new Map();
      let at = start;
      while (at < end) {
        let newline = bytes.indexOf(10, at);
        if (newline < 0 || newline > end) newline = end;
        const tab = bytes.indexOf(9, at);
        if (tab >= 0 && tab < newline) lines.set(bytes.toString('latin1', at, tab), [tab + 1, newline]);
        at = newline + 1;
      }
    }
    const range = lines.get(id);
    return range === undefined ? undefined : bytes.toString('utf8', range[0], range[1]);
  };
}

/**
 * Write an entry atomically (a reader sees the old one or the new one, never half): a line saying
 * what it was made from, the prepared context without the items' terms, then an `id<TAB>terms`
 * line per item that has terms (ids and terms hold no tab or newline).
 */
export function writeCachedContext(path: string, entry: Omit<CachedContext, 'format'>): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  const { prepared, ...head } = entry;
  const { termsOf: _lazy, items, ...body } = prepared;
  const bare: Record<string, PreparedItem> = {};
  const termLines: string[] = [];
  for (const [id, { terms, ...item }] of Object.entries(items)) {
    bare[id] = item;
    if (terms !== undefined && !/[\t\n]/.test(id) && !/[\t\n]/.test(terms)) termLines.push(`${id}\t${terms}\n`);
    else if (terms !== undefined) bare[id] = { ...item, terms };
  }
  const rest = `${asciiJson({ ...body, items: bare })}\n${termLines.join('')}`;
  // The rest's length in the head: a cut or grown file is a miss (a cut terms line parses fine).
  writeFileSync(tmp, `${asciiJson({ format: FORMAT, ...head, restBytes: Buffer.byteLength(rest) })}\n${rest}`);
  renameSync(tmp, path);
}

/**
 * JSON with every non-ASCII character escaped (`\u2014`): the same value when parsed, but the
 * session-start hook that reads it decodes the file into a one-byte string and parses that — one
 * em dash in a memory otherwise makes V8 hold the whole 0.5–1 MB entry as two-byte characters.
 * Reading and parsing a 654 KB entry: 9.9 → 8.0 ms CPU (medians of 8 processes, TurboFan off, load 14).
 */
export function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * A {@link FileReader} that remembers which files it read, with their stamps taken before the read.
 * A staleness check reads an absolute reference P at P, or at root + P when only that exists
 * (src/workspace/files.ts `locate`); so for a P that is not there this also stamps root + P, and
 * for a file read under the root it also stamps the P it may stand for: a file appearing at the
 * other place later changes the stamps too.
 */
export class RecordingFileReader extends FileReader {
  private readonly stamps = new Map<string, string | null>();

  constructor(private readonly root: string | null = null) {
    super();
  }

  override read(abs: string): ReturnType<FileReader['read']> {
    if (!this.stamps.has(abs)) {
      const stamp = stampOf(abs);
      this.stamps.set(abs, stamp);
      if (this.root !== null) {
        const other = stamp === null && isAbsolute(abs) ? join(this.root, abs) : abs.startsWith(`${this.root}${sep}`) ? abs.slice(this.root.length) : null;
        if (other !== null && !this.stamps.has(other)) this.stamps.set(other, stampOf(other));
      }
    }
    return super.read(abs);
  }

  /** Every file read, stamped. */
  files(): FileStamp[] {
    return [...this.stamps].map(([path, stamp]) => ({ path, stamp }));
  }
}
