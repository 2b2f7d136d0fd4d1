-- The review queue (near-duplicates, contradictions, stale file references a person decides about).

CREATE TABLE review_items (
  id          text PRIMARY KEY,
  key         text NOT NULL UNIQUE,
  kind        text NOT NULL,
  project     text,
  memory_ids  text[] NOT NULL,
  reason      text NOT NULL,
  data        jsonb NOT NULL DEFAULT '{}',
  created_at  bigint NOT NULL,
  resolved_at bigint,
  resolution  text
);
CREATE INDEX review_items_open ON review_items (resolved_at, created_at);
CREATE INDEX review_items_project ON review_items (project, created_at);
