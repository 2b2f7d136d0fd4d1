/**
 * The persistent layer of the embedding cache (src/embed/cache.ts) in the SQLite file: table
 * `embed_cache (model, hash, vector)` from migration 001. Keys are `<model>#<sha256 hex>`.
 */
import type Database from 'better-sqlite3';
import type { EmbeddingCacheStore } from '../../types.js';
import { blobToVector, splitCacheKey, vectorToBlob } from '../embedding-rows.js';

/** Lookups are chunked so a large batch stays under SQLite's bound-parameter limit. */
const CHUNK = 400;

export function sqliteEmbeddingCache(db: () => Database.Database): EmbeddingCacheStore {
  return {
    async get(keys) {
      const out = new Map<string, Float32Array>();
      const parsed = keys.map((key) => ({ key, parts: splitCacheKey(key) })).filter((k) => k.parts !== null);
      for (let i = 0; i < parsed.length; i += CHUNK) {
        const chunk = parsed.slice(i, i + CHUNK);
        const rows = db()
          .prepare(
            `SELECT c.model AS model, c.hash AS hash, c.vector AS vector
               FROM json_each(?) j JOIN embed_cache c ON c.model = j.value ->> '$[0]' AND c.hash = j.value ->> '$[1]'`,
          )
          .all(JSON.stringify(chunk.map((k) => [k.parts!.model, k.parts!.hash]))) as Array<{ model: string; hash: string; vector: Buffer }>;
        for (const row of rows) out.set(`${row.model}#${row.hash}`, blobToVector(row.vector));
      }
      return out;
    },
    async put(entries) {
      const connection = db();
      const insert = connection.prepare('INSERT OR REPLACE INTO embed_cache (model, hash, vector) VALUES (?, ?, ?)');
      connection.transaction(() => {
        for (const [key, vector] of entries) {
          const parts = splitCacheKey(key);
          if (parts) insert.run(parts.model, parts.hash, vectorToBlob(vector));
        }
      })();
    },
  };
}
