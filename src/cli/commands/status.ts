import type { Command } from 'commander';
import { LEARN_DEFAULTS, learnedForProject, type ProjectLearned } from '../../context/learn.js';
import { distillStatus, distillStatusLine } from '../../distill/status.js';
import { useByProject, useLine } from '../../ledger/use-summary.js';
import { memorySpread } from '../../memory/spread.js';
import { bytes, when } from '../format.js';
import { elsewhereLine } from '../where.js';
import type { Run } from './memory.js';
import { embedderLines, vectorStatus } from './status-embedder.js';

/** Other projects listed by name in `cairn status` without `--projects`. */
const SHOWN = 10;

export function registerStatusCommand(program: Command, run: Run): void {
  run(
    program
      .command('status')
      .summary('counts, paths, embedder, database size')
      .option('--projects', `list every other project with memories (without it, the ${SHOWN} biggest)`),
    async (ctx, opts: { projects?: boolean }) => {
      const cairn = await ctx.cairn();
      const status = await cairn.status();
      const lastIngest = await cairn.deps.store.getState('last_ingest_at');
      const spread = await memorySpread(cairn.deps, { limit: opts.projects ? Number.MAX_SAFE_INTEGER : SHOWN });
      // Learn from use: what the agent did with the injections, per project (src/context/use.ts).
      const outcomes = cairn.ledger ? await cairn.ledger.outcomes() : null;
      const use = outcomes ? useByProject(outcomes).map((p) => ({ ...p, learned: learnedForProject(outcomes, p.project) })) : null;
      const vectors = await vectorStatus(cairn.deps.store, status.embedder, cairn.deps);
      const embedderConfig = { source: ctx.config.embedderSource, ...(ctx.config.embedderNote ? { note: ctx.config.embedderNote } : {}) };
      const report = { ...status, embedderConfig, vectors, home: ctx.config.home, lastIngestAt: lastIngest ? Number(lastIngest) : null, distill: await distillStatus(cairn.deps), spread, use };
      if (ctx.json) return ctx.printJson(report);
      const s = status.stats;
      ctx.out(`cairn home   ${ctx.config.home}`);
      ctx.out(`database     ${status.store.location} (${status.store.name}, schema v${s.schemaVersion}, ${bytes(s.sizeBytes)})`);
      ctx.out(`project      ${status.project ?? '(none — user scope only)'}`);
      ctx.out(`memories     ${s.active} active · ${s.superseded} superseded · ${s.forgotten} forgotten · ${s.events} events · ${s.snapshots} snapshots`);
      ctx.out(`here         ${spread.here} in this project · ${spread.userWide} user-wide (recalled in every project)`);
      const elsewhere = elsewhereLine(spread);
      if (elsewhere) ctx.out(`elsewhere    ${elsewhere}`);
      for (const p of spread.others) ctx.out(`               ${String(p.memories).padStart(7)}  ${p.project}`);
      if (spread.otherProjects > spread.others.length) ctx.out(`               … and ${spread.otherProjects - spread.others.length} more: cairn status --projects lists every one`);
      const kinds = Object.entries(s.byKind).map(([k, n]) => `${k} ${n}`).join(' · ');
      if (kinds) ctx.out(`by kind      ${kinds}`);
      const scopes = Object.entries(s.byScope).map(([k, n]) => `${k} ${n}`).join(' · ');
      if (scopes) ctx.out(`by scope     ${scopes}`);
      for (const line of embedderLines(status, ctx.config, vectors)) ctx.out(line);
      ctx.out(`last ingest  ${report.lastIngestAt ? when(report.lastIngestAt) : 'never'}`);
      for (const warning of s.warnings ?? []) ctx.out(`warning      ${warning}`);
      ctx.out(distillStatusLine(report.distill));
      if (use && use.length === 0) ctx.out('used after   not measured yet: after a /compact, the next ingest of the session sees which injected items the agent used');
      for (const p of (use ?? []).slice(0, opts.projects ? undefined : SHOWN)) {
        ctx.out(`used after   ${p.project ?? '(project unknown)'}: ${useLine(p)}`);
        ctx.out(`               ${learnedLine(p.learned)}`);
      }
    },
  );
}

/**
 * `learned: symbol +0.12 · path −0.08 (from 3 compactions; …) · 41 details needed again`, or why
 * nothing moved yet.
 */
function learnedLine(l: ProjectLearned): string {
  const needed = l.details > 0 ? `${l.details} detail${l.details === 1 ? '' : 's'} its sessions needed again after a compaction (ranked up in later sessions)` : null;
  if (l.compactions < LEARN_DEFAULTS.minOutcomes) {
    return needed ? `learned: ${needed}; kind weights start once ${LEARN_DEFAULTS.minOutcomes} compactions are measured` : `learned: nothing yet (learning starts once ${LEARN_DEFAULTS.minOutcomes} compactions are measured)`;
  }
  const moved = Object.entries(l.weights).sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]));
  const weights = moved.length === 0 ? `no weight moved (from ${l.compactions} compactions)` : `${moved.map(([kind, d]) => `${kind} ${d > 0 ? '+' : '−'}${Math.abs(d).toFixed(2)}`).join(' · ')} (from ${l.compactions} compactions; weights of the post-compact ranking)`;
  return `learned: ${weights}${needed ? ` · ${needed}` : ''}`;
}
