-- Near-duplicate bands not yet folded into memory_bands (src/store/sqlite/pending-bands.ts): a
-- write appends one row, its memory's BANDS band hashes (32-bit, little-endian, in band order),
-- instead of inserting BANDS rows at random places of memory_bands' B-tree (~74 of a remember's
-- ~113 WAL frames at 100K memories). Rows are appended in seq order (one or two pages a write) and
-- folded into memory_bands, all at once, every FOLD_AT rows; a memory's newest row stands for its
-- bands in place of its memory_bands rows. AUTOINCREMENT: seq never goes back after a fold, so a
-- process can tell the rows it has read from the ones appended since (and VACUUM keeps seq).
CREATE TABLE memory_bands_pending (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  memory_rowid INTEGER NOT NULL,
  hashes BLOB NOT NULL
);
