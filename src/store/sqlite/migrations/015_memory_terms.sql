-- Each memory's distinct index terms (src/store/sqlite/memory-terms.ts), so remember's
-- near-duplicate check computes a candidate's Jaccard from a split instead of tokenizing its text
-- again (~24-31 µs a candidate, ~57 candidates a remember at 100K memories). NULL, or a value of
-- another terms version, means "not stored": the check tokenizes the text, as before. Rows written
-- before this migration are filled a chunk per transaction (state 'memory_terms').
ALTER TABLE memories ADD COLUMN terms TEXT;

-- A text changed without its terms (a raw copy's upsert) loses them rather than keep stale ones.
CREATE TRIGGER memories_terms_follow_text AFTER UPDATE OF text ON memories
  WHEN NEW.terms IS OLD.terms AND NEW.text IS NOT OLD.text
BEGIN
  UPDATE memories SET terms = NULL WHERE rowid = NEW.rowid;
END;
