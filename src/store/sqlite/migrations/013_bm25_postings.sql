-- BM25 postings of our own, kept by the store in the same transaction as every change to
-- memories_fts (see text-search-index.ts): per (porter stem, docid range of 8,192) one blob of
-- varints (docid delta, term frequency, document length), so a search reads its terms' postings
-- whole instead of FTS5 ranking every match row by row. A write appends one row to bm25_pending
-- (its document's stems; dl 0: the stems a document no longer has), folded into the blobs every
-- 512 rows. Filled for older memories in checkpointed batches (state 'bm25_backfill'): a batch per
-- open of the store, the rest by `cairn ingest` and `cairn migrate up`.
-- Keyed by chunk first: new memories' postings all go to the newest chunk's rows, so a fold
-- dirties a few hundred pages of the table instead of one in every part of it.
CREATE TABLE IF NOT EXISTS bm25_postings (
  chunk    INTEGER NOT NULL,
  stem     TEXT NOT NULL,
  postings BLOB NOT NULL,
  PRIMARY KEY (chunk, stem)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS bm25_pending (
  docid INTEGER NOT NULL,
  dl    INTEGER NOT NULL,
  stems TEXT NOT NULL
);
