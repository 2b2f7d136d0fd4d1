-- Each memory's token signature for recall's rerank (see the SQLite migration 016_token_signatures.sql
-- and src/embed/token-signature.ts): the signs of its word pieces' contextual states from the model
-- run that computed its vector. `model` is the embedder's id and dimension
-- ('onnx:all-minilm-l6-v2-q/384'): a signature is read only for the model that made it.
CREATE TABLE token_signatures (
  memory_pk bigint PRIMARY KEY REFERENCES memories (pk) ON DELETE CASCADE,
  model     text NOT NULL,
  signature bytea NOT NULL
);

-- A text or context changed in place loses its signature (it no longer describes the words).
CREATE FUNCTION token_signatures_follow_text() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM token_signatures WHERE memory_pk = NEW.pk;
  RETURN NEW;
END;
$$;

CREATE TRIGGER token_signatures_follow_text AFTER UPDATE OF text, context ON memories
  FOR EACH ROW WHEN (NEW.text IS DISTINCT FROM OLD.text OR NEW.context IS DISTINCT FROM OLD.context)
  EXECUTE FUNCTION token_signatures_follow_text();
