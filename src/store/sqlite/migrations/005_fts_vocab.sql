-- Document frequency per indexed term, read by searchText to leave very common terms out of the
-- MATCH (they cost a pass over most of the index and barely move BM25). No storage of its own.
CREATE VIRTUAL TABLE memories_vocab USING fts5vocab (memories_fts, 'row');
