/**
 * The SQLite store's side of a background model switch (see `VectorStaging` in types.ts): the new
 * model's vectors go to table `vectors_next` (created when a switch starts, dropped when it ends),
 * the model in `state('vector_next_model')`. The `vectors` table and its in-process index are
 * untouched until `commit`, which swaps them in one IMMEDIATE transaction, so searches see either
 * the old model's index or the new one's, never both, and a `kill -9` at any point leaves the
 * staged vectors to continue from.
 */
import type Database from 'better-sqlite3';
import { CairnError, notFound } from '../../errors.js';
import type { EmbedderIdentity, Memory, StagedVectors, VectorStaging } from '../../types.js';
import { sameModel, stagingMismatch } from '../staging-model.js';
import { MEMORY_COLUMNS, rowToMemory, vectorToBlob, type MemoryRow } from './rows.js';

/** State key of the staged model. */
export const STAGED_MODEL_KEY = 'vector_next_model';
const TABLE = 'vectors_next';


export class SqliteVectorStaging implements VectorStaging {
  /**
   * @param db the open database
   * @param switched called after a commit (the in-process index and its files are dropped)
   */
  constructor(
    private readonly db: () => Database.Database,
    private readonly switched: () => void,
  ) {}

  private model(db: Database.Database): EmbedderIdentity | null {
    const raw = db.prepare('SELECT value FROM state WHERE key = ?').pluck().get(STAGED_MODEL_KEY) as string | undefined;
    return raw === undefined ? null : (JSON.parse(raw) as EmbedderIdentity);
  }

  private tableExists(db: Database.Database): boolean {
    return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").pluck().get(TABLE) !== undefined;
  }

  /** The staged model, checked against `model` (inside the caller's transaction). */
  private expect(db: Database.Database, model: EmbedderIdentity): void {
    const staged = this.model(db);
    if (!staged || !sameModel(staged, model) || !this.tableExists(db)) throw stagingMismatch(staged, model);
  }

  async staged(): Promise<StagedVectors | null> {
    const db = this.db();
    const model = this.model(db);
    if (!model) return null;
    const vectors = this.tableExists(db) ? (db.prepare(`SELECT count(*) FROM ${TABLE}`).pluck().get() as number) : 0;
    return { model, vectors };
  }

  async begin(model: EmbedderIdentity): Promise<void> {
    const db = this.db();
    db.transaction(() => {
      const staged = this.model(db);
      if (staged && sameModel(staged, model) && this.tableExists(db)) return;
      db.exec(`DROP TABLE IF EXISTS ${TABLE}`);
      db.exec(`CREATE TABLE ${TABLE} (memory_rowid INTEGER PRIMARY KEY, vector BLOB NOT NULL)`);
      db.prepare('INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(
        STAGED_MODEL_KEY,
        JSON.stringify({ model: model.model, dimension: model.dimension }),
      );
    }).immediate();
  }

  async missing(model: EmbedderIdentity, limit: number): Promise<Memory[]> {
    const db = this.db();
    this.expect(db, model);
    const rows = db
      .prepare<unknown[], MemoryRow>(
        `SELECT ${MEMORY_COLUMNS} FROM memories m WHERE NOT EXISTS (SELECT 1 FROM ${TABLE} n WHERE n.memory_rowid = m.rowid)
          ORDER BY m.rowid LIMIT ?`,
      )
      .all(limit);
    return rows.map(rowToMemory);
  }

  async put(model: EmbedderIdentity, items: Array<{ id: string; vector: Float32Array }>): Promise<void> {
    const db = this.db();
    db.transaction(() => {
      this.expect(db, model);
      const rowidOf = db.prepare('SELECT rowid FROM memories WHERE id = ?').pluck();
      const insert = db.prepare(`INSERT INTO ${TABLE} (memory_rowid, vector) VALUES (?, ?) ON CONFLICT (memory_rowid) DO UPDATE SET vector = excluded.vector`);
      for (const item of items) {
        if (item.vector.length !== model.dimension) {
          throw new CairnError('EMBEDDER_MISMATCH', `vector for ${item.id} has ${item.vector.length} dimensions, expected ${model.dimension}`);
        }
        const rowid = rowidOf.get(item.id) as number | undefined;
        if (rowid === undefined) throw notFound(`memory ${item.id}`);
        insert.run(rowid, vectorToBlob(item.vector));
      }
    }).immediate();
  }

  async commit(model: EmbedderIdentity): Promise<boolean> {
    const db = this.db();
    const done = db.transaction(() => {
      this.expect(db, model);
      const waiting = db.prepare(`SELECT count(*) FROM memories m WHERE NOT EXISTS (SELECT 1 FROM ${TABLE} n WHERE n.memory_rowid = m.rowid)`).pluck().get() as number;
      if (waiting > 0) return false;
      db.prepare('DELETE FROM vectors').run();
      db.prepare(
        `INSERT INTO vectors (memory_rowid, vector, seq)
           SELECT memory_rowid, vector, row_number() OVER (ORDER BY memory_rowid) FROM ${TABLE}
            WHERE memory_rowid IN (SELECT rowid FROM memories)`,
      ).run();
      const write = db.prepare('INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
      write.run('vector_model', JSON.stringify({ model: model.model, dimension: model.dimension }));
      write.run('vector_epoch', String(Date.now()) + Math.random().toString(36).slice(2));
      db.exec(`DROP TABLE ${TABLE}`);
      db.prepare('DELETE FROM state WHERE key = ?').run(STAGED_MODEL_KEY);
      return true;
    }).immediate();
    if (done) this.switched();
    return done;
  }

  async drop(): Promise<void> {
    const db = this.db();
    db.transaction(() => {
      db.exec(`DROP TABLE IF EXISTS ${TABLE}`);
      db.prepare('DELETE FROM state WHERE key = ?').run(STAGED_MODEL_KEY);
    }).immediate();
  }
}
