-- Session substrate: agent sessions read from transcripts, their turns (full-text indexed),
-- compactions, correction pairs, and the per-file ingest cursors. Independent of 001's tables.

CREATE TABLE sessions (
  id                    TEXT PRIMARY KEY,
  agent                 TEXT NOT NULL,
  project               TEXT,
  cwd                   TEXT,
  branch                TEXT,
  parent_id             TEXT,
  started_at            INTEGER,
  ended_at              INTEGER,
  -- Totals over session_sources (each transcript file's own running totals).
  input_tokens          INTEGER NOT NULL DEFAULT 0,
  output_tokens         INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens     INTEGER NOT NULL DEFAULT 0,
  cache_creation_tokens INTEGER NOT NULL DEFAULT 0,
  compactions           INTEGER NOT NULL DEFAULT 0,
  source_path           TEXT NOT NULL,
  title                 TEXT
);
CREATE INDEX sessions_project ON sessions (project, started_at);
CREATE INDEX sessions_agent ON sessions (agent, started_at);
CREATE INDEX sessions_started ON sessions (started_at);
CREATE INDEX sessions_parent ON sessions (parent_id) WHERE parent_id IS NOT NULL;

-- Token totals per (session, transcript file): a file re-read from its start replaces its own
-- row instead of adding to the session again, so totals stay right under any re-ingest.
CREATE TABLE session_sources (
  session_id            TEXT NOT NULL,
  path                  TEXT NOT NULL,
  input_tokens          INTEGER NOT NULL DEFAULT 0,
  output_tokens         INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens     INTEGER NOT NULL DEFAULT 0,
  cache_creation_tokens INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (session_id, path)
) WITHOUT ROWID;

CREATE TABLE turns (
  pk          INTEGER PRIMARY KEY,
  id          TEXT NOT NULL UNIQUE,
  session_id  TEXT NOT NULL,
  seq         INTEGER NOT NULL,
  role        TEXT NOT NULL,
  text        TEXT NOT NULL,
  tool_name   TEXT,
  tool_input  TEXT,
  tool_use_id TEXT,
  is_error    INTEGER NOT NULL DEFAULT 0,
  -- JSON array of flag strings.
  flags       TEXT NOT NULL DEFAULT '[]',
  at          INTEGER,
  source_uuid TEXT,
  source_line INTEGER NOT NULL
);
CREATE INDEX turns_session ON turns (session_id, seq);
CREATE INDEX turns_at ON turns (at);

-- Contentless full-text index keyed by turns.pk; holds tokenize.ts's index terms of the text.
CREATE VIRTUAL TABLE turns_fts USING fts5 (
  terms,
  content = '',
  contentless_delete = 1,
  tokenize = "porter unicode61 tokenchars '_'"
);

CREATE TABLE compactions (
  id          TEXT PRIMARY KEY,
  session_id  TEXT NOT NULL,
  "trigger"   TEXT,
  pre_tokens  INTEGER,
  summary     TEXT,
  at          INTEGER,
  seq         INTEGER NOT NULL,
  source_line INTEGER NOT NULL
);
CREATE INDEX compactions_session ON compactions (session_id, seq);

CREATE TABLE corrections (
  id                 TEXT PRIMARY KEY,
  session_id         TEXT NOT NULL,
  premise_turn_id    TEXT,
  correction_turn_id TEXT NOT NULL,
  kind               TEXT NOT NULL,
  lang               TEXT,
  text               TEXT NOT NULL,
  at                 INTEGER
);
CREATE INDEX corrections_session ON corrections (session_id, at);
CREATE INDEX corrections_at ON corrections (at);

CREATE TABLE ingest_cursors (
  path       TEXT PRIMARY KEY,
  size       INTEGER NOT NULL,
  mtime_ms   REAL NOT NULL,
  "offset"   INTEGER NOT NULL,
  head_hash  TEXT NOT NULL,
  -- JSON: the reader's state to continue from "offset".
  state      TEXT NOT NULL DEFAULT '{}',
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;
