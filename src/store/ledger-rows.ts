/**
 * Row shapes and mapping shared by the SQLite and PostgreSQL injection ledgers
 * (src/store/sqlite/ledger.ts, src/store/postgres/ledger.ts).
 */
import type { InjectionInput, LedgerInjection, LedgerItemStats, LedgerOutcome, LedgerWindow, OutcomeCounts } from '../types.js';

export interface WindowRow {
  win: number;
  at: number | string;
  reason: string;
}

export interface InjectionRow {
  id: number | string;
  session_id: string;
  project: string | null;
  win: number;
  at: number | string;
  via: string;
  name: string;
  target: string;
  tokens: number;
  measured_at: number | string | null;
}

export interface ItemRow {
  injection_id: number | string;
  item_id: string;
  kind: string;
  used: number | boolean | null;
}

export interface StatsRow {
  item_id: string;
  injected: number | string;
  measured: number | string;
  used: number | string;
  last_at: number | string;
}

export function toWindow(row: WindowRow): LedgerWindow {
  return { window: Number(row.win), at: Number(row.at), reason: row.reason };
}

/** Items of an injection in the order recorded, split by kind. */
export function itemsOf(input: InjectionInput): Array<{ id: string; kind: 'memory' | 'fact' | 'block'; ord: number }> {
  const seen = new Set<string>();
  const out: Array<{ id: string; kind: 'memory' | 'fact' | 'block'; ord: number }> = [];
  const add = (id: string, kind: 'memory' | 'fact' | 'block'): void => {
    if (id.length === 0 || seen.has(id)) return;
    seen.add(id);
    out.push({ id, kind, ord: out.length });
  };
  for (const id of input.memories) add(id, 'memory');
  for (const id of input.facts) add(id, 'fact');
  for (const id of input.blocks ?? []) add(id, 'block');
  return out;
}

/** Assemble injections from their rows and their items' rows (items ordered by `ord`). */
export function toInjections(rows: InjectionRow[], items: ItemRow[]): LedgerInjection[] {
  const byInjection = new Map<number, ItemRow[]>();
  for (const item of items) {
    const key = Number(item.injection_id);
    let list = byInjection.get(key);
    if (!list) byInjection.set(key, (list = []));
    list.push(item);
  }
  return rows.map((row) => {
    const id = Number(row.id);
    const list = byInjection.get(id) ?? [];
    const injection: LedgerInjection = {
      id,
      session: row.session_id,
      project: row.project,
      window: Number(row.win),
      at: Number(row.at),
      via: row.via as LedgerInjection['via'],
      name: row.name,
      target: row.target as LedgerInjection['target'],
      memories: list.filter((i) => i.kind === 'memory').map((i) => i.item_id),
      facts: list.filter((i) => i.kind === 'fact').map((i) => i.item_id),
      blocks: list.filter((i) => i.kind === 'block').map((i) => i.item_id),
      tokens: Number(row.tokens),
    };
    if (row.measured_at !== null) injection.used = list.filter((i) => i.used === 1 || i.used === true).map((i) => i.item_id);
    return injection;
  });
}

export function toStats(rows: StatsRow[]): Map<string, LedgerItemStats> {
  return new Map(
    rows.map((r) => [r.item_id, { injected: Number(r.injected), measured: Number(r.measured), used: Number(r.used), lastInjectedAt: Number(r.last_at) }]),
  );
}

export interface OutcomeRow {
  session_id: string;
  win: number;
  project: string | null;
  reason: string;
  measured_at: number | string;
  turns_after: number;
  injected: number;
  used: number;
  needed: number;
  missed: number;
  /** JSON text (SQLite) or parsed jsonb (PostgreSQL). */
  missed_facts: string | string[];
  kinds: string | Record<string, OutcomeCounts>;
  /** JSON text (SQLite) or parsed jsonb (PostgreSQL); learnKey hashes. */
  learned: string | string[];
}

/** The columns of `ledger_outcomes` in insert order, with the JSON columns as text. */
export function outcomeValues(o: LedgerOutcome): unknown[] {
  return [o.session, o.window, o.project, o.reason, o.measuredAt, o.turnsAfter, o.injected, o.used, o.needed, o.missed, JSON.stringify(o.missedFacts), JSON.stringify(o.kinds), JSON.stringify(o.learned ?? [])];
}

export const OUTCOME_COLUMNS = 'session_id, win, project, reason, measured_at, turns_after, injected, used, needed, missed, missed_facts, kinds, learned';

export function toOutcome(row: OutcomeRow): LedgerOutcome {
  const json = <T>(value: string | T): T => (typeof value === 'string' ? (JSON.parse(value) as T) : value);
  return {
    session: row.session_id,
    window: Number(row.win),
    project: row.project,
    reason: row.reason,
    measuredAt: Number(row.measured_at),
    turnsAfter: Number(row.turns_after),
    injected: Number(row.injected),
    used: Number(row.used),
    needed: Number(row.needed),
    missed: Number(row.missed),
    missedFacts: json<string[]>(row.missed_facts),
    kinds: json<Record<string, OutcomeCounts>>(row.kinds),
    learned: json<string[]>(row.learned),
  };
}
