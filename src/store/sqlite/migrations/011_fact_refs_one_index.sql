-- Session fact occurrences keep one B-tree: their primary key (fact_id, turn_id). The index by
-- (session_id, seq) cost every occurrence a second insert at ingest (writing thread 749 -> 685 ms
-- CPU over ../shared's 21 MB, medians of 6 runs of scripts/ingest-ab.mjs) and no listing used it
-- (SQLite's plan scanned every occurrence of every session instead). A session's facts are listed
-- through session_facts (session_id, kind), then each fact's occurrences by the primary key's
-- prefix. session_fact_refs.session_id stays (copies select it): it is always its fact's session.
DROP INDEX IF EXISTS session_fact_refs_session;
