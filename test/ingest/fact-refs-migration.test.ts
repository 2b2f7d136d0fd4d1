/**
 * Session fact occurrences, as rows (migrations 007 and 011: session_fact_refs, one row per fact
 * and turn) and packed into their fact's row (migration 017: session_facts.refs). A store written
 * before 017 keeps every fact and occurrence, lists and expands them exactly as the row schema's
 * queries did, and takes new ingests; a store written packed lists the same as one written by the
 * row schema's SQL from the same batches, passes split so facts recur across batches.
 */
import { readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMigrations, openDatabase } from '../../src/store/sqlite/database.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { FACT_REF_COLUMNS, factsFromRows, listedFacts, type FactRefRow } from '../../src/store/substrate-rows.js';
import type { FactListOptions, FactRecord, SessionFact, SessionFactDetail, SubstrateStore } from '../../src/types.js';
import { fixtures, openSubstrate, readAll, tempDir } from './helpers.js';

/** The migration that packs occurrences (its number as numbered when it landed), and the schema just before it. */
const PACKED = loadMigrations().find((m) => m.name === 'fact_refs_packed')?.version ?? Number.NaN;
const ROW_SCHEMA = loadMigrations().filter((m) => m.version < PACKED);

const LISTINGS: FactListOptions[] = [{}, { limit: 20_000 }, { fromSeq: 2, beforeSeq: 9 }, { fromSeq: 5 }, { beforeSeq: 3 }, { kinds: ['path', 'command'] }, { nearSeq: 4, window: 3 }, { limit: 3 }];

/** What a reader needs: the row schema's queries below, or a substrate. */
interface FactReader {
  sessions(): string[];
  listFacts(sessionId: string, options: FactListOptions): SessionFact[] | Promise<SessionFact[]>;
  getFact(id: string): SessionFactDetail | null | Promise<SessionFactDetail | null>;
}

/** The fact listings of the row schema (before migration 017), as its substrate ran them. */
function rowSchemaReader(db: Database.Database): FactReader {
  return {
    sessions: () => (db.prepare('SELECT DISTINCT session_id FROM session_facts ORDER BY session_id').pluck().all() as string[]),
    listFacts(sessionId, options) {
      const where = ['f.session_id = @sessionId'];
      const params: Record<string, unknown> = { sessionId };
      if (options.fromSeq !== undefined) {
        where.push('r.seq >= @fromSeq');
        params.fromSeq = options.fromSeq;
      }
      if (options.beforeSeq !== undefined) {
        where.push('r.seq < @beforeSeq');
        params.beforeSeq = options.beforeSeq;
      }
      if (options.kinds !== undefined && options.kinds.length > 0) {
        where.push(`f.kind IN (${options.kinds.map((_, i) => `@kind${i}`).join(', ')})`);
        options.kinds.forEach((kind, i) => {
          params[`kind${i}`] = kind;
        });
      }
      const rows = db.prepare(`SELECT ${FACT_REF_COLUMNS} FROM session_facts f JOIN session_fact_refs r ON r.fact_id = f.id WHERE ${where.join(' AND ')}`).all(params);
      return listedFacts(rows as FactRefRow[], options);
    },
    getFact: (id) => factsFromRows(db.prepare(`SELECT ${FACT_REF_COLUMNS} FROM session_facts f JOIN session_fact_refs r ON r.fact_id = f.id WHERE f.id = ?`).all(id) as FactRefRow[])[0] ?? null,
  };
}

function substrateReader(db: Database.Database, substrate: SubstrateStore): FactReader {
  return {
    sessions: () => (db.prepare('SELECT DISTINCT session_id FROM session_facts ORDER BY session_id').pluck().all() as string[]),
    listFacts: (sessionId, options) => substrate.listFacts(sessionId, options),
    getFact: (id) => substrate.getFact(id),
  };
}

/** Every listing of every session and every fact expanded by id, as JSON (order as returned). */
async function readBack(reader: FactReader): Promise<string[]> {
  const out: string[] = [];
  for (const id of reader.sessions()) {
    for (const options of LISTINGS) out.push(JSON.stringify(await reader.listFacts(id, options)));
    for (const fact of await reader.listFacts(id, { limit: 20_000 })) out.push(JSON.stringify(await reader.getFact(fact.id)));
  }
  return out;
}

/** The row schema's fact writes (before migration 017), statement for statement. */
function writeFactRows(db: Database.Database, facts: readonly FactRecord[]): void {
  const insertFact = db.prepare('INSERT INTO session_facts (id, session_id, kind, text, path, line) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING');
  const insertRef = db.prepare(
    `INSERT INTO session_fact_refs (fact_id, turn_id, session_id, seq, role, tool_name, at, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (fact_id, turn_id) DO UPDATE SET note = coalesce(excluded.note, session_fact_refs.note)
     WHERE excluded.note IS NOT NULL AND excluded.note IS NOT session_fact_refs.note`,
  );
  db.transaction(() => {
    for (const f of facts) insertFact.run(f.id, f.sessionId, f.kind, f.text, f.path, f.line);
    for (const f of facts) insertRef.run(f.id, f.turnId, f.sessionId, f.seq, f.role, f.toolName, f.at, f.note);
  })();
}

/**
 * A generic-format transcript of two sessions whose turns name the same paths, commands, errors
 * and symbols again and again (a fact recurs in many turns, and across passes of a split read).
 */
function writeRecurringTranscript(dir: string): string {
  const lines: string[] = [];
  for (let i = 0; i < 240; i++) {
    const session = i % 2 === 0 ? 'recur-a' : 'recur-b';
    const ts = `2026-05-01T10:${String(Math.floor(i / 60)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z`;
    const path = `src/mod${i % 7}/file${i % 5}.ts:${(i % 13) + 1}`;
    lines.push(JSON.stringify({ turn: i, role: 'user', content: `please look at ${path} and run \`npm test -- mod${i % 3}\``, ts, session, cwd: '/home/dev/app' }));
    lines.push(JSON.stringify({ turn: i, role: 'assistant', content: `Reading ${path}; the call processChanges${i % 4}() fails with TypeError: cannot read properties of undefined (reading 'x${i % 6}')`, ts, session }));
  }
  const path = join(dir, 'recurring.jsonl');
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

/** Every fixture transcript and a recurring one, read in passes of `maxBytes` (facts of one session recur across batches). */
function fixtureBatches(maxBytes: number, dir: string) {
  const files = readdirSync(fixtures, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.jsonl') && !f.includes('expected') && statSync(join(fixtures, f)).isFile())
    .sort()
    .map((f) => join(fixtures, f));
  return [...files, writeRecurringTranscript(dir)].flatMap((f) => readAll(f, { maxBytes }).batches);
}

let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

describe('migration 017 (fact occurrences packed into their fact row)', () => {
  for (const from of [10, PACKED - 1]) {
    it(`keeps every occurrence of a store at version ${from}, reads back as the row schema did, takes new ingests`, async () => {
      const dir = tempDir('cairn-fact-refs-');
      dirs.push(dir);
      const path = join(dir, 'cairn.db');
      const migrations = loadMigrations();
      const old = openDatabase(path, { migrations: migrations.filter((m) => m.version <= from) });
      const batches = fixtureBatches(4_096, dir);
      for (const batch of batches) writeFactRows(old, batch.facts ?? []);
      // A note added to an occurrence already stored, as a later pass can.
      const some = batches.flatMap((b) => b.facts ?? [])[0] as FactRecord;
      writeFactRows(old, [{ ...some, note: 'exit 1 · added later' }]);
      const occurrences = (old.prepare('SELECT count(*) FROM session_fact_refs').pluck().get() as number);
      expect(occurrences).toBeGreaterThan(50);
      expect(old.prepare('SELECT count(*) FROM session_facts').pluck().get()).toBeLessThan(occurrences);
      const expected = await readBack(rowSchemaReader(old));
      expect(expected.some((listing) => listing.includes('added later'))).toBe(true);
      old.close();

      const store = await openSqliteStore(path);
      expect((await store.stats()).schemaVersion).toBe(migrations.at(-1)?.version);
      expect(store.db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'session_fact_refs'").get()).toBeUndefined();
      expect(store.db.prepare('SELECT sum(json_array_length(refs)) FROM session_facts').pluck().get()).toBe(occurrences);
      const substrate = store.substrate as SubstrateStore;
      expect(await readBack(substrateReader(store.db, substrate))).toEqual(expected);

      // The same facts again (whole files now, with the turns) change no listing.
      for (const batch of fixtureBatches(1 << 30, dir)) await substrate.writeSubstrate(batch);
      expect(store.db.prepare('SELECT sum(json_array_length(refs)) FROM session_facts').pluck().get()).toBe(occurrences);
      expect(await readBack(substrateReader(store.db, substrate))).toEqual(expected);
      await store.close();
    });
  }

  it('an empty store just before the packing migrates to no facts', async () => {
    const dir = tempDir('cairn-fact-refs-');
    dirs.push(dir);
    const path = join(dir, 'cairn.db');
    openDatabase(path, { migrations: ROW_SCHEMA }).close();
    const store = await openSqliteStore(path);
    expect(store.db.prepare('SELECT count(*) FROM session_facts').pluck().get()).toBe(0);
    expect(await store.substrate?.listFacts('nobody')).toEqual([]);
    expect(await store.substrate?.getFact('nothing')).toBeNull();
    await store.close();
  });
});

describe('packed occurrences written by the substrate', () => {
  it('turn ids JSON spells with escapes, and a note naming a turn id, merge as the row schema does', async () => {
    const dir = tempDir('cairn-fact-refs-');
    dirs.push(dir);
    const rows = openDatabase(join(dir, 'rows.db'), { migrations: ROW_SCHEMA });
    const packed = openSubstrate(tempDir('cairn-fact-packed-'));
    const base: FactRecord = { id: 'fodd', sessionId: 's', kind: 'path', text: 'src/a.ts', path: 'src/a.ts', line: null, note: null, turnId: '', seq: 0, role: 'user', toolName: null, at: 1 };
    // (Not a lone surrogate: SQLite's text columns stored U+FFFD in its place, where JSON keeps it.)
    const turns = ['s:plain', 's:"quoted"', 's:line\nbreak', 's:é', 's:😀', 's:tab\t', 's:back\\slash'];
    const batches = turns.flatMap((turnId, seq) => [
      [{ ...base, turnId, seq }],
      [{ ...base, turnId, seq, note: `mentions "s:plain" and ${JSON.stringify(turnId)}` }],
      [{ ...base, turnId: `${turnId}-next`, seq: seq + 100 }],
    ]);
    for (const facts of [...batches, ...batches]) {
      writeFactRows(rows, facts);
      await packed.substrate.writeSubstrate({ sessions: [], turns: [], compactions: [], corrections: [], facts, cursor: null });
    }
    const expected = await readBack(rowSchemaReader(rows));
    expect(JSON.parse(expected[expected.length - 1] as string).occurrences).toBe(turns.length * 2);
    expect(await readBack(substrateReader(packed.db, packed.substrate))).toEqual(expected);
    rows.close();
    packed.close();
  });

  for (const maxBytes of [2_048, 16_384, 1 << 30]) {
    it(`list and expand as the row schema's writes of the same batches (passes of ${maxBytes} bytes)`, async () => {
      const dir = tempDir('cairn-fact-refs-');
      dirs.push(dir);
      const rows = openDatabase(join(dir, 'rows.db'), { migrations: ROW_SCHEMA });
      const packed = openSubstrate(tempDir('cairn-fact-packed-'));
      const batches = fixtureBatches(maxBytes, dir);
      // Each batch twice, the second time with a note on every occurrence, then a third time without.
      const noted = batches.map((b) => ({ ...b, facts: (b.facts ?? []).map((f, i) => (i % 3 === 0 ? { ...f, note: `note ${i}` } : f)) }));
      for (const round of [batches, noted, batches]) {
        for (const batch of round) {
          writeFactRows(rows, batch.facts ?? []);
          await packed.substrate.writeSubstrate(batch);
        }
      }
      const expected = await readBack(rowSchemaReader(rows));
      expect(expected.length).toBeGreaterThan(100);
      expect(await readBack(substrateReader(packed.db, packed.substrate))).toEqual(expected);
      expect(packed.db.prepare('SELECT sum(json_array_length(refs)) FROM session_facts').pluck().get()).toBe(
        rows.prepare('SELECT count(*) FROM session_fact_refs').pluck().get(),
      );
      rows.close();
      packed.close();
    });
  }
});
