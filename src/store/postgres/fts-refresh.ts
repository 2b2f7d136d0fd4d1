/**
 * The FTS migration of terms version 2 on PostgreSQL (issue #17.10: CJK and emoji substring
 * search), as on SQLite (see ../sqlite/fts-refresh.ts): rows whose text holds a character from
 * U+2190 on get today's terms, once, when a database indexed at an older terms version is opened.
 */
import { factIndexSource, turnIndexSource } from '../substrate-rows.js';
import { memoryIndexSource } from '../memory-rows.js';
import { TERMS_VERSION } from '../tokenize.js';
import type { PgDatabase } from './driver.js';
import { tsvectorLiteral } from './fts.js';

const TERMS_VERSION_KEY = 'fts_terms_version';
/** A character from U+2190 on (PostgreSQL's regular expressions take \\u escapes). */
const BEYOND_WORDS = '[^\\x01-\\u218f]';

/** Re-index the rows whose terms changed since the database's terms version; a no-op when current. */
export async function refreshPgFtsTerms(db: PgDatabase): Promise<void> {
  const version = async (): Promise<number> =>
    Number((await db.query<{ value: string }>('SELECT value FROM state WHERE key = $1', [TERMS_VERSION_KEY])).rows[0]?.value ?? 1);
  if ((await version()) >= TERMS_VERSION) return;
  await db.transaction(async (client) => {
    // One process re-indexes; the others wait here, then find the version current.
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [TERMS_VERSION_KEY]);
    const current = await client.query<{ value: string }>('SELECT value FROM state WHERE key = $1', [TERMS_VERSION_KEY]);
    if (Number(current.rows[0]?.value ?? 1) >= TERMS_VERSION) return;
    const memories = await client.query<{ id: string; text: string; tags: string[]; context: string | null }>(
      `SELECT id, text, tags, context FROM memories WHERE text ~ $1 OR array_to_string(tags, ' ') ~ $1`,
      [BEYOND_WORDS],
    );
    for (const m of memories.rows) {
      await client.query('UPDATE memories SET terms = $2::tsvector WHERE id = $1', [m.id, tsvectorLiteral(memoryIndexSource(m))]);
    }
    const turns = await client.query<{ id: string; text: string; tool_name: string | null; role: string }>(
      'SELECT id, text, tool_name, role FROM turns WHERE text ~ $1 OR tool_name ~ $1',
      [BEYOND_WORDS],
    );
    for (const t of turns.rows) {
      await client.query('UPDATE turns SET terms = $2::tsvector WHERE id = $1', [t.id, tsvectorLiteral(turnIndexSource({ text: t.text, toolName: t.tool_name, role: t.role as never }))]);
    }
    const facts = await client.query<{ id: string; text: string }>('SELECT id, text FROM session_facts WHERE text ~ $1', [BEYOND_WORDS]);
    for (const f of facts.rows) await client.query('UPDATE session_facts SET terms = $2::tsvector WHERE id = $1', [f.id, tsvectorLiteral(factIndexSource(f))]);
    await client.query('INSERT INTO state (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [TERMS_VERSION_KEY, String(TERMS_VERSION)]);
  });
}
