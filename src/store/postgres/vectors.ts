/**
 * Vectors on PostgreSQL, in one of two modes chosen by what the server has:
 *
 * - `pgvector`: the `embedding` column becomes `vector(<dimension>)` when a model claims the
 *   index, with an HNSW index (cosine); search is `ORDER BY embedding <=> $q` in SQL, filters
 *   applied by the same query (pgvector ≥ 0.8 keeps scanning until enough rows pass them).
 * - `exact` (no pgvector on the server): vectors are `real[]`; each process keeps an exact
 *   in-memory index synced incrementally by the writing transaction's id (`xid`): each sync
 *   reads the rows of transactions at or after the oldest one running at the previous sync, so
 *   a transaction that commits late is never skipped, and writers never wait for each other.
 */
import { CairnError, notFound } from '../../errors.js';
import type { EmbedderIdentity, Memory, VectorSearchOptions, ScoredId } from '../../types.js';
import { ExactVectorIndex } from '../vector-index.js';
import type { PgDatabase, Queryable } from './driver.js';
import { searchFiltered } from '../filtered-search.js';
import { MEMORY_COLUMNS, Params, filterSql, rowToMemory, toFloat32, vectorLiteral, type MemoryRow } from './rows.js';

export type VectorMode = 'pgvector' | 'exact';

/** pgvector's HNSW index takes at most 2,000 dimensions; above that the search is an exact scan. */
const HNSW_MAX_DIMENSIONS = 2_000;

function mismatch(stored: EmbedderIdentity, model: EmbedderIdentity, what: string): CairnError {
  return new CairnError(
    'EMBEDDER_MISMATCH',
    `the vector index was built with ${stored.model} (${stored.dimension} dims) but the ${what} is ${model.model} (${model.dimension} dims); run \`cairn reindex\``,
  );
}

function sameModel(a: EmbedderIdentity, b: EmbedderIdentity): boolean {
  return a.model === b.model && a.dimension === b.dimension;
}

export class PgVectors {
  private index: ExactVectorIndex | null = null;
  private indexModel: string | null = null;
  private indexEpoch = '';
  /** The project of each indexed memory (by pk), for scanning with a project filter. */
  private projectOf = new Map<number, string | null>();
  /** pg_snapshot_xmin at the last sync: rows of transactions from here on may be new. */
  private indexXmin = '0';

  constructor(
    private readonly db: PgDatabase,
    readonly mode: VectorMode,
  ) {}

  /** The column type and mode of an opened schema. */
  static async detect(db: Queryable): Promise<{ mode: VectorMode; iterativeScan: boolean }> {
    const column = await db.query<{ type: string }>(
      "SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute WHERE attrelid = 'vectors'::regclass AND attname = 'embedding'",
    );
    const type = column.rows[0]?.type ?? '';
    if (!type.startsWith('vector')) return { mode: 'exact', iterativeScan: false };
    const ext = await db.query<{ v: string }>("SELECT extversion AS v FROM pg_extension WHERE extname = 'vector'");
    const [major = 0, minor = 0] = (ext.rows[0]?.v ?? '0.0').split('.').map(Number);
    return { mode: 'pgvector', iterativeScan: major > 0 || minor >= 8 };
  }

  private literal(vector: Float32Array): string {
    return this.mode === 'pgvector' ? vectorLiteral(vector) : `{${Array.from(vector).join(',')}}`;
  }

  async storedModel(db: Queryable = this.db): Promise<EmbedderIdentity | null> {
    const row = await db.query<{ value: string }>("SELECT value FROM state WHERE key = 'vector_model'");
    const raw = row.rows[0]?.value;
    return raw === undefined ? null : (JSON.parse(raw) as EmbedderIdentity);
  }

  /**
   * Record the embedder identity on first use (typing the column for pgvector); refuse another
   * model. The `vector_model` row stays share-locked until the caller's transaction ends, so a
   * concurrent `clear` (which locks it first) waits for this write and then deletes its vectors,
   * and a write that waited for a `clear` sees the model it claimed.
   */
  async claim(client: Queryable, model: EmbedderIdentity): Promise<void> {
    const identity = JSON.stringify({ model: model.model, dimension: model.dimension });
    for (;;) {
      const inserted = await client.query(
        "INSERT INTO state (key, value) VALUES ('vector_model', $1) ON CONFLICT (key) DO NOTHING RETURNING key",
        [identity],
      );
      if (inserted.rows.length > 0) {
        await this.typeColumn(client, model);
        return;
      }
      const locked = await client.query<{ value: string }>("SELECT value FROM state WHERE key = 'vector_model' FOR SHARE");
      const raw = locked.rows[0]?.value;
      // Absent: a clear deleted the row after our insert found it; claim again.
      if (raw === undefined) continue;
      const stored = JSON.parse(raw) as EmbedderIdentity;
      if (!sameModel(stored, model)) throw mismatch(stored, model, 'embedder');
      return;
    }
  }

  private async typeColumn(client: Queryable, model: EmbedderIdentity, index = true): Promise<void> {
    if (this.mode !== 'pgvector') return;
    await client.query(`ALTER TABLE vectors ALTER COLUMN embedding TYPE vector(${Math.trunc(model.dimension)})`);
    if (index) await this.indexColumn(client, model);
  }

  private async indexColumn(client: Queryable, model: EmbedderIdentity): Promise<void> {
    if (this.mode === 'pgvector' && model.dimension <= HNSW_MAX_DIMENSIONS) {
      await client.query('CREATE INDEX IF NOT EXISTS vectors_hnsw ON vectors USING hnsw (embedding vector_cosine_ops)');
    }
  }

  /**
   * Insert or replace vectors for memories (by pk) inside the caller's transaction, with the token
   * signatures that came from the same model run (recall's rerank) where an item carries one.
   */
  async write(client: Queryable, model: EmbedderIdentity, items: Array<{ pk: number; id: string; vector: Float32Array; signature?: Uint8Array }>): Promise<void> {
    if (items.length === 0) return;
    for (const item of items) {
      if (item.vector.length !== model.dimension) {
        throw new CairnError('EMBEDDER_MISMATCH', `vector for ${item.id} has ${item.vector.length} dimensions, expected ${model.dimension}`);
      }
    }
    await this.claim(client, model);
    const type = this.mode === 'pgvector' ? 'vector' : 'real[]';
    await client.query(
      `INSERT INTO vectors (memory_pk, embedding)
         SELECT pk, embedding::${type} FROM unnest($1::bigint[], $2::text[]) AS u(pk, embedding)
       ON CONFLICT (memory_pk) DO UPDATE SET embedding = excluded.embedding, seq = nextval('vectors_seq'), xid = pg_current_xact_id()`,
      [items.map((i) => i.pk), items.map((i) => this.literal(i.vector))],
    );
    const signed = items.filter((i) => i.signature !== undefined);
    if (signed.length > 0) await writeSignatures(client, model, signed as Array<{ pk: number; signature: Uint8Array }>);
  }

  async put(model: EmbedderIdentity, items: Array<{ id: string; vector: Float32Array; signature?: Uint8Array }>): Promise<void> {
    await this.db.transaction(async (client) => {
      const rows = await withPks(client, items);
      await this.write(client, model, rows);
    });
  }

  /** The stored token signatures of `ids` made by `model`; memories without one are absent. */
  async getSignatures(ids: string[], model: EmbedderIdentity): Promise<Map<string, Uint8Array>> {
    const out = new Map<string, Uint8Array>();
    if (ids.length === 0) return out;
    const rows = await this.db.query<{ id: string; signature: Buffer }>(
      'SELECT m.id, s.signature FROM token_signatures s JOIN memories m ON m.pk = s.memory_pk WHERE m.id = ANY($1::text[]) AND s.model = $2',
      [ids, signatureModel(model)],
    );
    for (const row of rows.rows) out.set(row.id, new Uint8Array(row.signature.buffer, row.signature.byteOffset, row.signature.byteLength));
    return out;
  }

  /** Write token signatures alone, for memories that already have `model`'s vector. */
  async putSignatures(model: EmbedderIdentity, items: Array<{ id: string; signature: Uint8Array }>): Promise<void> {
    if (items.length === 0) return;
    await this.db.transaction(async (client) => {
      await writeSignatures(client, model, await withPks(client, items));
    });
  }

  /** Memories with `model`'s vector and without its signature, oldest first (none for another model than the index's). */
  async missingSignatures(model: EmbedderIdentity, limit: number): Promise<Memory[]> {
    const stored = await this.storedModel();
    if (!stored || !sameModel(stored, model)) return [];
    const rows = await this.db.query<MemoryRow>(
      `SELECT ${MEMORY_COLUMNS} FROM memories m JOIN vectors v ON v.memory_pk = m.pk
        WHERE NOT EXISTS (SELECT 1 FROM token_signatures s WHERE s.memory_pk = m.pk AND s.model = $1)
        ORDER BY m.pk LIMIT $2`,
      [signatureModel(model), limit],
    );
    return rows.rows.map(rowToMemory);
  }

  /** How many {@link missingSignatures} would give without a limit. */
  async countMissingSignatures(model: EmbedderIdentity): Promise<number> {
    const stored = await this.storedModel();
    if (!stored || !sameModel(stored, model)) return 0;
    const rows = await this.db.query<{ n: string }>(
      'SELECT count(*) AS n FROM vectors v WHERE NOT EXISTS (SELECT 1 FROM token_signatures s WHERE s.memory_pk = v.memory_pk AND s.model = $1)',
      [signatureModel(model)],
    );
    return Number(rows.rows[0]?.n ?? 0);
  }

  async get(ids: string[], model: EmbedderIdentity): Promise<Map<string, Float32Array>> {
    const out = new Map<string, Float32Array>();
    const stored = await this.storedModel();
    if (!stored || stored.model !== model.model || ids.length === 0) return out;
    const rows = await this.db.query<{ id: string; e: number[] }>(
      'SELECT m.id, v.embedding::real[] AS e FROM vectors v JOIN memories m ON m.pk = v.memory_pk WHERE m.id = ANY($1::text[])',
      [ids],
    );
    for (const row of rows.rows) out.set(row.id, toFloat32(row.e));
    return out;
  }

  async missing(model: EmbedderIdentity, limit: number): Promise<Memory[]> {
    const stored = await this.storedModel();
    if (stored && stored.model !== model.model) {
      throw new CairnError('EMBEDDER_MISMATCH', `the vector index holds ${stored.model}; run \`cairn reindex\` to switch to ${model.model}`);
    }
    const rows = await this.db.query<MemoryRow>(
      `SELECT ${MEMORY_COLUMNS} FROM memories m WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.memory_pk = m.pk) ORDER BY m.pk LIMIT $1`,
      [limit],
    );
    return rows.rows.map(rowToMemory);
  }

  /** Drop every vector; with `claim`, record that model in the same transaction (see Store.clearVectors). */
  async clear(claim?: EmbedderIdentity): Promise<void> {
    await this.db.transaction(async (client) => {
      await this.clearIn(client, claim);
      // A model switch under way is moot: the index is rebuilt from scratch.
      await client.query('DROP TABLE IF EXISTS vectors_next');
      await client.query("DELETE FROM state WHERE key = 'vector_next_model'");
    });
    this.index = null;
  }

  /** {@link clear} inside the caller's transaction (a model switch's commit runs it too). */
  async clearIn(client: Queryable, claim?: EmbedderIdentity, index = true): Promise<void> {
    // Lock the model row before deleting: writers hold it share-locked until they commit, so the
    // DELETE below (a new snapshot under READ COMMITTED) sees and removes what they wrote.
    if (claim) {
      await client.query(
        "INSERT INTO state (key, value) VALUES ('vector_model', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [JSON.stringify({ model: claim.model, dimension: claim.dimension })],
      );
    } else {
      await client.query("SELECT 1 FROM state WHERE key = 'vector_model' FOR UPDATE");
    }
    await client.query('DELETE FROM vectors');
    await client.query('DELETE FROM token_signatures');
    if (!claim) await client.query("DELETE FROM state WHERE key = 'vector_model'");
    await client.query(
      "INSERT INTO state (key, value) VALUES ('vector_epoch', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      [`${Date.now()}${Math.random().toString(36).slice(2)}`],
    );
    if (this.mode === 'pgvector') {
      await client.query('DROP INDEX IF EXISTS vectors_hnsw');
      await client.query('ALTER TABLE vectors ALTER COLUMN embedding TYPE vector');
      if (claim) await this.typeColumn(client, claim, index);
    }
  }

  /**
   * Replace the index with the staged vectors of table `vectors_next` for `model`, inside the
   * caller's transaction: the same locking and clearing as {@link clear}, then the rows, then the
   * HNSW index (built once over all of them rather than row by row).
   */
  async replaceWithStaged(client: Queryable, model: EmbedderIdentity): Promise<void> {
    await this.clearIn(client, model, false);
    const type = this.mode === 'pgvector' ? 'vector' : 'real[]';
    await client.query(`INSERT INTO vectors (memory_pk, embedding) SELECT memory_pk, embedding::${type} FROM vectors_next ORDER BY memory_pk`);
    await this.indexColumn(client, model);
  }

  /** Forget the in-memory index (after another transaction replaced the vectors). */
  forget(): void {
    this.index = null;
  }

  async search(vector: Float32Array, model: EmbedderIdentity, options: VectorSearchOptions): Promise<ScoredId[]> {
    const stored = await this.storedModel();
    if (stored === null) return [];
    if (!sameModel(stored, model)) throw mismatch(stored, model, 'query embedder');
    if (vector.length !== stored.dimension) {
      throw new CairnError('EMBEDDER_MISMATCH', `query vector has ${vector.length} dimensions, expected ${stored.dimension}`);
    }
    return this.mode === 'pgvector' ? this.searchSql(vector, options) : this.searchExact(vector, stored, options);
  }

  private async searchSql(vector: Float32Array, options: VectorSearchOptions): Promise<ScoredId[]> {
    const p = new Params();
    const query = p.add(vectorLiteral(vector));
    const where = filterSql(options, p);
    const rows = await this.db.query<{ id: string; distance: number }>(
      `SELECT m.id, v.embedding <=> ${query}::vector AS distance
         FROM vectors v JOIN memories m ON m.pk = v.memory_pk
        WHERE ${where}
        ORDER BY v.embedding <=> ${query}::vector LIMIT ${p.add(options.limit)}`,
      p.values,
    );
    return rows.rows.map((row) => ({ id: row.id, score: 1 - row.distance }));
  }

  private async searchExact(vector: Float32Array, stored: EmbedderIdentity, options: VectorSearchOptions): Promise<ScoredId[]> {
    const index = await this.sync(stored);
    if (index.size === 0) return [];
    // Over-fetch, then keep the hits that pass the filter (checked by the database); widen when
    // too few do. A project filter (a server's usual case) is applied while scanning, from the
    // project each vector's memory belongs to (a memory never changes project).
    const project = options.project;
    const accept =
      project === undefined
        ? undefined
        : (key: number): boolean => {
            const of = this.projectOf.get(key);
            return of === project || (of === null && project !== null && options.includeUserScope !== false);
          };
    return searchFiltered({
      limit: options.limit,
      size: index.size,
      nearest: (fetch) => index.search(vector, fetch, accept),
      accept: async (pks) => {
        const p = new Params();
        const keys = p.add(pks);
        const where = filterSql(options, p);
        const rows = await this.db.query<{ pk: number; id: string }>(`SELECT m.pk, m.id FROM memories m WHERE m.pk = ANY(${keys}::bigint[]) AND ${where}`, p.values);
        return new Map(rows.rows.map((r) => [r.pk, r.id]));
      },
    });
  }

  /** Bring the in-memory index up to date with what any process wrote since the last call. */
  private async sync(stored: EmbedderIdentity): Promise<ExactVectorIndex> {
    const epoch = (await this.db.query<{ value: string }>("SELECT value FROM state WHERE key = 'vector_epoch'")).rows[0]?.value ?? '';
    if (!this.index || this.indexModel !== stored.model || this.indexEpoch !== epoch) {
      this.index = new ExactVectorIndex(stored.dimension);
      this.indexModel = stored.model;
      this.indexEpoch = epoch;
      this.indexXmin = '0';
      this.projectOf = new Map();
    }
    const index = this.index;
    // One statement: the rows and the snapshot's xmin come from the same snapshot.
    const rows = await this.db.query<{ xmin: string; memory_pk: number | null; embedding: number[] | null; project: string | null }>(
      `SELECT s.xmin, v.memory_pk, v.embedding, m.project
         FROM (SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin) s
         LEFT JOIN vectors v ON v.xid >= $1::xid8
         LEFT JOIN memories m ON m.pk = v.memory_pk`,
      [this.indexXmin],
    );
    for (const row of rows.rows) {
      if (row.memory_pk === null || row.embedding === null) continue;
      index.upsert(row.memory_pk, toFloat32(row.embedding));
      this.projectOf.set(row.memory_pk, row.project);
    }
    const xmin = rows.rows[0]?.xmin;
    if (xmin !== undefined) this.indexXmin = xmin;
    return index;
  }
}

/** How a token signature names the model that made it: id and dimension (as the SQLite store does). */
function signatureModel(model: EmbedderIdentity): string {
  return `${model.model}/${model.dimension}`;
}

/** `items` with each memory's pk (read in the caller's transaction); a memory that is gone is NOT_FOUND. */
async function withPks<T extends { id: string }>(client: Queryable, items: T[]): Promise<Array<T & { pk: number }>> {
  const found = await client.query<{ id: string; pk: number }>('SELECT id, pk FROM memories WHERE id = ANY($1::text[])', [items.map((i) => i.id)]);
  const pks = new Map(found.rows.map((r) => [r.id, r.pk]));
  return items.map((item) => {
    const pk = pks.get(item.id);
    if (pk === undefined) throw notFound(`memory ${item.id}`);
    return { ...item, pk };
  });
}

/** Insert or replace token signatures (by memory pk) inside the caller's transaction. */
async function writeSignatures(client: Queryable, model: EmbedderIdentity, items: Array<{ pk: number; signature: Uint8Array }>): Promise<void> {
  await client.query(
    `INSERT INTO token_signatures (memory_pk, model, signature)
       SELECT pk, $3, signature FROM unnest($1::bigint[], $2::bytea[]) AS u(pk, signature)
     ON CONFLICT (memory_pk) DO UPDATE SET model = excluded.model, signature = excluded.signature`,
    [items.map((i) => i.pk), items.map((i) => Buffer.from(i.signature.buffer, i.signature.byteOffset, i.signature.byteLength)), signatureModel(model)],
  );
}
