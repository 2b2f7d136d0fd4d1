/**
 * `node vector-builder.js <db> <options JSON>`: builds the SQLite store's HNSW index and saves it
 * beside the database, then removes `<db>.vectors.lock`. Spawned detached by a process that found
 * no valid saved index (see SqliteVectors), so the process that asked keeps answering exactly
 * instead of spending seconds to minutes building.
 */
import { fileURLToPath } from 'node:url';
import { openDatabase } from './database.js';
import { VectorFiles } from './vector-files.js';
import { SqliteVectors, type SqliteVectorIndexOptions } from './vectors.js';

export async function buildVectorIndex(path: string, options: SqliteVectorIndexOptions): Promise<void> {
  const db = openDatabase(path, {});
  try {
    await new SqliteVectors(() => db, path, { ...options, build: 'inline' }).buildAndSave();
  } finally {
    db.close();
    new VectorFiles(path).releaseLock();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [path, options] = process.argv.slice(2);
  if (path) await buildVectorIndex(path, JSON.parse(options ?? '{}') as SqliteVectorIndexOptions);
}
