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
import { PgDatabase, isUniqueViolation, type DatabaseOptions, type Queryable } from './driver.js';
import { queryLexemes, tsqueryOf, tsvectorLiteral } from './fts.js';
import { refreshPgFtsTerms } from './fts-refresh.js';
import { migrate } from './migrate.js';
import { MEMORY_FIELDS, ORDER_SQL, memoryIndexSource } from '../memory-rows.js';
import { reviewWhere as sharedReviewWhere } from '../review-rows.js';
import { MEMORY_COLUMNS, Params, filterSql, memoryFieldValues, postgresDialect, pgJson, pgText, rowToMemory, rowToReview, type MemoryRow, type ReviewRow } from './rows.js';
import { PostgresSubstrate } from './substrate.js';
import { versionChain } from '../versions.js';
import { postgresEmbeddingCache } from './embed-cache.js';
import { postgresLedger } from './ledger.js';
import { TermStats } from './term-stats.js';
import { PgVectors } from './vectors.js';
import { PgVectorStaging } from './vector-staging.js';

/** The terms a memory is indexed under: its text, its tags and its context (as on SQLite: `memoryIndexSource`). */
function memoryTerms(memory: Pick<Memory, 'text' | 'tags' | 'context'>): string {
  return tsvectorLiteral(memoryIndexSource(memory));
}

const INSERT_COLUMNS = [...MEMORY_FIELDS, 'terms'] as const;

/** Parameters of an INSERT INTO memories (INSERT_COLUMNS order). */
export function memoryValues(memory: Memory): unknown[] {
  return [...memoryFieldValues(memory), memoryTerms(memory)];
}

const INSERT_MEMORY = `INSERT INTO memories (${INSERT_COLUMNS.join(', ')})
  VALUES (${INSERT_COLUMNS.map((c, i) => (c === 'terms' ? `$${i + 1}::tsvector` : `$${i + 1}`)).join(', ')})`;

export interface PostgresStoreOptions extends DatabaseOptions {
  /** `postgres://user:password@host:port/database[?schema=NAME]` */
  url: string;
}

/**
 * cairn on PostgreSQL, for a team sharing one memory: the same contract and conformance suite
 * as SQLite. Full text over tokenize.ts's terms (ranked with ts_rank), vectors with pgvector
 * (HNSW, cosine) or, on a server without it, `real[]` searched exactly; every write one
 * transaction, retried on serialization failures and deadlocks; idempotent by content hash.
 */
export class PostgresStore implements Store {
  readonly name = 'postgres';
  readonly capabilities: StoreCapabilities = { fullText: true, vectors: true, ann: false, substrate: true };
  readonly location: string;
  private readonly options: PostgresStoreOptions;
  private database: PgDatabase | null = null;
  private vectorStore: PgVectors | null = null;
  private substrateStore: PostgresSubstrate | null = null;
  private termStats: TermStats | null = null;
  private readonly warningList: string[] = [];

  constructor(options: PostgresStoreOptions) {
    this.options = options;
    this.location = options.url.replace(/^(postgres(?:ql)?:\/\/[^:/@]*):[^@/]*@/i, '$1:***@');
  }

  /** The connection pool, for adapters built on this store (copy, tests). */
  get db(): PgDatabase {
    if (!this.database) throw new CairnError('STORE_FAILED', 'store is not open; call open() first');
    return this.database;
  }

  private get vectors(): PgVectors {
    if (!this.vectorStore) throw new CairnError('STORE_FAILED', 'store is not open; call open() first');
    return this.vectorStore;
  }

  /** Another model's vectors built beside the index (the background model switch). */
  readonly vectorStaging: PgVectorStaging = new PgVectorStaging(
    () => this.db,
    () => this.vectors,
  );

  /** Embeddings by (model, content hash) in table `embed_cache`. */
  readonly embeddingCache: EmbeddingCacheStore = postgresEmbeddingCache(() => this.db);
  /** The injection ledger (migration 007). */
  readonly ledger: LedgerStore = postgresLedger(() => this.db);

  get substrate(): PostgresSubstrate {
    this.substrateStore ??= new PostgresSubstrate(this.db, this.terms);
    return this.substrateStore;
  }

  private get terms(): TermStats {
    this.termStats ??= new TermStats(this.db);
    return this.termStats;
  }

  /** How vectors are searched on this server: `pgvector` (HNSW) or `exact` (no pgvector). */
  get vectorMode(): PgVectors['mode'] {
    return this.vectors.mode;
  }

  /** Things `cairn status` should tell the user (e.g. pgvector missing). */
  get warnings(): string[] {
    return [...this.warningList];
  }

  async open(): Promise<void> {
    if (this.database) return;
    const db = await PgDatabase.connect(this.options.url, this.options);
    try {
      await migrate(db);
      // Terms version 2 (CJK, emoji): re-index the rows it changes, once (see fts-refresh.ts).
      await refreshPgFtsTerms(db);
      const { mode, iterativeScan } = await PgVectors.detect(db);
      if (mode === 'pgvector') {
        this.capabilities.ann = true;
        // Filtered searches keep walking the HNSW graph until enough rows pass the filter.
        if (iterativeScan) await db.addSessionSetting('SET hnsw.iterative_scan = strict_order');
      } else {
        this.warningList.push(
          'pgvector is not installed on this PostgreSQL server: vectors are stored as real[] and searched exactly in memory (fine up to ~100K memories; install pgvector for an HNSW index)',
        );
      }
      this.vectorStore = new PgVectors(db, mode);
      await analyzeIfStale(db);
    } catch (error) {
      await db.close().catch(() => {});
      throw error;
    }
    this.database = db;
  }

  async close(): Promise<void> {
    const db = this.database;
    this.database = null;
    this.vectorStore = null;
    this.substrateStore = null;
    await db?.close();
  }

  /* ---------------------------------------------------------------- memories */

  async writeMemory(write: MemoryWrite): Promise<{ memory: Memory; inserted: boolean }> {
    const { memory } = write;
    return this.db.transaction(async (client) => {
      if (write.closes) {
        const closed = await client.query('UPDATE memories SET valid_to = $1, updated_at = $1 WHERE id = $2 AND valid_to IS NULL', [
          write.closes.at,
          write.closes.id,
        ]);
        if (closed.rowCount === 0) {
          const exists = await client.query('SELECT 1 FROM memories WHERE id = $1', [write.closes.id]);
          if (exists.rows.length === 0) throw notFound(`memory ${write.closes.id}`);
          throw new CairnError('CONFLICT', `memory ${write.closes.id} was already superseded`);
        }
      }
      const inserted = await client.query<{ pk: number }>(`${INSERT_MEMORY} ON CONFLICT DO NOTHING RETURNING pk`, memoryValues(memory));
      const row = inserted.rows[0];
      if (row === undefined) {
        const existing = await this.activeByHash(client, memory.contentHash, memory.project);
        if (!existing) throw new CairnError('CONFLICT', `memory id ${memory.id} already exists`);
        if (write.closes) throw new CairnError('CONFLICT', 'the revised text is identical to an existing memory');
        return { memory: existing, inserted: false };
      }
      await insertEvents(client, write.events);
      if (write.embedding) {
        const { vector, signature } = write.embedding;
        await this.vectors.write(client, write.embedding.model, [{ pk: row.pk, id: memory.id, vector, ...(signature ? { signature } : {}) }]);
      }
      return { memory, inserted: true };
    });
  }

  async patchMemory(id: string, patch: MemoryPatch, event: MemoryEvent): Promise<Memory> {
    return this.db.transaction(async (client) => {
      const current = await client.query<{ text: string; tags: string[]; context: string | null }>('SELECT text, tags, context FROM memories WHERE id = $1 FOR UPDATE', [id]);
      const before = current.rows[0];
      if (!before) throw notFound(`memory ${id}`);
      const p = new Params();
      const sets: string[] = [`updated_at = ${p.add(patch.updatedAt)}`];
      const assign = (column: string, value: unknown, cast = ''): void => {
        sets.push(`${column} = ${p.add(value)}${cast}`);
      };
      if (patch.text !== undefined) assign('text', pgText(patch.text));
      if (patch.tags !== undefined) assign('tags', patch.tags.map(pgText), '::text[]');
      if (patch.importance !== undefined) assign('importance', patch.importance);
      if (patch.kind !== undefined) assign('kind', patch.kind);
      if (patch.scope !== undefined) assign('scope', patch.scope);
      if (patch.pinned !== undefined) assign('pinned', patch.pinned);
      if (patch.deletedAt !== undefined) assign('deleted_at', patch.deletedAt);
      if (patch.validTo !== undefined) assign('valid_to', patch.validTo);
      if (patch.meta !== undefined) assign('meta', pgJson(patch.meta), '::jsonb');
      if (patch.provenance !== undefined) assign('provenance', patch.provenance === null ? null : pgJson(patch.provenance), '::jsonb');
      if (patch.files !== undefined) assign('files', pgJson(patch.files), '::jsonb');
      if (patch.text !== undefined || patch.tags !== undefined) {
        assign('terms', memoryTerms({ text: patch.text ?? before.text, tags: patch.tags ?? before.tags, context: before.context }), '::tsvector');
      }
      let updated: MemoryRow | undefined;
      try {
        const result = await client.query<MemoryRow>(
          `UPDATE memories m SET ${sets.join(', ')} WHERE m.id = ${p.add(id)} RETURNING ${MEMORY_COLUMNS}`,
          p.values,
        );
        updated = result.rows[0];
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw new CairnError('CONFLICT', `an identical active memory already exists; cannot restore ${id}`, { cause: error });
        }
        throw error;
      }
      if (!updated) throw notFound(`memory ${id}`);
      await insertEvents(client, [event]);
      return rowToMemory(updated);
    });
  }

  async getMemory(id: string): Promise<Memory | null> {
    const rows = await this.db.query<MemoryRow>(`SELECT ${MEMORY_COLUMNS} FROM memories m WHERE m.id = $1`, [id]);
    const row = rows.rows[0];
    return row ? rowToMemory(row) : null;
  }

  async getMemories(ids: string[]): Promise<Memory[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.query<MemoryRow>(`SELECT ${MEMORY_COLUMNS} FROM memories m WHERE m.id = ANY($1::text[])`, [ids]);
    const byId = new Map(rows.rows.map((row) => [row.id, row]));
    const out: Memory[] = [];
    for (const id of ids) {
      const row = byId.get(id);
      if (row) out.push(rowToMemory(row));
    }
    return out;
  }

  async findByContentHash(contentHash: string, project: string | null): Promise<Memory | null> {
    return this.activeByHash(this.db, contentHash, project);
  }

  async listMemories(options: ListOptions): Promise<Memory[]> {
    const p = new Params();
    const where = filterSql(options, p);
    const order = ORDER_SQL[options.order ?? 'created-desc'];
    const rows = await this.db.query<MemoryRow>(
      `SELECT ${MEMORY_COLUMNS} FROM memories m WHERE ${where} ORDER BY ${order} LIMIT ${p.add(options.limit ?? 100)} OFFSET ${p.add(options.offset ?? 0)}`,
      p.values,
    );
    return rows.rows.map(rowToMemory);
  }

  async countMemories(filter: MemoryFilter): Promise<number> {
    const p = new Params();
    const where = filterSql(filter, p);
    const rows = await this.db.query<{ n: number }>(`SELECT count(*) AS n FROM memories m WHERE ${where}`, p.values);
    return rows.rows[0]?.n ?? 0;
  }

  async versions(id: string): Promise<Memory[]> {
    return versionChain(id, (other) => this.getMemory(other), async (other) => {
      const rows = await this.db.query<MemoryRow>(
        `SELECT ${MEMORY_COLUMNS} FROM memories m WHERE m.supersedes = $1 ORDER BY m.created_at, m.pk LIMIT 1`,
        [other],
      );
      return rows.rows[0] ? rowToMemory(rows.rows[0]) : null;
    });
  }

  /* ---------------------------------------------------------------- search */

  async searchText(query: string, options: TextSearchOptions): Promise<ScoredId[]> {
    const lexemes = queryLexemes(query);
    if (lexemes.length === 0 || options.limit <= 0) return [];
    const run = async (match: string[]): Promise<ScoredId[]> => {
      const p = new Params();
      const rank = p.add(tsqueryOf(lexemes));
      const q = p.add(tsqueryOf(match));
      const where = filterSql(options, p);
      const rows = await this.db.query<{ id: string; score: number }>(
        `SELECT m.id, ts_rank(m.terms, ${rank}::tsquery, 1) AS score FROM memories m
          WHERE m.terms @@ ${q}::tsquery AND ${where}
          ORDER BY score DESC, m.pk LIMIT ${p.add(options.limit)}`,
        p.values,
      );
      return rows.rows.map((row) => ({ id: row.id, score: row.score }));
    };
    const selective = await this.terms.selective('memories', lexemes);
    if (selective) {
      const hits = await run(selective);
      if (hits.length >= options.limit) return hits;
    }
    return run(lexemes);
  }

  searchVector(vector: Float32Array, model: EmbedderIdentity, options: VectorSearchOptions): Promise<ScoredId[]> {
    return this.vectors.search(vector, model, options);
  }

  putVectors(model: EmbedderIdentity, items: Array<{ id: string; vector: Float32Array; signature?: Uint8Array }>): Promise<void> {
    return this.vectors.put(model, items);
  }

  getSignatures(ids: string[], model: EmbedderIdentity): Promise<Map<string, Uint8Array>> {
    return this.vectors.getSignatures(ids, model);
  }

  putSignatures(model: EmbedderIdentity, items: Array<{ id: string; signature: Uint8Array }>): Promise<void> {
    return this.vectors.putSignatures(model, items);
  }

  missingSignatures(model: EmbedderIdentity, limit: number): Promise<Memory[]> {
    return this.vectors.missingSignatures(model, limit);
  }

  countMissingSignatures(model: EmbedderIdentity): Promise<number> {
    return this.vectors.countMissingSignatures(model);
  }

  getVectors(ids: string[], model: EmbedderIdentity): Promise<Map<string, Float32Array>> {
    return this.vectors.get(ids, model);
  }

  vectorModel(): Promise<EmbedderIdentity | null> {
    return this.vectors.storedModel();
  }

  missingVectors(model: EmbedderIdentity, limit: number): Promise<Memory[]> {
    return this.vectors.missing(model, limit);
  }

  clearVectors(claim?: EmbedderIdentity): Promise<void> {
    return this.vectors.clear(claim);
  }

  /* ---------------------------------------------------------------- usage, events */

  async touch(ids: string[], at: number, recalled: boolean): Promise<void> {
    if (ids.length === 0) return;
    const recall = recalled ? ', last_recalled_at = $1' : '';
    await this.db.transaction(async (client) => {
      // Lock rows in pk order so concurrent touches of overlapping sets cannot deadlock.
      await client.query(
        `UPDATE memories m SET access_count = m.access_count + 1, last_accessed_at = $1${recall}
           FROM (SELECT pk FROM memories WHERE id = ANY($2::text[]) ORDER BY pk FOR UPDATE) s
          WHERE m.pk = s.pk`,
        [at, ids],
      );
    });
  }

  async appendEvents(events: MemoryEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.db.transaction((client) => insertEvents(client, events));
  }

  async listEvents(options: { memoryId?: string; since?: number; limit?: number; types?: EventType[] }): Promise<MemoryEvent[]> {
    const p = new Params();
    const clauses: string[] = [];
    if (options.memoryId !== undefined) clauses.push(`memory_id = ${p.add(options.memoryId)}`);
    if (options.since !== undefined) clauses.push(`at >= ${p.add(options.since)}`);
    if (options.types && options.types.length > 0) clauses.push(`type = ANY(${p.add(options.types)}::text[])`);
    const where = clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '';
    const rows = await this.db.query<{ id: number; memory_id: string; type: EventType; at: number; actor: string; data: Record<string, unknown> }>(
      `SELECT id, memory_id, type, at, actor, data FROM events ${where} ORDER BY id DESC LIMIT ${p.add(options.limit ?? 100)}`,
      p.values,
    );
    return rows.rows.map((row) => ({ id: row.id, memoryId: row.memory_id, type: row.type, at: row.at, actor: row.actor, data: row.data }));
  }

  /* ---------------------------------------------------------------- snapshots */

  async createSnapshot(snapshot: Snapshot, filter: MemoryFilter): Promise<Snapshot> {
    return this.db.transaction(async (client) => {
      const created = await client.query(
        'INSERT INTO snapshots (id, label, created_at, memory_count) VALUES ($1, $2, $3, 0) ON CONFLICT DO NOTHING RETURNING id',
        [snapshot.id, snapshot.label, snapshot.createdAt],
      );
      if (created.rows.length === 0) {
        throw new CairnError('CONFLICT', `a snapshot labelled "${snapshot.label}" (or with id ${snapshot.id}) already exists`, { field: 'label' });
      }
      const p = new Params();
      const id = p.add(snapshot.id);
      const where = filterSql({ ...filter, snapshotId: undefined, includeSuperseded: false, includeDeleted: false }, p);
      const members = await client.query(`INSERT INTO snapshot_members (snapshot_id, memory_pk) SELECT ${id}, m.pk FROM memories m WHERE ${where}`, p.values);
      const sealed = { ...snapshot, memoryCount: members.rowCount ?? 0 };
      await client.query('UPDATE snapshots SET memory_count = $1 WHERE id = $2', [sealed.memoryCount, sealed.id]);
      return sealed;
    });
  }

  async listSnapshots(): Promise<Snapshot[]> {
    const rows = await this.db.query<SnapshotRow>('SELECT id, label, created_at, memory_count FROM snapshots ORDER BY created_at, id');
    return rows.rows.map(rowToSnapshot);
  }

  async getSnapshot(idOrLabel: string): Promise<Snapshot | null> {
    const rows = await this.db.query<SnapshotRow>(
      'SELECT id, label, created_at, memory_count FROM snapshots WHERE id = $1 OR label = $1 ORDER BY (id = $1) DESC LIMIT 1',
      [idOrLabel],
    );
    const row = rows.rows[0];
    return row ? rowToSnapshot(row) : null;
  }

  async snapshotMemberIds(snapshotId: string): Promise<Set<string>> {
    const rows = await this.db.query<{ id: string }>(
      'SELECT m.id FROM snapshot_members s JOIN memories m ON m.pk = s.memory_pk WHERE s.snapshot_id = $1',
      [snapshotId],
    );
    return new Set(rows.rows.map((r) => r.id));
  }

  /* ---------------------------------------------------------------- state, stats */

  async getState(key: string): Promise<string | null> {
    const rows = await this.db.query<{ value: string }>('SELECT value FROM state WHERE key = $1', [key]);
    return rows.rows[0]?.value ?? null;
  }

  async setState(key: string, value: string): Promise<void> {
    await this.db.query('INSERT INTO state (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, pgText(value)]);
  }

  async updateState(key: string, update: (current: string | null) => string | null): Promise<string | null> {
    return this.db.transaction(async (client) => {
      for (;;) {
        const locked = await client.query<{ value: string }>('SELECT value FROM state WHERE key = $1 FOR UPDATE', [key]);
        const row = locked.rows[0];
        if (row !== undefined) {
          const next = update(row.value);
          if (next === null) await client.query('DELETE FROM state WHERE key = $1', [key]);
          else await client.query('UPDATE state SET value = $2 WHERE key = $1', [key, pgText(next)]);
          return next;
        }
        const next = update(null);
        if (next === null) return null;
        const inserted = await client.query('INSERT INTO state (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING RETURNING key', [key, pgText(next)]);
        if (inserted.rows.length > 0) return next;
        // Another transaction created the key since the SELECT: lock it and update from its value.
      }
    });
  }

  async stats(): Promise<StoreStats> {
    const counts = await this.db.query<{
      memories: number;
      active: number;
      superseded: number;
      forgotten: number;
      events: number;
      snapshots: number;
      vectors: number;
      size: number;
      version: number | null;
    }>(
      `SELECT (SELECT count(*) FROM memories) AS memories,
              (SELECT count(*) FROM memories WHERE valid_to IS NULL AND deleted_at IS NULL) AS active,
              (SELECT count(*) FROM memories WHERE valid_to IS NOT NULL) AS superseded,
              (SELECT count(*) FROM memories WHERE deleted_at IS NOT NULL) AS forgotten,
              (SELECT count(*) FROM events) AS events,
              (SELECT count(*) FROM snapshots) AS snapshots,
              (SELECT count(*) FROM vectors) AS vectors,
              (SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
                 JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r' AND n.nspname = current_schema()) AS size,
              (SELECT max(version) FROM cairn_schema) AS version`,
    );
    const group = async (column: 'kind' | 'scope'): Promise<Record<string, number>> => {
      const rows = await this.db.query<{ k: string; n: number }>(
        `SELECT ${column} AS k, count(*) AS n FROM memories WHERE valid_to IS NULL AND deleted_at IS NULL GROUP BY ${column}`,
      );
      return Object.fromEntries(rows.rows.map((r) => [r.k, r.n]));
    };
    const c = counts.rows[0];
    const stats: StoreStats = {
      memories: c?.memories ?? 0,
      active: c?.active ?? 0,
      superseded: c?.superseded ?? 0,
      forgotten: c?.forgotten ?? 0,
      events: c?.events ?? 0,
      snapshots: c?.snapshots ?? 0,
      vectors: c?.vectors ?? 0,
      byKind: await group('kind'),
      byScope: await group('scope'),
      sizeBytes: c?.size ?? null,
      schemaVersion: c?.version ?? 0,
      vectorModel: await this.vectorModel(),
    };
    if (this.warningList.length > 0) stats.warnings = this.warnings;
    return stats;
  }

  /* ---------------------------------------------------------------- review queue, vacuum */

  async queueReview(items: ReviewItem[]): Promise<number> {
    if (items.length === 0) return 0;
    return this.db.transaction(async (client) => {
      let added = 0;
      for (const i of items) {
        const result = await client.query(
          `INSERT INTO review_items (id, key, kind, project, memory_ids, reason, data, created_at, resolved_at, resolution)
           VALUES ($1, $2, $3, $4, $5::text[], $6, $7::jsonb, $8, $9, $10) ON CONFLICT DO NOTHING`,
          [i.id, i.key, i.kind, i.project, i.memoryIds, pgText(i.reason), pgJson(i.data), i.createdAt, i.resolvedAt, i.resolution],
        );
        added += result.rowCount ?? 0;
      }
      return added;
    });
  }

  async listReview(filter: ReviewFilter): Promise<ReviewItem[]> {
    const p = new Params();
    const where = reviewWhere(filter, p);
    const rows = await this.db.query<ReviewRow>(
      `SELECT * FROM review_items WHERE ${where} ORDER BY created_at, id LIMIT ${p.add(filter.limit ?? 100)} OFFSET ${p.add(filter.offset ?? 0)}`,
      p.values,
    );
    return rows.rows.map(rowToReview);
  }

  async countReview(filter: Omit<ReviewFilter, 'limit' | 'offset'>): Promise<number> {
    const p = new Params();
    const where = reviewWhere(filter, p);
    const rows = await this.db.query<{ n: number }>(`SELECT count(*) AS n FROM review_items WHERE ${where}`, p.values);
    return rows.rows[0]?.n ?? 0;
  }

  async getReview(id: string): Promise<ReviewItem | null> {
    const rows = await this.db.query<ReviewRow>('SELECT * FROM review_items WHERE id = $1', [id]);
    const row = rows.rows[0];
    return row ? rowToReview(row) : null;
  }

  async resolveReview(id: string, resolution: string, at: number): Promise<ReviewItem> {
    const rows = await this.db.query<ReviewRow>('UPDATE review_items SET resolved_at = $1, resolution = $2 WHERE id = $3 RETURNING *', [at, resolution, id]);
    const row = rows.rows[0];
    if (!row) throw notFound(`review item ${id}`);
    return rowToReview(row);
  }

  async vacuum(): Promise<{ beforeBytes: number | null; afterBytes: number | null }> {
    const before = (await this.stats()).sizeBytes;
    // VACUUM cannot run inside a transaction; each runs on its own pooled connection.
    for (const table of ['memories', 'vectors', 'events', 'snapshot_members', 'turns', 'sessions', 'review_items']) {
      await this.db.query(`VACUUM (ANALYZE) ${table}`);
    }
    const after = (await this.stats()).sizeBytes;
    return { beforeBytes: before, afterBytes: after };
  }

  /* ---------------------------------------------------------------- internals */

  private async activeByHash(db: Queryable, contentHash: string, project: string | null): Promise<Memory | null> {
    const rows = await db.query<MemoryRow>(
      `SELECT ${MEMORY_COLUMNS} FROM memories m
        WHERE coalesce(m.project, '') = $1 AND m.content_hash = $2 AND m.valid_to IS NULL AND m.deleted_at IS NULL`,
      [project ?? '', contentHash],
    );
    const row = rows.rows[0];
    return row ? rowToMemory(row) : null;
  }
}

/**
 * ANALYZE tables whose statistics are stale (PGlite, or a server whose autovacuum has not got
 * to them yet): without them the planner scans memories instead of using the full-text and
 * vector indexes.
 */
async function analyzeIfStale(db: Queryable): Promise<void> {
  const stale = await db.query<{ relname: string }>(
    `SELECT relname FROM pg_stat_user_tables
      WHERE schemaname = current_schema() AND relname IN ('memories', 'vectors', 'turns')
        AND n_mod_since_analyze > greatest(1000, n_live_tup / 10)`,
  );
  for (const row of stale.rows) await db.query(`ANALYZE ${row.relname}`);
}

async function insertEvents(client: Queryable, events: MemoryEvent[]): Promise<void> {
  if (events.length === 0) return;
  await client.query(
    `INSERT INTO events (memory_id, type, at, actor, data)
       SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::jsonb[])`,
    [events.map((e) => e.memoryId), events.map((e) => e.type), events.map((e) => e.at), events.map((e) => pgText(e.actor)), events.map((e) => pgJson(e.data))],
  );
}

interface SnapshotRow {
  id: string;
  label: string;
  created_at: number;
  memory_count: number;
}

function rowToSnapshot(row: SnapshotRow): Snapshot {
  return { id: row.id, label: row.label, createdAt: row.created_at, memoryCount: row.memory_count };
}

function reviewWhere(filter: Omit<ReviewFilter, 'limit' | 'offset'>, p: Params): string {
  return sharedReviewWhere(filter, postgresDialect(p));
}

/** Open a PostgreSQL store (the schema is created and migrated when needed). */
export async function openPostgresStore(url: string, options: Omit<PostgresStoreOptions, 'url'> = {}): Promise<PostgresStore> {
  const store = new PostgresStore({ ...options, url });
  await store.open();
  return store;
}
