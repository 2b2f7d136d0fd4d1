/**
 * The injection ledger in PostgreSQL (migration 007): the same contract as the SQLite ledger.
 * A window is numbered under a per-session advisory lock, so concurrent hooks of one session
 * cannot both open window N.
 */
import type { InjectionInput, LedgerInjection, LedgerStore, LedgerWindow } from '../../types.js';
import { itemsOf, OUTCOME_COLUMNS, outcomeValues, toInjections, toOutcome, toStats, toWindow, type InjectionRow, type ItemRow, type OutcomeRow, type StatsRow, type WindowRow } from '../ledger-rows.js';
import type { PgDatabase, Queryable } from './driver.js';

async function current(client: Queryable, session: string): Promise<LedgerWindow | null> {
  const { rows } = await client.query<WindowRow>('SELECT win, at, reason FROM ledger_windows WHERE session_id = $1 ORDER BY win DESC LIMIT 1', [session]);
  return rows[0] ? toWindow(rows[0]) : null;
}

async function open(client: Queryable, session: string, reason: string, at: number, project: string | null, onlyIfNone: boolean): Promise<LedgerWindow> {
  await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`cairn:ledger:${session}`]);
  const existing = await current(client, session);
  if (existing && onlyIfNone) return existing;
  const win = existing ? existing.window + 1 : 0;
  await client.query('INSERT INTO ledger_windows (session_id, win, at, reason, project) VALUES ($1, $2, $3, $4, $5)', [session, win, at, reason, project]);
  return { window: win, at, reason };
}

async function itemsFor(client: Queryable, ids: number[]): Promise<ItemRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await client.query<ItemRow>('SELECT injection_id, item_id, kind, used FROM ledger_items WHERE injection_id = ANY($1::bigint[]) ORDER BY injection_id, ord', [ids]);
  return rows;
}

export function postgresLedger(db: () => PgDatabase): LedgerStore {
  return {
    openWindow: (session, reason, at, options = {}) => db().transaction((client) => open(client, session, reason, at, options.project ?? null, options.onlyIfNone ?? false)),
    currentWindow: (session) => current(db(), session),
    async record(input: InjectionInput): Promise<LedgerInjection> {
      return db().transaction(async (client) => {
        const win = (await current(client, input.session)) ?? (await open(client, input.session, 'first-injection', input.at, input.project, true));
        const { rows } = await client.query<InjectionRow>(
          'INSERT INTO ledger_injections (session_id, win, at, via, name, target, tokens, project) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *',
          [input.session, win.window, input.at, input.via, input.name, input.target, Math.max(0, Math.round(input.tokens)), input.project],
        );
        const row = rows[0]!;
        const items = itemsOf(input);
        if (items.length > 0) {
          await client.query(
            'INSERT INTO ledger_items (injection_id, item_id, kind, ord) SELECT $1::bigint, * FROM unnest($2::text[], $3::text[], $4::int[])',
            [row.id, items.map((i) => i.id), items.map((i) => i.kind), items.map((i) => i.ord)],
          );
        }
        return toInjections([row], await itemsFor(client, [Number(row.id)]))[0]!;
      });
    },
    async injections(session, options = {}) {
      const where = ['session_id = $1'];
      const params: unknown[] = [session];
      if (options.window !== undefined) (params.push(options.window), where.push(`win = $${params.length}`));
      if (options.target !== undefined) (params.push(options.target), where.push(`target = $${params.length}`));
      const { rows } = await db().query<InjectionRow>(`SELECT * FROM ledger_injections WHERE ${where.join(' AND ')} ORDER BY id`, params);
      return toInjections(rows, await itemsFor(db(), rows.map((r) => Number(r.id))));
    },
    async windows(session) {
      const { rows } = await db().query<WindowRow>('SELECT win, at, reason FROM ledger_windows WHERE session_id = $1 ORDER BY win', [session]);
      return rows.map(toWindow);
    },
    async sessions(options = {}) {
      const params: unknown[] = [options.limit ?? 20];
      let filter = '';
      if (options.project === null) filter = 'WHERE project IS NULL';
      else if (options.project !== undefined) (params.push(options.project), (filter = 'WHERE project = $2'));
      const { rows } = await db().query<{ session_id: string; project: string | null; last_at: string }>(
        `SELECT session_id, MAX(project) AS project, MAX(at) AS last_at FROM ledger_injections ${filter} GROUP BY session_id ORDER BY last_at DESC LIMIT $1`,
        params,
      );
      return rows.map((r) => ({ session: r.session_id, project: r.project, lastAt: Number(r.last_at) }));
    },
    async markUsed(injectionId, used, at) {
      await db().transaction(async (client) => {
        await client.query('UPDATE ledger_injections SET measured_at = $1 WHERE id = $2', [at, injectionId]);
        await client.query('UPDATE ledger_items SET used = (item_id = ANY($2::text[])) WHERE injection_id = $1', [injectionId, used]);
      });
    },
    async itemStats(options = {}) {
      const where: string[] = [];
      const params: unknown[] = [];
      if (options.project === null) where.push('j.project IS NULL');
      else if (options.project !== undefined) (params.push(options.project), where.push(`j.project = $${params.length}`));
      if (options.ids) {
        if (options.ids.length === 0) return new Map();
        params.push(options.ids);
        where.push(`i.item_id = ANY($${params.length}::text[])`);
      }
      const { rows } = await db().query<StatsRow>(
        `SELECT i.item_id, COUNT(*) AS injected, COUNT(i.used) AS measured, COUNT(*) FILTER (WHERE i.used) AS used, MAX(j.at) AS last_at
           FROM ledger_items i JOIN ledger_injections j ON j.id = i.injection_id
          ${where.length ? `WHERE ${where.join(' AND ')}` : ''} GROUP BY i.item_id`,
        params,
      );
      return toStats(rows);
    },
    async recordOutcome(outcome) {
      const values = outcomeValues(outcome);
      const cols = OUTCOME_COLUMNS.split(', ');
      await db().query(
        `INSERT INTO ledger_outcomes (${OUTCOME_COLUMNS}) VALUES (${values.map((_, i) => `$${i + 1}`).join(', ')})
         ON CONFLICT (session_id, win) DO UPDATE SET ${cols.slice(2).map((c) => `${c} = EXCLUDED.${c}`).join(', ')}`,
        values,
      );
    },
    async outcomes(options = {}) {
      const where: string[] = [];
      const params: unknown[] = [];
      if (options.session !== undefined) (params.push(options.session), where.push(`session_id = $${params.length}`));
      if (options.project === null) where.push('project IS NULL');
      else if (options.project !== undefined) (params.push(options.project), where.push(`project = $${params.length}`));
      if (options.reason !== undefined) (params.push(options.reason), where.push(`reason = $${params.length}`));
      const filter = where.length ? `WHERE ${where.join(' AND ')}` : '';
      let sql = `SELECT ${OUTCOME_COLUMNS} FROM ledger_outcomes ${filter} ORDER BY measured_at, session_id, win`;
      if (options.last !== undefined) {
        // The latest `last`, then back to oldest first.
        params.push(Math.max(0, Math.floor(options.last)));
        sql = `SELECT * FROM (SELECT ${OUTCOME_COLUMNS} FROM ledger_outcomes ${filter} ORDER BY measured_at DESC, session_id DESC, win DESC LIMIT $${params.length}) latest ORDER BY measured_at, session_id, win`;
      }
      const { rows } = await db().query<OutcomeRow>(sql, params);
      return rows.map(toOutcome);
    },
    async prune({ sessionsBefore, outcomesBefore, dryRun = false }) {
      return db().transaction(async (client) => {
        const old = `SELECT session_id FROM (SELECT session_id, at FROM ledger_windows UNION ALL SELECT session_id, at FROM ledger_injections) a
                      GROUP BY session_id HAVING MAX(at) < $1`;
        const { rows } = await client.query<{ sessions: number; windows: number; injections: number; items: number; outcomes: number }>(
          `WITH old AS (${old})
           SELECT (SELECT count(*) FROM old)::int AS sessions,
                  (SELECT count(*) FROM ledger_windows WHERE session_id IN (SELECT session_id FROM old))::int AS windows,
                  (SELECT count(*) FROM ledger_injections WHERE session_id IN (SELECT session_id FROM old))::int AS injections,
                  (SELECT count(*) FROM ledger_items WHERE injection_id IN
                     (SELECT id FROM ledger_injections WHERE session_id IN (SELECT session_id FROM old)))::int AS items,
                  (SELECT count(*) FROM ledger_outcomes WHERE measured_at < $2)::int AS outcomes`,
          [sessionsBefore, outcomesBefore],
        );
        const counts = rows[0]!;
        if (!dryRun) {
          await client.query(
            `WITH old AS (${old}), gone AS (DELETE FROM ledger_injections WHERE session_id IN (SELECT session_id FROM old) RETURNING id)
             DELETE FROM ledger_items WHERE injection_id IN (SELECT id FROM gone)`,
            [sessionsBefore],
          );
          await client.query(`DELETE FROM ledger_windows WHERE session_id IN (${old})`, [sessionsBefore]);
          await client.query('DELETE FROM ledger_outcomes WHERE measured_at < $1', [outcomesBefore]);
        }
        return counts;
      });
    },
  };
}
