/**
 * The FTS migration of terms version 2 (issue #17.10: CJK and emoji substring search): rows whose
 * text holds a character from U+2190 on get the index terms tokenize.ts writes today, once, when
 * a database indexed at an older terms version is opened. Other rows' terms did not change, so
 * they are not touched. SQL migrations cannot run the tokenizer, so this runs in JS after them,
 * in one IMMEDIATE transaction, and records `fts_terms_version` in the state table.
 */
import type Database from 'better-sqlite3';
import { factIndexSource, turnIndexSource } from '../substrate-rows.js';
import { memoryIndexSource } from '../memory-rows.js';
import { indexText, TERMS_VERSION, wordIndexText } from '../tokenize.js';
import type { TermFrequencies } from './term-frequency.js';
import type { TextSearchIndex } from './text-search-index.js';

export const TERMS_VERSION_KEY = 'fts_terms_version';

/** GLOB matching a text with a character from U+2190 on (SQLite compares code points in classes). */
const BEYOND_WORDS_GLOB = '*[^\u0001-\u218f]*';

interface RefreshCounts {
  memories: number;
  turns: number;
  facts: number;
}

function hasTable(db: Database.Database, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE name = ?").get(name) !== undefined;
}

/** Re-index the rows whose terms changed since the database's terms version; a no-op when current. */
export function refreshFtsTerms(db: Database.Database, frequencies: TermFrequencies, textIndex?: TextSearchIndex): RefreshCounts | null {
  const read = (): number => Number((db.prepare('SELECT value FROM state WHERE key = ?').get(TERMS_VERSION_KEY) as { value: string } | undefined)?.value ?? 1);
  if (read() >= TERMS_VERSION) return null;
  const run = db.transaction((): RefreshCounts | null => {
    if (read() >= TERMS_VERSION) return null; // another process did it while we waited
    const counts: RefreshCounts = { memories: 0, turns: 0, facts: 0 };
    const memories = db
      .prepare<[string, string], { rowid: number; text: string; tags: string; context: string | null }>('SELECT rowid, text, tags, context FROM memories WHERE text GLOB ? OR tags GLOB ?')
      .all(BEYOND_WORDS_GLOB, BEYOND_WORDS_GLOB);
    const indexed = db.prepare('SELECT 1 FROM memories_fts WHERE rowid = ?');
    for (const row of memories) {
      if (indexed.get(row.rowid) === undefined) continue; // forgotten or superseded: not indexed
      const source = memoryIndexSource({ text: row.text, tags: JSON.parse(row.tags) as string[], context: row.context });
      const before = wordIndexText(source);
      const after = indexText(source);
      if (before === after) continue;
      db.prepare('DELETE FROM memories_fts WHERE rowid = ?').run(row.rowid);
      db.prepare('INSERT INTO memories_fts (rowid, terms) VALUES (?, ?)').run(row.rowid, after);
      frequencies.removed(before);
      frequencies.added(after);
      textIndex?.removed(row.rowid, before);
      textIndex?.added(row.rowid, after);
      counts.memories++;
    }
    if (hasTable(db, 'turns_fts')) {
      const turns = db
        .prepare<[string, string], { pk: number; text: string; tool_name: string | null; role: string }>('SELECT pk, text, tool_name, role FROM turns WHERE text GLOB ? OR tool_name GLOB ?')
        .all(BEYOND_WORDS_GLOB, BEYOND_WORDS_GLOB);
      const turnIndexed = db.prepare('SELECT 1 FROM turns_fts WHERE rowid = ?');
      for (const row of turns) {
        const source = turnIndexSource({ text: row.text, toolName: row.tool_name, role: row.role as never });
        const after = indexText(source);
        if (after === wordIndexText(source) || turnIndexed.get(row.pk) === undefined) continue;
        db.prepare('DELETE FROM turns_fts WHERE rowid = ?').run(row.pk);
        db.prepare('INSERT INTO turns_fts (rowid, terms) VALUES (?, ?)').run(row.pk, after);
        counts.turns++;
      }
    }
    if (hasTable(db, 'session_facts_fts')) {
      const facts = db.prepare<[string], { pk: number; text: string }>('SELECT pk, text FROM session_facts WHERE text GLOB ?').all(BEYOND_WORDS_GLOB);
      const factIndexed = db.prepare('SELECT 1 FROM session_facts_fts WHERE rowid = ?');
      for (const row of facts) {
        const source = factIndexSource(row);
        const after = indexText(source);
        if (after === wordIndexText(source) || factIndexed.get(row.pk) === undefined) continue;
        db.prepare('DELETE FROM session_facts_fts WHERE rowid = ?').run(row.pk);
        db.prepare('INSERT INTO session_facts_fts (rowid, terms) VALUES (?, ?)').run(row.pk, after);
        counts.facts++;
      }
    }
    db.prepare('INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(TERMS_VERSION_KEY, String(TERMS_VERSION));
    return counts;
  });
  return run.immediate();
}
