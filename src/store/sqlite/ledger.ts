/**
 * The injection ledger in the SQLite file (migration 008): windows, injections and their items.
 * Windows are numbered inside an IMMEDIATE transaction, so two hooks of one session starting at
 * once cannot both open window N.
 */
import type Database from 'better-sqlite3';
import type { InjectionInput, LedgerInjection, LedgerPruneCounts, LedgerStore, LedgerWindow } from '../../types.js';
import { itemsOf, OUTCOME_COLUMNS, outcomeValues, toInjections, toOutcome, toStats, toWindow, type InjectionRow, type ItemRow, type OutcomeRow, type StatsRow, type WindowRow } from '../ledger-rows.js';

const CHUNK = 400;

export function sqliteLedger(db: () => Database.Database): LedgerStore {
  const current = (session: string): LedgerWindow | null => {
    const row = db().prepare('SELECT win, at, reason FROM ledger_windows WHERE session_id = ? ORDER BY win DESC LIMIT 1').get(session) as WindowRow | undefined;
    return row ? toWindow(row) : null;
  };
  const open = (session: string, reason: string, at: number, project: string | null, onlyIfNone: boolean): LedgerWindow => {
    const existing = current(session);
    if (existing && onlyIfNone) return existing;
    const win = existing ? existing.window + 1 : 0;
    db().prepare('INSERT INTO ledger_windows (session_id, win, at, reason, project) VALUES (?, ?, ?, ?, ?)').run(session, win, at, reason, project);
    return { window: win, at, reason };
  };
  const itemsFor = (ids: number[]): ItemRow[] => {
    const out: ItemRow[] = [];
    for (let i = 0; i < ids.length; i += CHUNK) {
      const chunk = ids.slice(i, i + CHUNK);
      out.push(
        ...(db()
          .prepare(`SELECT injection_id, item_id, kind, used FROM ledger_items WHERE injection_id IN (${chunk.map(() => '?').join(',')}) ORDER BY injection_id, ord`)
          .all(...chunk) as ItemRow[]),
      );
    }
    return out;
  };
  return {
    async openWindow(session, reason, at, options = {}) {
      return db().transaction(() => open(session, reason, at, options.project ?? null, options.onlyIfNone ?? false)).immediate();
    },
    async currentWindow(session) {
      return current(session);
    },
    async record(input: InjectionInput): Promise<LedgerInjection> {
      const connection = db();
      let win = 0;
      const items = itemsOf(input);
      const id = connection
        .transaction(() => {
          win = (current(input.session) ?? open(input.session, 'first-injection', input.at, input.project, true)).window;
          const result = connection
            .prepare('INSERT INTO ledger_injections (session_id, win, at, via, name, target, tokens, project) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
            .run(input.session, win, input.at, input.via, input.name, input.target, Math.max(0, Math.round(input.tokens)), input.project);
          const injectionId = Number(result.lastInsertRowid);
          const insert = connection.prepare('INSERT INTO ledger_items (injection_id, item_id, kind, ord) VALUES (?, ?, ?, ?)');
          for (const item of items) insert.run(injectionId, item.id, item.kind, item.ord);
          return injectionId;
        })
        .immediate();
      // What was just written, as a read would return it (a hook records on every prompt: no read-back).
      const row: InjectionRow = { id, session_id: input.session, win, at: input.at, via: input.via, name: input.name, target: input.target, tokens: Math.max(0, Math.round(input.tokens)), project: input.project, measured_at: null };
      return toInjections([row], items.map((item) => ({ injection_id: id, item_id: item.id, kind: item.kind, used: null })))[0]!;
    },
    async injections(session, options = {}) {
      const where = ['session_id = ?'];
      const params: unknown[] = [session];
      if (options.window !== undefined) (where.push('win = ?'), params.push(options.window));
      if (options.target !== undefined) (where.push('target = ?'), params.push(options.target));
      const rows = db().prepare(`SELECT * FROM ledger_injections WHERE ${where.join(' AND ')} ORDER BY id`).all(...params) as InjectionRow[];
      return toInjections(rows, itemsFor(rows.map((r) => Number(r.id))));
    },
    async windows(session) {
      return (db().prepare('SELECT win, at, reason FROM ledger_windows WHERE session_id = ? ORDER BY win').all(session) as WindowRow[]).map(toWindow);
    },
    async sessions(options = {}) {
      const filter = options.project === undefined ? '' : options.project === null ? 'WHERE project IS NULL' : 'WHERE project = ?';
      const params: unknown[] = options.project ? [options.project] : [];
      const rows = db()
        .prepare(`SELECT session_id, MAX(project) AS project, MAX(at) AS last_at FROM ledger_injections ${filter} GROUP BY session_id ORDER BY last_at DESC LIMIT ?`)
        .all(...params, options.limit ?? 20) as Array<{ session_id: string; project: string | null; last_at: number }>;
      return rows.map((r) => ({ session: r.session_id, project: r.project, lastAt: Number(r.last_at) }));
    },
    async markUsed(injectionId, used, at) {
      const connection = db();
      connection
        .transaction(() => {
          connection.prepare('UPDATE ledger_injections SET measured_at = ? WHERE id = ?').run(at, injectionId);
          connection.prepare('UPDATE ledger_items SET used = 0 WHERE injection_id = ?').run(injectionId);
          const mark = connection.prepare('UPDATE ledger_items SET used = 1 WHERE injection_id = ? AND item_id = ?');
          for (const id of used) mark.run(injectionId, id);
        })
        .immediate();
    },
    async itemStats(options = {}) {
      const where: string[] = [];
      const params: unknown[] = [];
      if (options.project !== undefined) {
        if (options.project === null) where.push('j.project IS NULL');
        else (where.push('j.project = ?'), params.push(options.project));
      }
      if (options.ids) {
        if (options.ids.length === 0) return new Map();
        where.push('i.item_id IN (SELECT value FROM json_each(?))');
        params.push(JSON.stringify(options.ids));
      }
      const rows = db()
        .prepare(
          `SELECT i.item_id, COUNT(*) AS injected, COUNT(i.used) AS measured, COALESCE(SUM(i.used), 0) AS used, MAX(j.at) AS last_at
             FROM ledger_items i JOIN ledger_injections j ON j.id = i.injection_id
            ${where.length ? `WHERE ${where.join(' AND ')}` : ''} GROUP BY i.item_id`,
        )
        .all(...params) as StatsRow[];
      return toStats(rows);
    },
    async recordOutcome(outcome) {
      const values = outcomeValues(outcome);
      db()
        .prepare(`INSERT OR REPLACE INTO ledger_outcomes (${OUTCOME_COLUMNS}) VALUES (${values.map(() => '?').join(', ')})`)
        .run(...values);
    },
    async outcomes(options = {}) {
      const where: string[] = [];
      const params: unknown[] = [];
      if (options.session !== undefined) (where.push('session_id = ?'), params.push(options.session));
      if (options.project === null) where.push('project IS NULL');
      else if (options.project !== undefined) (where.push('project = ?'), params.push(options.project));
      if (options.reason !== undefined) (where.push('reason = ?'), params.push(options.reason));
      const filter = where.length ? `WHERE ${where.join(' AND ')}` : '';
      // The latest `last` by the (project, measured_at) index, then back to oldest first.
      const sql =
        options.last === undefined
          ? `SELECT ${OUTCOME_COLUMNS} FROM ledger_outcomes ${filter} ORDER BY measured_at, session_id, win`
          : `SELECT * FROM (SELECT ${OUTCOME_COLUMNS} FROM ledger_outcomes ${filter} ORDER BY measured_at DESC, session_id DESC, win DESC LIMIT ?) ORDER BY measured_at, session_id, win`;
      const rows = db()
        .prepare(sql)
        .all(...params, ...(options.last === undefined ? [] : [Math.max(0, Math.floor(options.last))])) as OutcomeRow[];
      return rows.map(toOutcome);
    },
    async prune({ sessionsBefore, outcomesBefore, dryRun = false }) {
      const connection = db();
      return connection
        .transaction((): LedgerPruneCounts => {
          // Sessions whose last window and last injection are both older than the cut.
          connection.exec('CREATE TEMP TABLE IF NOT EXISTS ledger_prune (session_id TEXT PRIMARY KEY) WITHOUT ROWID; DELETE FROM ledger_prune;');
          connection
            .prepare(
              `INSERT INTO ledger_prune SELECT session_id FROM
                 (SELECT session_id, at FROM ledger_windows UNION ALL SELECT session_id, at FROM ledger_injections)
               GROUP BY session_id HAVING MAX(at) < ?`,
            )
            .run(sessionsBefore);
          const count = (sql: string, ...params: unknown[]): number => connection.prepare(sql).pluck().get(...params) as number;
          const old = 'SELECT session_id FROM ledger_prune';
          const counts: LedgerPruneCounts = {
            sessions: count('SELECT count(*) FROM ledger_prune'),
            windows: count(`SELECT count(*) FROM ledger_windows WHERE session_id IN (${old})`),
            injections: count(`SELECT count(*) FROM ledger_injections WHERE session_id IN (${old})`),
            items: count(`SELECT count(*) FROM ledger_items WHERE injection_id IN (SELECT id FROM ledger_injections WHERE session_id IN (${old}))`),
            outcomes: count('SELECT count(*) FROM ledger_outcomes WHERE measured_at < ?', outcomesBefore),
          };
          if (!dryRun) {
            connection.prepare(`DELETE FROM ledger_items WHERE injection_id IN (SELECT id FROM ledger_injections WHERE session_id IN (${old}))`).run();
            connection.prepare(`DELETE FROM ledger_injections WHERE session_id IN (${old})`).run();
            connection.prepare(`DELETE FROM ledger_windows WHERE session_id IN (${old})`).run();
            connection.prepare('DELETE FROM ledger_outcomes WHERE measured_at < ?').run(outcomesBefore);
          }
          connection.exec('DELETE FROM ledger_prune');
          return counts;
        })
        .immediate();
    },
  };
}
