import type { Command } from 'commander';
import { openStoreSpec } from '../../config.js';
import { CairnError, invalid } from '../../errors.js';
import type { Store } from '../../types.js';
import { ProgressBar } from '../progress.js';
import { positiveInt, type Run } from './memory.js';

function describeSpec(spec: string): string {
  if (/^postgres(ql)?:\/\//i.test(spec) || spec.startsWith('sqlite:')) return spec;
  throw invalid(`give a store as sqlite:PATH or postgres://… (got "${spec}")`, 'from');
}

export function registerCopyCommand(program: Command, run: Run): void {
  run(
    program
      .command('copy')
      .summary('copy everything from one store to another (SQLite ⇄ PostgreSQL)')
      .description(
        'Copy memories (every version, forgotten ones too), vectors, the event log, snapshots, state, the session substrate (sessions,\n' +
          'turns, compactions, corrections, session facts, ingest cursors), the injection ledger with its learn-from-use outcomes and the\n' +
          'review queue from one store to another, then verify both sides table by table (counts and content hashes).\n' +
          'Rows are upserted by id in batches: an interrupted copy run again resumes where it stopped (--restart copies everything again).',
      )
      .requiredOption('--from <store>', 'sqlite:PATH or postgres://user:pass@host/db[?schema=NAME]')
      .requiredOption('--to <store>', 'sqlite:PATH or postgres://user:pass@host/db[?schema=NAME]')
      .option('--batch <n>', 'rows per batch', positiveInt('batch'), 500)
      .option('--restart', 'ignore an interrupted run’s progress and copy every row again')
      .addHelpText('after', '\nExample:\n  cairn copy --from sqlite:~/.cairn/cairn.db --to postgres://cairn:secret@db.internal/cairn'),
    async (ctx, opts: { from: string; to: string; batch: number; restart?: boolean }) => {
      const fromSpec = describeSpec(opts.from);
      const toSpec = describeSpec(opts.to);
      if (fromSpec === toSpec) throw invalid('--from and --to name the same store', 'to');
      const { copyStore } = await import('../../store/postgres/copy.js');
      const stores: Store[] = [];
      try {
        const from = await openStoreSpec(fromSpec);
        stores.push(from);
        const to = await openStoreSpec(toSpec);
        stores.push(to);
        const bar = new ProgressBar(ctx.io.stderr, 'copying', 1);
        const report = await copyStore(from, to, {
          batchSize: opts.batch,
          restart: opts.restart === true,
          onProgress: (done, total, table) => {
            bar.setTotal(total);
            bar.update(done, table);
          },
        });
        bar.done();
        if (ctx.json) ctx.printJson(report);
        else {
          ctx.out(`copied ${report.from} → ${report.to}${report.resumed > 0 ? ` (resumed: ${report.resumed} rows were already copied)` : ''}`);
          for (const t of report.tables) {
            ctx.out(`${t.ok ? 'ok  ' : 'DIFF'} ${t.table.padEnd(17)} ${String(t.source).padStart(8)} → ${String(t.target).padStart(8)}  sha256 ${t.sourceHash.slice(0, 12)}${t.ok ? '' : ` ≠ ${t.targetHash.slice(0, 12)}`}`);
          }
        }
        if (!report.ok) {
          const bad = report.tables.filter((t) => !t.ok).map((t) => t.table);
          throw new CairnError('CONFLICT', `verification failed for ${bad.join(', ')}: the target holds other rows too, or the source changed during the copy; copy into an empty store, or run again`);
        }
      } finally {
        for (const store of stores) await store.close();
      }
    },
  );
}
