-- memories_hash (content_hash alone) serves no query: the exact-duplicate check (activeByHash in
-- store.ts) reads the partial unique index memories_active_hash (coalesce(project, ''),
-- content_hash) of active rows, which every write keeps too. Each write paid one more B-tree
-- insert at a random leaf (content hashes are random). SQLite dropped its twin in 018.
DROP INDEX IF EXISTS memories_hash;
