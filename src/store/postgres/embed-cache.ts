/** The persistent layer of the embedding cache in PostgreSQL: table `embed_cache` (migration 005). */
import type { EmbeddingCacheStore } from '../../types.js';
import { blobToVector, splitCacheKey, vectorToBlob } from '../embedding-rows.js';
import type { Queryable } from './driver.js';

export function postgresEmbeddingCache(db: () => Queryable): EmbeddingCacheStore {
  return {
    async get(keys) {
      const out = new Map<string, Float32Array>();
      const pairs = keys.map(splitCacheKey).filter((p): p is { model: string; hash: string } => p !== null);
      if (pairs.length === 0) return out;
      const { rows } = await db().query<{ model: string; hash: string; vector: Buffer }>(
        `SELECT c.model, c.hash, c.vector FROM embed_cache c
           JOIN unnest($1::text[], $2::text[]) AS k(model, hash) ON c.model = k.model AND c.hash = k.hash`,
        [pairs.map((p) => p.model), pairs.map((p) => p.hash)],
      );
      for (const row of rows) out.set(`${row.model}#${row.hash}`, blobToVector(row.vector));
      return out;
    },
    async put(entries) {
      const rows = entries.map(([key, vector]) => ({ parts: splitCacheKey(key), vector })).filter((r) => r.parts !== null);
      if (rows.length === 0) return;
      await db().query(
        `INSERT INTO embed_cache (model, hash, vector)
           SELECT * FROM unnest($1::text[], $2::text[], $3::bytea[])
         ON CONFLICT (model, hash) DO UPDATE SET vector = excluded.vector`,
        [rows.map((r) => r.parts!.model), rows.map((r) => r.parts!.hash), rows.map((r) => vectorToBlob(r.vector))],
      );
    },
  };
}
