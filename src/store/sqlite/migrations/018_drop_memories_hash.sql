-- memories_hash (content_hash alone) served no query: the exact-duplicate check reads the
-- partial unique index memories_active_hash (coalesce(project, ''), content_hash) of active rows,
-- which every write also keeps. Each write paid one more B-tree insert at a random leaf (content
-- hashes are random), a page dirtied in the WAL per remember; docs/BENCHMARKS.md `## write`.
DROP INDEX IF EXISTS memories_hash;
