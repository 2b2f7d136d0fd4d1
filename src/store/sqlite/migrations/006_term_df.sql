-- Document frequency per indexed term (its porter stem, as memories_fts holds it), kept by the
-- store in the same transaction as every change to memories_fts: a write appends its terms to
-- term_df_pending, which is folded into term_df every ~50 writes (see term-frequency.ts).
-- searchText reads them to leave common terms out of a MATCH: a primary-key read and a scan of a
-- few pages, where counting a term through memories_vocab walks its postings (~0.3 ms for a
-- common term at 100K memories, paid again by every fresh CLI or hook process).
CREATE TABLE term_df (
  term TEXT PRIMARY KEY,
  df INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE term_df_pending (
  term TEXT NOT NULL,
  delta INTEGER NOT NULL
);

-- Filled from the index itself.
INSERT INTO term_df (term, df) SELECT term, doc FROM memories_vocab;
