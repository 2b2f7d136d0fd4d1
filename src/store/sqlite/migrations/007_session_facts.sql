-- Session facts: the exact details ingest extracts from the full text of every turn (paths and
-- path:line, symbols, commands with their outcome, errors, tests, settings, versions, URLs, ids
-- the user typed), kept even where the turn's stored text is cut short. One row per distinct
-- fact of a session (id: a short hash of session, kind and text), one per turn it occurs in.

CREATE TABLE session_facts (
  pk         INTEGER PRIMARY KEY,
  id         TEXT NOT NULL UNIQUE,
  session_id TEXT NOT NULL,
  kind       TEXT NOT NULL,
  text       TEXT NOT NULL,
  path       TEXT,
  line       INTEGER
);
CREATE INDEX session_facts_session ON session_facts (session_id, kind);

CREATE TABLE session_fact_refs (
  fact_id    TEXT NOT NULL,
  turn_id    TEXT NOT NULL,
  session_id TEXT NOT NULL,
  seq        INTEGER NOT NULL,
  role       TEXT NOT NULL,
  tool_name  TEXT,
  at         INTEGER,
  -- What this occurrence adds: exit status and error line, signature, test outcome.
  note       TEXT,
  PRIMARY KEY (fact_id, turn_id)
) WITHOUT ROWID;
CREATE INDEX session_fact_refs_session ON session_fact_refs (session_id, seq);

-- Contentless full-text index keyed by session_facts.pk; holds tokenize.ts's index terms of the text.
CREATE VIRTUAL TABLE session_facts_fts USING fts5 (
  terms,
  content = '',
  contentless_delete = 1,
  tokenize = "porter unicode61 tokenchars '_'"
);
