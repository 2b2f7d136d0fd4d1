import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { isPostgresStore } from '../../config.js';
import { invalid } from '../../errors.js';
import { loadMigrations, openDatabase } from '../../store/sqlite/database.js';
import { fillBands, termSet } from '../../store/sqlite/memory-bands.js';
import { fillTerms } from '../../store/sqlite/memory-terms.js';
import { rowIndexText } from '../../store/sqlite/store.js';
import { TextSearchIndex } from '../../store/sqlite/text-search-index.js';
import type { CommandContext } from '../context.js';
import type { Run } from './memory.js';

interface Report {
  store: string;
  current: number;
  latest: number;
  pending: Array<{ version: number; name: string }>;
  applied?: number[];
  /** SQLite: memories whose near-duplicate bands this run filled (migration 012's backfill). */
  bandsFilled?: number;
  /** SQLite: memories whose BM25 postings this run filled (migration 013's backfill). */
  postingsFilled?: number;
}

async function postgres(url: string, apply: boolean): Promise<Report> {
  const { PgDatabase } = await import('../../store/postgres/driver.js');
  const { migrate, migrationStatus } = await import('../../store/postgres/migrate.js');
  const db = await PgDatabase.connect(url);
  try {
    const applied = apply ? await migrate(db) : undefined;
    const status = await migrationStatus(db);
    return { store: db.location, current: status.current, latest: status.latest, pending: status.pending, ...(applied ? { applied } : {}) };
  } finally {
    await db.close();
  }
}

function sqlite(spec: string, apply: boolean): Report {
  const path = spec.startsWith('sqlite:') ? spec.slice('sqlite:'.length) : spec;
  const migrations = loadMigrations();
  const latest = migrations.at(-1)?.version ?? 0;
  const version = (): number => {
    if (!existsSync(path)) return 0;
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      return db.pragma('user_version', { simple: true }) as number;
    } finally {
      db.close();
    }
  };
  const before = version();
  let bandsFilled: number | undefined;
  let postingsFilled: number | undefined;
  if (apply) {
    const db = openDatabase(path);
    try {
      // Memories written before memory_bands existed: filled here, a chunk a transaction (resumable).
      bandsFilled = fillBands(db).filled;
      // Their distinct index terms, which the near-duplicate check reads instead of tokenizing (migration 015).
      fillTerms(db, termSet);
      // Memories written before the BM25 postings existed (opening the store filled at most a batch).
      postingsFilled = new TextSearchIndex(() => db).backfill(rowIndexText);
    } finally {
      db.close();
    }
  }
  const current = version();
  return {
    store: path,
    current,
    latest,
    pending: migrations.filter((m) => m.version > current).map((m) => ({ version: m.version, name: m.name })),
    ...(apply ? { applied: migrations.filter((m) => m.version > before && m.version <= current).map((m) => m.version) } : {}),
    ...(bandsFilled !== undefined ? { bandsFilled } : {}),
    ...(postingsFilled !== undefined ? { postingsFilled } : {}),
  };
}

function print(ctx: CommandContext, report: Report): void {
  if (ctx.json) return ctx.printJson(report);
  ctx.out(`store    ${report.store}`);
  ctx.out(`schema   v${report.current} (this cairn knows v${report.latest})`);
  if (report.applied) ctx.out(report.applied.length > 0 ? `applied  ${report.applied.map((v) => `v${v}`).join(', ')}` : 'applied  nothing (already up to date)');
  if (report.bandsFilled) ctx.out(`filled   near-duplicate bands of ${report.bandsFilled} memories`);
  if (report.postingsFilled) ctx.out(`filled   BM25 postings of ${report.postingsFilled} memories`);
  if (report.pending.length > 0) ctx.out(`pending  ${report.pending.map((m) => `${m.version}_${m.name}`).join(', ')}`);
  else if (!report.applied) ctx.out('pending  none');
}

export function registerMigrateCommand(program: Command, run: Run): void {
  run(
    program
      .command('migrate')
      .summary('apply or show schema migrations of the store')
      .description(
        'Schema migrations of the configured store (--store / CAIRN_STORE / config "store"; SQLite by default).\n' +
          '`up` (the default) applies what is pending, each migration in a transaction (PostgreSQL: under an advisory lock, so\n' +
          'several processes can start at once); `status` only reports. Stores also migrate forward when they open.\n' +
          'SQLite: `up` also fills the near-duplicate bands, the stored index terms and the BM25 postings of memories stored before they existed\n' +
          '(resumable; otherwise remember fills the bands a chunk at a time, each open of the store and `cairn ingest` the postings).',
      )
      .argument('[action]', 'up | status', 'up'),
    async (ctx, action: string) => {
      if (action !== 'up' && action !== 'status') throw invalid(`migrate takes up or status (got "${action}")`, 'action');
      const spec = ctx.config.store;
      print(ctx, isPostgresStore(spec) ? await postgres(spec, action === 'up') : sqlite(spec, action === 'up'));
    },
  );
}
