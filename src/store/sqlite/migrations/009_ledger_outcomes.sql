-- Learn-from-use outcomes (src/context/use.ts): per context window, what ingest saw after it —
-- items injected and used afterwards, needed details missed. Counts and ids only, no text.

CREATE TABLE ledger_outcomes (
  session_id   TEXT NOT NULL,
  win          INTEGER NOT NULL,
  project      TEXT,
  reason       TEXT NOT NULL,
  measured_at  INTEGER NOT NULL,
  turns_after  INTEGER NOT NULL,
  injected     INTEGER NOT NULL,
  used         INTEGER NOT NULL,
  needed       INTEGER NOT NULL,
  missed       INTEGER NOT NULL,
  -- JSON array of session fact ids that held a missed detail.
  missed_facts TEXT NOT NULL,
  -- JSON object: detail kind -> {injected, used, missed}.
  kinds        TEXT NOT NULL,
  PRIMARY KEY (session_id, win)
) WITHOUT ROWID;
CREATE INDEX ledger_outcomes_project ON ledger_outcomes (project, measured_at);
