#!/usr/bin/env node
// Prototype of BM25 over postings of our own (src/store/sqlite/text-search-index.ts) against
// FTS5's bm25() on the bench corpus: builds the index on a copy of the corpus, then for each
// known-answer query compares the top `limit` (ids and scores) with store.searchText and times
// both, interleaved in the same process (medians and their ratio).
//
//   node scripts/bm25-index-proto.mjs <corpus.db> <manifest.json> [--queries 300] [--limit 50] [--rounds 3]
//   node scripts/bm25-index-proto.mjs <corpus.db> <manifest.json> --run-only fts|index --queries 60   # for callgrind
//
// The FTS5 side is the query store.searchText ran before the index (its term selection, MATCH and
// filter); a store opened by this checkout backfills the index on open.
//
// <corpus.db> is `cairn bench`'s corpus; it is copied first, never written. Uses this checkout's dist/.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openSqliteStore, queryTerms } from '../dist/index.js';
import { filterSql } from '../dist/store/sqlite/rows.js';
import { indexText } from '../dist/store/tokenize.js';
import { memoryIndexSource } from '../dist/store/memory-rows.js';
import { TextSearchIndex } from '../dist/store/sqlite/text-search-index.js';
import { contentQuery } from '../dist/recall/stopwords.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    queries: { type: 'string', default: '300' },
    limit: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '3' },
    'run-only': { type: 'string' },
    keep: { type: 'string' },
  },
});
const [source, manifestPath] = positionals;
if (!source || !manifestPath) {
  console.error('usage: node scripts/bm25-index-proto.mjs <corpus.db> <manifest.json> [--queries 300] [--limit 50] [--rounds 3] [--run-only fts|index]');
  process.exit(2);
}
const dir = values.keep ?? mkdtempSync(join(tmpdir(), 'cairn-bm25-proto-'));
const path = join(dir, 'corpus.db');
const fresh = values.keep === undefined || !existsQuiet(path);
if (fresh) copyFileSync(source, path);
const store = await openSqliteStore(path);
const db = store.db;
const limit = Number(values.limit);
const queries = JSON.parse(readFileSync(manifestPath, 'utf8')).queries.slice(0, Number(values.queries));
const index = new TextSearchIndex(() => db);
const indexTextOf = (row) => indexText(memoryIndexSource({ text: row.text, tags: JSON.parse(row.tags), context: row.context }));

function existsQuiet(p) {
  try {
    statSync(p);
    return true;
  } catch {
    return false;
  }
}

try {
  if (!index.ready()) {
    db.pragma('wal_checkpoint(TRUNCATE)');
    const before = statSync(path).size;
    const start = performance.now();
    const rows = index.backfill(indexTextOf);
    const ms = performance.now() - start;
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.exec('VACUUM');
    const pages = db.prepare("SELECT sum(pgsize) FROM dbstat WHERE name IN ('bm25_postings', 'sqlite_autoindex_bm25_postings_1')").pluck().get();
    console.log(`backfill: ${rows} rows in ${ms.toFixed(0)} ms; bm25_postings ${(pages / 1e6).toFixed(1)} MB (file ${(before / 1e6).toFixed(1)} MB before)`);
  }
  const cases = queries.map((q) => {
    const keywords = contentQuery(q.text);
    const { where, params } = filterSql({ project: q.project });
    return { q, keywords, where, params };
  });
  const acceptStatements = new Map();
  const accept = (where, params) => {
    if (!acceptStatements.has(where)) acceptStatements.set(where, db.prepare(`SELECT m.rowid, m.id FROM memories m WHERE m.rowid IN (SELECT value FROM json_each(?)) AND ${where}`).raw());
    const stmt = acceptStatements.get(where);
    return (rowids) => new Map(stmt.all(JSON.stringify(rowids), ...params));
  };
  const idOf = db.prepare('SELECT id FROM memories WHERE rowid = ?').pluck();
  const viaIndex = (c) => {
    const terms = store.selectTerms(queryTerms(c.keywords, 64));
    const rows = index.search(terms, limit, accept(c.where, c.params));
    return rows === null ? null : rows.map((r) => ({ id: r.id, score: r.score }));
  };
  // FTS5's ranking as store.searchText ran it before the index (the store now answers from the index).
  const ftsStatements = new Map();
  const viaFts = (c) => {
    const terms = store.selectTerms(queryTerms(c.keywords, 64));
    if (terms.length === 0) return [];
    if (!ftsStatements.has(c.where)) {
      ftsStatements.set(
        c.where,
        db.prepare(`SELECT m.id AS id, f.rank AS rank FROM memories_fts f JOIN memories m ON m.rowid = f.rowid WHERE memories_fts MATCH ? AND ${c.where} ORDER BY f.rank LIMIT ?`),
      );
    }
    const match = terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(' OR ');
    return ftsStatements.get(c.where).all(match, ...c.params, limit).map((row) => ({ id: row.id, score: -row.rank }));
  };
  if (values['run-only'] === 'fts') {
    for (const c of cases) await viaFts(c);
  } else if (values['run-only'] === 'index') {
    for (const c of cases) viaIndex(c);
  } else {
    let same = 0;
    let sameIds = 0;
    let fallback = 0;
    const diffs = [];
    for (const c of cases) {
      const a = await viaFts(c);
      const b = viaIndex(c);
      if (b === null) {
        fallback++;
        continue;
      }
      const idsEqual = a.length === b.length && a.every((r, i) => r.id === b[i].id);
      const scoresEqual = idsEqual && a.every((r, i) => r.score === b[i].score);
      if (idsEqual) sameIds++;
      if (scoresEqual) same++;
      else if (diffs.length < 5) diffs.push({ query: c.keywords, fts: a.slice(0, 5), index: b.slice(0, 5), lengths: [a.length, b.length] });
    }
    console.log(`${cases.length} queries: identical ids+scores ${same}, identical ids ${sameIds}, index fell back to FTS5 ${fallback}`);
    for (const d of diffs) console.log(JSON.stringify(d));
    // Interleaved timing: each query through both, alternating which goes first.
    const fts = [];
    const idx = [];
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const [i, c] of cases.entries()) {
        const runFts = async () => {
          const t = process.hrtime.bigint();
          await viaFts(c);
          fts.push(Number(process.hrtime.bigint() - t) / 1e6);
        };
        const runIdx = () => {
          const t = process.hrtime.bigint();
          viaIndex(c);
          idx.push(Number(process.hrtime.bigint() - t) / 1e6);
        };
        if ((i + round) % 2 === 0) {
          await runFts();
          runIdx();
        } else {
          runIdx();
          await runFts();
        }
      }
    }
    const med = (xs) => xs.slice().sort((x, y) => x - y)[Math.floor(xs.length / 2)];
    const p95 = (xs) => xs.slice().sort((x, y) => x - y)[Math.floor(xs.length * 0.95)];
    console.log(`store.searchText p50 ${med(fts).toFixed(3)} ms p95 ${p95(fts).toFixed(3)}; index p50 ${med(idx).toFixed(3)} ms p95 ${p95(idx).toFixed(3)}; ratio p50 ${(med(idx) / med(fts)).toFixed(3)} (${fts.length} each)`);
  }
} finally {
  await store.close();
  if (values.keep === undefined) rmSync(dir, { recursive: true, force: true });
}
