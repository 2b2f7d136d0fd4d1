/**
 * How both SQL stores hold an embedding: a Float32 vector as its bytes (SQLite BLOB, PostgreSQL
 * bytea), and the embedding cache's key `<model>#<sha256 hex>`.
 */

/** Split `<model>#<hash>` at the last `#` (model ids may hold `#`, sha256 hex never does). */
export function splitCacheKey(key: string): { model: string; hash: string } | null {
  const at = key.lastIndexOf('#');
  if (at <= 0 || at === key.length - 1) return null;
  return { model: key.slice(0, at), hash: key.slice(at + 1) };
}

export function vectorToBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

export function blobToVector(blob: Buffer): Float32Array {
  // Copy: the Buffer may be a view into a pooled allocation with an unaligned offset.
  const copy = new Float32Array(blob.byteLength / 4);
  new Uint8Array(copy.buffer).set(blob);
  return copy;
}
