-- Processes that search vectors exactly in memory sync their index by transaction id instead of
-- by seq under a lock: a reader takes every row written by a transaction at or after the oldest
-- one still running at its last sync, so no commit order can hide a row from it, and writers no
-- longer wait for each other's commits.
ALTER TABLE vectors ADD COLUMN xid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX vectors_xid ON vectors (xid);
