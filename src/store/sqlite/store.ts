import { statSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { CairnError, notFound } from '../../errors.js';
import type {
  EmbeddingCacheStore,
  LedgerStore,
  EmbedderIdentity,
  EventType,
  ListOptions,
  Memory,
  MemoryEvent,
  MemoryFilter,
  MemoryPatch,
  MemoryText,
  MemoryWrite,
  ReviewFilter,
  ReviewItem,
  ScoredId,
  Snapshot,
  Store,
  StoreCapabilities,
  StoreStats,
  TextSearchOptions,
  VectorSearchOptions,
} from '../../types.js';
import { refreshFtsTerms } from './fts-refresh.js';
import { indexText, queryTerms } from '../tokenize.js';
import { openDatabase, schemaVersion, type OpenOptions } from './database.js';
import { versionChain } from '../versions.js';
import { createSqliteSubstrate, type SqliteSubstrate } from './substrate.js';
import { sqliteEmbeddingCache } from './embed-cache.js';
import { sqliteLedger } from './ledger.js';
import { TermFrequencies } from './term-frequency.js';
import { bandKeys, BandSigner, termSet, bandsComplete, fillBands, initBands, removeBands, restartFill, type FillProgress } from './memory-bands.js';
import { PendingBands } from './pending-bands.js';
import { decodeTerms, encodeTerms, fillTerms, initTerms, restartTermsFill } from './memory-terms.js';
import { TextSearchIndex } from './text-search-index.js';
import { SqliteVectors, type SqliteVectorIndexOptions } from './vectors.js';
import { SqliteVectorStaging, STAGED_MODEL_KEY } from './vector-staging.js';
import {
  MEMORY_COLUMNS,
  blobToVector,
  filterSql,
  memoryToParams,
  rawRowToMemory,
  rowToMemory,
  rowToReview,
  sqliteDialect,
  vectorToBlob,
  type MemoryRow,
} from './rows.js';
import { searchFiltered } from '../filtered-search.js';
import { TextSearchOffload } from './text-search-offload.js';
import { ORDER_SQL, memoryIndexSource } from '../memory-rows.js';
import { reviewWhere as sharedReviewWhere, type StoredReviewRow as ReviewRow } from '../review-rows.js';

/** The terms a memory is indexed under: its text, its tags and its context (`memoryIndexSource`). */
function ftsTerms(memory: Pick<Memory, 'text' | 'tags' | 'context'>): string {
  return indexText(memoryIndexSource(memory));
}

/** Memories whose BM25 postings (migration 013) one open of an upgraded store fills: ~0.1 ms each. */
const OPEN_BACKFILL_ROWS = 1_000;

/** A memories row's index terms, as written to `memories_fts` (what `ftsTerms` gave) and to the BM25 postings. */
export function rowIndexText(row: { text: string; tags: string; context: string | null }): string {
  return ftsTerms({ text: row.text, tags: JSON.parse(row.tags) as string[], context: row.context });
}

/** FTS5 MATCH expression: OR of quoted terms (BM25 ranks documents matching more and rarer terms first). */
function matchExpression(terms: readonly string[]): string | null {
  if (terms.length === 0) return null;
  return terms.map((term) => `"${term.replaceAll('"', '""')}"`).join(' OR ');
}

/** Below this many indexed memories every query term is used; above, very common ones are left out. */
const PRUNE_FROM_ROWS = 20_000;
/** A term in more than this share of memories is left out of the MATCH (it still counts in recall's coverage). */
const COMMON_TERM_SHARE = 0.05;
/** When every term is common, the rarest few are kept. */
const KEEP_WHEN_ALL_COMMON = 3;
/**
 * A near-duplicate probe ranks by a text's rarest terms but reads candidates only from the
 * postings of the rarest few: at least this many terms, more while their postings stay under
 * PROBE_POSTINGS (see probeExpression).
 */
const PROBE_REQUIRED_TERMS = 2;
const PROBE_POSTINGS = 500;

export interface SqliteStoreOptions extends OpenOptions {
  /** Database file, or `:memory:`. */
  path: string;
  /** The vector index: exact below a size, HNSW (persisted next to the file) above. */
  vectorIndex?: SqliteVectorIndexOptions;
  /**
   * Where full-text search runs: `inline` on the caller's thread, or `worker`: searches marked
   * `alongsideVectors` (a hybrid recall's BM25 leg) go to a worker thread with its own connection
   * (./text-search-offload.ts), so they overlap the query embedding and vector search. For
   * long-running processes that recall with vectors; the worker starts on the first such search
   * (its own module load and connection: 0.34 s at load 8, beside the first recall's model load).
   * `:memory:` databases always search inline.
   * @default 'inline'
   */
  textSearch?: 'inline' | 'worker';
}

/**
 * The default store: one SQLite file (WAL, busy timeout, FTS5, vectors in a table with an
 * in-process index synced incrementally: exact when small, HNSW persisted beside the file when
 * large; see ./vectors.ts), safe with several processes writing at once.
 */
export class SqliteStore implements Store {
  readonly name = 'sqlite';
  readonly capabilities: StoreCapabilities = { fullText: true, vectors: true, ann: false, substrate: true };
  readonly location: string;
  private readonly options: SqliteStoreOptions;
  private database: Database.Database | null = null;
  private readonly vectorIndex: SqliteVectors;
  /** Another model's vectors built beside the index (the background model switch). */
  readonly vectorStaging: SqliteVectorStaging;
  private substrateStore: SqliteSubstrate | null = null;
  private readonly termFrequencies = new TermFrequencies(() => this.db);
  /** BM25 postings of our own beside memories_fts (./text-search-index.ts). */
  private readonly textIndex = new TextSearchIndex(() => this.db);
  private readonly statements = new Map<string, Database.Statement>();
  private readonly textSearchWorker: TextSearchOffload | null;
  /** Seen complete: every memory's near-duplicate bands are in memory_bands (./memory-bands.ts). */
  private bandsDone = false;
  /** Seen complete: every memory's distinct index terms are stored (./memory-terms.ts). */
  private termsDone = false;
  private readonly bandSigner = new BandSigner();
  /** Bands written since the last fold into memory_bands (./pending-bands.ts). */
  private readonly pendingBands = new PendingBands(() => this.db);

  constructor(options: SqliteStoreOptions) {
    this.options = options;
    this.location = options.path;
    this.textSearchWorker = options.textSearch === 'worker' && options.path !== ':memory:' && options.path !== '' ? new TextSearchOffload(options.path) : null;
    this.vectorIndex = new SqliteVectors(() => this.db, options.path, options.vectorIndex);
    this.vectorStaging = new SqliteVectorStaging(() => this.db, () => this.vectorIndex.drop());
  }

  /** The underlying connection, for adapters that extend this store (substrate, ANN). */
  get db(): Database.Database {
    if (!this.database) throw new CairnError('STORE_FAILED', 'store is not open; call open() first');
    return this.database;
  }

  /** Embeddings by (model, content hash) in table `embed_cache`. */
  readonly embeddingCache: EmbeddingCacheStore = sqliteEmbeddingCache(() => this.db);
  /** The injection ledger (migration 008). */
  readonly ledger: LedgerStore = sqliteLedger(() => this.db);

  /** Sessions, turns, compactions, corrections and ingest cursors in the same file. */
  get substrate(): SqliteSubstrate {
    this.substrateStore ??= createSqliteSubstrate(this.db);
    return this.substrateStore;
  }

  async open(): Promise<void> {
    if (this.database) return;
    this.database = openDatabase(this.options.path, this.options);
    // Terms version 2 (CJK, emoji): re-index the rows it changes, once (see fts-refresh.ts).
    if (!this.database.readonly) {
      refreshFtsTerms(this.database, this.termFrequencies, this.textIndex);
      initBands(this.database);
      initTerms(this.database);
      // Migration 013's postings for memories stored before it: a bounded step per open, so a hook
      // or a recall on a large upgraded store is never held up (searches use FTS5 until they are
      // complete); `cairn ingest` and `cairn migrate up` fill the rest (fillTextSearchIndex).
      this.textIndex.backfill(rowIndexText, { batch: OPEN_BACKFILL_ROWS, maxBatches: 1 });
    }
  }

  async close(): Promise<void> {
    await this.textSearchWorker?.close();
    this.database?.close();
    this.database = null;
    this.statements.clear();
    this.termFrequencies.reset();
    this.bandsDone = false;
    this.termsDone = false;
    this.pendingBands.reset();
    this.textIndex.reset();
    this.vectorIndex.reset();
    this.substrateStore = null;
  }

  /* ---------------------------------------------------------------- memories */

  async writeMemory(write: MemoryWrite): Promise<{ memory: Memory; inserted: boolean }> {
    return this.db
      .transaction(() => {
        const result = this.writeOne(write);
        this.pendingBands.foldIfDue();
        return result;
      })
      .immediate();
  }

  /**
   * Several writes in one IMMEDIATE transaction, in order, each as {@link writeMemory} does it
   * (a later write sees the earlier ones). A write whose active memory already exists inserts
   * nothing; with `touchDuplicatesAt`, that memory's access is bumped as `touch` does, once per
   * such write. All or nothing: a write that throws rolls the whole batch back.
   */
  async writeMemories(writes: MemoryWrite[], options: { touchDuplicatesAt?: number } = {}): Promise<Array<{ memory: Memory; inserted: boolean }>> {
    if (writes.length === 0) return [];
    const touch = options.touchDuplicatesAt;
    return this.db
      .transaction(() => {
        const results = writes.map((write) => {
          const result = this.writeOne(write);
          if (!result.inserted && touch !== undefined) {
            this.statement('UPDATE memories SET access_count = access_count + 1, last_accessed_at = ? WHERE id = ?').run(touch, result.memory.id);
          }
          return result;
        });
        // A batch past FOLD_AT pending rows folds them all at its end, in key order.
        this.pendingBands.foldIfDue();
        return results;
      })
      .immediate();
  }

  /** One memory write; runs inside the caller's transaction, which folds the pending bands when due. */
  private writeOne(write: MemoryWrite): { memory: Memory; inserted: boolean } {
    const db = this.db;
    const { memory } = write;
    if (write.closes) {
      const closed = db
        .prepare('UPDATE memories SET valid_to = ?, updated_at = ? WHERE id = ? AND valid_to IS NULL')
        .run(write.closes.at, write.closes.at, write.closes.id);
      if (closed.changes === 0) {
        const exists = db.prepare('SELECT valid_to FROM memories WHERE id = ?').get(write.closes.id);
        if (!exists) throw notFound(`memory ${write.closes.id}`);
        throw new CairnError('CONFLICT', `memory ${write.closes.id} was already superseded`);
      }
    }
    // The distinct index terms for near-duplicate checks (./memory-terms.ts), from the set the bands are signed with.
    const params = { ...memoryToParams(memory), terms: encodeTerms(this.bandSigner.terms(memory.text)) };
    const columns = Object.keys(params);
    const result = this.statement(
      `INSERT INTO memories (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')})
       ON CONFLICT DO NOTHING`,
    ).run(params);
    if (result.changes === 0) {
      const existing = this.activeByHash(memory.contentHash, memory.project);
      if (!existing) throw new CairnError('CONFLICT', `memory id ${memory.id} already exists`);
      if (write.closes) throw new CairnError('CONFLICT', 'the revised text is identical to an existing memory');
      return { memory: existing, inserted: false };
    }
    const rowid = Number(result.lastInsertRowid);
    const terms = ftsTerms(memory);
    this.statement('INSERT INTO memories_fts (rowid, terms) VALUES (?, ?)').run(rowid, terms);
    this.termFrequencies.added(terms);
    const keys = this.bandSigner.keys(memory.text, memory.project);
    if (keys.length > 0) this.pendingBands.append(rowid, keys);
    this.textIndex.added(rowid, terms);
    if (write.embedding) {
      this.claimVectorModel(write.embedding.model);
      this.insertVector(rowid, write.embedding.vector);
      if (write.embedding.signature) this.insertSignature(rowid, write.embedding.model, write.embedding.signature);
    }
    this.insertEvents(write.events);
    return { memory, inserted: true };
  }

  async patchMemory(id: string, patch: MemoryPatch, event: MemoryEvent): Promise<Memory> {
    const db = this.db;
    const run = db.transaction((): Memory => {
      const row = this.rowById(id);
      if (!row) throw notFound(`memory ${id}`);
      const sets: string[] = ['updated_at = @updated_at'];
      const params: Record<string, unknown> = { id, updated_at: patch.updatedAt };
      const assign = (column: string, value: unknown): void => {
        sets.push(`${column} = @${column}`);
        params[column] = value;
      };
      if (patch.text !== undefined) {
        assign('text', patch.text);
        assign('terms', encodeTerms(termSet(patch.text)));
      }
      if (patch.tags !== undefined) assign('tags', JSON.stringify(patch.tags));
      if (patch.importance !== undefined) assign('importance', patch.importance);
      if (patch.kind !== undefined) assign('kind', patch.kind);
      if (patch.scope !== undefined) assign('scope', patch.scope);
      if (patch.pinned !== undefined) assign('pinned', patch.pinned ? 1 : 0);
      if (patch.deletedAt !== undefined) assign('deleted_at', patch.deletedAt);
      if (patch.validTo !== undefined) assign('valid_to', patch.validTo);
      if (patch.meta !== undefined) assign('meta', JSON.stringify(patch.meta));
      if (patch.provenance !== undefined) assign('provenance', patch.provenance === null ? null : JSON.stringify(patch.provenance));
      if (patch.files !== undefined) assign('files', JSON.stringify(patch.files));
      try {
        db.prepare(`UPDATE memories SET ${sets.join(', ')} WHERE id = @id`).run(params);
      } catch (error) {
        if (error instanceof Error && /UNIQUE constraint/.test(error.message)) {
          throw new CairnError('CONFLICT', `an identical active memory already exists; cannot restore ${id}`, { cause: error });
        }
        throw error;
      }
      if (patch.text !== undefined || patch.tags !== undefined) {
        const updated = this.rowById(id) as MemoryRow;
        const before = ftsTerms(rowToMemory(row));
        const after = ftsTerms(rowToMemory(updated));
        db.prepare('DELETE FROM memories_fts WHERE rowid = ?').run(row.rowid);
        db.prepare('INSERT INTO memories_fts (rowid, terms) VALUES (?, ?)').run(row.rowid, after);
        this.termFrequencies.removed(before);
        this.termFrequencies.added(after);
        this.textIndex.removed(row.rowid, before);
        this.textIndex.added(row.rowid, after);
      }
      if (patch.text !== undefined) {
        // The old text's rows leave memory_bands (if folded); the new bands are pending, and stand for the memory's.
        removeBands((sql) => this.statement(sql), row.rowid, bandKeys(row.text, row.project));
        this.pendingBands.append(row.rowid, bandKeys(patch.text, row.project));
      }
      this.insertEvents([event]);
      return rowToMemory(this.rowById(id) as MemoryRow);
    });
    return run.immediate();
  }

  async getMemory(id: string): Promise<Memory | null> {
    const row = this.rowById(id);
    return row ? rowToMemory(row) : null;
  }

  async getMemories(ids: string[]): Promise<Memory[]> {
    if (ids.length === 0) return [];
    const out: Memory[] = [];
    const stmt = this.statement(`SELECT ${MEMORY_COLUMNS} FROM memories m WHERE m.id IN (SELECT value FROM json_each(?))`);
    const byId = new Map((stmt.all(JSON.stringify(ids)) as MemoryRow[]).map((row) => [row.id, row]));
    for (const id of ids) {
      const row = byId.get(id);
      if (row) out.push(rowToMemory(row));
    }
    return out;
  }

  async getMemoryTexts(ids: string[]): Promise<MemoryText[]> {
    if (ids.length === 0) return [];
    // With the stored distinct terms (./memory-terms.ts), so the check need not tokenize these texts either.
    const rows = this.statement('SELECT id, text, kind, terms FROM memories WHERE id IN (SELECT value FROM json_each(?))').all(JSON.stringify(ids)) as Array<MemoryText & { terms: string | null }>;
    const byId = new Map(
      rows.map(({ terms, ...row }): [string, MemoryText] => {
        const decoded = decodeTerms(terms);
        return [row.id, decoded === null ? row : { ...row, terms: decoded }];
      }),
    );
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  /**
   * Active memories of the project (and the user scope) sharing a MinHash band with `text`, most
   * shared bands first, at most `limit`; null while memory_bands is not complete (see
   * fillNearDuplicateIndex). ./memory-bands.ts.
   */
  async nearDuplicateCandidates(text: string, project: string | null, limit: number, vectorModel?: EmbedderIdentity): Promise<MemoryText[] | null> {
    if (!this.bandsDone) {
      if (!bandsComplete(this.db)) return null;
      this.bandsDone = true;
    }
    const keys = this.bandSigner.lookupKeys(text, project);
    if (keys.length === 0) return [];
    const db = this.db;
    // Outside a write transaction: one read transaction, so another process's fold cannot land
    // between reading the pending rows and memory_bands (and the pending rows read are kept).
    const cached = !db.inTransaction;
    return db.transaction(() => {
      const { pending, shared } = this.pendingBands.matches(keys, cached);
      // Counted here rather than by GROUP BY: 0.60 against 0.77 ms of CPU a lookup at 100K (600 texts, 3 rounds alternating).
      const folded = new Map<number, number>();
      for (const r of this.statement('SELECT memory_rowid FROM memory_bands WHERE key IN (SELECT value FROM json_each(?))').pluck().all(JSON.stringify(keys)) as number[]) {
        // A pending memory's newest row stands for its bands.
        if (!pending.has(r)) folded.set(r, (folded.get(r) ?? 0) + 1);
      }
      const counted: Array<[rowid: number, shared: number]> = [...shared, ...folded];
      // The most shared bands first (ties by rowid), cut before reading the rows: reading every candidate's row cost more than the seeks.
      counted.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
      const best = counted.slice(0, limit * 2);
      if (best.length === 0) return [];
      // The candidates' vectors in the same statement when the caller's model is the stored one:
      // a seek by rowid each instead of a second lookup by id (the vectors' own pages cost the
      // same either way; docs/BENCHMARKS.md `## write`).
      const stored = vectorModel ? this.stateValue('vector_model') : null;
      const withVectors = stored !== null && vectorModel !== undefined && (JSON.parse(stored) as EmbedderIdentity).model === vectorModel.model;
      const read = this.statement(
        `SELECT m.rowid AS r, m.id AS id, m.text AS text, m.kind AS kind, m.terms AS terms${withVectors ? ', v.vector AS vector' : ''}
           FROM memories m${withVectors ? ' LEFT JOIN vectors v ON v.memory_rowid = m.rowid' : ''}
          WHERE m.rowid IN (SELECT value FROM json_each(@rowids))
            AND m.valid_to IS NULL AND m.deleted_at IS NULL AND (+m.project IS @project OR +m.project IS NULL)`,
      );
      // The first `limit` of `best` whose rows pass, read a window at a time: at 100K the median
      // probe has 128 candidates of which ~120 pass, so a first window of limit + 1/8 nearly
      // always suffices and the rows past it (half of them) are never read.
      const out: MemoryText[] = [];
      for (let start = 0, size = limit + Math.ceil(limit / 8); start < best.length && out.length < limit; start += size, size = best.length - start) {
        const window = best.slice(start, start + size);
        const rows = read.all({ rowids: JSON.stringify(window.map(([r]) => r)), project }) as Array<{ r: number; id: string; text: string; kind: MemoryText['kind']; terms: string | null; vector?: Buffer | null }>;
        const byRowid = new Map(
          rows.map(({ r, terms, vector, ...row }): [number, MemoryText] => {
            const decoded = decodeTerms(terms);
            const memory: MemoryText = decoded === null ? row : { ...row, terms: decoded };
            if (vector) memory.vector = blobToVector(vector);
            return [r, memory];
          }),
        );
        for (const [r] of window) {
          const memory = byRowid.get(r);
          if (memory && out.length < limit) out.push(memory);
        }
      }
      return out;
    })();
  }

  /**
   * Fill memory_bands for memories written before it existed, `chunk` memories a transaction, at
   * most `maxChunks` chunks (default: until complete). Resumable: a killed fill loses at most its
   * uncommitted chunk. A read-only store fills nothing.
   */
  async fillNearDuplicateIndex(options: { chunk?: number; maxChunks?: number } = {}): Promise<FillProgress> {
    if (this.bandsDone && this.termsDone) return { filled: 0, complete: true };
    if (this.db.readonly) return { filled: 0, complete: bandsComplete(this.db) };
    let progress: FillProgress = { filled: 0, complete: true };
    if (!this.bandsDone) {
      progress = fillBands(this.db, options);
      if (progress.complete) this.bandsDone = true;
    }
    // Then the stored terms of older memories (./memory-terms.ts): without them the check tokenizes, with the same result.
    if (this.bandsDone && !this.termsDone) {
      const terms = fillTerms(this.db, termSet, options);
      if (terms.complete) this.termsDone = true;
      progress = { filled: progress.filled, complete: terms.complete };
    }
    return progress;
  }

  /**
   * Fill migration 013's BM25 postings for memories stored before it, in checkpointed batches
   * (resumable after a crash), at most `maxBatches` (default: until complete). Until complete,
   * searches rank with FTS5. A read-only store fills nothing.
   */
  async fillTextSearchIndex(options: { maxBatches?: number } = {}): Promise<{ filled: number; complete: boolean }> {
    if (this.db.readonly) return { filled: 0, complete: this.textIndex.ready() };
    const filled = this.textIndex.backfill(rowIndexText, options);
    return { filled, complete: this.textIndex.ready() };
  }

  /** Fill the near-duplicate bands again from the first memory (after rows were written past the store: `cairn copy`). */
  restartNearDuplicateFill(): void {
    restartFill(this.db);
    restartTermsFill(this.db);
    this.bandsDone = false;
    this.termsDone = false;
  }

  async findByContentHash(contentHash: string, project: string | null): Promise<Memory | null> {
    return this.activeByHash(contentHash, project);
  }

  async listMemories(options: ListOptions): Promise<Memory[]> {
    const { where, params } = filterSql(options);
    const order = ORDER_SQL[options.order ?? 'created-desc'];
    // Raw rows (arrays) decode in about half the time of keyed ones on the hooks' 300-row lists.
    const rows = this.db
      .prepare<unknown[], unknown[]>(`SELECT ${MEMORY_COLUMNS} FROM memories m WHERE ${where} ORDER BY ${order} LIMIT ? OFFSET ?`)
      .raw(true)
      .all(...params, options.limit ?? 100, options.offset ?? 0);
    return rows.map(rawRowToMemory);
  }

  async countMemories(filter: MemoryFilter): Promise<number> {
    const { where, params } = filterSql(filter);
    const row = this.db.prepare(`SELECT count(*) AS n FROM memories m WHERE ${where}`).get(...params) as { n: number };
    return row.n;
  }

  async versions(id: string): Promise<Memory[]> {
    const successor = this.db.prepare<unknown[], MemoryRow>(
      `SELECT ${MEMORY_COLUMNS} FROM memories m WHERE m.supersedes = ? ORDER BY m.created_at LIMIT 1`,
    );
    return versionChain(id, (other) => this.getMemory(other), async (other) => {
      const row = successor.get(other);
      return row ? rowToMemory(row) : null;
    });
  }

  /* ---------------------------------------------------------------- search */

  async searchText(query: string, options: TextSearchOptions): Promise<ScoredId[]> {
    // Off this thread only when there is something to overlap with (a hybrid recall's vector leg).
    const offloaded = options.alongsideVectors ? this.textSearchWorker?.search(query, options) : null;
    return (offloaded && (await offloaded)) ?? this.searchTextHere(query, options);
  }

  /** Full-text search on this thread's connection. */
  private searchTextHere(query: string, options: TextSearchOptions): ScoredId[] {
    const terms = queryTerms(query, 64);
    const selected = options.rarestTerms === undefined ? this.selectTerms(terms) : null;
    const match = selected !== null ? matchExpression(selected) : this.probeExpression(terms, options.rarestTerms as number);
    if (match === null) return [];
    const { where, params } = filterSql(options);
    if (selected !== null) {
      // FTS5's ranking from postings read whole, when the index can answer (./text-search-index.ts).
      const ranked = this.textIndex.search(selected, options.limit, (rowids) => this.idsForRowids(rowids, where, params));
      if (ranked !== null) return ranked.map((row) => ({ id: row.id, score: row.score }));
    }
    const rows = this.statement(
      `SELECT m.id AS id, f.rank AS rank
         FROM memories_fts f JOIN memories m ON m.rowid = f.rowid
        WHERE memories_fts MATCH ? AND ${where}
        ORDER BY f.rank LIMIT ?`,
    ).all(match, ...params, options.limit) as Array<{ id: string; rank: number }>;
    // FTS5 rank is bm25() negated (smaller is better); flip so higher is better.
    return rows.map((row) => ({ id: row.id, score: -row.rank }));
  }

  async searchVector(vector: Float32Array, model: EmbedderIdentity, options: VectorSearchOptions): Promise<ScoredId[]> {
    const index = await this.vectorIndex.sync(model);
    this.capabilities.ann = this.vectorIndex.annAvailable;
    if (!index || index.size === 0) return [];
    const { where, params } = filterSql(options);
    // A project filter searches the project's own vectors exactly when they are few (./vectors.ts).
    const projects = options.project === undefined ? null : options.project === null || options.includeUserScope === false ? [options.project] : [options.project, null];
    const scoped = projects ? this.vectorIndex.projectVectors(projects) : null;
    return searchFiltered({
      limit: options.limit,
      size: scoped && projects ? scoped.sizeOf(projects) : index.size,
      nearest: scoped && projects ? (fetch) => scoped.nearest(projects, vector, fetch) : (fetch) => index.search(vector, fetch),
      accept: (rowids) => this.idsForRowids(rowids, where, params),
      // In-process SQLite: a call costs microseconds, so judge 64 keys at a time; the project's own
      // vectors nearly all pass the filter, so there `limit` and a quarter more are judged first
      // (a chunk of just `limit` took a second call whenever one key failed: recall's 50 candidates
      // searched 1.5 against 1.35 ms).
      acceptChunk: scoped ? Math.max(16, options.limit + Math.ceil(options.limit / 4)) : 64,
    });
  }

  async putVectors(model: EmbedderIdentity, items: Array<{ id: string; vector: Float32Array; signature?: Uint8Array }>): Promise<void> {
    const db = this.db;
    const run = db.transaction(() => {
      this.claimVectorModel(model);
      const rowidOf = db.prepare('SELECT rowid FROM memories WHERE id = ?').pluck();
      for (const item of items) {
        if (item.vector.length !== model.dimension) {
          throw new CairnError('EMBEDDER_MISMATCH', `vector for ${item.id} has ${item.vector.length} dimensions, expected ${model.dimension}`);
        }
        const rowid = rowidOf.get(item.id) as number | undefined;
        if (rowid === undefined) throw notFound(`memory ${item.id}`);
        this.insertVector(rowid, item.vector);
        if (item.signature) this.insertSignature(rowid, model, item.signature);
      }
    });
    run.immediate();
  }

  async getSignatures(ids: string[], model: EmbedderIdentity): Promise<Map<string, Uint8Array>> {
    const out = new Map<string, Uint8Array>();
    if (ids.length === 0) return out;
    const rows = this.statement(
      `SELECT m.id AS id, s.signature AS signature FROM token_signatures s JOIN memories m ON m.rowid = s.memory_rowid
        WHERE m.id IN (SELECT value FROM json_each(?)) AND s.model = ?`,
    ).all(JSON.stringify(ids), signatureModel(model)) as Array<{ id: string; signature: Buffer }>;
    for (const row of rows) out.set(row.id, new Uint8Array(row.signature.buffer, row.signature.byteOffset, row.signature.byteLength));
    return out;
  }

  async putSignatures(model: EmbedderIdentity, items: Array<{ id: string; signature: Uint8Array }>): Promise<void> {
    const db = this.db;
    db.transaction(() => {
      const rowidOf = db.prepare('SELECT rowid FROM memories WHERE id = ?').pluck();
      for (const item of items) {
        const rowid = rowidOf.get(item.id) as number | undefined;
        if (rowid === undefined) throw notFound(`memory ${item.id}`);
        this.insertSignature(rowid, model, item.signature);
      }
    }).immediate();
  }

  async missingSignatures(model: EmbedderIdentity, limit: number): Promise<Memory[]> {
    if (!(await this.signaturesFollow(model))) return [];
    const rows = this.db
      .prepare<unknown[], MemoryRow>(
        `SELECT ${MEMORY_COLUMNS} FROM memories m JOIN vectors v ON v.memory_rowid = m.rowid
          WHERE NOT EXISTS (SELECT 1 FROM token_signatures s WHERE s.memory_rowid = m.rowid AND s.model = ?)
          ORDER BY m.rowid LIMIT ?`,
      )
      .all(signatureModel(model), limit);
    return rows.map(rowToMemory);
  }

  async countMissingSignatures(model: EmbedderIdentity): Promise<number> {
    if (!(await this.signaturesFollow(model))) return 0;
    return this.db
      .prepare('SELECT count(*) FROM vectors v WHERE NOT EXISTS (SELECT 1 FROM token_signatures s WHERE s.memory_rowid = v.memory_rowid AND s.model = ?)')
      .pluck()
      .get(signatureModel(model)) as number;
  }

  /** Signatures are filled for the model the vector index holds, never for another. */
  private async signaturesFollow(model: EmbedderIdentity): Promise<boolean> {
    const stored = await this.vectorModel();
    return stored !== null && stored.model === model.model && stored.dimension === model.dimension;
  }

  async getVectors(ids: string[], model: EmbedderIdentity): Promise<Map<string, Float32Array>> {
    const out = new Map<string, Float32Array>();
    const stored = await this.vectorModel();
    if (!stored || stored.model !== model.model || ids.length === 0) return out;
    const rows = this.statement(
      `SELECT m.id AS id, v.vector AS vector FROM vectors v JOIN memories m ON m.rowid = v.memory_rowid
        WHERE m.id IN (SELECT value FROM json_each(?))`,
    ).all(JSON.stringify(ids)) as Array<{ id: string; vector: Buffer }>;
    for (const row of rows) out.set(row.id, blobToVector(row.vector));
    return out;
  }

  async vectorModel(): Promise<EmbedderIdentity | null> {
    const raw = this.stateValue('vector_model');
    return raw === null ? null : (JSON.parse(raw) as EmbedderIdentity);
  }

  async missingVectors(model: EmbedderIdentity, limit: number): Promise<Memory[]> {
    const stored = await this.vectorModel();
    if (stored && stored.model !== model.model) {
      throw new CairnError('EMBEDDER_MISMATCH', `the vector index holds ${stored.model}; run \`cairn reindex\` to switch to ${model.model}`);
    }
    const rows = this.db
      .prepare<unknown[], MemoryRow>(
        `SELECT ${MEMORY_COLUMNS} FROM memories m WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.memory_rowid = m.rowid)
          ORDER BY m.rowid LIMIT ?`,
      )
      .all(limit);
    return rows.map(rowToMemory);
  }

  async clearVectors(claim?: EmbedderIdentity): Promise<void> {
    const db = this.db;
    db.transaction(() => {
      db.prepare('DELETE FROM vectors').run();
      db.prepare('DELETE FROM token_signatures').run();
      db.prepare("DELETE FROM state WHERE key = 'vector_model'").run();
      // A model switch under way is moot: the index is rebuilt from scratch.
      db.exec('DROP TABLE IF EXISTS vectors_next');
      db.prepare('DELETE FROM state WHERE key = ?').run(STAGED_MODEL_KEY);
      if (claim) this.claimVectorModel(claim);
      this.writeState('vector_epoch', String(Date.now()) + Math.random().toString(36).slice(2));
    }).immediate();
    this.vectorIndex.drop();
  }

  /* ---------------------------------------------------------------- usage, events */

  async touch(ids: string[], at: number, recalled: boolean): Promise<void> {
    if (ids.length === 0) return;
    const sql = recalled
      ? `UPDATE memories SET access_count = access_count + 1, last_accessed_at = ?, last_recalled_at = ?
          WHERE id IN (SELECT value FROM json_each(?))`
      : `UPDATE memories SET access_count = access_count + 1, last_accessed_at = ?
          WHERE id IN (SELECT value FROM json_each(?))`;
    const params = recalled ? [at, at, JSON.stringify(ids)] : [at, JSON.stringify(ids)];
    this.db.transaction(() => this.db.prepare(sql).run(...params)).immediate();
  }

  async appendEvents(events: MemoryEvent[]): Promise<void> {
    this.db.transaction(() => this.insertEvents(events)).immediate();
  }

  async listEvents(options: { memoryId?: string; since?: number; limit?: number; types?: EventType[] }): Promise<MemoryEvent[]> {
    const clauses: string[] = [];
    const params: unknown[] = [];
    if (options.memoryId !== undefined) {
      clauses.push('memory_id = ?');
      params.push(options.memoryId);
    }
    if (options.since !== undefined) {
      clauses.push('at >= ?');
      params.push(options.since);
    }
    if (options.types && options.types.length > 0) {
      clauses.push(`type IN (${options.types.map(() => '?').join(', ')})`);
      params.push(...options.types);
    }
    const where = clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '';
    const rows = this.db
      .prepare(`SELECT id, memory_id, type, at, actor, data FROM events ${where} ORDER BY id DESC LIMIT ?`)
      .all(...params, options.limit ?? 100) as Array<{ id: number; memory_id: string; type: EventType; at: number; actor: string; data: string }>;
    return rows.map((row) => ({
      id: row.id,
      memoryId: row.memory_id,
      type: row.type,
      at: row.at,
      actor: row.actor,
      data: JSON.parse(row.data) as Record<string, unknown>,
    }));
  }

  /* ---------------------------------------------------------------- snapshots */

  async createSnapshot(snapshot: Snapshot, filter: MemoryFilter): Promise<Snapshot> {
    const db = this.db;
    const { where, params } = filterSql({ ...filter, snapshotId: undefined, includeSuperseded: false, includeDeleted: false });
    return db
      .transaction((): Snapshot => {
        if (db.prepare('SELECT 1 FROM snapshots WHERE label = ?').get(snapshot.label)) {
          throw new CairnError('CONFLICT', `a snapshot labelled "${snapshot.label}" already exists`, { field: 'label' });
        }
        const inserted = db
          .prepare(`INSERT INTO snapshot_members (snapshot_id, memory_rowid) SELECT ?, m.rowid FROM memories m WHERE ${where}`)
          .run(snapshot.id, ...params);
        const sealed = { ...snapshot, memoryCount: inserted.changes };
        db.prepare('INSERT INTO snapshots (id, label, created_at, memory_count) VALUES (?, ?, ?, ?)').run(
          sealed.id,
          sealed.label,
          sealed.createdAt,
          sealed.memoryCount,
        );
        return sealed;
      })
      .immediate();
  }

  async listSnapshots(): Promise<Snapshot[]> {
    const rows = this.db
      .prepare('SELECT id, label, created_at, memory_count FROM snapshots ORDER BY created_at, id')
      .all() as Array<{ id: string; label: string; created_at: number; memory_count: number }>;
    return rows.map((r) => ({ id: r.id, label: r.label, createdAt: r.created_at, memoryCount: r.memory_count }));
  }

  async getSnapshot(idOrLabel: string): Promise<Snapshot | null> {
    const row = this.db
      .prepare('SELECT id, label, created_at, memory_count FROM snapshots WHERE id = ? OR label = ? LIMIT 1')
      .get(idOrLabel, idOrLabel) as { id: string; label: string; created_at: number; memory_count: number } | undefined;
    return row ? { id: row.id, label: row.label, createdAt: row.created_at, memoryCount: row.memory_count } : null;
  }

  async snapshotMemberIds(snapshotId: string): Promise<Set<string>> {
    const ids = this.db
      .prepare('SELECT m.id FROM snapshot_members s JOIN memories m ON m.rowid = s.memory_rowid WHERE s.snapshot_id = ?')
      .pluck()
      .all(snapshotId) as string[];
    return new Set(ids);
  }

  /* ---------------------------------------------------------------- state, stats */

  async getState(key: string): Promise<string | null> {
    return this.stateValue(key);
  }

  async setState(key: string, value: string): Promise<void> {
    this.writeState(key, value);
  }

  async updateState(key: string, update: (current: string | null) => string | null): Promise<string | null> {
    // IMMEDIATE takes the write lock before the read, so no other connection writes in between.
    return this.db
      .transaction((): string | null => {
        const next = update(this.stateValue(key));
        if (next === null) this.db.prepare('DELETE FROM state WHERE key = ?').run(key);
        else this.writeState(key, next);
        return next;
      })
      .immediate();
  }

  async stats(): Promise<StoreStats> {
    const db = this.db;
    const one = (sql: string): number => (db.prepare(sql).pluck().get() as number | null) ?? 0;
    const group = (column: string): Record<string, number> =>
      Object.fromEntries(
        (
          db
            .prepare(`SELECT ${column} AS k, count(*) AS n FROM memories WHERE valid_to IS NULL AND deleted_at IS NULL GROUP BY ${column}`)
            .all() as Array<{ k: string; n: number }>
        ).map((r) => [r.k, r.n]),
      );
    let sizeBytes: number | null = null;
    if (this.location !== ':memory:') {
      sizeBytes = 0;
      for (const suffix of ['', '-wal', '-shm']) {
        try {
          sizeBytes += statSync(this.location + suffix).size;
        } catch {
          // the -wal / -shm files exist while a connection is open in WAL mode, or after a hook process left them (src/hooks/run.ts)
        }
      }
    }
    const vectors = one('SELECT count(*) FROM vectors');
    const vectorIndex = await this.vectorIndex.probe(vectors);
    this.capabilities.ann = this.vectorIndex.annAvailable;
    const warnings = vectorIndex.warning === null ? [] : [vectorIndex.warning];
    if (!this.textIndex.ready()) {
      warnings.push('the BM25 index of older memories is not filled yet: searches rank with the slower FTS5 bm25() until `cairn ingest` or `cairn migrate up` fills it');
    }
    if (!this.bandsDone && !bandsComplete(db)) {
      warnings.push('near-duplicate bands of older memories are not filled yet: remember checks with the slower full-text probe and fills a few a call; `cairn migrate` fills them all now');
    }
    return {
      memories: one('SELECT count(*) FROM memories'),
      active: one('SELECT count(*) FROM memories WHERE valid_to IS NULL AND deleted_at IS NULL'),
      superseded: one('SELECT count(*) FROM memories WHERE valid_to IS NOT NULL'),
      forgotten: one('SELECT count(*) FROM memories WHERE deleted_at IS NOT NULL'),
      events: one('SELECT count(*) FROM events'),
      snapshots: one('SELECT count(*) FROM snapshots'),
      vectors,
      byKind: group('kind'),
      byScope: group('scope'),
      sizeBytes,
      schemaVersion: schemaVersion(db),
      vectorModel: await this.vectorModel(),
      ...(warnings.length === 0 ? {} : { warnings }),
    };
  }

  /* ---------------------------------------------------------------- review queue, vacuum */

  async queueReview(items: ReviewItem[]): Promise<number> {
    if (items.length === 0) return 0;
    const db = this.db;
    const insert = db.prepare(
      `INSERT INTO review_items (id, key, kind, project, memory_ids, reason, data, created_at, resolved_at, resolution)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    );
    return db
      .transaction((): number => {
        let added = 0;
        for (const i of items) {
          added += insert.run(i.id, i.key, i.kind, i.project, JSON.stringify(i.memoryIds), i.reason, JSON.stringify(i.data), i.createdAt, i.resolvedAt, i.resolution).changes;
        }
        return added;
      })
      .immediate();
  }

  async listReview(filter: ReviewFilter): Promise<ReviewItem[]> {
    const { where, params } = reviewWhere(filter);
    const rows = this.db
      .prepare(`SELECT * FROM review_items WHERE ${where} ORDER BY created_at, id LIMIT ? OFFSET ?`)
      .all(...params, filter.limit ?? 100, filter.offset ?? 0) as ReviewRow[];
    return rows.map(rowToReview);
  }

  async countReview(filter: Omit<ReviewFilter, 'limit' | 'offset'>): Promise<number> {
    const { where, params } = reviewWhere(filter);
    return (this.db.prepare(`SELECT count(*) FROM review_items WHERE ${where}`).pluck().get(...params) as number) ?? 0;
  }

  async getReview(id: string): Promise<ReviewItem | null> {
    const row = this.db.prepare('SELECT * FROM review_items WHERE id = ?').get(id) as ReviewRow | undefined;
    return row ? rowToReview(row) : null;
  }

  async resolveReview(id: string, resolution: string, at: number): Promise<ReviewItem> {
    const db = this.db;
    return db
      .transaction((): ReviewItem => {
        const changed = db.prepare('UPDATE review_items SET resolved_at = ?, resolution = ? WHERE id = ?').run(at, resolution, id);
        if (changed.changes === 0) throw notFound(`review item ${id}`);
        return rowToReview(db.prepare('SELECT * FROM review_items WHERE id = ?').get(id) as ReviewRow);
      })
      .immediate();
  }

  async integrityCheck(): Promise<Array<{ check: string; problem: string; advice: string }>> {
    const db = this.db;
    const problems: Array<{ check: string; problem: string; advice: string }> = [];
    const quick = db.pragma('quick_check', { simple: false }) as Array<{ quick_check: string }>;
    const bad = quick.map((r) => r.quick_check).filter((r) => r !== 'ok');
    if (bad.length > 0) {
      problems.push({ check: 'sqlite', problem: bad.slice(0, 3).join('; '), advice: 'restore from a backup, or `cairn export` what is readable into a fresh home' });
    }
    try {
      db.prepare("INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 0)").run();
    } catch (error) {
      problems.push({ check: 'full-text index', problem: (error as Error).message, advice: 'export what is readable with `cairn export`, then import it into a fresh home' });
    }
    const orphans = db.prepare('SELECT count(*) FROM vectors v WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.rowid = v.memory_rowid)').pluck().get() as number;
    if (orphans > 0) problems.push({ check: 'vectors', problem: `${orphans} vectors belong to no memory`, advice: 'run `cairn reindex`' });
    return problems;
  }

  async vacuum(): Promise<{ beforeBytes: number | null; afterBytes: number | null }> {
    const before = (await this.stats()).sizeBytes;
    // The pending near-duplicate bands go into memory_bands first, so the compacted file holds them in key order.
    this.db.transaction(() => this.pendingBands.fold()).immediate();
    this.db.exec('VACUUM');
    if (this.location !== ':memory:') this.db.pragma('wal_checkpoint(TRUNCATE)');
    const after = (await this.stats()).sizeBytes;
    return { beforeBytes: before, afterBytes: after };
  }

  /* ---------------------------------------------------------------- internals */

  /**
   * The query terms worth matching. OR-ing a term that is in a large share of memories makes FTS5
   * score most of the index (30 ms at 100K) while adding little to BM25; such terms are left out
   * once the index is large, keeping the rarest few if all are common.
   */
  private selectTerms(terms: string[]): string[] {
    if (terms.length <= 1) return terms;
    const rows = this.indexedRows();
    if (rows < PRUNE_FROM_ROWS) return terms.slice(0, 32);
    const withDf = this.withFrequencies(terms);
    const kept = withDf.filter((t) => t.df <= rows * COMMON_TERM_SHARE);
    if (kept.length > 0) return kept.map((t) => t.term);
    return withDf
      .sort((a, b) => a.df - b.df)
      .slice(0, KEEP_WHEN_ALL_COMMON)
      .map((t) => t.term);
  }

  /**
   * The near-duplicate probe for a text: its `rarest` rarest terms (leaving out, in a large index,
   * those in over 5% of memories), which rank the candidates. A memory sharing half the text's
   * terms shares some of those. The candidates must also hold one of the rarest few: OR-ing eight
   * terms of a few thousand memories each had FTS5 rank ~10K rows per write at 100K (2–4 ms),
   * while requiring one of the rarest two (or more, up to PROBE_POSTINGS postings) reads only
   * their postings and seeks in the others' (the bench's 100K probe: p50 ~7 ms → ~1 ms under
   * load). Of 584 synthetic near-duplicates at the Jaccard threshold in the 100K corpus it finds
   * 578 where the plain OR found 580 (and all 584 one-edit ones, as before).
   */
  private probeExpression(terms: string[], rarest: number): string | null {
    if (terms.length <= 1) return matchExpression(terms);
    const rows = this.indexedRows();
    // In a small index every term is cheap to match, and "5% of rows" would exclude everything.
    const cap = rows < PRUNE_FROM_ROWS ? Infinity : rows * COMMON_TERM_SHARE;
    const ranked = this.withFrequencies(terms)
      .filter((t) => t.df > 0 && t.df <= cap)
      .sort((a, b) => a.df - b.df)
      .slice(0, rarest);
    let required = 0;
    let postings = 0;
    for (const { df } of ranked) {
      if (required >= PROBE_REQUIRED_TERMS && postings + df > PROBE_POSTINGS) break;
      postings += df;
      required++;
    }
    const all = matchExpression(ranked.map((t) => t.term));
    if (required >= ranked.length || all === null) return all;
    return `(${matchExpression(ranked.slice(0, required).map((t) => t.term)) as string}) AND (${all})`;
  }

  /** Rows ever indexed (forgotten and superseded memories stay in the index): the base of "common". */
  private indexedRows(): number {
    return (this.statement('SELECT max(rowid) FROM memories').pluck().get() as number | null) ?? 0;
  }

  /** Each term with how many memories hold it (its porter stem, as the index does; see ./term-frequency.ts). */
  private withFrequencies(terms: string[]): Array<{ term: string; df: number }> {
    const dfs = this.termFrequencies.of(terms);
    return terms.map((term, i) => ({ term, df: dfs[i] ?? 0 }));
  }

  /**
   * Recount the terms' document frequencies from the full-text index and rebuild the BM25
   * postings from the memories, for code that wrote `memories_fts` directly (a copy from PostgreSQL).
   */
  rebuildTermFrequencies(): void {
    this.termFrequencies.rebuild();
    this.textIndex.clear();
    this.textIndex.backfill(rowIndexText);
  }

  /** A prepared statement kept for the connection's life (hot paths: preparing costs tens of µs). */
  private statement(sql: string): Database.Statement {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      if (this.statements.size >= 64) this.statements.clear();
      stmt = this.db.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  private rowById(id: string): MemoryRow | undefined {
    return this.db.prepare<unknown[], MemoryRow>(`SELECT ${MEMORY_COLUMNS} FROM memories m WHERE m.id = ?`).get(id);
  }

  private activeByHash(contentHash: string, project: string | null): Memory | null {
    const row = this.statement(
      `SELECT ${MEMORY_COLUMNS} FROM memories m
        WHERE coalesce(m.project, '') = ? AND m.content_hash = ? AND m.valid_to IS NULL AND m.deleted_at IS NULL`,
    ).get(project ?? '', contentHash) as MemoryRow | undefined;
    return row ? rowToMemory(row) : null;
  }

  private insertEvents(events: MemoryEvent[]): void {
    const stmt = this.statement('INSERT INTO events (memory_id, type, at, actor, data) VALUES (?, ?, ?, ?, ?)');
    for (const event of events) stmt.run(event.memoryId, event.type, event.at, event.actor, JSON.stringify(event.data));
  }

  private insertVector(rowid: number, vector: Float32Array): void {
    this.statement(
      `INSERT INTO vectors (memory_rowid, vector, seq) VALUES (?, ?, (SELECT coalesce(max(seq), 0) + 1 FROM vectors))
       ON CONFLICT (memory_rowid) DO UPDATE SET vector = excluded.vector, seq = excluded.seq`,
    ).run(rowid, vectorToBlob(vector));
  }

  private insertSignature(rowid: number, model: EmbedderIdentity, signature: Uint8Array): void {
    this.statement(
      `INSERT INTO token_signatures (memory_rowid, model, signature) VALUES (?, ?, ?)
       ON CONFLICT (memory_rowid) DO UPDATE SET model = excluded.model, signature = excluded.signature`,
    ).run(rowid, signatureModel(model), Buffer.from(signature.buffer, signature.byteOffset, signature.byteLength));
  }

  /** Record the embedder identity on first use; refuse vectors from another model. */
  private claimVectorModel(model: EmbedderIdentity): void {
    const raw = this.stateValue('vector_model');
    if (raw === null) {
      this.writeState('vector_model', JSON.stringify({ model: model.model, dimension: model.dimension }));
      return;
    }
    const stored = JSON.parse(raw) as EmbedderIdentity;
    if (stored.model !== model.model || stored.dimension !== model.dimension) {
      throw new CairnError(
        'EMBEDDER_MISMATCH',
        `the vector index was built with ${stored.model} (${stored.dimension} dims) but the embedder is ${model.model} (${model.dimension} dims); run \`cairn reindex\``,
      );
    }
  }

  private idsForRowids(rowids: number[], where: string, params: unknown[]): Map<number, string> {
    const rows = this.statement(`SELECT m.rowid AS rowid, m.id AS id FROM memories m WHERE m.rowid IN (SELECT value FROM json_each(?)) AND ${where}`).all(
      JSON.stringify(rowids),
      ...params,
    ) as Array<{ rowid: number; id: string }>;
    return new Map(rows.map((r) => [r.rowid, r.id]));
  }

  private stateValue(key: string): string | null {
    return (this.statement('SELECT value FROM state WHERE key = ?').pluck().get(key) as string | undefined) ?? null;
  }

  private writeState(key: string, value: string): void {
    this.db.prepare('INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(key, value);
  }
}

function reviewWhere(filter: Omit<ReviewFilter, 'limit' | 'offset'>): { where: string; params: unknown[] } {
  const params: unknown[] = [];
  return { where: sharedReviewWhere(filter, sqliteDialect(params)), params };
}

/** Open a SQLite store at `path` (created and migrated when needed). */
export async function openSqliteStore(path: string, options: Omit<SqliteStoreOptions, 'path'> = {}): Promise<SqliteStore> {
  const store = new SqliteStore({ ...options, path });
  await store.open();
  return store;
}

/** How a token signature names the model that made it: id and dimension. */
function signatureModel(model: EmbedderIdentity): string {
  return `${model.model}/${model.dimension}`;
}
