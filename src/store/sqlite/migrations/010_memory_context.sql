-- The words a memory answers (Memory.context: a conversation turn's previous turn), stored beside
-- its text. memories_fts indexes it with the text (store.ts, memoryIndexSource) and vectors embed
-- it with the text (embeddingText); rows written before this migration have none.
ALTER TABLE memories ADD COLUMN context TEXT;
