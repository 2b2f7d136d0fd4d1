-- Learning from use across sessions (src/context/learn.ts, learnedDetails): per measured
-- compaction, the details the agent needed after it that a session fact or call line held (used
-- from what was injected, or missed from what was left out), as a JSON array of learnKey hashes —
-- ids, not text. Outcomes measured before this have none.
ALTER TABLE ledger_outcomes ADD COLUMN learned TEXT NOT NULL DEFAULT '[]';
