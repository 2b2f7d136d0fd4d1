-- MinHash LSH band keys of each memory's index terms (src/store/sqlite/memory-bands.ts): the
-- candidates of remember's near-duplicate check, BANDS rows per memory, written in the same
-- transaction as the memory's text. A key is band · 2^32 + a hash of (project, band, its MinHash
-- values); one B-tree, so a lookup is one seek a key. Rows written before this migration are
-- filled by the store (fillBands: a chunk per transaction, its cursor in state 'memory_bands'),
-- and the check uses the full-text probe until the fill is complete.
CREATE TABLE memory_bands (
  key INTEGER NOT NULL,
  memory_rowid INTEGER NOT NULL,
  PRIMARY KEY (key, memory_rowid)
) WITHOUT ROWID;
