#!/usr/bin/env node
// Could an exact top-k by MaxScore skip most of FTS5's bm25() work on the bench's BM25 recall?
// FTS5's bm25() is a sum over the query's phrases of idf(phrase) × a part that depends on the
// phrase's frequency in the row and the row's length, idf counted over the whole table; so for a
// split of the store's selected query terms into the rarest few E and the rest N, a memory holding
// no E term scores at most UB(N) = Σ_{t ∈ N} idf(t) × (k1 + 1) (k1 = 1.2, every column weight 1).
// The memories holding an E term score at least their score on E alone, so if the `limit`-th best
// of them that passes the query's filter (project + user scope, active) already scores ≥ UB(N),
// the top `limit` is theirs and FTS5 need not rank the rows holding only N terms. This counts, over
// the manifest's known-answer queries, how many have such a split, and how many postings the E
// side holds against all of them (what FTS5 ranks today).
//
//   node scripts/bm25-maxscore.mjs <corpus.db> <manifest.json> [--queries 300] [--limit 50]
//   node scripts/bm25-maxscore.mjs <corpus.db> <manifest.json> --run-only 60   # only today's searchText, for callgrind
//
// <corpus.db> is `cairn bench`'s corpus (~/.cairn/bench-cache/corpus-v1-schema<N>-s42-n100000.db); it is
// copied first, never written. Uses this checkout's dist/ (npm run build).
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openSqliteStore, queryTerms } from '../dist/index.js';
import { filterSql } from '../dist/store/sqlite/rows.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { queries: { type: 'string', default: '300' }, limit: { type: 'string', default: '50' }, 'run-only': { type: 'string' } },
});
const [source, manifest] = positionals;
if (!source || !manifest) {
  console.error('usage: node scripts/bm25-maxscore.mjs <corpus.db> <manifest.json> [--queries 300] [--limit 50] [--run-only N]');
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), 'cairn-bm25-maxscore-'));
const path = join(dir, 'corpus.db');
copyFileSync(source, path);
const store = await openSqliteStore(path);
const queries = JSON.parse(readFileSync(manifest, 'utf8')).queries;
try {
  if (values['run-only'] !== undefined) {
    for (const q of queries.slice(0, Number(values['run-only']))) await store.searchText(q.text, { project: q.project, limit: Number(values.limit) });
  } else {
    report(queries.slice(0, Number(values.queries)), Number(values.limit));
  }
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

function report(sample, limit) {
  const db = store.db;
  const quoted = (terms) => terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(' OR ');
  const count = db.prepare('SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?').pluck();
  // FTS5's row count (its bm25 counts idf over every indexed row; one docsize row each).
  const indexed = db.prepare('SELECT count(*) FROM memories_fts_docsize').pluck().get();
  let asked = 0;
  let splittable = 0;
  let essentialPostings = 0;
  let allPostings = 0;
  let splittablePostings = 0;
  for (const q of sample) {
    // The store's own term selection (what searchText MATCHes); private in TypeScript, visible here.
    const terms = store.selectTerms(queryTerms(q.text, 64));
    if (terms.length === 0) continue;
    asked++;
    const byRarity = terms
      .map((term) => {
        const hits = count.get(quoted([term]));
        const idf = Math.log((indexed - hits + 0.5) / (hits + 0.5));
        return { term, hits, idf: idf <= 0 ? 1e-6 : idf };
      })
      .sort((a, b) => a.hits - b.hits);
    const total = byRarity.reduce((sum, t) => sum + t.hits, 0);
    allPostings += total;
    const { where, params } = filterSql({ project: q.project });
    const ranked = db.prepare(
      `SELECT f.rank FROM memories_fts f JOIN memories m ON m.rowid = f.rowid WHERE memories_fts MATCH ? AND ${where} ORDER BY f.rank LIMIT ?`,
    ).pluck();
    for (let split = 1; split < byRarity.length; split++) {
      const essential = byRarity.slice(0, split);
      const bound = byRarity.slice(split).reduce((sum, t) => sum + t.idf * (1.2 + 1), 0);
      const scores = ranked.all(quoted(essential.map((t) => t.term)), ...params, limit);
      const kth = scores.length < limit ? -Infinity : -scores[scores.length - 1];
      if (kth >= bound) {
        splittable++;
        splittablePostings += total;
        essentialPostings += essential.reduce((sum, t) => sum + t.hits, 0);
        break;
      }
    }
  }
  console.log(`${asked} queries with terms, limit ${limit}: ${splittable} have a split whose rarest side alone decides the top ${limit}`);
  console.log(`postings FTS5 ranks today: ${(allPostings / Math.max(1, asked)).toFixed(0)} a query`);
  if (splittable > 0) {
    console.log(`on those ${splittable}: ${(essentialPostings / splittable).toFixed(0)} postings on the rare side of ${(splittablePostings / splittable).toFixed(0)}`);
  }
}
