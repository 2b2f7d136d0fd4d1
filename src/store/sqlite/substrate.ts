/**
 * The session substrate on SQLite (tables from migrations/002_substrate.sql): sessions, turns
 * with a contentless FTS5 index over tokenize.ts's index terms, compactions, correction pairs
 * and ingest cursors.
 *
 * Writes are idempotent. Turns, compactions and corrections are keyed by their stable ids: a
 * repeated id is skipped (any other constraint failure aborts the whole batch), except that a
 * turn re-emitted with more text — a message that grew between two reads — is updated in place.
 * Token totals are kept per (session, transcript file) and summed, so a file re-read from its
 * start replaces its share instead of adding to it.
 *
 * Batches written in the same tick (a bulk ingest's files finishing together) share one commit:
 * each batch stays all-or-nothing and its promise settles after the commit, but a commit per
 * batch cost bulk ingest a fifth of its write time and a third of its disk writes (FTS5 flushes
 * a segment per transaction).
 */
import type Database from 'better-sqlite3';
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
  factIndexText,
  factSummary,
  factsFromRows,
  listedFacts,
  rowToCompaction,
  rowToCorrection,
  rowToSession,
  rowToTurn as sharedRowToTurn,
  snippetFor,
  turnIndexText,
  type CompactionRow,
  type CorrectionRow,
  type SessionRow,
  type StoredTurnRow,
  type TurnDecoding,
} from '../substrate-rows.js';
import { queryTerms } from '../tokenize.js';
import { mergePacked, packRecords, PACKED_FACT_COLUMNS, unpackRows, type PackedFactRow } from './fact-refs.js';

/** SQLite's turns row: the error mark as 0/1, flags as JSON text, and the rowid alias `pk`. */
interface TurnRow extends StoredTurnRow {
  pk: number;
  is_error: number;
  flags: string;
}

interface CursorRow {
  path: string;
  size: number;
  mtime_ms: number;
  offset: number;
  head_hash: string;
  state: string;
  updated_at: number;
}

const SESSION_COLUMNS =
  'id, agent, project, cwd, branch, parent_id, started_at, ended_at, input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, compactions, source_path, title';
const TURN_COLUMNS = 'pk, id, session_id, seq, role, text, tool_name, tool_input, tool_use_id, is_error, flags, at, source_uuid, source_line';

function parseFlags(flags: string): string[] {
  try {
    const value: unknown = JSON.parse(flags);
    return Array.isArray(value) ? value.filter((f): f is string => typeof f === 'string') : [];
  } catch {
    return [];
  }
}

/** SQLite keeps a turn's error mark as 0/1 and its flags as JSON text (unreadable flags read as none). */
const SQLITE_TURNS: TurnDecoding = { isError: (value) => value === 1, flags: (value) => parseFlags(value as string) };

function rowToTurn(row: TurnRow): TurnRecord {
  return sharedRowToTurn(row, SQLITE_TURNS);
}

function parseState(json: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(json);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // A damaged state only costs a re-read from the start.
  }
  return {};
}

function rowToCursor(row: CursorRow): IngestCursor {
  return {
    path: row.path,
    size: row.size,
    mtimeMs: row.mtime_ms,
    offset: row.offset,
    headHash: row.head_hash,
    state: parseState(row.state),
    updatedAt: row.updated_at,
  };
}

type CursorHead = Pick<CursorRow, 'path' | 'size' | 'mtime_ms' | 'offset' | 'head_hash'>;

/**
 * A cursor whose reader state (and `updatedAt`, stored after it) loads when first read. A run
 * passes over an unchanged file on its size and mtime alone, and a state can be large (an Aider
 * history's: 400 KB, in overflow pages SQLite walks even to reach the column after it): loading
 * every state was most of the time of re-checking an unchanged set of files. `loadTail` finds the
 * row only if it is still this cursor; if another process moved it on meanwhile, the state is
 * empty and the reader starts the file again from its start (idempotent).
 */
function lazyCursor(head: CursorHead, loadTail: (head: CursorHead) => Pick<CursorRow, 'state' | 'updated_at'> | undefined): IngestCursor {
  const cursor: IngestCursor = { path: head.path, size: head.size, mtimeMs: head.mtime_ms, offset: head.offset, headHash: head.head_hash, state: {}, updatedAt: 0 };
  const settle = (key: 'state' | 'updatedAt', value: unknown): void => {
    Object.defineProperty(cursor, key, { value, enumerable: true, configurable: true, writable: true });
  };
  const load = (): void => {
    const tail = loadTail(head);
    settle('state', tail === undefined ? {} : parseState(tail.state));
    settle('updatedAt', tail?.updated_at ?? 0);
  };
  for (const key of ['state', 'updatedAt'] as const) {
    Object.defineProperty(cursor, key, {
      enumerable: true,
      configurable: true,
      get: () => {
        load();
        return cursor[key];
      },
      set: (value: unknown) => settle(key, value),
    });
  }
  return cursor;
}

/** How much of a tool's output is indexed: its head (commands echo, first errors) and its tail (exit status, last error). */
/** The index text of a turn to write: precomputed by the caller (an ingest worker) or computed here. */
function turnTerms(turn: TurnRecord): string {
  return turn.terms ?? turnIndexText(turn);
}

/** FTS5 MATCH expression: OR of quoted terms (BM25 ranks turns matching more and rarer terms first). */
function matchExpression(terms: string[]): string {
  return terms.map((term) => `"${term.replaceAll('"', '""')}"`).join(' OR ');
}


function prepareStatements(db: Database.Database) {
  return {
    upsertSource: db.prepare(
      `INSERT INTO session_sources (session_id, path, input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens)
       VALUES (@id, @sourcePath, @inputTokens, @outputTokens, @cacheReadTokens, @cacheCreationTokens)
       ON CONFLICT (session_id, path) DO UPDATE SET
         input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
         cache_read_tokens = excluded.cache_read_tokens, cache_creation_tokens = excluded.cache_creation_tokens`,
    ),
    upsertSession: db.prepare(
      `INSERT INTO sessions (id, agent, project, cwd, branch, parent_id, started_at, ended_at, source_path, title)
       VALUES (@id, @agent, @project, @cwd, @branch, @parentId, @startedAt, @endedAt, @sourcePath, @title)
       ON CONFLICT (id) DO UPDATE SET
         project = coalesce(excluded.project, sessions.project),
         cwd = coalesce(sessions.cwd, excluded.cwd),
         branch = coalesce(excluded.branch, sessions.branch),
         parent_id = coalesce(sessions.parent_id, excluded.parent_id),
         started_at = coalesce(min(sessions.started_at, excluded.started_at), sessions.started_at, excluded.started_at),
         ended_at = coalesce(max(sessions.ended_at, excluded.ended_at), sessions.ended_at, excluded.ended_at),
         title = coalesce(excluded.title, sessions.title)`,
    ),
    sumSession: db.prepare(
      `UPDATE sessions SET
         input_tokens = (SELECT coalesce(sum(input_tokens), 0) FROM session_sources WHERE session_id = @id),
         output_tokens = (SELECT coalesce(sum(output_tokens), 0) FROM session_sources WHERE session_id = @id),
         cache_read_tokens = (SELECT coalesce(sum(cache_read_tokens), 0) FROM session_sources WHERE session_id = @id),
         cache_creation_tokens = (SELECT coalesce(sum(cache_creation_tokens), 0) FROM session_sources WHERE session_id = @id),
         compactions = (SELECT count(*) FROM compactions WHERE session_id = @id)
       WHERE id = @id`,
    ),
    // Positional parameters: binding by name costs a property lookup per column per turn.
    insertTurn: db.prepare<[string, string, number, string, string, string | null, string | null, string | null, number, string, number | null, string | null, number]>(
      `INSERT INTO turns (id, session_id, seq, role, text, tool_name, tool_input, tool_use_id, is_error, flags, at, source_uuid, source_line)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO NOTHING`,
    ),
    growTurn: db.prepare<{ id: string; text: string; toolInput: string | null }, { pk: number }>(
      `UPDATE turns SET text = @text, tool_input = @toolInput WHERE id = @id AND text <> @text RETURNING pk`,
    ),
    insertFts: db.prepare('INSERT INTO turns_fts (rowid, terms) VALUES (?, ?)'),
    deleteFts: db.prepare('DELETE FROM turns_fts WHERE rowid = ?'),
    upsertCompaction: db.prepare(
      `INSERT INTO compactions (id, session_id, "trigger", pre_tokens, summary, at, seq, source_line)
       VALUES (@id, @sessionId, @trigger, @preTokens, @summary, @at, @seq, @sourceLine)
       ON CONFLICT (id) DO UPDATE SET
         summary = coalesce(compactions.summary, excluded.summary),
         "trigger" = coalesce(compactions."trigger", excluded."trigger"),
         pre_tokens = coalesce(compactions.pre_tokens, excluded.pre_tokens)`,
    ),
    insertCorrection: db.prepare(
      `INSERT INTO corrections (id, session_id, premise_turn_id, correction_turn_id, kind, lang, text, at)
       VALUES (@id, @sessionId, @premiseTurnId, @correctionTurnId, @kind, @lang, @text, @at)
       ON CONFLICT (id) DO NOTHING`,
    ),
    insertFact: db.prepare<[string, string, string, string, string | null, number | null, string]>(
      `INSERT INTO session_facts (id, session_id, kind, text, path, line, refs) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
    ),
    insertFactFts: db.prepare('INSERT INTO session_facts_fts (rowid, terms) VALUES (?, ?)'),
    getStoredRefs: db.prepare<[string], { pk: number; refs: string }>('SELECT pk, refs FROM session_facts WHERE id = ?'),
    updateRefs: db.prepare<[string, number]>('UPDATE session_facts SET refs = ? WHERE pk = ?'),
    getPackedFact: db.prepare<[string], PackedFactRow>(`SELECT ${PACKED_FACT_COLUMNS} FROM session_facts WHERE id = ?`),
    upsertCursor: db.prepare(
      `INSERT OR REPLACE INTO ingest_cursors (path, size, mtime_ms, "offset", head_hash, state, updated_at)
       VALUES (@path, @size, @mtimeMs, @offset, @headHash, @state, @updatedAt)`,
    ),
    // The columns stored before `state`, then `state` and what follows it only when needed (see lazyCursor).
    getCursorHead: db.prepare<[string], CursorHead>('SELECT path, size, mtime_ms, "offset" AS offset, head_hash FROM ingest_cursors WHERE path = ?'),
    getCursorTail: db.prepare<CursorHead, Pick<CursorRow, 'state' | 'updated_at'>>(
      `SELECT state, updated_at FROM ingest_cursors
       WHERE path = @path AND size = @size AND mtime_ms = @mtime_ms AND "offset" = @offset AND head_hash = @head_hash`,
    ),
    getSession: db.prepare<[string], SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = ?`),
    getCompactions: db.prepare<[string], CompactionRow>(
      'SELECT id, session_id, "trigger" AS trigger, pre_tokens, summary, at, seq, source_line FROM compactions WHERE session_id = ? ORDER BY seq, id',
    ),
  };
}

interface PendingWrite {
  batch: SubstrateBatch;
  resolve(result: { turnsAdded: number }): void;
  reject(error: unknown): void;
}

/** FTS5 `automerge` for the turns index (see SqliteSubstrate.tuneIndex). */
const FTS_AUTOMERGE = 16;

/** WAL pages between automatic checkpoints once bulk writes start (see SqliteSubstrate.tuneBulk). */
const BULK_AUTOCHECKPOINT = 10_000;
/** Bytes the WAL file is truncated back to after a checkpoint. */
const BULK_WAL_LIMIT = 64 * 1024 * 1024;

/** Text a group commit may carry (about 15 MB of transcript, a tenth of a second of writing). */
const GROUP_COMMIT_CHARS = 4_000_000;

/** Roughly what a batch costs to write: its turns' text. */
function batchChars(batch: SubstrateBatch): number {
  let chars = 0;
  for (const turn of batch.turns) chars += turn.text.length + (turn.toolInput?.length ?? 0);
  return chars;
}

/**
 * {@link SubstrateStore} over a better-sqlite3 connection whose schema includes migration 002.
 * Each method runs synchronously inside, but `writeSubstrate`, which commits on the next turn of
 * the event loop together with the batches written in the same tick (each still atomic).
 */
export class SqliteSubstrate implements SubstrateStore {
  private readonly db: Database.Database;
  private readonly statements: ReturnType<typeof prepareStatements>;
  private readonly transaction: (batch: SubstrateBatch) => number;
  private readonly groupTransaction: (batches: SubstrateBatch[]) => number[];
  /** Batches waiting for the next group commit, in call order. */
  private pending: PendingWrite[] = [];
  private pendingChars = 0;
  private flushScheduled = false;
  private tuned = false;
  private bulkTuned = false;

  constructor(db: Database.Database) {
    this.db = db;
    this.statements = prepareStatements(db);
    const write = db.transaction((batch: SubstrateBatch) => {
      this.tuneIndex();
      return this.write(batch);
    });
    this.transaction = (batch) => write.immediate(batch);
    const group = db.transaction((batches: SubstrateBatch[]) => {
      this.tuneIndex();
      return batches.map((batch) => this.write(batch));
    });
    this.groupTransaction = (batches) => group.immediate(batches);
  }

  /** Commit every pending batch: together when they can be, else one by one so only a refused batch fails. */
  private flush(): void {
    this.flushScheduled = false;
    const group = this.pending;
    this.pending = [];
    this.pendingChars = 0;
    if (group.length === 0) return;
    if (group.length > 1) {
      this.tuneBulk();
      try {
        const added = this.groupTransaction(group.map((w) => w.batch));
        group.forEach((w, i) => w.resolve({ turnsAdded: added[i] ?? 0 }));
        return;
      } catch (error) {
        // Another process held the lock past the busy timeout: one by one would wait as long again.
        if ((error as { code?: unknown }).code === 'SQLITE_BUSY') {
          for (const w of group) w.reject(error);
          return;
        }
      }
    }
    for (const w of group) {
      try {
        w.resolve({ turnsAdded: this.transaction(w.batch) });
      } catch (error) {
        w.reject(error);
      }
    }
  }

  /**
   * Once per connection, inside a write: let FTS5 gather more segments per level before merging
   * them (`automerge` 16 instead of 4). Bulk ingest spent a sixth of its write time merging the
   * small segments each commit leaves; searches over 200K turns were no slower. The session
   * facts' index gets the same (its rows arrive with the turns, commit after commit).
   */
  private tuneIndex(): void {
    if (this.tuned) return;
    this.tuned = true;
    for (const index of ['turns_fts', 'session_facts_fts']) {
      const exists = this.db.prepare<[string], { n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = ?").get(`${index}_config`);
      if (exists?.n !== 1) continue;
      const current = this.db.prepare<[], { v: unknown }>(`SELECT v FROM ${index}_config WHERE k = 'automerge'`).get();
      if (current?.v !== FTS_AUTOMERGE) this.db.prepare(`INSERT INTO ${index} (${index}, rank) VALUES ('automerge', ${FTS_AUTOMERGE})`).run();
    }
  }

  /**
   * Before the first group commit of a bulk write: checkpoint the WAL every ~40 MB instead of
   * every 4 MB (SQLite's 1,000 pages) on this connection. A bulk ingest rewrites the same index
   * and FTS pages commit after commit; copying them back once per 10,000 pages instead of ten
   * times saved a tenth of its write time. The WAL file is truncated back after a checkpoint
   * once it passes 64 MB. Durability is unchanged (WAL, synchronous = NORMAL).
   */
  private tuneBulk(): void {
    if (this.bulkTuned) return;
    this.bulkTuned = true;
    if (this.db.pragma('journal_mode', { simple: true }) !== 'wal') return;
    if ((this.db.pragma('wal_autocheckpoint', { simple: true }) as number) < BULK_AUTOCHECKPOINT) this.db.pragma(`wal_autocheckpoint = ${BULK_AUTOCHECKPOINT}`);
    const limit = this.db.pragma('journal_size_limit', { simple: true }) as number;
    if (limit < 0 || limit > BULK_WAL_LIMIT) this.db.pragma(`journal_size_limit = ${BULK_WAL_LIMIT}`);
  }

  private write(batch: SubstrateBatch): number {
    const s = this.statements;
    let added = 0;
    const touched = new Set<string>();
    for (const session of batch.sessions) {
      s.upsertSession.run({
        id: session.id,
        agent: session.agent,
        project: session.project,
        cwd: session.cwd,
        branch: session.branch,
        parentId: session.parentId,
        startedAt: session.startedAt,
        endedAt: session.endedAt,
        sourcePath: session.sourcePath,
        title: session.title,
      });
      s.upsertSource.run({
        id: session.id,
        sourcePath: session.sourcePath,
        inputTokens: session.inputTokens,
        outputTokens: session.outputTokens,
        cacheReadTokens: session.cacheReadTokens,
        cacheCreationTokens: session.cacheCreationTokens,
      });
      touched.add(session.id);
    }
    for (const turn of batch.turns) {
      const result = s.insertTurn.run(
        turn.id,
        turn.sessionId,
        turn.seq,
        turn.role,
        turn.text,
        turn.toolName,
        turn.toolInput,
        turn.toolUseId,
        turn.isError ? 1 : 0,
        turn.flags.length === 0 ? '[]' : JSON.stringify(turn.flags),
        turn.at,
        turn.sourceUuid,
        turn.sourceLine,
      );
      if (result.changes > 0) {
        added++;
        s.insertFts.run(result.lastInsertRowid, turnTerms(turn));
        continue;
      }
      // Already stored: a message that grew since it was first read (an assistant message
      // continued, an Aider block appended to) is updated in place. Tool turns never grow.
      if (turn.role === 'tool_call' || turn.role === 'tool_result') continue;
      const grown = s.growTurn.get({ id: turn.id, text: turn.text, toolInput: turn.toolInput });
      if (grown !== undefined) {
        s.deleteFts.run(grown.pk);
        s.insertFts.run(grown.pk, turnTerms(turn));
      }
    }
    for (const compaction of batch.compactions) {
      s.upsertCompaction.run({
        id: compaction.id,
        sessionId: compaction.sessionId,
        trigger: compaction.trigger,
        preTokens: compaction.preTokens,
        summary: compaction.summary,
        at: compaction.at,
        seq: compaction.seq,
        sourceLine: compaction.sourceLine,
      });
      touched.add(compaction.sessionId);
    }
    for (const correction of batch.corrections) {
      s.insertCorrection.run({
        id: correction.id,
        sessionId: correction.sessionId,
        premiseTurnId: correction.premiseTurnId,
        correctionTurnId: correction.correctionTurnId,
        kind: correction.kind,
        lang: correction.lang,
        text: correction.text,
        at: correction.at,
      });
    }
    if (batch.facts !== undefined) this.writeFacts(batch.facts);
    for (const id of touched) s.sumSession.run({ id });
    const cursor = batch.cursor;
    if (cursor !== null) {
      s.upsertCursor.run({
        path: cursor.path,
        size: cursor.size,
        mtimeMs: cursor.mtimeMs,
        offset: cursor.offset,
        headHash: cursor.headHash,
        state: JSON.stringify(cursor.state),
        updatedAt: cursor.updatedAt,
      });
    }
    return added;
  }

  /**
   * One row per fact of the batch with its occurrences packed (migration 017), in the order the
   * facts first appear (their rowids, which key the index, as before the packing). A fact already
   * stored (met in an earlier batch: a session read in several passes, a file grown since) gets
   * the batch's occurrences merged into its row; one fully known leaves it untouched.
   */
  private writeFacts(facts: readonly FactRecord[]): void {
    const s = this.statements;
    const byId = new Map<string, FactRecord[]>();
    for (const fact of facts) {
      const records = byId.get(fact.id);
      if (records === undefined) byId.set(fact.id, [fact]);
      else records.push(fact);
    }
    for (const records of byId.values()) {
      const fact = records[0] as FactRecord;
      const refs = packRecords(records);
      const inserted = s.insertFact.run(fact.id, fact.sessionId, fact.kind, fact.text, fact.path, fact.line, JSON.stringify(refs));
      if (inserted.changes > 0) {
        s.insertFactFts.run(inserted.lastInsertRowid, fact.terms ?? factIndexText(fact));
        continue;
      }
      const stored = s.getStoredRefs.get(fact.id);
      const merged = stored === undefined ? null : mergePacked(stored.refs, refs);
      if (stored !== undefined && merged !== null) s.updateRefs.run(merged, stored.pk);
    }
  }

  writeSubstrate(batch: SubstrateBatch): Promise<{ turnsAdded: number }> {
    return new Promise((resolve, reject) => {
      this.pending.push({ batch, resolve, reject });
      this.pendingChars += batchChars(batch);
      // A large group commits now, so one transaction never holds the write lock for long.
      if (this.pendingChars >= GROUP_COMMIT_CHARS) this.flush();
      else if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  async getCursor(path: string): Promise<IngestCursor | null> {
    const head = this.statements.getCursorHead.get(path);
    return head === undefined ? null : lazyCursor(head, (h) => this.statements.getCursorTail.get(h));
  }

  /** Every cursor (one query), for a runner checking many files at once. */
  async listCursors(): Promise<IngestCursor[]> {
    const rows = this.db
      .prepare<[], CursorRow>('SELECT path, size, mtime_ms, "offset" AS offset, head_hash, state, updated_at FROM ingest_cursors')
      .all();
    return rows.map(rowToCursor);
  }

  async getSession(id: string): Promise<SessionRecord | null> {
    const row = this.statements.getSession.get(id);
    return row === undefined ? null : rowToSession(row);
  }

  async listSessions(options: { project?: string; agent?: Agent; limit?: number; offset?: number }): Promise<SessionRecord[]> {
    const where: string[] = [];
    const params: Record<string, unknown> = { limit: options.limit ?? 100, offset: options.offset ?? 0 };
    if (options.project !== undefined) {
      where.push('project = @project');
      params.project = options.project;
    }
    if (options.agent !== undefined) {
      where.push('agent = @agent');
      params.agent = options.agent;
    }
    const rows = this.db
      .prepare<Record<string, unknown>, SessionRow>(
        `SELECT ${SESSION_COLUMNS} FROM sessions ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
         ORDER BY coalesce(ended_at, started_at) DESC NULLS LAST, id LIMIT @limit OFFSET @offset`,
      )
      .all(params);
    return rows.map(rowToSession);
  }

  async getTurns(sessionId: string, options: { fromSeq?: number; limit?: number } = {}): Promise<TurnRecord[]> {
    const rows = this.db
      .prepare<{ sessionId: string; fromSeq: number; limit: number }, TurnRow>(
        `SELECT ${TURN_COLUMNS} FROM turns WHERE session_id = @sessionId AND seq >= @fromSeq ORDER BY seq, pk LIMIT @limit`,
      )
      .all({ sessionId, fromSeq: options.fromSeq ?? 0, limit: options.limit ?? -1 });
    return rows.map(rowToTurn);
  }

  async getCompactions(sessionId: string): Promise<CompactionRecord[]> {
    return this.statements.getCompactions.all(sessionId).map(rowToCompaction);
  }

  async getCorrections(options: { sessionId?: string; limit?: number }): Promise<CorrectionRecord[]> {
    const limit = options.limit ?? -1;
    const rows =
      options.sessionId !== undefined
        ? this.db
            .prepare<[string, number], CorrectionRow>('SELECT * FROM corrections WHERE session_id = ? ORDER BY at, id LIMIT ?')
            .all(options.sessionId, limit)
        : this.db.prepare<[number], CorrectionRow>('SELECT * FROM corrections ORDER BY at DESC NULLS LAST, id LIMIT ?').all(limit);
    return rows.map(rowToCorrection);
  }

  async searchTurns(query: string, options: TurnSearchOptions): Promise<TurnHit[]> {
    const terms = queryTerms(query);
    if (terms.length === 0 || options.limit <= 0) return [];
    const where = ['turns_fts MATCH @match'];
    const params: Record<string, unknown> = { match: matchExpression(terms), limit: options.limit };
    if (options.project !== undefined) {
      where.push('s.project = @project');
      params.project = options.project;
    }
    if (options.sessionId !== undefined) {
      where.push('t.session_id = @sessionId');
      params.sessionId = options.sessionId;
    }
    if (options.agent !== undefined) {
      where.push('s.agent = @agent');
      params.agent = options.agent;
    }
    if (options.roles !== undefined && options.roles.length > 0) {
      const names = options.roles.map((_, i) => `@role${i}`);
      options.roles.forEach((role, i) => {
        params[`role${i}`] = role;
      });
      where.push(`t.role IN (${names.join(', ')})`);
    }
    if (options.since !== undefined) {
      where.push('t.at >= @since');
      params.since = options.since;
    }
    const rows = this.db
      .prepare<Record<string, unknown>, TurnRow & { rank: number } & { [K in keyof SessionRow as `s_${K & string}`]: SessionRow[K] }>(
        `SELECT ${TURN_COLUMNS.split(', ')
          .map((c) => `t.${c}`)
          .join(', ')}, ${SESSION_COLUMNS.split(', ')
          .map((c) => `s.${c} AS s_${c}`)
          .join(', ')}, bm25(turns_fts) AS rank
         FROM turns_fts JOIN turns t ON t.pk = turns_fts.rowid JOIN sessions s ON s.id = t.session_id
         WHERE ${where.join(' AND ')}
         ORDER BY rank LIMIT @limit`,
      )
      .all(params);
    return rows.map((row) => {
      const session: SessionRow = {
        id: row.s_id,
        agent: row.s_agent,
        project: row.s_project,
        cwd: row.s_cwd,
        branch: row.s_branch,
        parent_id: row.s_parent_id,
        started_at: row.s_started_at,
        ended_at: row.s_ended_at,
        input_tokens: row.s_input_tokens,
        output_tokens: row.s_output_tokens,
        cache_read_tokens: row.s_cache_read_tokens,
        cache_creation_tokens: row.s_cache_creation_tokens,
        compactions: row.s_compactions,
        source_path: row.s_source_path,
        title: row.s_title,
      };
      const turn = rowToTurn(row);
      return { turn, session: rowToSession(session), score: -row.rank, snippet: snippetFor(turn.text, terms) };
    });
  }

  async listFacts(sessionId: string, options: FactListOptions = {}): Promise<SessionFact[]> {
    // The session's facts by session_facts (session_id, kind), each with its packed occurrences
    // (migration 017), those in the seq range kept.
    const where = ['session_id = @sessionId'];
    const params: Record<string, unknown> = { sessionId };
    if (options.kinds !== undefined && options.kinds.length > 0) {
      where.push(`kind IN (${options.kinds.map((_, i) => `@kind${i}`).join(', ')})`);
      options.kinds.forEach((kind, i) => {
        params[`kind${i}`] = kind;
      });
    }
    const rows = this.db
      .prepare<Record<string, unknown>, PackedFactRow>(`SELECT ${PACKED_FACT_COLUMNS} FROM session_facts WHERE ${where.join(' AND ')}`)
      .all(params);
    return listedFacts(unpackRows(rows, options), options);
  }

  async searchFacts(query: string, options: FactSearchOptions): Promise<FactHit[]> {
    const terms = queryTerms(query);
    if (terms.length === 0 || options.limit <= 0) return [];
    const where = ['session_facts_fts MATCH @match'];
    const params: Record<string, unknown> = { match: matchExpression(terms), limit: options.limit };
    if (options.sessionId !== undefined) {
      where.push('f.session_id = @sessionId');
      params.sessionId = options.sessionId;
    }
    if (options.project !== undefined) {
      where.push('s.project = @project');
      params.project = options.project;
    }
    if (options.kinds !== undefined && options.kinds.length > 0) {
      where.push(`f.kind IN (${options.kinds.map((_, i) => `@kind${i}`).join(', ')})`);
      options.kinds.forEach((kind, i) => {
        params[`kind${i}`] = kind;
      });
    }
    const hits = this.db
      .prepare<Record<string, unknown>, { id: string; rank: number }>(
        `SELECT f.id, bm25(session_facts_fts) AS rank
           FROM session_facts_fts JOIN session_facts f ON f.pk = session_facts_fts.rowid JOIN sessions s ON s.id = f.session_id
          WHERE ${where.join(' AND ')} ORDER BY rank LIMIT @limit`,
      )
      .all(params);
    const out: FactHit[] = [];
    for (const hit of hits) {
      const fact = await this.getFact(hit.id);
      const session = fact === null ? null : await this.getSession(fact.sessionId);
      if (fact !== null && session !== null) out.push({ fact: factSummary(fact), session, score: -hit.rank });
    }
    return out;
  }

  async getFact(id: string): Promise<SessionFactDetail | null> {
    const row = this.statements.getPackedFact.get(id);
    return row === undefined ? null : (factsFromRows(unpackRows([row]))[0] ?? null);
  }

  async substrateStats(): Promise<{ sessions: number; turns: number; compactions: number; corrections: number; files: number; lastIngestAt: number | null }> {
    const row = this.db
      .prepare<[], { sessions: number; turns: number; compactions: number; corrections: number; files: number; last: number | null }>(
        `SELECT (SELECT count(*) FROM sessions) AS sessions, (SELECT count(*) FROM turns) AS turns,
                (SELECT count(*) FROM compactions) AS compactions, (SELECT count(*) FROM corrections) AS corrections,
                (SELECT count(*) FROM ingest_cursors WHERE json_extract(state, '$.format') IS NOT NULL) AS files,
                (SELECT max(updated_at) FROM ingest_cursors) AS last`,
      )
      .get();
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

/**
 * The session substrate over an open better-sqlite3 database that has migration 002 applied.
 * @example
 * const db = openDatabase(path); // applies migrations
 * const substrate = createSqliteSubstrate(db);
 * await substrate.writeSubstrate(batch);
 */
export function createSqliteSubstrate(db: Database.Database): SqliteSubstrate {
  return new SqliteSubstrate(db);
}
