-- Learn-from-use outcomes (see the SQLite migration 009_ledger_outcomes.sql): per context window,
-- items injected and used afterwards, needed details missed; counts and ids only.

CREATE TABLE ledger_outcomes (
  session_id   text NOT NULL,
  win          integer NOT NULL,
  project      text,
  reason       text NOT NULL,
  measured_at  bigint NOT NULL,
  turns_after  integer NOT NULL,
  injected     integer NOT NULL,
  used         integer NOT NULL,
  needed       integer NOT NULL,
  missed       integer NOT NULL,
  missed_facts jsonb NOT NULL,
  kinds        jsonb NOT NULL,
  PRIMARY KEY (session_id, win)
);
CREATE INDEX ledger_outcomes_project ON ledger_outcomes (project, measured_at);
