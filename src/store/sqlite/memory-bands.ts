/**
 * MinHash LSH band keys of each memory's index terms, in table `memory_bands` (migration 012):
 * the candidates of remember's near-duplicate check. A memory and a text whose index-term sets
 * have Jaccard similarity J share at least one of BANDS bands of ROWS MinHash values with
 * probability 1 − (1 − J^ROWS)^BANDS: 98.4% at the threshold J = 0.5 (NEAR_DUPLICATE.jaccard,
 * src/memory/similar.ts), 99.99% at 0.6, 10% at 0.2. Looking the text's band keys up is BANDS
 * B-tree seeks, with no ranking: the full-text probe it replaces read the postings of the text's
 * rarest terms and ranked them with bm25(), and missed the near-duplicates that share a text's
 * common words but not its rare ones (of the near-duplicates of 150 new bench texts, the probe
 * found 7 of 37 at 10K and 27 of 274 at 100K, the bands 36 and 127; docs/BENCHMARKS.md `## write`).
 *
 * Keys hash the band's values with the memory's project (a project's memories never collide with
 * another's), so a lookup reads only its project's buckets (and the user scope's, as the probe's
 * filter does). Every writer of a memory's text keeps them in the same transaction (writeMemory,
 * patchMemory), appended to `memory_bands_pending` and folded into this table in batches
 * (./pending-bands.ts); stores written before the table existed are filled by {@link fillBands}, a chunk
 * per transaction with its cursor in the state table, so a killed fill resumes where its last
 * chunk committed. Until the fill is complete, {@link bandsComplete} is false and callers use the
 * full-text probe.
 */
import type Database from 'better-sqlite3';
import { indexTerms, TERMS_VERSION } from '../tokenize.js';

/** Rows (MinHash values) per band. */
export const ROWS = 4;
/** Bands per memory: BANDS rows in `memory_bands` per memory. */
export const BANDS = 64;
const HASHES = ROWS * BANDS;

/** State key of the fill: `{"v": BANDS_VERSION, "next": rowid}` while filling, `{"v": …, "done": true}` once complete. */
export const BANDS_STATE_KEY = 'memory_bands';
/** Bands of another scheme or terms version are rebuilt (the same text would get other keys). */
export const BANDS_VERSION = `minhash-${ROWS}x${BANDS}-terms${TERMS_VERSION}`;

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Fixed multipliers (odd) and offsets of the HASHES hash functions a·x + c mod 2³². */
const MULTIPLIERS = new Uint32Array(HASHES);
const OFFSETS = new Uint32Array(HASHES);
{
  let seed = 12345;
  const next = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
  for (let i = 0; i < HASHES; i++) {
    MULTIPLIERS[i] = next() | 1;
    OFFSETS[i] = next();
  }
}

/** MinHash signature of a set of terms. */
function signature(terms: ReadonlySet<string>): Uint32Array {
  const mins = new Uint32Array(HASHES).fill(0xffffffff);
  for (const term of terms) {
    const x = fnv1a(term);
    for (let i = 0; i < HASHES; i++) {
      const v = (Math.imul(MULTIPLIERS[i] as number, x) + (OFFSETS[i] as number)) >>> 0;
      if (v < (mins[i] as number)) mins[i] = v;
    }
  }
  return mins;
}

/** The band keys of a term set in a project: band · 2³² + a 32-bit hash of (project, band, its values). */
function keysOf(mins: Uint32Array, project: string | null): number[] {
  const base = project === null ? 0x2545f491 : fnv1a(project);
  const keys: number[] = [];
  for (let band = 0; band < BANDS; band++) {
    let h = Math.imul(base ^ (band + 1), 0x9e3779b1);
    for (let i = band * ROWS; i < band * ROWS + ROWS; i++) h = Math.imul(h ^ (mins[i] as number), 0x01000193);
    keys.push(band * 0x1_0000_0000 + (h >>> 0));
  }
  return keys;
}

/** MinHash signature of a text's index terms; null for a text without any. */
function signText(text: string): Uint32Array | null {
  const terms = new Set(indexTerms(text));
  return terms.size === 0 ? null : signature(terms);
}

/** A text's distinct index terms. */
export function termSet(text: string): Set<string> {
  return new Set(indexTerms(text));
}

/** Band keys of a memory's text in its project; none for a text without index terms. */
export function bandKeys(text: string, project: string | null): number[] {
  const mins = signText(text);
  return mins === null ? [] : keysOf(mins, project);
}

/**
 * Band keys with the last text's signature kept: remember signs a text for its check, then the
 * store signs it again for its write (~0.1 ms for a 50-term text). One per store.
 */
export class BandSigner {
  private lastText: string | null = null;
  private lastTerms: Set<string> = new Set();
  private lastMins: Uint32Array | null = null;

  private sign(text: string): Uint32Array | null {
    if (text !== this.lastText) {
      this.lastTerms = termSet(text);
      this.lastMins = this.lastTerms.size === 0 ? null : signature(this.lastTerms);
      this.lastText = text;
    }
    return this.lastMins;
  }

  /** The distinct index terms of `text` (the set its signature was made from). */
  terms(text: string): ReadonlySet<string> {
    this.sign(text);
    return this.lastTerms;
  }

  /** Band keys of a memory's text in its project, as {@link bandKeys}. */
  keys(text: string, project: string | null): number[] {
    const mins = this.sign(text);
    return mins === null ? [] : keysOf(mins, project);
  }

  /** The keys a near-duplicate check of `text` looks up: its project's bands and, inside a project, the user scope's. */
  lookupKeys(text: string, project: string | null): number[] {
    const mins = this.sign(text);
    if (mins === null) return [];
    return project === null ? keysOf(mins, null) : [...keysOf(mins, project), ...keysOf(mins, null)];
  }
}

interface BandsState {
  v: string;
  next?: number;
  done?: boolean;
}

function readState(db: Database.Database): BandsState | null {
  const row = db.prepare('SELECT value FROM state WHERE key = ?').get(BANDS_STATE_KEY) as { value: string } | undefined;
  if (!row) return null;
  try {
    const parsed = JSON.parse(row.value) as BandsState;
    return typeof parsed === 'object' && parsed !== null && typeof parsed.v === 'string' ? parsed : null;
  } catch {
    return null;
  }
}

function writeState(db: Database.Database, state: BandsState): void {
  db.prepare('INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(BANDS_STATE_KEY, JSON.stringify(state));
}

/** Whether every memory's bands are in `memory_bands` under this build's scheme. */
export function bandsComplete(db: Database.Database): boolean {
  const state = readState(db);
  return state !== null && state.v === BANDS_VERSION && state.done === true;
}

/** Prepares a statement (the store's cache of prepared statements, or `db.prepare`). */
export type Prepare = (sql: string) => Database.Statement;

/** Remove a memory's band keys of a text it no longer holds (inside the caller's transaction). */
export function removeBands(prepare: Prepare, rowid: number, keys: readonly number[]): void {
  const remove = prepare('DELETE FROM memory_bands WHERE key = ? AND memory_rowid = ?');
  for (const key of keys) remove.run(key, rowid);
}

/** Start the fill over (after rows were written past the store, e.g. by `cairn copy`). */
export function restartFill(db: Database.Database): void {
  // The fill writes every memory's bands again; a pending row of a text changed past the store would stand for them.
  db.transaction(() => {
    db.prepare('DELETE FROM memory_bands_pending').run();
    writeState(db, { v: BANDS_VERSION, next: 0 });
  }).immediate();
}

export interface FillProgress {
  /** Memories whose bands this call wrote. */
  filled: number;
  complete: boolean;
}

/**
 * Fill the bands of memories written before the table existed (or under another scheme), in
 * chunks of `chunk` memories by rowid, each chunk and its cursor in one IMMEDIATE transaction; at
 * most `maxChunks` chunks (all of them by default). Writes made meanwhile add their own bands, so
 * the fill is complete once its cursor passes the last rowid.
 */
export function fillBands(db: Database.Database, options: { chunk?: number; maxChunks?: number } = {}): FillProgress {
  const chunk = options.chunk ?? 2048;
  let chunks = options.maxChunks ?? Number.POSITIVE_INFINITY;
  let filled = 0;
  const step = db.transaction((): boolean => {
    let state = readState(db);
    if (state?.v === BANDS_VERSION && state.done) return true;
    if (state === null || state.v !== BANDS_VERSION) {
      // Keys of another scheme would only add wrong candidates: start from empty tables.
      db.prepare('DELETE FROM memory_bands').run();
      db.prepare('DELETE FROM memory_bands_pending').run();
      state = { v: BANDS_VERSION, next: 0 };
    }
    const after = state.next ?? 0;
    const rows = db
      .prepare('SELECT rowid, text, project FROM memories WHERE rowid > ? ORDER BY rowid LIMIT ?')
      .all(after, chunk) as Array<{ rowid: number; text: string; project: string | null }>;
    // Inserted in key order: neighbouring keys share B-tree pages (at 10K: 0.17 ms a memory against 0.87 row by row, load ~9).
    const pairs: Array<[number, number]> = [];
    for (const row of rows) for (const key of bandKeys(row.text, row.project)) pairs.push([key, row.rowid]);
    pairs.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    const insert = db.prepare('INSERT OR IGNORE INTO memory_bands (key, memory_rowid) VALUES (?, ?)');
    for (const [key, rowid] of pairs) insert.run(key, rowid);
    filled += rows.length;
    const last = rows.length > 0 ? (rows[rows.length - 1] as { rowid: number }).rowid : after;
    const done = rows.length < chunk;
    writeState(db, done ? { v: BANDS_VERSION, done: true } : { v: BANDS_VERSION, next: last });
    return done;
  });
  let complete = false;
  while (chunks-- > 0 && !complete) complete = step.immediate();
  return { filled, complete };
}

/**
 * A new or empty store needs no fill: mark it complete (its writes add their own bands). Called
 * on opening a writable store; one state read when it is already complete.
 */
export function initBands(db: Database.Database): void {
  const state = readState(db);
  if (state !== null && state.v === BANDS_VERSION) return;
  // A store with memories is filled by fillBands; only an empty one is marked here.
  if (db.prepare('SELECT 1 FROM memories LIMIT 1').get() !== undefined) return;
  db.transaction(() => {
    const now = readState(db);
    if (now !== null && now.v === BANDS_VERSION) return;
    if (db.prepare('SELECT 1 FROM memories LIMIT 1').get() === undefined) {
      db.prepare('DELETE FROM memory_bands').run();
      db.prepare('DELETE FROM memory_bands_pending').run();
      writeState(db, { v: BANDS_VERSION, done: true });
    }
  }).immediate();
}
