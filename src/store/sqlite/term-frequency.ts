/**
 * How many memories hold each indexed term, in table `term_df` (migration 006) plus the changes
 * not yet folded into it in `term_df_pending`: both kept in the same transaction as every write to
 * `memories_fts`, so looking a term up is a primary-key read and a scan of a few pages.
 *
 * Full-text search uses it to leave very common terms out of a MATCH and the near-duplicate probe
 * to pick a text's rarest terms. Counting a term through the fts5vocab table instead walks its
 * postings (~0.3 ms for a common term at 100K memories), paid again for every term by each fresh
 * CLI or hook process.
 *
 * Terms are keyed by their porter stem, as FTS5's `porter` tokenizer stores them; the `stemmer`
 * package implements the same algorithm (identical on the 84K distinct terms of a 20K synthetic
 * corpus), and writes and lookups both go through it, so the figures stay consistent with each
 * other even for a term the two stem differently (the migration's backfill uses FTS5's stems).
 */
import type Database from 'better-sqlite3';
import { stemmer } from 'stemmer';

/** Stems kept by a TermFrequencies before it starts over: `stemmer` costs 2–6 µs a term, and a write and its probe stem ~40 each. */
const STEMS_KEPT = 100_000;

/**
 * Pending rows are folded into term_df once there are this many (~50 writes). Upserting each
 * write's ~40 stems into term_df straight away dirtied ~40 of its pages a write (at 100K the WAL
 * grew 271 KB a write instead of 103, writeMemory's p50 0.15 → 0.30 ms and its mean doubled);
 * appending them here dirties one or two, and a fold touches each distinct stem once for ~50
 * writes (151 KB a write, p50 0.17 ms). A process's lookups read only the rows appended since its
 * previous lookup (see Cache).
 */
const FOLD_AT_ROWS = 2048;

/** State key counting folds (and rebuilds): a process's cached figures are good while it is unchanged. */
const FOLDS_KEY = 'term_df_folds';
/** A process's first lookups read the tables; from the next one on it keeps what it reads (see `of`). */
const UNCACHED_LOOKUPS = 3;
/** The cache of folded figures is dropped past this many stems (a long-running process meets every term). */
const CACHE_MAX_STEMS = 200_000;

interface Statements {
  lookup: Database.Statement;
  lookupPending: Database.Statement;
  append: Database.Statement;
  fold: Database.Statement;
  dropEmpty: Database.Statement;
  clearPending: Database.Statement;
  folds: Database.Statement;
  countFold: Database.Statement;
  pendingSince: Database.Statement;
  lastPending: Database.Statement;
}

/**
 * What this process has read of committed figures, valid while the fold count is the one read:
 * term_df only changes in a fold, and between folds term_df_pending only grows (rows are
 * appended with rising rowids and deleted only by a fold), so a lookup reads just the pending rows
 * appended since the last one instead of scanning them all (~0.3 ms at 480 rows, ~0.9 at 1,920).
 */
interface Cache {
  folds: string | null;
  /** Pending rows up to this rowid are summed in `pending`. */
  pendingThrough: number;
  pending: Map<string, number>;
  /** term_df's figure per stem looked up so far (0: no row). */
  folded: Map<string, number>;
}

export class TermFrequencies {
  private statements: Statements | null = null;
  private cache: Cache | null = null;
  /** Lookups made without the cache (see UNCACHED_LOOKUPS). */
  private lookups = 0;
  /** Porter stem by index term, as computed so far. */
  private readonly stems = new Map<string, string>();

  constructor(private readonly db: () => Database.Database) {}

  /** Forget the prepared statements and cached figures (the connection was closed). */
  reset(): void {
    this.statements = null;
    this.cache = null;
    this.lookups = 0;
  }

  /** Document frequency of each of `terms` (by stem; 0 when no memory holds it), in order. */
  of(terms: readonly string[]): number[] {
    const stems = terms.map((term) => this.stemOf(term));
    const db = this.db();
    // Inside a transaction the reads see its own uncommitted rows, which a rollback may take
    // back: those are read in full and never cached. A process's first lookups read the tables
    // too: filling the cache reads every pending row (2.0 ms at 1,920 rows against 0.57 ms for
    // one lookup), which only pays in a process that looks up again and again.
    if (db.inTransaction) return db.transaction(() => this.readAll(stems))();
    if (this.cache === null && ++this.lookups <= UNCACHED_LOOKUPS) return db.transaction(() => this.readAll(stems))();
    // One read transaction: another process's fold must not land between the reads.
    return db.transaction(() => {
      const cache = this.current();
      const missing = stems.filter((stem) => !cache.folded.has(stem));
      if (missing.length > 0) {
        if (cache.folded.size + missing.length > CACHE_MAX_STEMS) cache.folded.clear();
        for (const stem of missing) cache.folded.set(stem, 0);
        for (const row of this.prepared().lookup.all(JSON.stringify(missing)) as Array<{ term: string; df: number }>) cache.folded.set(row.term, row.df);
      }
      return stems.map((stem) => Math.max(0, (cache.folded.get(stem) ?? 0) + (cache.pending.get(stem) ?? 0)));
    })();
  }

  /** The cache brought up to the committed state (call inside a read transaction). */
  private current(): Cache {
    const { folds: foldsRow, pendingSince, lastPending } = this.prepared();
    const folds = (foldsRow.get() as string | undefined) ?? null;
    let cache = this.cache;
    // A fold by a process that does not count folds empties the table too: rowids restart below ours.
    if (cache === null || cache.folds !== folds || ((lastPending.get() as number | null) ?? 0) < cache.pendingThrough) {
      cache = this.cache = { folds, pendingThrough: 0, pending: new Map(), folded: new Map() };
    }
    for (const [rowid, term, delta] of pendingSince.all(cache.pendingThrough) as Array<[number, string, number]>) {
      cache.pending.set(term, (cache.pending.get(term) ?? 0) + delta);
      cache.pendingThrough = rowid;
    }
    return cache;
  }

  /** Document frequencies read from the tables alone. */
  private readAll(stems: string[]): number[] {
    const json = JSON.stringify(stems);
    const { lookup, lookupPending } = this.prepared();
    const byStem = new Map<string, number>();
    for (const row of lookup.all(json) as Array<{ term: string; df: number }>) byStem.set(row.term, row.df);
    for (const row of lookupPending.all(json) as Array<{ term: string; df: number }>) byStem.set(row.term, (byStem.get(row.term) ?? 0) + row.df);
    return stems.map((stem) => Math.max(0, byStem.get(stem) ?? 0));
  }

  /** The porter stem of an index term (memoized). */
  private stemOf(term: string): string {
    let stem = this.stems.get(term);
    if (stem === undefined) {
      if (this.stems.size >= STEMS_KEPT) this.stems.clear();
      stem = stemmer(term);
      this.stems.set(term, stem);
    }
    return stem;
  }

  /** The distinct stems of an index text (terms separated by single spaces, see `indexText`). */
  private indexedStems(indexText: string): string[] {
    const out = new Set<string>();
    for (const term of indexText.split(' ')) if (term.length > 0) out.add(this.stemOf(term));
    return [...out];
  }

  /** A document with this index text went into the index (call inside its transaction). */
  added(indexText: string): void {
    this.record(indexText, 1);
  }

  /** A document with this index text left the index (call inside its transaction). */
  removed(indexText: string): void {
    this.record(indexText, -1);
  }

  /** Recount every term from the index itself (after `memories_fts` was written directly). */
  rebuild(): void {
    const db = this.db();
    db.transaction(() => {
      db.prepare('DELETE FROM term_df_pending').run();
      db.prepare('DELETE FROM term_df').run();
      db.prepare('INSERT INTO term_df (term, df) SELECT term, doc FROM memories_vocab').run();
      this.prepared().countFold.run();
    }).immediate();
  }

  private record(indexText: string, delta: 1 | -1): void {
    const stems = this.indexedStems(indexText);
    if (stems.length === 0) return;
    const statements = this.prepared();
    // Rowids restart at 1 once the table is emptied, so the last one is the number pending.
    const last = Number(statements.append.run(delta, JSON.stringify(stems)).lastInsertRowid);
    if (last >= FOLD_AT_ROWS) {
      statements.fold.run();
      statements.dropEmpty.run();
      statements.clearPending.run();
      statements.countFold.run();
    }
  }

  private prepared(): Statements {
    if (this.statements) return this.statements;
    const db = this.db();
    this.statements = {
      lookup: db.prepare('SELECT term, df FROM term_df WHERE term IN (SELECT value FROM json_each(?))'),
      lookupPending: db.prepare(
        'SELECT term, sum(delta) AS df FROM term_df_pending WHERE term IN (SELECT value FROM json_each(?)) GROUP BY term',
      ),
      append: db.prepare('INSERT INTO term_df_pending (term, delta) SELECT value, ? FROM json_each(?)'),
      // `WHERE true` keeps SQLite from reading ON CONFLICT as part of the SELECT.
      fold: db.prepare(
        `INSERT INTO term_df (term, df) SELECT term, sum(delta) FROM term_df_pending WHERE true GROUP BY term
         ON CONFLICT (term) DO UPDATE SET df = df + excluded.df`,
      ),
      dropEmpty: db.prepare('DELETE FROM term_df WHERE df <= 0 AND term IN (SELECT term FROM term_df_pending WHERE delta < 0)'),
      clearPending: db.prepare('DELETE FROM term_df_pending'),
      folds: db.prepare(`SELECT value FROM state WHERE key = '${FOLDS_KEY}'`).pluck(),
      countFold: db.prepare(
        `INSERT INTO state (key, value) VALUES ('${FOLDS_KEY}', '1') ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)`,
      ),
      pendingSince: db.prepare('SELECT rowid, term, delta FROM term_df_pending WHERE rowid > ? ORDER BY rowid').raw(),
      lastPending: db.prepare('SELECT max(rowid) FROM term_df_pending').pluck(),
    };
    return this.statements;
  }
}
