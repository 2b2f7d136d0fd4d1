#!/usr/bin/env node
/**
 * How many near-duplicates remember's probe finds, against an exact scan and MinHash LSH bands:
 *   node scripts/near-dup-eval.mjs <build> <corpus.db> [texts per kind=150]
 * `<build>` is a checkout with `dist/` built (this one: `.`); `<corpus.db>` a corpus that
 * `cairn bench write` cached (`~/.cairn/bench-cache/corpus-v1-schema10-s42-n10000.db`). Three
 * kinds of probe text: `new` (the bench write workload: the corpus generator with another seed),
 * `one-edit` (a stored memory with one word removed) and `drop30` (a stored memory with each word
 * dropped at 30%). A near-duplicate is an active memory of the same project whose index-term
 * Jaccard with the text is ≥ 0.5 (NEAR_DUPLICATE.jaccard, src/memory/similar.ts).
 *
 * - exact: every active memory of the project compared (what the probe should find);
 * - probe: today's full-text leg (`searchText` with `rarestTerms: 8`, 20 candidates) then Jaccard;
 * - LSH rRbB: MinHash over the index terms (R·B hash functions), B bands of R rows; candidates are
 *   the memories sharing a band with the text, then Jaccard. `cands` is how many candidates of the
 *   project a text had to check. Bands are held in memory here (no table): this measures what such
 *   an index would find, not its cost. `LSH='[[4,64],[5,50]]'` picks the configurations.
 * - memory_bands: with a build that has them (`Store.nearDuplicateCandidates`) on a copy whose bands
 *   are filled (`cairn migrate up`), the store's own candidates at each of `BAND_LIMITS='[32,64]'`,
 *   with the probe's finds they miss, texts only one of them finds a near-duplicate for, and texts
 *   whose top five (what remember reports) is worse or better than the probe's.
 * `SELF=1` replaces the `new` texts by stored memories, each excluded from its own candidates (a
 * store of real memories, which has no generator).
 */
import { resolve, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [buildArg, corpus, nArg = '150'] = process.argv.slice(2);
if (!buildArg || !corpus) {
  console.error('usage: node scripts/near-dup-eval.mjs <build> <corpus.db> [texts per kind]');
  process.exit(2);
}
const build = resolve(buildArg);
const load = (path) => import(pathToFileURL(join(build, path)).href);
const { openSqliteStore } = await load('dist/index.js');
const { indexTerms } = await load('dist/store/tokenize.js');
const { NEAR_DUPLICATE } = await load('dist/memory/similar.js');
const { generateCorpus } = await import(pathToFileURL(resolve(import.meta.dirname, '../bench/dist/corpus.js')).href);

const N = Number(nArg);
const configs = process.env.LSH ? JSON.parse(process.env.LSH) : [[2, 16], [3, 32], [4, 64], [5, 50], [6, 40]];
const K = Math.max(...configs.map(([r, b]) => r * b));
const store = await openSqliteStore(resolve(corpus), { readonly: true });
// The store's own band index (memory_bands, a build that has it, on a filled copy) at these candidate limits.
const BAND_LIMITS = process.env.BAND_LIMITS ? JSON.parse(process.env.BAND_LIMITS) : [20, 64];
const banded = typeof store.nearDuplicateCandidates === 'function';
const db = store.db;

const fnv = (s) => {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
};
let seed = 12345;
const next32 = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
const A = Uint32Array.from({ length: K }, () => next32() | 1);
const C = Uint32Array.from({ length: K }, () => next32());
function signature(terms) {
  const mins = new Uint32Array(K).fill(0xffffffff);
  for (const term of terms) {
    const x = fnv(term);
    for (let i = 0; i < K; i++) {
      const v = (Math.imul(A[i], x) + C[i]) >>> 0;
      if (v < mins[i]) mins[i] = v;
    }
  }
  return mins;
}
const bandKey = (mins, band, rows) => {
  let h = Math.imul(band + 1, 0x9e3779b1);
  for (let i = band * rows; i < band * rows + rows; i++) h = Math.imul(h ^ mins[i], 0x01000193);
  return h >>> 0;
};
const jaccard = (a, b) => {
  let shared = 0;
  for (const t of a) if (b.has(t)) shared++;
  return a.size + b.size - shared === 0 ? 0 : shared / (a.size + b.size - shared);
};

const rows = db.prepare("SELECT id, text, coalesce(project, '') AS p FROM memories WHERE valid_to IS NULL AND deleted_at IS NULL").all();
const termsOf = new Map();
const projectOf = new Map();
const byProject = new Map();
const indexes = configs.map(() => new Map());
for (const row of rows) {
  const terms = new Set(indexTerms(row.text));
  termsOf.set(row.id, terms);
  projectOf.set(row.id, row.p);
  if (!byProject.has(row.p)) byProject.set(row.p, []);
  byProject.get(row.p).push(row.id);
  const mins = signature(terms);
  configs.forEach(([r, b], c) => {
    for (let band = 0; band < b; band++) {
      const key = bandKey(mins, band, r);
      const list = indexes[c].get(key);
      if (list) list.push(row.id);
      else indexes[c].set(key, [row.id]);
    }
  });
}

let s = 7;
const random = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
const texts = [];
if (process.env.SELF) {
  // Stored memories as probe texts, each excluded from its own candidates (what the review queue and
  // the memory browser ask for one memory): for a store of real memories, which has no generator.
  const active = rows.slice();
  for (let i = 0; i < N && active.length > 0; i++) {
    const [row] = active.splice(Math.floor(random() * active.length), 1);
    texts.push({ kind: 'stored', text: row.text, p: row.p, self: row.id });
  }
} else for (const m of generateCorpus({ seed: 42 + 1_000_003, size: N, queries: 0 })) texts.push({ kind: 'new', text: m.text, p: m.project ?? '' });
const maxRowid = db.prepare('SELECT max(rowid) FROM memories').pluck().get();
const pick = db.prepare("SELECT text, coalesce(project, '') AS p FROM memories WHERE rowid = ? AND valid_to IS NULL AND deleted_at IS NULL");
for (let i = 0; texts.length < N * 3 && i < N * 10; i++) {
  const row = pick.get(1 + Math.floor(random() * maxRowid));
  if (!row) continue;
  const words = row.text.split(' ');
  if (texts.length < N * 2) {
    words.splice(Math.floor(random() * words.length), 1);
    texts.push({ kind: 'one-edit', text: words.join(' '), p: row.p });
  } else texts.push({ kind: 'drop30', text: words.filter(() => random() > 0.3).join(' '), p: row.p });
}

const results = {};
for (const t of texts) {
  const terms = new Set(indexTerms(t.text));
  const near = (id) => id !== t.self && projectOf.get(id) === t.p && jaccard(terms, termsOf.get(id)) >= NEAR_DUPLICATE.jaccard;
  const exact = (byProject.get(t.p) ?? []).filter(near).length;
  const hits = await store.searchText(t.text, { project: t.p === '' ? null : t.p, limit: 20, rarestTerms: 8 });
  const r = (results[t.kind] ??= { texts: 0, exact: 0, probe: 0, lsh: configs.map(() => ({ found: 0, cands: 0 })), bands: BAND_LIMITS.map(() => ({ found: 0, probeOnly: 0, cands: 0, probeOnlyTexts: 0, bandsOnlyTexts: 0, top5Worse: 0, top5Better: 0 })) });
  r.texts++;
  r.exact += exact;
  const probeFound = new Set(hits.filter((h) => termsOf.has(h.id) && near(h.id)).map((h) => h.id));
  r.probe += probeFound.size;
  if (banded) {
    for (const [i, limit] of BAND_LIMITS.entries()) {
      const candidates = await store.nearDuplicateCandidates(t.text, t.p === '' ? null : t.p, limit);
      if (candidates === null) throw new Error('the corpus has no complete memory_bands: fill a copy first (scripts/write-ab.mjs does)');
      const found = new Set(candidates.filter((c) => near(c.id)).map((c) => c.id));
      r.bands[i].found += found.size;
      r.bands[i].cands += candidates.length;
      for (const id of probeFound) if (!found.has(id)) r.bands[i].probeOnly++;
      // Decisions: a text the probe reports a near-duplicate for and the bands none, and the reverse.
      if (probeFound.size > 0 && found.size === 0) r.bands[i].probeOnlyTexts++;
      if (found.size > 0 && probeFound.size === 0) r.bands[i].bandsOnlyTexts++;
      // What remember reports: the five most similar. Worse: at the first rank where the two lists differ, the bands' is less similar (or missing).
      const top = (ids) => [...ids].map((id) => jaccard(terms, termsOf.get(id))).sort((a, b) => b - a).slice(0, 5);
      const [a, b] = [top(found), top(probeFound)];
      for (let k = 0; k < 5; k++) {
        const x = a[k] ?? -1;
        const y = b[k] ?? -1;
        if (x === y) continue;
        if (x < y) r.bands[i].top5Worse++;
        else r.bands[i].top5Better++;
        break;
      }
    }
  }
  const mins = signature(terms);
  configs.forEach(([rr, b], c) => {
    const candidates = new Set();
    for (let band = 0; band < b; band++) for (const id of indexes[c].get(bandKey(mins, band, rr)) ?? []) if (projectOf.get(id) === t.p) candidates.add(id);
    r.lsh[c].cands += candidates.size;
    for (const id of candidates) if (near(id)) r.lsh[c].found++;
  });
}
await store.close();
for (const [kind, r] of Object.entries(results)) {
  const lsh = configs.map(([rr, b], c) => `r${rr}b${b} ${r.lsh[c].found} (cands/text ${(r.lsh[c].cands / r.texts).toFixed(1)})`).join('; ');
  const bands = banded ? `; memory_bands ${BAND_LIMITS.map((limit, i) => `limit ${limit}: ${r.bands[i].found} (cands/text ${(r.bands[i].cands / r.texts).toFixed(1)}, missed of the probe's ${r.bands[i].probeOnly}; texts with one only by the probe ${r.bands[i].probeOnlyTexts}, only by the bands ${r.bands[i].bandsOnlyTexts}; top five worse ${r.bands[i].top5Worse}, better ${r.bands[i].top5Better})`).join(', ')}` : '';
  console.log(`${kind}: ${r.texts} texts, near-duplicates ${r.exact} (exact scan), probe finds ${r.probe}; LSH ${lsh}${bands}`);
}
