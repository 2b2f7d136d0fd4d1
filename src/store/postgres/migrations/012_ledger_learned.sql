-- Learning from use across sessions (see the SQLite migration 019_ledger_learned.sql): per measured
-- compaction, the learnKey hashes of the details needed after it; ids, not text.
ALTER TABLE ledger_outcomes ADD COLUMN IF NOT EXISTS learned jsonb NOT NULL DEFAULT '[]'::jsonb;
