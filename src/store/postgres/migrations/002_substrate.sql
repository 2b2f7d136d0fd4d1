-- Session substrate: agent sessions read from transcripts, their turns (full-text indexed),
-- compactions, correction pairs, and the per-file ingest cursors.

CREATE TABLE sessions (
  id                    text PRIMARY KEY,
  agent                 text NOT NULL,
  project               text,
  cwd                   text,
  branch                text,
  parent_id             text,
  started_at            bigint,
  ended_at              bigint,
  -- Totals over session_sources (each transcript file's own running totals).
  input_tokens          bigint NOT NULL DEFAULT 0,
  output_tokens         bigint NOT NULL DEFAULT 0,
  cache_read_tokens     bigint NOT NULL DEFAULT 0,
  cache_creation_tokens bigint NOT NULL DEFAULT 0,
  compactions           integer NOT NULL DEFAULT 0,
  source_path           text NOT NULL,
  title                 text
);
CREATE INDEX sessions_project ON sessions (project, started_at);
CREATE INDEX sessions_agent ON sessions (agent, started_at);
CREATE INDEX sessions_started ON sessions (started_at);
CREATE INDEX sessions_parent ON sessions (parent_id) WHERE parent_id IS NOT NULL;

-- Token totals per (session, transcript file): a file re-read from its start replaces its own
-- row instead of adding to the session again.
CREATE TABLE session_sources (
  session_id            text NOT NULL,
  path                  text NOT NULL,
  input_tokens          bigint NOT NULL DEFAULT 0,
  output_tokens         bigint NOT NULL DEFAULT 0,
  cache_read_tokens     bigint NOT NULL DEFAULT 0,
  cache_creation_tokens bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (session_id, path)
);

CREATE TABLE turns (
  pk          bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  id          text PRIMARY KEY,
  session_id  text NOT NULL,
  seq         integer NOT NULL,
  role        text NOT NULL,
  text        text NOT NULL,
  tool_name   text,
  tool_input  text,
  tool_use_id text,
  is_error    boolean NOT NULL DEFAULT false,
  flags       text[] NOT NULL DEFAULT '{}',
  at          bigint,
  source_uuid text,
  source_line integer NOT NULL,
  terms       tsvector NOT NULL DEFAULT ''
);
CREATE INDEX turns_session ON turns (session_id, seq);
CREATE INDEX turns_at ON turns (at);
CREATE INDEX turns_terms ON turns USING gin (terms);

CREATE TABLE compactions (
  id          text PRIMARY KEY,
  session_id  text NOT NULL,
  "trigger"   text,
  pre_tokens  bigint,
  summary     text,
  at          bigint,
  seq         integer NOT NULL,
  source_line integer NOT NULL
);
CREATE INDEX compactions_session ON compactions (session_id, seq);

CREATE TABLE corrections (
  id                 text PRIMARY KEY,
  session_id         text NOT NULL,
  premise_turn_id    text,
  correction_turn_id text NOT NULL,
  kind               text NOT NULL,
  lang               text,
  text               text NOT NULL,
  at                 bigint
);
CREATE INDEX corrections_session ON corrections (session_id, at);
CREATE INDEX corrections_at ON corrections (at);

CREATE TABLE ingest_cursors (
  path       text PRIMARY KEY,
  size       bigint NOT NULL,
  mtime_ms   double precision NOT NULL,
  "offset"   bigint NOT NULL,
  head_hash  text NOT NULL,
  state      jsonb NOT NULL DEFAULT '{}',
  updated_at bigint NOT NULL
);
