/**
 * The session substrate on PostgreSQL (migrations/002_substrate.sql), with the same semantics
 * as SQLite's: idempotent batches keyed by stable ids, a turn re-emitted with more text updated
 * in place, token totals per (session, transcript file), one transaction per batch.
 */
import type {
  Agent,
  CompactionRecord,
  CorrectionRecord,
  FactHit,
  FactListOptions,
  FactRecord,
  FactSearchOptions,
  IngestCursor,
  SessionFact,
  SessionFactDetail,
  SessionRecord,
  SubstrateBatch,
  SubstrateStore,
  TurnHit,
  TurnRecord,
  TurnRole,
  TurnSearchOptions,
} from '../../types.js';
import {
  FACT_REF_COLUMNS,
  factIndexSource,
  factSummary,
  factsFromRows,
  listedFacts,
  rowToCompaction,
  rowToCorrection,
  rowToSession,
  rowToTurn as sharedRowToTurn,
  snippetFor,
  turnIndexSource,
  type CompactionRow,
  type CorrectionRow,
  type FactRefRow,
  type SessionRow,
  type StoredTurnRow,
  type TurnDecoding,
} from '../substrate-rows.js';
import { queryTerms } from '../tokenize.js';
import type { PgDatabase, Queryable } from './driver.js';
import { queryLexemes, tsqueryOf, tsvectorLiteral } from './fts.js';
import { Params, pgJson, pgText } from './rows.js';
import type { TermStats } from './term-stats.js';

/** PostgreSQL's turns row: the error mark as boolean, flags as text[]. */
interface TurnRow extends StoredTurnRow {
  is_error: boolean;
  flags: string[];
}

const SESSION_COLUMNS =
  'id, agent, project, cwd, branch, parent_id, started_at, ended_at, input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, compactions, source_path, title';
const TURN_COLUMNS = 'id, session_id, seq, role, text, tool_name, tool_input, tool_use_id, is_error, flags, at, source_uuid, source_line';
const CURSOR_COLUMNS = 'path, size, mtime_ms, "offset" AS offset, head_hash, state, updated_at';

/** PostgreSQL keeps a turn's error mark as boolean and its flags as text[]. */
const POSTGRES_TURNS: TurnDecoding = { isError: (value) => value === true, flags: (value) => value as string[] };

function rowToTurn(row: TurnRow): TurnRecord {
  return sharedRowToTurn(row, POSTGRES_TURNS);
}

interface CursorRow {
  path: string;
  size: number;
  mtime_ms: number;
  offset: number;
  head_hash: string;
  state: unknown;
  updated_at: number;
}

function rowToCursor(row: CursorRow): IngestCursor {
  const state = typeof row.state === 'object' && row.state !== null && !Array.isArray(row.state) ? (row.state as Record<string, unknown>) : {};
  return { path: row.path, size: row.size, mtimeMs: row.mtime_ms, offset: row.offset, headHash: row.head_hash, state, updatedAt: row.updated_at };
}

/** The tsvector literal a turn is indexed under (the same part of it as on SQLite). */
export function turnTerms(turn: Pick<TurnRecord, 'text' | 'toolName' | 'role'>): string {
  return tsvectorLiteral(turnIndexSource(turn));
}

export class PostgresSubstrate implements SubstrateStore {
  constructor(
    private readonly db: PgDatabase,
    private readonly termStats: TermStats,
  ) {}

  async writeSubstrate(batch: SubstrateBatch): Promise<{ turnsAdded: number }> {
    const turnsAdded = await this.db.transaction((client) => this.write(client, batch));
    return { turnsAdded };
  }

  private async write(client: Queryable, batch: SubstrateBatch): Promise<number> {
    const touched = new Set<string>();
    for (const s of batch.sessions) {
      await client.query(
        `INSERT INTO sessions (id, agent, project, cwd, branch, parent_id, started_at, ended_at, source_path, title)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         ON CONFLICT (id) DO UPDATE SET
           project = coalesce(excluded.project, sessions.project),
           cwd = coalesce(sessions.cwd, excluded.cwd),
           branch = coalesce(excluded.branch, sessions.branch),
           parent_id = coalesce(sessions.parent_id, excluded.parent_id),
           started_at = least(sessions.started_at, excluded.started_at),
           ended_at = greatest(sessions.ended_at, excluded.ended_at),
           title = coalesce(excluded.title, sessions.title)`,
        [s.id, s.agent, s.project, pgText(s.cwd), s.branch, s.parentId, s.startedAt, s.endedAt, pgText(s.sourcePath), pgText(s.title)],
      );
      await client.query(
        `INSERT INTO session_sources (session_id, path, input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (session_id, path) DO UPDATE SET
           input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
           cache_read_tokens = excluded.cache_read_tokens, cache_creation_tokens = excluded.cache_creation_tokens`,
        [s.id, pgText(s.sourcePath), s.inputTokens, s.outputTokens, s.cacheReadTokens, s.cacheCreationTokens],
      );
      touched.add(s.id);
    }
    const added = await this.writeTurns(client, batch.turns);
    for (const c of batch.compactions) {
      await client.query(
        `INSERT INTO compactions (id, session_id, "trigger", pre_tokens, summary, at, seq, source_line)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (id) DO UPDATE SET
           summary = coalesce(compactions.summary, excluded.summary),
           "trigger" = coalesce(compactions."trigger", excluded."trigger"),
           pre_tokens = coalesce(compactions.pre_tokens, excluded.pre_tokens)`,
        [c.id, c.sessionId, c.trigger, c.preTokens, pgText(c.summary), c.at, c.seq, c.sourceLine],
      );
      touched.add(c.sessionId);
    }
    if (batch.corrections.length > 0) {
      const cs = batch.corrections;
      await client.query(
        `INSERT INTO corrections (id, session_id, premise_turn_id, correction_turn_id, kind, lang, text, at)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[])
         ON CONFLICT (id) DO NOTHING`,
        [
          cs.map((c) => c.id),
          cs.map((c) => c.sessionId),
          cs.map((c) => c.premiseTurnId),
          cs.map((c) => c.correctionTurnId),
          cs.map((c) => c.kind),
          cs.map((c) => c.lang),
          cs.map((c) => pgText(c.text)),
          cs.map((c) => c.at),
        ],
      );
    }
    if (batch.facts !== undefined && batch.facts.length > 0) await this.writeFacts(client, batch.facts);
    if (touched.size > 0) {
      await client.query(
        `UPDATE sessions s SET
           input_tokens = coalesce((SELECT sum(input_tokens) FROM session_sources WHERE session_id = s.id), 0),
           output_tokens = coalesce((SELECT sum(output_tokens) FROM session_sources WHERE session_id = s.id), 0),
           cache_read_tokens = coalesce((SELECT sum(cache_read_tokens) FROM session_sources WHERE session_id = s.id), 0),
           cache_creation_tokens = coalesce((SELECT sum(cache_creation_tokens) FROM session_sources WHERE session_id = s.id), 0),
           compactions = (SELECT count(*) FROM compactions c WHERE c.session_id = s.id)
         WHERE s.id = ANY($1::text[])`,
        [[...touched]],
      );
    }
    const cursor = batch.cursor;
    if (cursor !== null) {
      await client.query(
        `INSERT INTO ingest_cursors (path, size, mtime_ms, "offset", head_hash, state, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)
         ON CONFLICT (path) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms, "offset" = excluded."offset",
           head_hash = excluded.head_hash, state = excluded.state, updated_at = excluded.updated_at`,
        [pgText(cursor.path), cursor.size, cursor.mtimeMs, cursor.offset, cursor.headHash, pgJson(cursor.state), cursor.updatedAt],
      );
    }
    return added;
  }

  /** Insert new turns in one statement; update, in place, user/assistant turns that grew. */
  private async writeTurns(client: Queryable, turns: TurnRecord[]): Promise<number> {
    if (turns.length === 0) return 0;
    const inserted = await client.query<{ id: string }>(
      `INSERT INTO turns (id, session_id, seq, role, text, tool_name, tool_input, tool_use_id, is_error, flags, at, source_uuid, source_line, terms)
       SELECT u.id, u.session_id, u.seq, u.role, u.text, u.tool_name, u.tool_input, u.tool_use_id, u.is_error,
              coalesce((SELECT array_agg(f) FROM jsonb_array_elements_text(u.flags) AS f), '{}'), u.at, u.source_uuid, u.source_line, u.terms::tsvector
         FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::bool[],
                     $10::jsonb[], $11::bigint[], $12::text[], $13::int[], $14::text[])
           WITH ORDINALITY AS u(id, session_id, seq, role, text, tool_name, tool_input, tool_use_id, is_error, flags, at, source_uuid, source_line, terms, n)
        ORDER BY u.n
       ON CONFLICT (id) DO NOTHING RETURNING id`,
      [
        turns.map((t) => t.id),
        turns.map((t) => t.sessionId),
        turns.map((t) => t.seq),
        turns.map((t) => t.role),
        turns.map((t) => pgText(t.text)),
        turns.map((t) => t.toolName),
        turns.map((t) => pgText(t.toolInput)),
        turns.map((t) => t.toolUseId),
        turns.map((t) => t.isError),
        turns.map((t) => pgJson(t.flags)),
        turns.map((t) => t.at),
        turns.map((t) => t.sourceUuid),
        turns.map((t) => t.sourceLine),
        turns.map((t) => turnTerms(t)),
      ],
    );
    const fresh = new Set(inserted.rows.map((r) => r.id));
    // Already stored: a message that grew since it was first read is updated in place (the last
    // version in the batch wins). Tool turns never grow.
    const grown = new Map<string, TurnRecord>();
    const seen = new Set<string>();
    for (const turn of turns) {
      const repeat = seen.has(turn.id);
      seen.add(turn.id);
      if (turn.role === 'tool_call' || turn.role === 'tool_result') continue;
      if (fresh.has(turn.id) && !repeat) continue;
      grown.set(turn.id, turn);
    }
    if (grown.size > 0) {
      const list = [...grown.values()];
      await client.query(
        `UPDATE turns t SET text = u.text, tool_input = u.tool_input, terms = u.terms::tsvector
           FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS u(id, text, tool_input, terms)
          WHERE t.id = u.id AND t.text <> u.text`,
        [list.map((t) => t.id), list.map((t) => pgText(t.text)), list.map((t) => pgText(t.toolInput)), list.map((t) => turnTerms(t))],
      );
    }
    return fresh.size;
  }

  /** Facts once each (with their index terms), then one row per turn each occurs in. */
  private async writeFacts(client: Queryable, facts: readonly FactRecord[]): Promise<void> {
    const distinct = new Map<string, FactRecord>();
    for (const fact of facts) if (!distinct.has(fact.id)) distinct.set(fact.id, fact);
    const list = [...distinct.values()];
    await client.query(
      `INSERT INTO session_facts (id, session_id, kind, text, path, line, terms)
       SELECT u.id, u.session_id, u.kind, u.text, u.path, u.line, u.terms::tsvector
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[])
           WITH ORDINALITY AS u(id, session_id, kind, text, path, line, terms, n)
        ORDER BY u.n
       ON CONFLICT (id) DO NOTHING`,
      [
        list.map((f) => f.id),
        list.map((f) => f.sessionId),
        list.map((f) => f.kind),
        list.map((f) => pgText(f.text)),
        list.map((f) => pgText(f.path)),
        list.map((f) => f.line),
        list.map((f) => tsvectorLiteral(factIndexSource(f))),
      ],
    );
    // One row per (fact, turn): the last note given for an occurrence wins, as on SQLite.
    const refs = new Map<string, FactRecord>();
    for (const fact of facts) {
      const key = `${fact.id}\0${fact.turnId}`;
      const seen = refs.get(key);
      if (seen === undefined || fact.note !== null) refs.set(key, fact);
    }
    const rows = [...refs.values()];
    await client.query(
      `INSERT INTO session_fact_refs (fact_id, turn_id, session_id, seq, role, tool_name, at, note)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::bigint[], $8::text[])
       ON CONFLICT (fact_id, turn_id) DO UPDATE SET note = coalesce(excluded.note, session_fact_refs.note)
        WHERE excluded.note IS NOT NULL AND excluded.note IS DISTINCT FROM session_fact_refs.note`,
      [
        rows.map((f) => f.id),
        rows.map((f) => f.turnId),
        rows.map((f) => f.sessionId),
        rows.map((f) => f.seq),
        rows.map((f) => f.role),
        rows.map((f) => f.toolName),
        rows.map((f) => f.at),
        rows.map((f) => pgText(f.note)),
      ],
    );
  }

  async getCursor(path: string): Promise<IngestCursor | null> {
    const rows = await this.db.query<CursorRow>(`SELECT ${CURSOR_COLUMNS} FROM ingest_cursors WHERE path = $1`, [path]);
    const row = rows.rows[0];
    return row ? rowToCursor(row) : null;
  }

  /** Every cursor (one query), for a runner checking many files at once. */
  async listCursors(): Promise<IngestCursor[]> {
    const rows = await this.db.query<CursorRow>(`SELECT ${CURSOR_COLUMNS} FROM ingest_cursors`);
    return rows.rows.map(rowToCursor);
  }

  async getSession(id: string): Promise<SessionRecord | null> {
    const rows = await this.db.query<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = $1`, [id]);
    const row = rows.rows[0];
    return row ? rowToSession(row) : null;
  }

  async listSessions(options: { project?: string; agent?: Agent; limit?: number; offset?: number }): Promise<SessionRecord[]> {
    const p = new Params();
    const where: string[] = [];
    if (options.project !== undefined) where.push(`project = ${p.add(options.project)}`);
    if (options.agent !== undefined) where.push(`agent = ${p.add(options.agent)}`);
    const rows = await this.db.query<SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM sessions ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY coalesce(ended_at, started_at) DESC NULLS LAST, id LIMIT ${p.add(options.limit ?? 100)} OFFSET ${p.add(options.offset ?? 0)}`,
      p.values,
    );
    return rows.rows.map(rowToSession);
  }

  async getTurns(sessionId: string, options: { fromSeq?: number; limit?: number } = {}): Promise<TurnRecord[]> {
    const rows = await this.db.query<TurnRow>(
      `SELECT ${TURN_COLUMNS} FROM turns WHERE session_id = $1 AND seq >= $2 ORDER BY seq, pk LIMIT $3`,
      [sessionId, options.fromSeq ?? 0, options.limit === undefined || options.limit < 0 ? null : options.limit],
    );
    return rows.rows.map(rowToTurn);
  }

  async getCompactions(sessionId: string): Promise<CompactionRecord[]> {
    const rows = await this.db.query<CompactionRow>(
      'SELECT id, session_id, "trigger" AS trigger, pre_tokens, summary, at, seq, source_line FROM compactions WHERE session_id = $1 ORDER BY seq, id',
      [sessionId],
    );
    return rows.rows.map(rowToCompaction);
  }

  async getCorrections(options: { sessionId?: string; limit?: number }): Promise<CorrectionRecord[]> {
    const limit = options.limit === undefined || options.limit < 0 ? null : options.limit;
    const rows =
      options.sessionId !== undefined
        ? await this.db.query<CorrectionRow>('SELECT * FROM corrections WHERE session_id = $1 ORDER BY at, id LIMIT $2', [options.sessionId, limit])
        : await this.db.query<CorrectionRow>('SELECT * FROM corrections ORDER BY at DESC NULLS LAST, id LIMIT $1', [limit]);
    return rows.rows.map(rowToCorrection);
  }

  async searchTurns(query: string, options: TurnSearchOptions): Promise<TurnHit[]> {
    const lexemes = queryLexemes(query);
    if (lexemes.length === 0 || options.limit <= 0) return [];
    const terms = queryTerms(query);
    const run = async (match: string[]): Promise<TurnHit[]> => {
      const p = new Params();
      const rank = p.add(tsqueryOf(lexemes));
      const q = p.add(tsqueryOf(match));
      const where = [`t.terms @@ ${q}::tsquery`];
      if (options.project !== undefined) where.push(`s.project = ${p.add(options.project)}`);
      if (options.sessionId !== undefined) where.push(`t.session_id = ${p.add(options.sessionId)}`);
      if (options.agent !== undefined) where.push(`s.agent = ${p.add(options.agent)}`);
      if (options.roles !== undefined && options.roles.length > 0) where.push(`t.role = ANY(${p.add(options.roles)}::text[])`);
      if (options.since !== undefined) where.push(`t.at >= ${p.add(options.since)}`);
      const rows = await this.db.query<TurnRow & { rank: number; session: SessionRow }>(
        `SELECT ${TURN_COLUMNS.split(', ')
          .map((c) => `t.${c}`)
          .join(', ')}, row_to_json(s) AS session, ts_rank(t.terms, ${rank}::tsquery, 1) AS rank
           FROM turns t JOIN sessions s ON s.id = t.session_id
          WHERE ${where.join(' AND ')}
          ORDER BY rank DESC, t.pk LIMIT ${p.add(options.limit)}`,
        p.values,
      );
      return rows.rows.map((row) => {
        const turn = rowToTurn(row);
        return { turn, session: rowToSession(row.session), score: row.rank, snippet: snippetFor(turn.text, terms) };
      });
    };
    const selective = await this.termStats.selective('turns', lexemes);
    if (selective) {
      const hits = await run(selective);
      if (hits.length >= options.limit) return hits;
    }
    return run(lexemes);
  }

  async listFacts(sessionId: string, options: FactListOptions = {}): Promise<SessionFact[]> {
    const p = new Params();
    const where = [`r.session_id = ${p.add(sessionId)}`];
    if (options.fromSeq !== undefined) where.push(`r.seq >= ${p.add(options.fromSeq)}`);
    if (options.beforeSeq !== undefined) where.push(`r.seq < ${p.add(options.beforeSeq)}`);
    if (options.kinds !== undefined && options.kinds.length > 0) where.push(`f.kind = ANY(${p.add(options.kinds)}::text[])`);
    const rows = await this.db.query<FactRefRow>(
      `SELECT ${FACT_REF_COLUMNS} FROM session_fact_refs r JOIN session_facts f ON f.id = r.fact_id WHERE ${where.join(' AND ')}`,
      p.values,
    );
    return listedFacts(rows.rows, options);
  }

  async searchFacts(query: string, options: FactSearchOptions): Promise<FactHit[]> {
    const lexemes = queryLexemes(query);
    if (lexemes.length === 0 || options.limit <= 0) return [];
    const p = new Params();
    const q = p.add(tsqueryOf(lexemes));
    const where = [`f.terms @@ ${q}::tsquery`];
    if (options.sessionId !== undefined) where.push(`f.session_id = ${p.add(options.sessionId)}`);
    if (options.project !== undefined) where.push(`s.project = ${p.add(options.project)}`);
    if (options.kinds !== undefined && options.kinds.length > 0) where.push(`f.kind = ANY(${p.add(options.kinds)}::text[])`);
    const hits = await this.db.query<{ id: string; rank: number }>(
      `SELECT f.id, ts_rank(f.terms, ${q}::tsquery, 1) AS rank
         FROM session_facts f JOIN sessions s ON s.id = f.session_id
        WHERE ${where.join(' AND ')}
        ORDER BY rank DESC, f.pk LIMIT ${p.add(options.limit)}`,
      p.values,
    );
    const out: FactHit[] = [];
    for (const hit of hits.rows) {
      const fact = await this.getFact(hit.id);
      const session = fact === null ? null : await this.getSession(fact.sessionId);
      if (fact !== null && session !== null) out.push({ fact: factSummary(fact), session, score: hit.rank });
    }
    return out;
  }

  async getFact(id: string): Promise<SessionFactDetail | null> {
    const rows = await this.db.query<FactRefRow>(
      `SELECT ${FACT_REF_COLUMNS} FROM session_facts f JOIN session_fact_refs r ON r.fact_id = f.id WHERE f.id = $1`,
      [id],
    );
    return factsFromRows(rows.rows)[0] ?? null;
  }

  async substrateStats(): Promise<{ sessions: number; turns: number; compactions: number; corrections: number; files: number; lastIngestAt: number | null }> {
    const rows = await this.db.query<{ sessions: number; turns: number; compactions: number; corrections: number; files: number; last: number | null }>(
      `SELECT (SELECT count(*) FROM sessions) AS sessions, (SELECT count(*) FROM turns) AS turns,
              (SELECT count(*) FROM compactions) AS compactions, (SELECT count(*) FROM corrections) AS corrections,
              (SELECT count(*) FROM ingest_cursors WHERE state ? 'format') AS files,
              (SELECT max(updated_at) FROM ingest_cursors) AS last`,
    );
    const row = rows.rows[0];
    return {
      sessions: row?.sessions ?? 0,
      turns: row?.turns ?? 0,
      compactions: row?.compactions ?? 0,
      corrections: row?.corrections ?? 0,
      files: row?.files ?? 0,
      lastIngestAt: row?.last ?? null,
    };
  }
}
