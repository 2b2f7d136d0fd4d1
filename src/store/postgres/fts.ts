/**
 * Full text on PostgreSQL with the same terms as SQLite: tokenize.ts's code-aware terms, each
 * Porter-stemmed (as FTS5's `porter` tokenizer does), written as `tsvector` / `tsquery` literals
 * so the server's own parser never splits `process_workspace_changes` or drops a stop word.
 */
import { indexTerms, queryTerms } from '../tokenize.js';
import { stem } from './stem.js';

/** tsvector positions run 1..16383; a lexeme keeps at most 256 of them. */
const MAX_POSITION = 16_383;
const MAX_POSITIONS_PER_LEXEME = 256;
/** PostgreSQL refuses lexemes of 2 KB or more. */
const MAX_LEXEME_BYTES = 2_000;

function quote(lexeme: string): string {
  return `'${lexeme.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

function usable(lexeme: string): boolean {
  return lexeme.length > 0 && Buffer.byteLength(lexeme) < MAX_LEXEME_BYTES && !lexeme.includes('\0');
}

/** A `tsvector` literal (cast with `::tsvector`) for `text`: stemmed terms with their positions. */
export function tsvectorLiteral(text: string): string {
  const positions = new Map<string, number[]>();
  let position = 0;
  for (const term of indexTerms(text)) {
    position = Math.min(position + 1, MAX_POSITION);
    const lexeme = stem(term);
    if (!usable(lexeme)) continue;
    const list = positions.get(lexeme);
    if (list === undefined) positions.set(lexeme, [position]);
    else if (list.length < MAX_POSITIONS_PER_LEXEME && list[list.length - 1] !== position) list.push(position);
  }
  return [...positions].map(([lexeme, list]) => `${quote(lexeme)}:${list.join(',')}`).join(' ');
}

/** The distinct stemmed lexemes of a query, in order. */
export function queryLexemes(query: string): string[] {
  const lexemes = new Set<string>();
  for (const term of queryTerms(query)) {
    const lexeme = stem(term);
    if (usable(lexeme)) lexemes.add(lexeme);
  }
  return [...lexemes];
}

/** A `tsquery` literal OR-ing lexemes (null when there are none). */
export function tsqueryOf(lexemes: string[]): string | null {
  return lexemes.length === 0 ? null : lexemes.map(quote).join(' | ');
}

/** A `tsquery` literal OR-ing the stemmed query terms, or null when the query has none. */
export function tsqueryLiteral(query: string): string | null {
  return tsqueryOf(queryLexemes(query));
}
