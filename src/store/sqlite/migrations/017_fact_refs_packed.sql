-- Session fact occurrences packed into their fact's row: session_facts.refs holds every turn the
-- fact occurs in as a JSON array of [turn id, seq, role, tool name, at, note], in the order
-- written (readers sort them). A fact is already one row per session (its id hashes session, kind
-- and text), so a bulk ingest writes one row per fact instead of one more B-tree entry per
-- occurrence (src/store/sqlite/fact-refs.ts merges a fact met again in a later batch into its
-- row). Stores written before this keep every occurrence: each fact's rows are gathered into its
-- array (in their primary key's order, by turn id), then the table is dropped.
ALTER TABLE session_facts ADD COLUMN refs TEXT NOT NULL DEFAULT '[]';
UPDATE session_facts SET refs = coalesce((
  SELECT json_group_array(json_array(r.turn_id, r.seq, r.role, r.tool_name, r.at, r.note) ORDER BY r.turn_id)
    FROM session_fact_refs r WHERE r.fact_id = session_facts.id), '[]');
DROP TABLE session_fact_refs;
