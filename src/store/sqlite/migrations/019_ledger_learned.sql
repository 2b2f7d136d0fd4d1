-- Learning from use across sessions (src/context/learn.ts, learnedDetails): per measured
-- compaction, the details the agent needed after it (used after it, known before it: the fidelity
-- matcher's needed details), as a JSON array of learnKey hashes — ids, not text. Outcomes measured
-- before this have none.
ALTER TABLE ledger_outcomes ADD COLUMN learned TEXT NOT NULL DEFAULT '[]';
