-- Embeddings by (model, sha256 of the text), so the same text is never embedded twice.
CREATE TABLE IF NOT EXISTS embed_cache (
  model  TEXT NOT NULL,
  hash   TEXT NOT NULL,
  vector BYTEA NOT NULL,
  PRIMARY KEY (model, hash)
);
