/**
 * How common each lexeme is, from the planner's own statistics (`pg_stats.most_common_elems` of
 * a tsvector column, kept by ANALYZE / autovacuum), cached per process for a few minutes.
 *
 * Full-text search uses it to find candidates by the query's selective terms only: a term in a
 * large share of memories (`src`, `test`, `in`) would otherwise make PostgreSQL rank most of the
 * table for every query. Those terms still count in the ranking; when the selective terms alone
 * find fewer rows than asked for, the search runs again with every term.
 */
import type { Queryable } from './driver.js';

/** A lexeme in more than this share of rows is too common to select candidates by. */
export const COMMON_SHARE = 0.03;
const TTL_MS = 5 * 60_000;

export class TermStats {
  private readonly cache = new Map<string, { at: number; freq: Map<string, number> }>();

  constructor(
    private readonly db: Queryable,
    private readonly now: () => number = Date.now,
  ) {}

  async frequencies(table: 'memories' | 'turns'): Promise<Map<string, number>> {
    const cached = this.cache.get(table);
    if (cached && this.now() - cached.at < TTL_MS) return cached.freq;
    const rows = await this.db.query<{ elems: string[] | null; freqs: number[] | null }>(
      `SELECT most_common_elems::text::text[] AS elems, most_common_elem_freqs AS freqs
         FROM pg_stats WHERE schemaname = current_schema() AND tablename = $1 AND attname = 'terms'`,
      [table],
    );
    const freq = new Map<string, number>();
    const row = rows.rows[0];
    if (row?.elems && row.freqs) row.elems.forEach((lexeme, i) => freq.set(lexeme, row.freqs?.[i] ?? 0));
    this.cache.set(table, { at: this.now(), freq });
    return freq;
  }

  /** The lexemes to select candidates by: the selective ones, or null when that would not narrow the search. */
  async selective(table: 'memories' | 'turns', lexemes: string[]): Promise<string[] | null> {
    if (lexemes.length < 2) return null;
    const freq = await this.frequencies(table);
    const rare = lexemes.filter((l) => (freq.get(l) ?? 0) <= COMMON_SHARE);
    return rare.length > 0 && rare.length < lexemes.length ? rare : null;
  }
}
