-- Memories, their full-text and vector indexes, the append-only event log, snapshots, state.
CREATE TABLE memories (
  id               TEXT PRIMARY KEY,
  text             TEXT NOT NULL,
  kind             TEXT NOT NULL,
  scope            TEXT NOT NULL,
  project          TEXT,
  session          TEXT,
  tags             TEXT NOT NULL DEFAULT '[]',
  importance       REAL NOT NULL DEFAULT 0.5,
  source           TEXT NOT NULL,
  provenance       TEXT,
  files            TEXT NOT NULL DEFAULT '[]',
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  valid_from       INTEGER NOT NULL,
  valid_to         INTEGER,
  supersedes       TEXT,
  access_count     INTEGER NOT NULL DEFAULT 0,
  last_accessed_at INTEGER,
  last_recalled_at INTEGER,
  pinned           INTEGER NOT NULL DEFAULT 0,
  deleted_at       INTEGER,
  content_hash     TEXT NOT NULL,
  meta             TEXT NOT NULL DEFAULT '{}'
);

-- One active memory per (project, normalised text): concurrent writers cannot duplicate.
CREATE UNIQUE INDEX memories_active_hash
  ON memories (coalesce(project, ''), content_hash)
  WHERE valid_to IS NULL AND deleted_at IS NULL;
CREATE INDEX memories_hash ON memories (content_hash);
CREATE INDEX memories_created ON memories (created_at);
CREATE INDEX memories_project ON memories (project, created_at);
CREATE INDEX memories_supersedes ON memories (supersedes) WHERE supersedes IS NOT NULL;

-- Contentless full-text index keyed by memories.rowid; holds tokenize.ts's index terms.
CREATE VIRTUAL TABLE memories_fts USING fts5 (
  terms,
  content = '',
  contentless_delete = 1,
  tokenize = "porter unicode61 tokenchars '_'"
);

-- Vectors keyed by memories.rowid; the model identity is in state('vector_model').
-- seq grows with every write so other processes can sync their in-memory index incrementally.
CREATE TABLE vectors (
  memory_rowid INTEGER PRIMARY KEY,
  vector       BLOB NOT NULL,
  seq          INTEGER NOT NULL
);
CREATE INDEX vectors_seq ON vectors (seq);

CREATE TABLE events (
  id        INTEGER PRIMARY KEY AUTOINCREMENT,
  memory_id TEXT NOT NULL,
  type      TEXT NOT NULL,
  at        INTEGER NOT NULL,
  actor     TEXT NOT NULL,
  data      TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX events_memory ON events (memory_id, id);
CREATE INDEX events_at ON events (at);

CREATE TABLE snapshots (
  id           TEXT PRIMARY KEY,
  label        TEXT NOT NULL UNIQUE,
  created_at   INTEGER NOT NULL,
  memory_count INTEGER NOT NULL
);

CREATE TABLE snapshot_members (
  snapshot_id  TEXT NOT NULL,
  memory_rowid INTEGER NOT NULL,
  PRIMARY KEY (snapshot_id, memory_rowid)
) WITHOUT ROWID;

CREATE TABLE state (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

-- Embeddings by (model, sha256 of text), so re-embedding the same text is free.
CREATE TABLE embed_cache (
  model TEXT NOT NULL,
  hash  TEXT NOT NULL,
  vector BLOB NOT NULL,
  PRIMARY KEY (model, hash)
) WITHOUT ROWID;
