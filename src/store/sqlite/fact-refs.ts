/**
 * Session fact occurrences packed into their fact's row (migration 017): `session_facts.refs` is
 * a JSON array of {@link PackedRef}, one per turn the fact occurs in, in the order written (each
 * batch's in turn id order; readers sort them). The rules are those of the occurrence rows they
 * replace (primary key (fact_id, turn_id)): one entry per turn, the first occurrence's seq, role,
 * tool and time kept, and a later non-null note replacing the stored one.
 */
import type { FactRecord } from '../../types.js';
import type { FactColumnsRow, FactRefRow } from '../substrate-rows.js';

/** One occurrence: [turn id, seq, role, tool name, at, note]. */
export type PackedRef = [turnId: string, seq: number, role: string, toolName: string | null, at: number | null, note: string | null];

/** A `session_facts` row with its packed occurrences, as listings select it. */
export interface PackedFactRow extends FactColumnsRow {
  refs: string;
}

/** The columns of {@link PackedFactRow}, for `SELECT`. */
export const PACKED_FACT_COLUMNS = 'id, session_id, kind, text, path, line, refs';

function byTurnId(a: PackedRef, b: PackedRef): number {
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
}

/** Merge `incoming` into `into` (keyed by turn id); true when `into` changed. */
function mergeInto(into: PackedRef[], index: Map<string, PackedRef>, incoming: Iterable<PackedRef>): boolean {
  let changed = false;
  for (const ref of incoming) {
    const stored = index.get(ref[0]);
    if (stored === undefined) {
      index.set(ref[0], ref);
      into.push(ref);
      changed = true;
    } else if (ref[5] !== null && ref[5] !== stored[5]) {
      stored[5] = ref[5];
      changed = true;
    }
  }
  return changed;
}

/**
 * The occurrences of one fact's records (all of the same fact id, in batch order), packed: one
 * entry per turn, in turn id order.
 * @example JSON.stringify(packRecords(records)) // '[["s1:u1",0,"user",null,2,null]]'
 */
export function packRecords(records: readonly FactRecord[]): PackedRef[] {
  const out: PackedRef[] = [];
  const one = records.length === 1;
  const index = new Map<string, PackedRef>();
  for (const r of records) {
    const ref: PackedRef = [r.turnId, r.seq, r.role, r.toolName, r.at, r.note];
    if (one) out.push(ref);
    else mergeInto(out, index, [ref]);
  }
  return out.length > 1 ? out.sort(byTurnId) : out;
}

/** Whether no entry of `stored` (packed text) names one of `incoming`'s turns: then they are appended. */
function allNew(stored: string, incoming: readonly PackedRef[]): boolean {
  for (const ref of incoming) {
    const quoted = JSON.stringify(ref[0]);
    // An id JSON escapes (control characters, quotes, lone surrogates) may be spelt otherwise in
    // text SQLite wrote (migration 017): those are checked entry by entry.
    if (quoted.length !== ref[0].length + 2 || stored.includes(quoted)) return false;
  }
  return true;
}

/**
 * A stored fact's occurrences (`refs` as read) with a batch's added: the merged packed text, or
 * null when the batch adds nothing (every turn already there with the same or no note). Turns
 * not stored yet (a session read on, pass after pass) are appended to the text as it is: a fact
 * met in every pass of a long session costs its row's rewrite, not a parse of every occurrence
 * (2,000 passes naming one path: 2.2 -> 0.8 ms a pass at the last, scripts in the ingest notes).
 */
export function mergePacked(stored: string, incoming: readonly PackedRef[]): string | null {
  if (incoming.length === 0) return null;
  if (allNew(stored, incoming)) return stored === '[]' ? JSON.stringify(incoming) : `${stored.slice(0, -1)},${JSON.stringify(incoming).slice(1)}`;
  const refs = JSON.parse(stored) as PackedRef[];
  const index = new Map<string, PackedRef>();
  for (const ref of refs) index.set(ref[0], ref);
  return mergeInto(refs, index, incoming) ? JSON.stringify(refs) : null;
}

/**
 * A fact row's occurrences as the rows the listings sum up (one per occurrence, joined with its
 * fact), those with `fromSeq <= seq < beforeSeq` when given.
 */
export function unpackRows(rows: readonly PackedFactRow[], range: { fromSeq?: number; beforeSeq?: number } = {}): FactRefRow[] {
  const from = range.fromSeq ?? -Infinity;
  const before = range.beforeSeq ?? Infinity;
  const out: FactRefRow[] = [];
  for (const row of rows) {
    for (const [turnId, seq, role, toolName, at, note] of JSON.parse(row.refs) as PackedRef[]) {
      if (seq < from || seq >= before) continue;
      out.push({ id: row.id, session_id: row.session_id, kind: row.kind, text: row.text, path: row.path, line: row.line, turn_id: turnId, seq, role, tool_name: toolName, at, note });
    }
  }
  return out;
}
