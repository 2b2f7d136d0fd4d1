-- Each memory's token signature (src/embed/token-signature.ts): the signs of its word pieces'
-- contextual states from the model run that computed its vector, read by recall's rerank so it
-- compares the query with its first hits word by word without running the model on them.
-- Keyed like vectors by memories.rowid; `model` is the embedder's id and dimension
-- ('onnx:all-minilm-l6-v2-q/384'): a signature is read only for the model that made it.
CREATE TABLE token_signatures (
  memory_rowid INTEGER PRIMARY KEY,
  model        TEXT NOT NULL,
  signature    BLOB NOT NULL
);

-- Deleted with the memory; a text or context changed in place loses its signature.
CREATE TRIGGER token_signatures_follow_delete AFTER DELETE ON memories
BEGIN
  DELETE FROM token_signatures WHERE memory_rowid = OLD.rowid;
END;
CREATE TRIGGER token_signatures_follow_text AFTER UPDATE OF text, context ON memories
  WHEN NEW.text IS NOT OLD.text OR NEW.context IS NOT OLD.context
BEGIN
  DELETE FROM token_signatures WHERE memory_rowid = NEW.rowid;
END;
