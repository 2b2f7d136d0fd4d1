/**
 * The two sides `cairn copy` reads and writes: a SQLite store (through its better-sqlite3
 * connection) and a PostgreSQL store (through its pool). Each reads canonical rows in bytewise
 * key order and upserts them by key; the session substrate goes through `writeSubstrate`, the
 * vectors through `putVectors`, so each store keeps its own indexes.
 */
import { indexText } from '../tokenize.js';
import { memoryIndexSource } from '../memory-rows.js';
import type { SqliteStore } from '../sqlite/store.js';
import { blobToVector } from '../embedding-rows.js';
import type { CompactionRecord, CorrectionRecord, FactRecord, IngestCursor, Store, TurnRecord } from '../../types.js';
import { quoteColumn, vectorValues, type CopyEndpoint, type Row, type TableSpec } from './copy-tables.js';
import { tsvectorLiteral } from './fts.js';
import { pgJson } from './rows.js';
import type { PostgresStore } from './store.js';

/** Tables written through the substrate API rather than raw SQL. */
const SUBSTRATE_TABLES = new Set(['turns', 'compactions', 'corrections', 'ingest_cursors', 'session_facts']);

/** Key columns compared numerically (everything else is text, compared bytewise). */
const NUMERIC_KEYS = new Set(['events.id', 'ledger_windows.win', 'ledger_injections.id', 'ledger_items.injection_id', 'ledger_outcomes.win']);

/** SELECT list and FROM clause of a table's canonical rows (`m` joins name memories by id). */
function source(table: TableSpec, memoryKey: 'rowid' | 'pk'): { select: string; from: string; where: string; keyExpr: string[] } {
  if (table.name === 'vectors') {
    return { select: 'm.id AS memory_id, v.VECTOR AS vector', from: `vectors v JOIN memories m ON m.${memoryKey} = v.memory_${memoryKey}`, where: '', keyExpr: ['m.id'] };
  }
  if (table.name === 'snapshot_members') {
    return {
      select: 's.snapshot_id, m.id AS memory_id',
      from: `snapshot_members s JOIN memories m ON m.${memoryKey} = s.memory_${memoryKey}`,
      where: '',
      keyExpr: ['s.snapshot_id', 'm.id'],
    };
  }
  if (table.name === 'session_facts') {
    const fromFact = new Set(['kind', 'text', 'path', 'line']);
    return {
      select: table.columns.map((c) => `${fromFact.has(c) ? 'f' : 'r'}.${c}`).join(', '),
      from: 'session_fact_refs r JOIN session_facts f ON f.id = r.fact_id',
      where: '',
      keyExpr: ['r.fact_id', 'r.turn_id'],
    };
  }
  // term_df_folds, memory_bands and memory_terms: the SQLite store's own bookkeeping of its term_df
  // folds (sqlite/term-frequency.ts) and of its near-duplicate bands' and stored terms' fills
  // (sqlite/memory-bands.ts, sqlite/memory-terms.ts), not data.
  const where = table.name === 'state' ? "key NOT IN ('vector_model', 'vector_epoch', 'term_df_folds', 'memory_bands', 'memory_terms') AND key NOT LIKE 'copy.%'" : '';
  return { select: table.columns.map(quoteColumn).join(', '), from: table.name, where, keyExpr: table.key.map(quoteColumn) };
}

function turnFromRow(row: Row): TurnRecord {
  return {
    id: row.id as string,
    sessionId: row.session_id as string,
    seq: row.seq as number,
    role: row.role as TurnRecord['role'],
    text: row.text as string,
    toolName: row.tool_name as string | null,
    toolInput: row.tool_input as string | null,
    toolUseId: row.tool_use_id as string | null,
    isError: row.is_error as boolean,
    flags: row.flags as string[],
    at: row.at as number | null,
    sourceUuid: row.source_uuid as string | null,
    sourceLine: row.source_line as number,
  };
}

/** Write substrate rows through the store's own API (its full-text index and merge rules). */
async function writeSubstrateRows(store: Store, table: TableSpec, rows: Row[]): Promise<void> {
  const substrate = store.substrate;
  if (!substrate) return;
  const empty = { sessions: [], turns: [], compactions: [], corrections: [], cursor: null };
  if (table.name === 'turns') await substrate.writeSubstrate({ ...empty, turns: rows.map(turnFromRow) });
  if (table.name === 'compactions') {
    const compactions: CompactionRecord[] = rows.map((r) => ({
      id: r.id as string,
      sessionId: r.session_id as string,
      trigger: r.trigger as CompactionRecord['trigger'],
      preTokens: r.pre_tokens as number | null,
      summary: r.summary as string | null,
      at: r.at as number | null,
      seq: r.seq as number,
      sourceLine: r.source_line as number,
    }));
    await substrate.writeSubstrate({ ...empty, compactions });
  }
  if (table.name === 'corrections') {
    const corrections: CorrectionRecord[] = rows.map((r) => ({
      id: r.id as string,
      sessionId: r.session_id as string,
      premiseTurnId: r.premise_turn_id as string | null,
      correctionTurnId: r.correction_turn_id as string,
      kind: r.kind as CorrectionRecord['kind'],
      lang: r.lang as string | null,
      text: r.text as string,
      at: r.at as number | null,
    }));
    await substrate.writeSubstrate({ ...empty, corrections });
  }
  if (table.name === 'session_facts') {
    const facts: FactRecord[] = rows.map((r) => ({
      id: r.fact_id as string,
      sessionId: r.session_id as string,
      kind: r.kind as FactRecord['kind'],
      text: r.text as string,
      path: r.path as string | null,
      line: r.line as number | null,
      note: r.note as string | null,
      turnId: r.turn_id as string,
      seq: r.seq as number,
      role: r.role as FactRecord['role'],
      toolName: r.tool_name as string | null,
      at: r.at as number | null,
    }));
    await substrate.writeSubstrate({ ...empty, facts });
  }
  if (table.name === 'ingest_cursors') {
    for (const r of rows) {
      const cursor: IngestCursor = {
        path: r.path as string,
        size: r.size as number,
        mtimeMs: r.mtime_ms as number,
        offset: r.offset as number,
        headHash: r.head_hash as string,
        state: r.state as Record<string, unknown>,
        updatedAt: r.updated_at as number,
      };
      await substrate.writeSubstrate({ ...empty, cursor });
    }
  }
}

function vectorItems(rows: Row[]): Array<{ id: string; vector: Float32Array }> {
  return rows.map((r) => ({ id: r.memory_id as string, vector: Float32Array.from(r.vector as number[]) }));
}

/* ------------------------------------------------------------------------------------ SQLite */

/**
 * SQLite keeps a fact's occurrences packed in its row (migration 017): one row per occurrence with
 * its fact's columns, as PostgreSQL's join gives them, in (fact id, turn id) order from `after`.
 */
function readPackedFacts(db: SqliteStore['db'], after: unknown[] | null, limit: number): Array<Record<string, unknown>> {
  const columns = `f.id AS fact_id, r.value ->> 0 AS turn_id, f.session_id, f.kind, f.text, f.path, f.line,
    r.value ->> 1 AS seq, r.value ->> 2 AS role, r.value ->> 3 AS tool_name, r.value ->> 4 AS at, r.value ->> 5 AS note`;
  const from = 'session_facts f, json_each(f.refs) r';
  if (after === null) return db.prepare(`SELECT ${columns} FROM ${from} ORDER BY f.id, turn_id LIMIT ?`).all(limit) as Array<Record<string, unknown>>;
  return db
    .prepare(`SELECT ${columns} FROM ${from} WHERE f.id >= ? AND (f.id > ? OR r.value ->> 0 > ?) ORDER BY f.id, turn_id LIMIT ?`)
    .all(after[0], after[0], after[1], limit) as Array<Record<string, unknown>>;
}

export function sqliteEndpoint(store: SqliteStore): CopyEndpoint {
  const db = store.db;
  const decode = (table: TableSpec, raw: Record<string, unknown>): Row => {
    const row: Row = {};
    for (const column of table.columns) {
      let value = raw[column];
      if (table.name === 'vectors' && column === 'vector') value = vectorValues(blobToVector(value as Buffer));
      else if (value !== null && (table.json?.includes(column) || table.arrays?.includes(column))) value = JSON.parse(value as string);
      else if (table.bools?.includes(column)) value = value === null ? null : value === 1;
      row[column] = value;
    }
    return row;
  };
  const encode = (table: TableSpec, column: string, value: unknown): unknown => {
    if (value !== null && (table.json?.includes(column) || table.arrays?.includes(column))) return JSON.stringify(value);
    if (table.bools?.includes(column)) return value === null ? null : value ? 1 : 0;
    return value;
  };
  return {
    location: store.location,
    async count(table) {
      if (table.name === 'session_facts') return db.prepare('SELECT coalesce(sum(json_array_length(refs)), 0) FROM session_facts').pluck().get() as number;
      const s = source(table, 'rowid');
      return db.prepare(`SELECT count(*) FROM ${s.from}${s.where ? ` WHERE ${s.where}` : ''}`).pluck().get() as number;
    },
    async read(table, after, limit) {
      if (table.name === 'session_facts') return readPackedFacts(db, after, limit).map((r) => decode(table, r));
      const s = source(table, 'rowid');
      const clauses = s.where ? [s.where] : [];
      if (after) clauses.push(`(${s.keyExpr.join(', ')}) > (${after.map(() => '?').join(', ')})`);
      const select = s.select.replace('v.VECTOR', 'v.vector');
      const rows = db
        .prepare(`SELECT ${select} FROM ${s.from}${clauses.length ? ` WHERE ${clauses.join(' AND ')}` : ''} ORDER BY ${s.keyExpr.join(', ')} LIMIT ?`)
        .all(...(after ?? []), limit) as Array<Record<string, unknown>>;
      return rows.map((r) => decode(table, r));
    },
    async write(table, rows, model) {
      if (rows.length === 0) return;
      if (table.name === 'vectors') {
        if (model) await store.putVectors(model, vectorItems(rows));
        return;
      }
      if (SUBSTRATE_TABLES.has(table.name)) return writeSubstrateRows(store, table, rows);
      const run = db.transaction(() => {
        if (table.name === 'snapshot_members') {
          const insert = db.prepare('INSERT OR IGNORE INTO snapshot_members (snapshot_id, memory_rowid) SELECT ?, rowid FROM memories WHERE id = ?');
          for (const r of rows) insert.run(r.snapshot_id, r.memory_id);
          return;
        }
        const columns = table.columns;
        const updates = columns.filter((c) => !table.key.includes(c)).map((c) => `${quoteColumn(c)} = excluded.${quoteColumn(c)}`);
        const conflict = table.name === 'events' || updates.length === 0 ? 'DO NOTHING' : `DO UPDATE SET ${updates.join(', ')}`;
        const insert = db.prepare(
          `INSERT INTO ${table.name} (${columns.map(quoteColumn).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})
           ON CONFLICT (${table.key.map(quoteColumn).join(', ')}) ${conflict}`,
        );
        const rowidOf = db.prepare('SELECT rowid FROM memories WHERE id = ?').pluck();
        const dropTerms = db.prepare('DELETE FROM memories_fts WHERE rowid = ?');
        const addTerms = db.prepare('INSERT INTO memories_fts (rowid, terms) VALUES (?, ?)');
        for (const r of rows) {
          insert.run(...columns.map((c) => encode(table, c, r[c])));
          if (table.name === 'memories') {
            const rowid = rowidOf.get(r.id) as number;
            dropTerms.run(rowid);
            addTerms.run(rowid, indexText(memoryIndexSource({ text: r.text as string, tags: r.tags as string[], context: (r.context as string | null | undefined) ?? null })));
          }
        }
      });
      run.immediate();
    },
    vectorModel: () => store.vectorModel(),
    getState: (key) => store.getState(key),
    async setState(key, value) {
      if (value === null) db.prepare('DELETE FROM state WHERE key = ?').run(key);
      else await store.setState(key, value);
    },
    async finish() {
      // Rows went into memories_fts directly, past the store's per-write term counts and bands:
      // the bands are filled again from the first memory (remember or `cairn migrate` does it).
      store.rebuildTermFrequencies();
      store.restartNearDuplicateFill();
    },
  };
}

/* -------------------------------------------------------------------------------- PostgreSQL */

export function postgresEndpoint(store: PostgresStore): CopyEndpoint {
  const db = store.db;
  const keyExpr = (table: TableSpec, expr: string, column: string): string => (NUMERIC_KEYS.has(`${table.name}.${column}`) ? expr : `${expr} COLLATE "C"`);
  const encode = (table: TableSpec, column: string, value: unknown): unknown => {
    if (value !== null && table.json?.includes(column)) return pgJson(value);
    return value;
  };
  return {
    location: store.location,
    async count(table) {
      const s = source(table, 'pk');
      const rows = await db.query<{ n: number }>(`SELECT count(*) AS n FROM ${s.from}${s.where ? ` WHERE ${s.where}` : ''}`);
      return rows.rows[0]?.n ?? 0;
    },
    async read(table, after, limit) {
      const s = source(table, 'pk');
      const keys = s.keyExpr.map((expr, i) => keyExpr(table, expr, table.key[i] as string));
      const params: unknown[] = [];
      const clauses = s.where ? [s.where] : [];
      if (after) {
        clauses.push(`(${keys.join(', ')}) > (${after.map((v) => `$${params.push(v)}`).join(', ')})`);
      }
      const select = s.select.replace('v.VECTOR', 'v.embedding::real[]');
      const result = await db.query<Row>(
        `SELECT ${select} FROM ${s.from}${clauses.length ? ` WHERE ${clauses.join(' AND ')}` : ''} ORDER BY ${keys.join(', ')} LIMIT $${params.push(limit)}`,
        params,
      );
      if (table.name === 'vectors') for (const row of result.rows) row.vector = vectorValues(row.vector as number[]);
      return result.rows;
    },
    async write(table, rows, model) {
      if (rows.length === 0) return;
      if (table.name === 'vectors') {
        if (model) await store.putVectors(model, vectorItems(rows));
        return;
      }
      if (SUBSTRATE_TABLES.has(table.name)) return writeSubstrateRows(store, table, rows);
      await db.transaction(async (client) => {
        if (table.name === 'snapshot_members') {
          for (const r of rows) {
            await client.query('INSERT INTO snapshot_members (snapshot_id, memory_pk) SELECT $1, pk FROM memories WHERE id = $2 ON CONFLICT DO NOTHING', [
              r.snapshot_id,
              r.memory_id,
            ]);
          }
          return;
        }
        const columns = table.name === 'memories' ? [...table.columns, 'terms'] : table.columns;
        const updates = columns.filter((c) => !table.key.includes(c)).map((c) => `${quoteColumn(c)} = excluded.${quoteColumn(c)}`);
        const conflict = table.name === 'events' || updates.length === 0 ? 'DO NOTHING' : `DO UPDATE SET ${updates.join(', ')}`;
        const placeholders = columns.map((c, i) => (c === 'terms' ? `$${i + 1}::tsvector` : `$${i + 1}`));
        // Ledger injections keep their ids (their items name them); the column is an identity.
        const overriding = table.name === 'ledger_injections' ? ' OVERRIDING SYSTEM VALUE' : '';
        const sql = `INSERT INTO ${table.name} (${columns.map(quoteColumn).join(', ')})${overriding} VALUES (${placeholders.join(', ')})
                     ON CONFLICT (${table.key.map(quoteColumn).join(', ')}) ${conflict}`;
        for (const r of rows) {
          const values = table.columns.map((c) => encode(table, c, r[c]));
          if (table.name === 'memories') values.push(tsvectorLiteral(memoryIndexSource({ text: r.text as string, tags: r.tags as string[], context: (r.context as string | null | undefined) ?? null })));
          await client.query(sql, values);
        }
      });
    },
    vectorModel: () => store.vectorModel(),
    getState: (key) => store.getState(key),
    async setState(key, value) {
      if (value === null) await db.query('DELETE FROM state WHERE key = $1', [key]);
      else await store.setState(key, value);
    },
    async finish() {
      // Copied events keep their ids; new events must number after them.
      await db.query("SELECT setval(pg_get_serial_sequence('events', 'id'), greatest((SELECT max(id) FROM events), 1))");
      await db.query("SELECT setval(pg_get_serial_sequence('ledger_injections', 'id'), greatest((SELECT max(id) FROM ledger_injections), 1))");
    },
  };
}

