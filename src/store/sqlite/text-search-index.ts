/**
 * BM25 over postings of our own (migration 013), kept in the same transactions as every change to
 * `memories_fts`, so the BM25 leg of a search reads each query term's postings whole (a few blobs)
 * instead of having FTS5 run `bm25()` row by row over every match (84% of a search's instructions
 * at 100K memories; see docs/BENCHMARKS.md, recall notes).
 *
 * Scores are FTS5's `bm25()` exactly (k1 1.2, b 0.75, one column of weight 1): the row count and
 * total length come from FTS5's own averages record, each document's length from
 * `memories_fts_docsize`, and each term's document count and frequencies from the postings, which
 * hold the same tokens as FTS5 (its porter stems; terms FTS5 would read as other than one token
 * leave the query to FTS5). Summed in the MATCH's phrase order, like FTS5.
 *
 * Layout: `bm25_postings` holds one blob per (stem, docid range of 8,192), varints of (docid delta,
 * frequency, document length) in docid order; a write appends one row to `bm25_pending` (the
 * document's stems, or the stems it no longer has), folded into the blobs every FOLD_AT_ROWS rows,
 * so a write dirties a page or two instead of one blob per term. A search reads the pending rows
 * holding one of its stems (found by SQLite's `instr`) and lets them override the blobs.
 *
 * Until the index holds every indexed row (`bm25_backfill` state: the last rowid backfilled, or
 * `done`), searches use FTS5; the backfill runs in batches, each committed with its checkpoint, so a
 * killed process resumes where it stopped.
 */
import type Database from 'better-sqlite3';
import { stemmer } from 'stemmer';

/** FTS5's bm25() constants (fts5_aux.c). */
const K1 = 1.2;
const B = 0.75;
/** Docids per posting blob: an append rewrites only the newest range's blob. */
const CHUNK_BITS = 13;
/** Pending rows folded into the blobs at once. */
export const FOLD_AT_ROWS = 512;
/** Memories read per backfill transaction. */
const BACKFILL_BATCH = 10_000;
/** State key: the highest memories rowid the postings hold, or `done`. */
export const BACKFILL_KEY = 'bm25_backfill';
/** FTS5's porter tokenizer leaves tokens shorter than 3 or longer than 64 bytes alone. */
const PORTER_MAX = 64;
/** Index terms tokenized by us: lower-case ASCII letters, digits and '_' (unicode61 keeps them whole). */
const SIMPLE_TERM = /^[a-z0-9_]+$/;
/** Stems kept before the memo starts over. */
const STEMS_KEPT = 100_000;

export interface RankedRow {
  rowid: number;
  id: string;
  /** bm25() negated, as store.searchText reports it (higher is better). */
  score: number;
}

/** The k-th largest of `values` (k ≥ 1, at most values.length): an in-place quickselect. */
function kthLargest(values: number[], k: number): number {
  let lo = 0;
  let hi = values.length - 1;
  const target = k - 1;
  while (lo < hi) {
    const pivot = values[(lo + hi) >> 1] as number;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while ((values[i] as number) > pivot) i++;
      while ((values[j] as number) < pivot) j--;
      if (i <= j) {
        const t = values[i] as number;
        values[i] = values[j] as number;
        values[j] = t;
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else break;
  }
  return values[target] as number;
}

interface Statements {
  pendingCount: Database.Statement;
  appendPending: Database.Statement;
  readPending: Database.Statement;
  clearPending: Database.Statement;
  readChunk: Database.Statement;
  readStems: Database.Statement;
  writeChunk: Database.Statement;
  readChunks: Database.Statement;
  writeChunks: Database.Statement;
  dropChunks: Database.Statement;
  docsize: Database.Statement;
  averages: Database.Statement;
  idf: Database.Statement;
  backfill: Database.Statement;
  setBackfill: Database.Statement;
}

/** A posting list being assembled: parallel arrays in docid order. */
interface Postings {
  docids: number[];
  tfs: number[];
  dls: number[];
}

/** SQLite's varint (FTS5's sqlite3Fts5GetVarint, as in its docsize and averages records). */
function sqliteVarint(blob: Uint8Array, at: number): [value: number, next: number] {
  let value = 0;
  for (let i = 0; i < 8; i++) {
    const byte = blob[at + i] ?? 0;
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return [value, at + i + 1];
  }
  return [value * 256 + (blob[at + 8] ?? 0), at + 9];
}

/** Unsigned LEB128 varints, the postings' own encoding. */
class VarintWriter {
  private bytes = new Uint8Array(256);
  private length = 0;

  push(value: number): void {
    if (this.length + 10 > this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2);
      grown.set(this.bytes);
      this.bytes = grown;
    }
    let v = value;
    while (v >= 0x80) {
      this.bytes[this.length++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    this.bytes[this.length++] = v;
  }

  buffer(): Buffer {
    return Buffer.from(this.bytes.subarray(0, this.length));
  }
}

/** Postings as varints; the first docid is a delta from `previous` (a blob's last docid when appending to it). */
function encode(postings: Postings, previous = 0): Buffer {
  const out = new VarintWriter();
  for (let i = 0; i < postings.docids.length; i++) {
    const docid = postings.docids[i] as number;
    out.push(docid - previous);
    out.push(postings.tfs[i] as number);
    out.push(postings.dls[i] as number);
    previous = docid;
  }
  return out.buffer();
}

/** Calls `each(docid, tf, dl)` for every posting of a blob. */
function decode(blob: Uint8Array, each: (docid: number, tf: number, dl: number) => void): void {
  let at = 0;
  let docid = 0;
  const n = blob.length;
  while (at < n) {
    let byte = blob[at++] as number;
    let delta = byte & 0x7f;
    for (let shift = 128; byte & 0x80; shift *= 128) {
      byte = blob[at++] as number;
      delta += (byte & 0x7f) * shift;
    }
    byte = blob[at++] as number;
    let tf = byte & 0x7f;
    for (let shift = 128; byte & 0x80; shift *= 128) {
      byte = blob[at++] as number;
      tf += (byte & 0x7f) * shift;
    }
    byte = blob[at++] as number;
    let dl = byte & 0x7f;
    for (let shift = 128; byte & 0x80; shift *= 128) {
      byte = blob[at++] as number;
      dl += (byte & 0x7f) * shift;
    }
    docid += delta;
    each(docid, tf, dl);
  }
}

/** Close to SQLite's BINARY order of TEXT keys (equal but for characters past U+FFFF): only for write locality. */
function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `postings` (docid order) with `added` postings put in their places (`added` in any order, no docid of `postings`). */
function mergeSorted(postings: Postings, added: Array<[number, number, number]>): Postings {
  if (added.length === 0) return postings;
  added.sort((a, b) => a[0] - b[0]);
  const out: Postings = { docids: [], tfs: [], dls: [] };
  let i = 0;
  let k = 0;
  while (i < postings.docids.length || k < added.length) {
    const next = added[k];
    if (next === undefined || (i < postings.docids.length && (postings.docids[i] as number) < next[0])) {
      out.docids.push(postings.docids[i] as number);
      out.tfs.push(postings.tfs[i] as number);
      out.dls.push(postings.dls[i] as number);
      i++;
    } else {
      out.docids.push(next[0]);
      out.tfs.push(next[1]);
      out.dls.push(next[2]);
      k++;
    }
  }
  return out;
}

function lastDocid(blob: Uint8Array): number {
  let last = 0;
  decode(blob, (docid) => {
    last = docid;
  });
  return last;
}

/** A pending row's stems: ` a b b c ` (spaces around every stem, repeats kept) so `instr(' b ')` finds a stem. */
function pendingText(stems: readonly string[]): string {
  return ` ${stems.join(' ')} `;
}

/** How often each stem occurs in a pending row's text. */
function countStems(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const stem of text.split(' ')) if (stem.length > 0) counts.set(stem, (counts.get(stem) ?? 0) + 1);
  return counts;
}

export class TextSearchIndex {
  private statements: Statements | null = null;
  private readonly stems = new Map<string, string[]>();
  private readonly pendingQueries = new Map<number, Database.Statement>();
  private scores: { sum: Float64Array; seen: Uint8Array } | null = null;

  constructor(private readonly db: () => Database.Database) {}

  /** Forget prepared statements (the connection was closed). */
  reset(): void {
    this.statements = null;
    this.pendingQueries.clear();
  }

  /* ------------------------------------------------------------------ tokens */

  /**
   * The tokens FTS5 (`porter unicode61 tokenchars '_'`) makes of one index term: its porter stem
   * for a plain ASCII term, else what FTS5 itself makes of it (diacritics folded, symbols dropped).
   */
  tokensOf(term: string): string[] {
    let tokens = this.stems.get(term);
    if (tokens === undefined) {
      if (this.stems.size >= STEMS_KEPT) this.stems.clear();
      if (SIMPLE_TERM.test(term)) tokens = [term.length > PORTER_MAX ? term : stemmer(term)];
      else tokens = this.fts5Tokens(term);
      this.stems.set(term, tokens);
    }
    return tokens;
  }

  /** FTS5's own tokens of a text, through a one-row table in the connection's temp schema. */
  private fts5Tokens(text: string): string[] {
    const db = this.db();
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.cairn_tokens USING fts5 (t, tokenize = "porter unicode61 tokenchars '_'");
             CREATE VIRTUAL TABLE IF NOT EXISTS temp.cairn_tokens_v USING fts5vocab (temp, cairn_tokens, instance);`);
    db.prepare('INSERT INTO temp.cairn_tokens (rowid, t) VALUES (1, ?)').run(text);
    try {
      return (db.prepare('SELECT term FROM temp.cairn_tokens_v ORDER BY "offset"').pluck().all() as string[]).slice();
    } finally {
      db.prepare('DELETE FROM temp.cairn_tokens').run();
    }
  }

  /** The stems of an index text (terms joined by single spaces), repeats kept. */
  private stemsOf(indexText: string): string[] {
    const out: string[] = [];
    for (const term of indexText.split(' ')) if (term.length > 0) for (const token of this.tokensOf(term)) out.push(token);
    return out;
  }

  /* ------------------------------------------------------------------ writes */

  /** Whether the postings hold this rowid (backfilled through it): writes to other rows wait for the backfill. */
  private covers(rowid: number): boolean {
    // Read in the write's transaction every time: another process may have cleared the index.
    const state = this.prepared().backfill.get() as string | undefined;
    return state === 'done' || (state !== undefined && rowid <= Number(state));
  }

  /** A memory's index text went into `memories_fts` as `rowid` (call inside its transaction, after the insert). */
  added(rowid: number, indexText: string): void {
    if (!this.covers(rowid)) return;
    const s = this.prepared();
    const sz = s.docsize.get(rowid) as Buffer | undefined;
    if (sz === undefined) return;
    this.append(rowid, sqliteVarint(sz, 0)[0], this.stemsOf(indexText));
  }

  /** A memory's index text left `memories_fts` (call inside its transaction). */
  removed(rowid: number, indexText: string): void {
    if (!this.covers(rowid)) return;
    this.append(rowid, 0, this.stemsOf(indexText));
  }

  /** dl 0 marks a removal. */
  private append(rowid: number, dl: number, stems: string[]): void {
    const s = this.prepared();
    const seq = Number(s.appendPending.run(rowid, dl, pendingText(stems)).lastInsertRowid);
    // Rowids restart at 1 once the table is emptied, so the last one is the number pending.
    if (seq >= FOLD_AT_ROWS) this.fold();
  }

  /** Merge every pending row into the blobs (inside a write transaction). */
  fold(): void {
    const s = this.prepared();
    const rows = s.readPending.all() as Array<[number, number, string]>;
    if (rows.length === 0) return;
    // Each document's final state (null: no longer indexed) and every (stem, chunk) it touches.
    const finalState = new Map<number, { dl: number; counts: Map<string, number> } | null>();
    // Per (chunk, stem) touched: the documents of that chunk whose postings of the stem change.
    const touched = new Map<number, Map<string, number[]>>();
    for (const [docid, dl, text] of rows) {
      const counts = countStems(text);
      finalState.set(docid, dl === 0 ? null : { dl, counts });
      const chunk = docid >> CHUNK_BITS;
      let stems = touched.get(chunk);
      if (!stems) touched.set(chunk, (stems = new Map()));
      for (const stem of counts.keys()) {
        const docids = stems.get(stem);
        if (docids) docids.push(docid);
        else stems.set(stem, [docid]);
      }
    }
    // A chunk at a time, in key order: one read of its touched rows, one write of them, one delete
    // of those left empty (a call per row cost ~2 µs each way, for ~15K rows a fold at 100K).
    for (const chunk of [...touched.keys()].sort((a, b) => a - b)) {
      const stems = touched.get(chunk) as Map<string, number[]>;
      const ordered = [...stems.keys()].sort(byCodeUnits);
      const stored = new Map(s.readChunks.all(chunk, JSON.stringify(ordered)) as Array<[string, Buffer]>);
      const writes: Array<[string, string]> = [];
      const drops: string[] = [];
      for (const stem of ordered) {
        const changed = new Set(stems.get(stem));
        const merged: Postings = { docids: [], tfs: [], dls: [] };
        const blob = stored.get(stem);
        if (blob) {
          decode(blob, (docid, tf, dl) => {
            if (changed.has(docid)) return;
            merged.docids.push(docid);
            merged.tfs.push(tf);
            merged.dls.push(dl);
          });
        }
        const added: Array<[number, number, number]> = [];
        for (const docid of changed) {
          const state = finalState.get(docid);
          const tf = state?.counts.get(stem);
          if (state && tf !== undefined) added.push([docid, tf, state.dl]);
        }
        if (merged.docids.length === 0 && added.length === 0) {
          if (blob) drops.push(stem);
        } else writes.push([stem, encode(mergeSorted(merged, added)).toString('hex')]);
      }
      if (writes.length > 0) s.writeChunks.run(chunk, JSON.stringify(writes));
      if (drops.length > 0) s.dropChunks.run(chunk, JSON.stringify(drops));
    }
    s.clearPending.run();
  }

  /* ------------------------------------------------------------------ backfill */

  /** Whether searches can use the index (the backfill finished). */
  ready(): boolean {
    return this.prepared().backfill.get() === 'done';
  }

  /**
   * Fill the postings from the memories' index texts, `batch` rows a transaction (default
   * `BACKFILL_BATCH`), each committed with its checkpoint (a killed backfill resumes after the last
   * committed batch), at most `maxBatches` transactions (default: until done).
   * `indexTextOf` gives a memories row's index text (as written to `memories_fts`).
   * @returns the number of rows read.
   */
  backfill(
    indexTextOf: (row: { text: string; tags: string; context: string | null }) => string,
    options: { batch?: number; maxBatches?: number } = {},
  ): number {
    const batch = options.batch ?? BACKFILL_BATCH;
    let batches = options.maxBatches ?? Number.POSITIVE_INFINITY;
    const db = this.db();
    const s = this.prepared();
    let total = 0;
    const step = db.transaction((): boolean => {
      const state = s.backfill.get() as string | undefined;
      if (state === 'done') return false;
      const from = state === undefined ? 0 : Number(state);
      const rows = db
        .prepare<[number, number], { rowid: number; text: string; tags: string; context: string | null; sz: Buffer | null }>(
          `SELECT m.rowid AS rowid, m.text AS text, m.tags AS tags, m.context AS context, d.sz AS sz
             FROM memories m LEFT JOIN memories_fts_docsize d ON d.id = m.rowid
            WHERE m.rowid > ? ORDER BY m.rowid LIMIT ?`,
        )
        .all(from, batch);
      if (rows.length === 0) {
        s.setBackfill.run('done');
        return false;
      }
      const byKey = new Map<string, Postings>();
      for (const row of rows) {
        if (row.sz === null) continue; // not in memories_fts
        const dl = sqliteVarint(row.sz, 0)[0];
        const counts = new Map<string, number>();
        for (const stem of this.stemsOf(indexTextOf(row))) counts.set(stem, (counts.get(stem) ?? 0) + 1);
        const chunk = row.rowid >> CHUNK_BITS;
        for (const [stem, tf] of counts) {
          const key = `${chunk} ${stem}`;
          let postings = byKey.get(key);
          if (!postings) byKey.set(key, (postings = { docids: [], tfs: [], dls: [] }));
          postings.docids.push(row.rowid);
          postings.tfs.push(tf);
          postings.dls.push(dl);
        }
      }
      // In key order (chunk, then stem), so the writes walk the table's pages in order.
      const keys = [...byKey.keys()].sort((x, y) => Number(x.slice(0, x.indexOf(' '))) - Number(y.slice(0, y.indexOf(' '))) || byCodeUnits(x, y));
      for (const key of keys) {
        const postings = byKey.get(key) as Postings;
        const space = key.indexOf(' ');
        const chunk = Number(key.slice(0, space));
        const stem = key.slice(space + 1);
        const blob = s.readChunk.get(chunk, stem) as Buffer | undefined;
        // Rows come in rowid order, after every rowid the blob holds: append.
        s.writeChunk.run(chunk, stem, blob ? Buffer.concat([blob, encode(postings, lastDocid(blob))]) : encode(postings));
      }
      s.setBackfill.run(String((rows.at(-1) as { rowid: number }).rowid));
      total += rows.length;
      return true;
    });
    while (batches-- > 0 && step.immediate()) {
      // one batch a transaction
    }
    return total;
  }

  /** Start again from nothing (after `memories_fts` was rewritten directly); call `backfill` next. */
  clear(): void {
    const db = this.db();
    db.transaction(() => {
      db.prepare('DELETE FROM bm25_postings').run();
      db.prepare('DELETE FROM bm25_pending').run();
      db.prepare('DELETE FROM state WHERE key = ?').run(BACKFILL_KEY);
    }).immediate();
  }

  /* ------------------------------------------------------------------ search */

  /**
   * The rows matching any of `terms` (index terms, in the MATCH's order) in FTS5's `bm25()` order,
   * best first, as FTS5 would score them; `accept` keeps the rowids that pass the caller's filter
   * (asked `chunk` at a time, best first) until `limit` are kept. Null when the index cannot
   * answer exactly (not backfilled, or a term FTS5 reads as other than one token).
   */
  search(terms: readonly string[], limit: number, accept: (rowids: number[]) => Map<number, string>, chunk = 64): RankedRow[] | null {
    // One read transaction: a fold committed between two of the reads would count a document twice or not at all.
    return this.db().transaction(() => this.searchSnapshot(terms, limit, accept, chunk))();
  }

  private searchSnapshot(terms: readonly string[], limit: number, accept: (rowids: number[]) => Map<number, string>, chunk: number): RankedRow[] | null {
    if (!this.ready()) return null;
    const phrases: string[] = [];
    for (const term of terms) {
      const tokens = this.tokensOf(term);
      if (tokens.length !== 1) return null;
      phrases.push(tokens[0] as string);
    }
    if (phrases.length === 0 || limit <= 0) return [];
    const s = this.prepared();
    const distinct = [...new Set(phrases)];
    const slot = new Map(distinct.map((stem, i) => [stem, i]));
    // Each distinct stem's postings (parallel arrays), the blobs' less the pending documents', plus theirs.
    const lists = distinct.map((): Postings => ({ docids: [], tfs: [], dls: [] }));
    const pending = this.pendingStates(distinct);
    let maxDocid = 0;
    for (const [stem, blob] of s.readStems.all(JSON.stringify(distinct)) as Array<[string, Buffer]>) {
      const list = lists[slot.get(stem) as number] as Postings;
      decode(blob, (docid, tf, dl) => {
        if (pending.has(docid)) return;
        list.docids.push(docid);
        list.tfs.push(tf);
        list.dls.push(dl);
      });
      const last = list.docids.at(-1);
      if (last !== undefined && last > maxDocid) maxDocid = last;
    }
    for (const [docid, state] of pending) {
      if (state === null) continue;
      for (const [stem, tf] of state.counts) {
        const i = slot.get(stem);
        if (i === undefined) continue;
        const list = lists[i] as Postings;
        list.docids.push(docid);
        list.tfs.push(tf);
        list.dls.push(state.dl);
        if (docid > maxDocid) maxDocid = docid;
      }
    }
    const [nRow, nToken] = this.averages();
    // idf through SQLite's ln(), the C library's log() that FTS5's bm25() calls (Math.log can differ in the last bit).
    const idfs = (s.idf.all(nRow, JSON.stringify(lists.map((l) => l.docids.length))) as number[]).map((idf) => (idf <= 0 ? 1e-6 : idf));
    const avgdl = nToken / nRow;
    // Scores summed phrase by phrase in the MATCH's order, as FTS5 does (a phrase a row lacks adds 0).
    const scores = this.scratch(maxDocid);
    const touched: number[] = [];
    for (const stem of phrases) {
      const i = slot.get(stem) as number;
      const list = lists[i] as Postings;
      const idf = idfs[i] as number;
      for (let k = 0; k < list.docids.length; k++) {
        const docid = list.docids[k] as number;
        const tf = list.tfs[k] as number;
        const dl = list.dls[k] as number;
        if (scores.seen[docid] === 0) {
          scores.seen[docid] = 1;
          scores.sum[docid] = 0;
          touched.push(docid);
        }
        scores.sum[docid] = (scores.sum[docid] as number) + idf * ((tf * (K1 + 1.0)) / (tf + K1 * (1 - B + (B * dl) / avgdl)));
      }
    }
    const sum = scores.sum;
    for (const docid of touched) scores.seen[docid] = 0;
    // FTS5 sorts by rank (the negated score) ascending, so best first; ties by rowid.
    const better = (a: number, b: number): number => (sum[b] as number) - (sum[a] as number) || a - b;
    const out: RankedRow[] = [];
    // Only the best few are sorted at first: enough rows usually pass the filter among them.
    let rest = touched;
    let want = Math.max(4 * limit, 256);
    while (rest.length > 0 && out.length < limit) {
      let head: number[];
      if (rest.length <= want * 2) {
        head = rest.sort(better);
        rest = [];
      } else {
        const threshold = kthLargest(rest.map((docid) => sum[docid] as number), want);
        head = rest.filter((docid) => (sum[docid] as number) >= threshold).sort(better);
        rest = rest.filter((docid) => (sum[docid] as number) < threshold);
        want *= 4;
      }
      for (let at = 0; at < head.length && out.length < limit; at += chunk) {
        const slice = head.slice(at, at + chunk);
        const kept = accept(slice);
        for (const rowid of slice) {
          const id = kept.get(rowid);
          if (id === undefined) continue;
          out.push({ rowid, id, score: sum[rowid] as number });
          if (out.length >= limit) break;
        }
      }
    }
    return out;
  }

  /** Per-docid score accumulators, kept between searches (all `seen` entries are 0 between them). */
  private scratch(maxDocid: number): { sum: Float64Array; seen: Uint8Array } {
    if (this.scores === null || this.scores.seen.length <= maxDocid) {
      const size = Math.ceil((maxDocid + 1) * 1.25) + 1024;
      this.scores = { sum: new Float64Array(size), seen: new Uint8Array(size) };
    }
    return this.scores;
  }

  /** Pending documents holding one of `stems`, each in its last state (null: removed). */
  private pendingStates(stems: string[]): Map<number, { dl: number; counts: Map<string, number> } | null> {
    const out = new Map<number, { dl: number; counts: Map<string, number> } | null>();
    let stmt = this.pendingQueries.get(stems.length);
    if (!stmt) {
      const where = stems.map(() => 'instr(stems, ?) > 0').join(' OR ');
      stmt = this.db().prepare(`SELECT docid, dl, stems FROM bm25_pending WHERE ${where} ORDER BY rowid`).raw();
      this.pendingQueries.set(stems.length, stmt);
    }
    for (const [docid, dl, text] of stmt.all(...stems.map((stem) => ` ${stem} `)) as Array<[number, number, string]>) {
      out.set(docid, dl === 0 ? null : { dl, counts: countStems(text) });
    }
    return out;
  }

  /** FTS5's row count and total length (its averages record, id 1 of `memories_fts_data`). */
  private averages(): [number, number] {
    const block = this.prepared().averages.get() as Buffer | undefined;
    if (!block) return [1, 0];
    const [nRow, next] = sqliteVarint(block, 0);
    const [nToken] = sqliteVarint(block, next);
    return [Math.max(1, nRow), nToken];
  }

  private prepared(): Statements {
    if (this.statements) return this.statements;
    const db = this.db();
    this.statements = {
      pendingCount: db.prepare('SELECT count(*) FROM bm25_pending').pluck(),
      appendPending: db.prepare('INSERT INTO bm25_pending (docid, dl, stems) VALUES (?, ?, ?)'),
      readPending: db.prepare('SELECT docid, dl, stems FROM bm25_pending ORDER BY rowid').raw(),
      clearPending: db.prepare('DELETE FROM bm25_pending'),
      readChunk: db.prepare('SELECT postings FROM bm25_postings WHERE chunk = ? AND stem = ?').pluck(),
      // One primary-key read per (stem, chunk), every chunk up to the last (CROSS JOIN: else SQLite scans each chunk's rows).
      readStems: db
        .prepare(
          `WITH RECURSIVE chunks (n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM chunks WHERE n < (SELECT max(chunk) FROM bm25_postings))
           SELECT p.stem, p.postings FROM json_each(?) j CROSS JOIN chunks CROSS JOIN bm25_postings p WHERE p.chunk = chunks.n AND p.stem = j.value`,
        )
        .raw(),
      writeChunk: db.prepare('INSERT INTO bm25_postings (chunk, stem, postings) VALUES (?, ?, ?) ON CONFLICT (chunk, stem) DO UPDATE SET postings = excluded.postings'),
      readChunks: db.prepare('SELECT stem, postings FROM bm25_postings WHERE chunk = ? AND stem IN (SELECT value FROM json_each(?))').raw(),
      // `WHERE true` keeps SQLite from reading ON CONFLICT as part of the SELECT.
      writeChunks: db.prepare(
        `INSERT INTO bm25_postings (chunk, stem, postings) SELECT ?, value ->> 0, unhex(value ->> 1) FROM json_each(?) WHERE true
         ON CONFLICT (chunk, stem) DO UPDATE SET postings = excluded.postings`,
      ),
      dropChunks: db.prepare('DELETE FROM bm25_postings WHERE chunk = ? AND stem IN (SELECT value FROM json_each(?))'),
      docsize: db.prepare('SELECT sz FROM memories_fts_docsize WHERE id = ?').pluck(),
      averages: db.prepare('SELECT block FROM memories_fts_data WHERE id = 1').pluck(),
      idf: db.prepare('SELECT ln((? - value + 0.5) / (value + 0.5)) FROM json_each(?) ORDER BY key').pluck(),
      backfill: db.prepare(`SELECT value FROM state WHERE key = '${BACKFILL_KEY}'`).pluck(),
      setBackfill: db.prepare(`INSERT INTO state (key, value) VALUES ('${BACKFILL_KEY}', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`),
    };
    return this.statements;
  }
}
