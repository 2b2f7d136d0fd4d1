-- Distillation: the review queue (near-duplicates, contradictions, stale file references that a
-- person should decide about). Cursors, the subject index and LLM spend live in `state`.

CREATE TABLE review_items (
  id          TEXT PRIMARY KEY,
  key         TEXT NOT NULL UNIQUE,
  kind        TEXT NOT NULL,
  project     TEXT,
  memory_ids  TEXT NOT NULL,
  reason      TEXT NOT NULL,
  data        TEXT NOT NULL DEFAULT '{}',
  created_at  INTEGER NOT NULL,
  resolved_at INTEGER,
  resolution  TEXT
);
CREATE INDEX review_items_open ON review_items (resolved_at, created_at);
CREATE INDEX review_items_project ON review_items (project, created_at);
