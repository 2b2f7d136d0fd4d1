-- The words a memory answers (Memory.context; see the SQLite migration 010_memory_context.sql):
-- indexed in `terms` with the text and embedded with it; rows written before this have none.
ALTER TABLE memories ADD COLUMN context text;
