-- Partial indexes over active memories (not superseded, not forgotten): the context builder and
-- listings read "newest", "most important", "pinned" and "by kind" among active rows; with these
-- they stop scanning the table at 100K+ rows. Filters on project are written `+m.project` so the
-- planner walks these in order instead of collecting a whole project and sorting it.
CREATE INDEX memories_active_updated ON memories (updated_at, id) WHERE valid_to IS NULL AND deleted_at IS NULL;
CREATE INDEX memories_active_importance ON memories (importance, created_at) WHERE valid_to IS NULL AND deleted_at IS NULL;
CREATE INDEX memories_active_kind ON memories (kind, updated_at) WHERE valid_to IS NULL AND deleted_at IS NULL;
CREATE INDEX memories_active_pinned ON memories (created_at, id) WHERE pinned = 1 AND valid_to IS NULL AND deleted_at IS NULL;
CREATE INDEX memories_session ON memories (session, updated_at) WHERE session IS NOT NULL;
