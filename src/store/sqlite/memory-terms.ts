/**
 * Each memory's distinct index terms in `memories.terms` (migration 015), for the exact Jaccard
 * of remember's near-duplicate check: a split of the stored value instead of tokenizing every
 * candidate's text again (~57 candidates a remember at 100K memories, ~24–31 µs each; see
 * docs/BENCHMARKS.md `## write`). The value is `t<TERMS_VERSION>` then the terms, space-separated
 * (an index term holds no space); NULL or another version reads as "not stored", and the check
 * tokenizes the text as before, so a missing or stale value never changes a result. Every writer
 * of a memory's text sets it (writeMemory, patchMemory); a trigger clears it when a text changes
 * without it (a raw copy). Memories written before the column are filled by {@link fillTerms}, a
 * chunk per transaction with its cursor in the state table.
 */
import type Database from 'better-sqlite3';
import { TERMS_VERSION } from '../tokenize.js';

const FORMAT = `t${TERMS_VERSION}`;

/** State key of the fill: `{"v": FORMAT, "next": rowid}` while filling, `{"v": …, "done": true}` once complete. */
export const TERMS_STATE_KEY = 'memory_terms';

/** The stored value of a memory's distinct index terms. */
export function encodeTerms(terms: ReadonlySet<string>): string {
  return terms.size === 0 ? FORMAT : `${FORMAT} ${[...terms].join(' ')}`;
}

/** The distinct index terms of a stored value; null when none are stored under this build's terms version. */
export function decodeTerms(stored: string | null | undefined): string[] | null {
  if (stored === null || stored === undefined) return null;
  if (stored === FORMAT) return [];
  return stored.startsWith(`${FORMAT} `) ? stored.slice(FORMAT.length + 1).split(' ') : null;
}

interface TermsState {
  v: string;
  next?: number;
  done?: boolean;
}

function readState(db: Database.Database): TermsState | null {
  const row = db.prepare('SELECT value FROM state WHERE key = ?').get(TERMS_STATE_KEY) as { value: string } | undefined;
  if (!row) return null;
  try {
    const parsed = JSON.parse(row.value) as TermsState;
    return typeof parsed === 'object' && parsed !== null && typeof parsed.v === 'string' ? parsed : null;
  } catch {
    return null;
  }
}

function writeState(db: Database.Database, state: TermsState): void {
  db.prepare('INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(TERMS_STATE_KEY, JSON.stringify(state));
}

/** Start the fill over (after rows were written past the store, e.g. by `cairn copy`). */
export function restartTermsFill(db: Database.Database): void {
  writeState(db, { v: FORMAT, next: 0 });
}

/**
 * Store the terms of memories written before the column (or under another terms version), in
 * chunks of `chunk` memories by rowid, each chunk and its cursor in one IMMEDIATE transaction; at
 * most `maxChunks` chunks (all by default). `termsOf` gives a text's distinct index terms.
 */
export function fillTerms(db: Database.Database, termsOf: (text: string) => ReadonlySet<string>, options: { chunk?: number; maxChunks?: number } = {}): { filled: number; complete: boolean } {
  const chunk = options.chunk ?? 2048;
  let chunks = options.maxChunks ?? Number.POSITIVE_INFINITY;
  let filled = 0;
  const step = db.transaction((): boolean => {
    let state = readState(db);
    if (state?.v === FORMAT && state.done) return true;
    if (state === null || state.v !== FORMAT) state = { v: FORMAT, next: 0 };
    const after = state.next ?? 0;
    const rows = db.prepare('SELECT rowid, text, terms FROM memories WHERE rowid > ? ORDER BY rowid LIMIT ?').all(after, chunk) as Array<{ rowid: number; text: string; terms: string | null }>;
    const update = db.prepare('UPDATE memories SET terms = ? WHERE rowid = ?');
    for (const row of rows) {
      if (decodeTerms(row.terms) !== null) continue;
      update.run(encodeTerms(termsOf(row.text)), row.rowid);
      filled++;
    }
    const last = rows.length > 0 ? (rows[rows.length - 1] as { rowid: number }).rowid : after;
    const done = rows.length < chunk;
    writeState(db, done ? { v: FORMAT, done: true } : { v: FORMAT, next: last });
    return done;
  });
  let complete = false;
  while (chunks-- > 0 && !complete) complete = step.immediate();
  return { filled, complete };
}

/** A new or empty store needs no fill: mark it complete. One state read when it already is. */
export function initTerms(db: Database.Database): void {
  const state = readState(db);
  if (state !== null && state.v === FORMAT) return;
  if (db.prepare('SELECT 1 FROM memories LIMIT 1').get() !== undefined) return;
  db.transaction(() => {
    if (readState(db)?.v === FORMAT) return;
    if (db.prepare('SELECT 1 FROM memories LIMIT 1').get() === undefined) writeState(db, { v: FORMAT, done: true });
  }).immediate();
}
