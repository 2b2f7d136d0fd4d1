/**
 * Near-duplicate bands not yet folded into `memory_bands` (migration 014), the same pattern as the
 * BM25 postings' pending rows (./text-search-index.ts): a write appends one row holding its
 * memory's BANDS band hashes instead of inserting BANDS rows at random places of `memory_bands`'
 * B-tree, which dirtied a leaf each (~74 of a remember's ~113 WAL frames at 100K memories). Every
 * FOLD_AT rows the rows are folded into `memory_bands` in key order, in the transaction of the
 * write that reached the count, so a killed fold leaves both tables as they were.
 *
 * A memory's newest pending row stands for its bands: the near-duplicate lookup counts its
 * `memory_bands` rows only for memories without one. So a text patch appends its new bands (and
 * removes the old text's rows from `memory_bands`, where they are if it was folded), and a row
 * `memory_bands` also holds (the fill of an older store running beside new writes) is counted once.
 *
 * A process keeps the rows it has read (the hashes, a 256-byte blob a memory): rows are only
 * appended, with rising seq (AUTOINCREMENT), and only deleted by a fold, all at once, which moves
 * the smallest seq; so a lookup reads the rows appended since its last one, and starts over when
 * the smallest seq it holds is gone.
 */
import type Database from 'better-sqlite3';
import { BANDS } from './memory-bands.js';

/**
 * Pending rows folded at once. Folding K memories' bands dirties ~L·(1 − e^(−64K/L)) of the L
 * leaves of `memory_bands` (~26K at 100K memories): ~55 a memory at K = 128, ~38 at 512, against 64
 * written one memory at a time; but the call that folds pays them all. At 100K (2 rounds
 * alternating, load 6.6–9.3) 512 made that call take 0.77–2.7 s, 128 took 0.42–0.63 s, for the
 * same CPU mean a call (×1.00).
 */
export const FOLD_AT = 128;

const BAND_SPAN = 0x1_0000_0000;

/** A memory's band keys (band · 2³² + hash, in band order, as bandKeys gives them) as the pending row's blob. */
function encode(keys: readonly number[]): Buffer {
  const blob = Buffer.alloc(keys.length * 4);
  for (let band = 0; band < keys.length; band++) blob.writeUInt32LE((keys[band] as number) - band * BAND_SPAN, band * 4);
  return blob;
}

function decode(blob: Buffer): Uint32Array {
  const hashes = new Uint32Array(blob.length >> 2);
  for (let i = 0; i < hashes.length; i++) hashes[i] = blob.readUInt32LE(i * 4);
  return hashes;
}

interface Statements {
  append: Database.Statement;
  first: Database.Statement;
  last: Database.Statement;
  since: Database.Statement;
  insertBand: Database.Statement;
  clear: Database.Statement;
}

interface Cache {
  /** The smallest seq read; null while nothing was read. */
  first: number | null;
  /** Rows up to this seq are in `latest`. */
  through: number;
  /** Each pending memory's newest hashes (empty: a text without index terms). */
  latest: Map<number, Uint32Array>;
}

/** Band counts of the pending memories against a text's lookup keys. */
export interface PendingMatches {
  /** Memories with a pending row: their `memory_bands` rows are not counted. */
  pending: ReadonlySet<number>;
  /** Shared bands of the pending memories sharing at least one. */
  shared: Map<number, number>;
}

export class PendingBands {
  private statements: Statements | null = null;
  private cache: Cache | null = null;

  constructor(private readonly db: () => Database.Database) {}

  /** Forget the prepared statements and the rows read (the connection was closed). */
  reset(): void {
    this.statements = null;
    this.cache = null;
  }

  /** Append a memory's band keys (inside the caller's transaction); none for a text without index terms. */
  append(memoryRowid: number, keys: readonly number[]): void {
    this.prepared().append.run(memoryRowid, encode(keys));
  }

  /** Fold when FOLD_AT rows are pending (inside the caller's transaction). */
  foldIfDue(): void {
    const { first, last } = this.prepared();
    const low = first.get() as number | null;
    if (low !== null && (last.get() as number) - low + 1 >= FOLD_AT) this.fold();
  }

  /** Move every pending memory's newest bands into memory_bands, in key order, and empty the table (inside a write transaction). */
  fold(): void {
    const s = this.prepared();
    const latest = this.readAll();
    // Sorted by key: neighbouring keys share B-tree pages (a fill's measure: 0.17 ms a memory against 0.87 row by row).
    const pairs: Array<[number, number]> = [];
    for (const [memoryRowid, hashes] of latest) for (let band = 0; band < hashes.length; band++) pairs.push([band * BAND_SPAN + (hashes[band] as number), memoryRowid]);
    pairs.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    for (const [key, memoryRowid] of pairs) s.insertBand.run(key, memoryRowid);
    s.clear.run();
  }

  /**
   * Which memories are pending and how many bands each shares with `keys` (a text's lookup keys:
   * its project's BANDS keys, then the user scope's when it has a project). Call inside the read
   * transaction that also reads memory_bands, so a fold cannot land between the two reads; with
   * `cached` false (inside a write transaction, whose own rows a rollback may take back and whose
   * seqs it would hand out again) every row is read and nothing kept.
   */
  matches(keys: readonly number[], cached: boolean): PendingMatches {
    const latest = cached ? this.current() : this.readAll();
    const own = new Uint32Array(BANDS);
    const user = new Uint32Array(BANDS);
    const twoScopes = keys.length >= 2 * BANDS;
    for (let band = 0; band < BANDS; band++) {
      own[band] = (keys[band] as number) - band * BAND_SPAN;
      user[band] = twoScopes ? (keys[BANDS + band] as number) - band * BAND_SPAN : (own[band] as number);
    }
    const shared = new Map<number, number>();
    for (const [memoryRowid, hashes] of latest) {
      let count = 0;
      for (let band = 0; band < hashes.length; band++) {
        const h = hashes[band] as number;
        if (h === own[band] || h === user[band]) count++;
      }
      if (count > 0) shared.set(memoryRowid, count);
    }
    return { pending: new Set(latest.keys()), shared };
  }

  /** Each pending memory's newest hashes, read from the table alone. */
  private readAll(): Map<number, Uint32Array> {
    const latest = new Map<number, Uint32Array>();
    for (const [, memoryRowid, blob] of this.prepared().since.all(0) as Array<[number, number, Buffer]>) latest.set(memoryRowid, decode(blob));
    return latest;
  }

  /** The rows read so far brought up to the committed table (call inside a read transaction). */
  private current(): Map<number, Uint32Array> {
    const s = this.prepared();
    const low = s.first.get() as number | null;
    // A fold deleted every row this process read: start over.
    if (this.cache === null || (this.cache.first !== null && low !== this.cache.first)) this.cache = { first: null, through: 0, latest: new Map() };
    const cache = this.cache;
    for (const [seq, memoryRowid, blob] of s.since.all(cache.through) as Array<[number, number, Buffer]>) {
      cache.latest.set(memoryRowid, decode(blob));
      cache.first ??= seq;
      cache.through = seq;
    }
    return cache.latest;
  }

  private prepared(): Statements {
    if (this.statements) return this.statements;
    const db = this.db();
    this.statements = {
      append: db.prepare('INSERT INTO memory_bands_pending (memory_rowid, hashes) VALUES (?, ?)'),
      first: db.prepare('SELECT min(seq) FROM memory_bands_pending').pluck(),
      last: db.prepare('SELECT max(seq) FROM memory_bands_pending').pluck(),
      since: db.prepare('SELECT seq, memory_rowid, hashes FROM memory_bands_pending WHERE seq > ? ORDER BY seq').raw(),
      insertBand: db.prepare('INSERT OR IGNORE INTO memory_bands (key, memory_rowid) VALUES (?, ?)'),
      clear: db.prepare('DELETE FROM memory_bands_pending'),
    };
    return this.statements;
  }
}
