/**
 * The PostgreSQL store's side of a background model switch (see `VectorStaging` in types.ts): the
 * new model's vectors go to table `vectors_next` (`real[]`, created when a switch starts, dropped
 * when it ends), the model in `state('vector_next_model')`. The index (`vectors`, its column type
 * and HNSW index) is untouched until `commit` replaces it in one transaction.
 *
 * Writers of staged vectors hold the `vector_next_model` row share-locked until they commit; the
 * commit locks it for update first, so it sees every staged row written before it.
 */
import { CairnError, notFound } from '../../errors.js';
import type { EmbedderIdentity, Memory, StagedVectors, VectorStaging } from '../../types.js';
import { sameModel, stagingMismatch } from '../staging-model.js';
import type { PgDatabase, Queryable } from './driver.js';
import { MEMORY_COLUMNS, rowToMemory, type MemoryRow } from './rows.js';
import type { PgVectors } from './vectors.js';

const KEY = 'vector_next_model';


export class PgVectorStaging implements VectorStaging {
  constructor(
    private readonly db: () => PgDatabase,
    private readonly vectors: () => PgVectors,
  ) {}

  private async model(client: Queryable, lock = ''): Promise<EmbedderIdentity | null> {
    const row = await client.query<{ value: string }>(`SELECT value FROM state WHERE key = '${KEY}' ${lock}`);
    const raw = row.rows[0]?.value;
    return raw === undefined ? null : (JSON.parse(raw) as EmbedderIdentity);
  }

  private async tableExists(client: Queryable): Promise<boolean> {
    const row = await client.query<{ t: string | null }>("SELECT to_regclass('vectors_next')::text AS t");
    return row.rows[0]?.t != null;
  }

  private async expect(client: Queryable, model: EmbedderIdentity, lock: string): Promise<void> {
    const staged = await this.model(client, lock);
    if (!staged || !sameModel(staged, model) || !(await this.tableExists(client))) throw stagingMismatch(staged, model);
  }

  async staged(): Promise<StagedVectors | null> {
    const db = this.db();
    const model = await this.model(db);
    if (!model) return null;
    if (!(await this.tableExists(db))) return { model, vectors: 0 };
    const row = await db.query<{ n: string }>('SELECT count(*)::text AS n FROM vectors_next');
    return { model, vectors: Number(row.rows[0]?.n ?? 0) };
  }

  async begin(model: EmbedderIdentity): Promise<void> {
    await this.db().transaction(async (client) => {
      const staged = await this.model(client, 'FOR UPDATE');
      if (staged && sameModel(staged, model) && (await this.tableExists(client))) return;
      await client.query('DROP TABLE IF EXISTS vectors_next');
      await client.query('CREATE TABLE vectors_next (memory_pk bigint PRIMARY KEY REFERENCES memories (pk) ON DELETE CASCADE, embedding real[] NOT NULL)');
      await client.query(`INSERT INTO state (key, value) VALUES ('${KEY}', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, [
        JSON.stringify({ model: model.model, dimension: model.dimension }),
      ]);
    });
  }

  async missing(model: EmbedderIdentity, limit: number): Promise<Memory[]> {
    const db = this.db();
    await this.expect(db, model, '');
    const rows = await db.query<MemoryRow>(
      `SELECT ${MEMORY_COLUMNS} FROM memories m WHERE NOT EXISTS (SELECT 1 FROM vectors_next n WHERE n.memory_pk = m.pk) ORDER BY m.pk LIMIT $1`,
      [limit],
    );
    return rows.rows.map(rowToMemory);
  }

  async put(model: EmbedderIdentity, items: Array<{ id: string; vector: Float32Array }>): Promise<void> {
    if (items.length === 0) return;
    for (const item of items) {
      if (item.vector.length !== model.dimension) {
        throw new CairnError('EMBEDDER_MISMATCH', `vector for ${item.id} has ${item.vector.length} dimensions, expected ${model.dimension}`);
      }
    }
    await this.db().transaction(async (client) => {
      await this.expect(client, model, 'FOR SHARE');
      const found = await client.query<{ id: string; pk: number }>('SELECT id, pk FROM memories WHERE id = ANY($1::text[])', [items.map((i) => i.id)]);
      const pks = new Map(found.rows.map((r) => [r.id, r.pk]));
      const pk = items.map((item) => {
        const value = pks.get(item.id);
        if (value === undefined) throw notFound(`memory ${item.id}`);
        return value;
      });
      await client.query(
        `INSERT INTO vectors_next (memory_pk, embedding)
           SELECT pk, embedding::real[] FROM unnest($1::bigint[], $2::text[]) AS u(pk, embedding)
         ON CONFLICT (memory_pk) DO UPDATE SET embedding = excluded.embedding`,
        [pk, items.map((i) => `{${Array.from(i.vector).join(',')}}`)],
      );
    });
  }

  async commit(model: EmbedderIdentity): Promise<boolean> {
    const done = await this.db().transaction(async (client) => {
      await this.expect(client, model, 'FOR UPDATE');
      const waiting = await client.query<{ n: string }>(
        'SELECT count(*)::text AS n FROM memories m WHERE NOT EXISTS (SELECT 1 FROM vectors_next n WHERE n.memory_pk = m.pk)',
      );
      if (Number(waiting.rows[0]?.n ?? 0) > 0) return false;
      await this.vectors().replaceWithStaged(client, model);
      await client.query('DROP TABLE vectors_next');
      await client.query(`DELETE FROM state WHERE key = '${KEY}'`);
      return true;
    });
    if (done) this.vectors().forget();
    return done;
  }

  async drop(): Promise<void> {
    await this.db().transaction(async (client) => {
      await client.query('DROP TABLE IF EXISTS vectors_next');
      await client.query(`DELETE FROM state WHERE key = '${KEY}'`);
    });
  }
}
