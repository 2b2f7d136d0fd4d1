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

/** The distinct stems of an index text (terms separated by single spaces, see `indexText`). */
export function indexedStems(indexText: string): string[] {
  const out = new Set<string>();
  for (const term of indexText.split(' ')) if (term.length > 0) out.add(stemmer(term));
  return [...out];
}

/**
 * Pending rows are folded into term_df once there are this many (~50 writes). Upserting each
 * write's ~40 stems into term_df straight away dirtied ~40 of its pages a write (at 100K the WAL
 * grew 271 KB a write instead of 103, writeMemory's p50 0.15 → 0.30 ms and its mean doubled);
 * appending them here dirties one or two, and a fold touches each distinct stem once for ~50
 * writes (151 KB a write, p50 0.17 ms). Lookups scan the pending rows: +0.035 ms per 1,000.
 */
const FOLD_AT_ROWS = 2048;

interface Statements {
  lookup: Database.Statement;
  lookupPending: Database.Statement;
  append: Database.Statement;
  fold: Database.Statement;
  dropEmpty: Database.Statement;
  clearPending: Database.Statement;
}

export class TermFrequencies {
  private statements: Statements | null = null;

  constructor(private readonly db: () => Database.Database) {}

  /** Forget the prepared statements (the connection was closed). */
  reset(): void {
    this.statements = null;
  }

  /** Document frequency of each of `terms` (by stem; 0 when no memory holds it), in order. */
  of(terms: readonly string[]): number[] {
    const stems = terms.map((term) => stemmer(term));
    const json = JSON.stringify(stems);
    const { lookup, lookupPending } = this.prepared();
    const byStem = new Map<string, number>();
    // One read transaction: another process's fold must not land between the two reads.
    this.db().transaction(() => {
      for (const row of lookup.all(json) as Array<{ term: string; df: number }>) byStem.set(row.term, row.df);
      for (const row of lookupPending.all(json) as Array<{ term: string; df: number }>) byStem.set(row.term, (byStem.get(row.term) ?? 0) + row.df);
    })();
    return stems.map((stem) => Math.max(0, byStem.get(stem) ?? 0));
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
    }).immediate();
  }

  private record(indexText: string, delta: 1 | -1): void {
    const stems = indexedStems(indexText);
    if (stems.length === 0) return;
    const statements = this.prepared();
    // Rowids restart at 1 once the table is emptied, so the last one is the number pending.
    const last = Number(statements.append.run(delta, JSON.stringify(stems)).lastInsertRowid);
    if (last >= FOLD_AT_ROWS) {
      statements.fold.run();
      statements.dropEmpty.run();
      statements.clearPending.run();
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
    };
    return this.statements;
  }
}
