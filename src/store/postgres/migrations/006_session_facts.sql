-- Session facts (see the SQLite migration 007_session_facts.sql): one row per distinct fact of a
-- session, one per turn it occurs in, full-text indexed with the same terms as turns.

CREATE TABLE session_facts (
  pk         bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  id         text PRIMARY KEY,
  session_id text NOT NULL,
  kind       text NOT NULL,
  text       text NOT NULL,
  path       text,
  line       integer,
  terms      tsvector NOT NULL DEFAULT ''
);
CREATE INDEX session_facts_session ON session_facts (session_id, kind);
CREATE INDEX session_facts_terms ON session_facts USING gin (terms);

CREATE TABLE session_fact_refs (
  fact_id    text NOT NULL,
  turn_id    text NOT NULL,
  session_id text NOT NULL,
  seq        integer NOT NULL,
  role       text NOT NULL,
  tool_name  text,
  at         bigint,
  note       text,
  PRIMARY KEY (fact_id, turn_id)
);
CREATE INDEX session_fact_refs_session ON session_fact_refs (session_id, seq);
