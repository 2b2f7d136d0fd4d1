import type { Command } from 'commander';
import { invalid } from '../../errors.js';
import type { MaintainChange, MaintainReport } from '../../distill/maintain.js';
import type { ReviewAction, ReviewEntry } from '../../distill/review.js';
import type { DistillSummary } from '../../distill/types.js';
import { REVIEW_KINDS, type ReviewKind } from '../../types.js';
import { memoryLine, when } from '../format.js';
import { list, positiveInt, type Run } from './memory.js';

function counts(record: Partial<Record<string, number>>): string {
  const parts = Object.entries(record).filter(([, n]) => (n ?? 0) > 0).map(([k, n]) => `${k} ${n}`);
  return parts.length > 0 ? parts.join(' · ') : 'none';
}

/** The lines `cairn distill` and `cairn ingest` print about a distillation run. */
export function distillLines(summary: DistillSummary): string[] {
  const lines = [
    `${summary.dryRun ? 'would distil' : 'distilled'} ${summary.sessions} sessions (${summary.turns} new turns): ${summary.candidates} candidates → ` +
      `${summary.added} added · ${summary.merged} merged · ${summary.superseded} superseded · ${summary.queued} queued for review · ${summary.continuations} continuation updates`,
    `kept by kind: ${counts(summary.byKind)} · by scope: ${counts(summary.byScope)}`,
  ];
  const rejected = counts(summary.rejected);
  if (rejected !== 'none') lines.push(`rejected by the quality gate: ${rejected}`);
  for (const e of summary.errors.slice(0, 10)) lines.push(`session ${e.sessionId} failed: ${e.error}`);
  return lines;
}

function changeLine(c: MaintainChange): string {
  const text = c.text.replace(/\s+/g, ' ');
  return `  ${c.id} [${c.kind}] ${c.from.toFixed(2)} → ${c.to.toFixed(2)}  ${text.length > 90 ? `${text.slice(0, 89)}…` : text}`;
}

function maintainLines(report: MaintainReport): string[] {
  const would = report.dryRun ? 'would be ' : '';
  const lines = [`${report.scanned} active memories scanned${report.dryRun ? ' (dry run: nothing changed)' : ''}`];
  lines.push(`${report.decayed.length} ${would}decayed (operational context fades), ${report.reweighted.length} ${would}reweighted by usage`);
  for (const c of report.decayed.slice(0, 5)) lines.push(changeLine(c));
  for (const c of report.reweighted.slice(0, 5)) lines.push(changeLine(c));
  lines.push(`${report.pruned.length} ${would}forgotten below the importance floor${report.pruned.length > 0 && !report.dryRun ? ' (cairn restore ID brings one back)' : ''}`);
  for (const c of report.pruned.slice(0, 10)) lines.push(changeLine(c));
  const q = report.review.queued;
  lines.push(
    `review queue: ${report.review.closed} ${would}closed (memories gone), ${would}queued ${q['near-duplicate']} near-duplicates · ${q.contradiction} contradictions · ${q.stale} stale · ${report.review.open} open` +
      (report.review.open > 0 ? ' (cairn review)' : ''),
  );
  if (report.ledger) {
    const l = report.ledger;
    lines.push(
      `injection ledger: ${l.sessions} sessions idle over ${l.days} days ${would}dropped (${l.injections} injections, ${l.items} items) · ` +
        `${l.outcomes} learn-from-use outcomes older than ${l.outcomeDays} days ${would}dropped`,
    );
  }
  if (report.vacuum) {
    const mb = (n: number | null): string => (n === null ? '?' : `${(n / 1e6).toFixed(1)} MB`);
    lines.push(`vacuum: ${mb(report.vacuum.beforeBytes)} → ${mb(report.vacuum.afterBytes)}`);
  }
  return lines;
}

function reviewLines(entries: ReviewEntry[]): string[] {
  const lines: string[] = [];
  for (const { item, memories } of entries) {
    lines.push(`${item.id} [${item.kind}${item.resolution ? ` · ${item.resolution}` : ''}] ${when(item.createdAt)}  ${item.reason}`);
    for (const memory of memories) lines.push(`    ${memoryLine(memory, 140)}`);
  }
  return lines;
}

export function registerDistillCommands(program: Command, run: Run): void {
  run(
    program
      .command('distill')
      .summary('turn ingested session history into memories')
      .description(
        'Distil ingested sessions into scoped memories: corrections, decisions, preferences, commands that worked, error → fix pairs,\n' +
          'signatures, path:line findings, invariants, settings, continuation state. Heuristic, offline; `cairn ingest` runs it for what it adds.\n' +
          'Re-running adds nothing: each session keeps a cursor of the last distilled turn.',
      )
      .option('--session <id>', 'only this session (repeatable)', (v: string, p: string[] = []) => [...p, v])
      .option('--full', 're-read sessions from their first turn (what is already stored merges)')
      .option('--dry-run', 'show what would be stored, change nothing')
      .option('--llm', 'then run the LLM distiller (observer, judge, reflector) within its token budget — off unless given')
      .option('--llm-provider <name>', 'anthropic | openai | claude-cli (default: $CAIRN_LLM_PROVIDER, else anthropic with $ANTHROPIC_API_KEY, else claude-cli)')
      .option('--llm-model <model>', 'model name (default: $CAIRN_LLM_MODEL)')
      .option('--llm-url <url>', 'API base URL, e.g. http://127.0.0.1:11434/v1 (default: $CAIRN_LLM_URL)')
      .option('--daily-tokens <n>', 'hard LLM token budget per UTC day (default: $CAIRN_LLM_DAILY_TOKENS, else 200000)')
      .option('--session-tokens <n>', 'hard LLM token budget per session (default: $CAIRN_LLM_SESSION_TOKENS, else 20000)')
      .addHelpText(
        'after',
        '\nThe LLM distiller sends session text to the configured provider. Set CAIRN_LLM_API_KEY (or ANTHROPIC_API_KEY / OPENAI_API_KEY);\n' +
          'spend is kept per day and per session and shown by `cairn status`.',
      ),
    async (
      ctx,
      opts: { session?: string[]; full?: boolean; dryRun?: boolean; llm?: boolean; llmProvider?: string; llmModel?: string; llmUrl?: string; dailyTokens?: string; sessionTokens?: string },
    ) => {
      const cairn = await ctx.cairn('distill');
      const summary = await cairn.distill({
        ...(opts.session ? { sessionIds: opts.session } : {}),
        ...(opts.full ? { full: true } : {}),
        ...(opts.dryRun ? { dryRun: true } : {}),
      });
      if (!opts.llm) {
        if (ctx.json) return ctx.printJson(summary);
        for (const line of distillLines(summary)) ctx.out(line);
        return;
      }
      if (opts.dryRun) throw invalid('--llm cannot be combined with --dry-run (a dry run spends no tokens)', 'llm');
      // Loaded only when asked for: the providers and their schemas are not on the hooks' path.
      const llm = await import('../../distill/llm/index.js');
      const config = llm.llmConfig(ctx.io.env, {
        ...(opts.llmProvider ? { provider: opts.llmProvider } : {}),
        ...(opts.llmModel ? { model: opts.llmModel } : {}),
        ...(opts.llmUrl ? { url: opts.llmUrl } : {}),
        ...(opts.dailyTokens ? { dailyTokens: opts.dailyTokens } : {}),
        ...(opts.sessionTokens ? { sessionTokens: opts.sessionTokens } : {}),
      });
      const result = await llm.distillWithLlm(cairn.deps, { provider: llm.createLlmProvider(config, ctx.io.env), budget: config.budget, ...(opts.session ? { sessionIds: opts.session } : {}) });
      if (ctx.json) return ctx.printJson({ heuristic: summary, llm: result });
      for (const line of distillLines(summary)) ctx.out(line);
      ctx.out(
        `LLM (${result.provider} ${result.model}): ${result.calls} calls · ${result.inputTokens + result.outputTokens} tokens · ${result.sessions} sessions · ` +
          `${result.observed} facts observed → ${result.added} added · ${result.merged} merged · ${result.updated} updated · ${result.deleted} deleted · ${result.noop} no-op · ${result.consolidated} consolidated`,
      );
      if (result.fallback > 0) ctx.out(`${result.fallback} facts decided by the heuristics (the judge could not answer)`);
      if (result.stopped) ctx.out(`stopped early: ${result.stopped}`);
      for (const f of result.failures.slice(0, 5)) ctx.note(`LLM ${f.kind}${f.sessionId ? ` (session ${f.sessionId})` : ''}: ${f.message}`);
    },
  );

  run(
    program
      .command('maintain')
      .summary('housekeeping: decay, usage-based importance, pruning, review queue, ledger retention, VACUUM')
      .description(
        'Durable facts, decisions, preferences and corrections keep their importance; continuation state and session-scope memories\n' +
          'halve every 7 days unless used; memories used often rise. Below the floor they are forgotten (restorable with `cairn restore`).\n' +
          'The review queue is rebuilt (near-duplicates, contradictions, stale file references), the injection ledger of sessions idle\n' +
          'for 90 days and learn-from-use outcomes older than a year are dropped, and the database vacuumed.',
      )
      .option('--dry-run', 'show what would change, change nothing')
      .option('--floor <n>', 'importance below which memories are forgotten', (v: string) => {
        const n = Number(v);
        if (!(n >= 0 && n <= 1)) throw invalid(`--floor must be a number from 0 to 1 (got "${v}")`, 'floor');
        return n;
      })
      .option('--ledger-days <n>', 'keep the injection ledger of sessions active within N days (default 90)', positiveInt('ledger-days'))
      .option('--outcome-days <n>', 'keep learn-from-use outcomes N days (default 365)', positiveInt('outcome-days'))
      .option('--no-vacuum', 'skip VACUUM'),
    async (ctx, opts: { dryRun?: boolean; floor?: number; vacuum: boolean; ledgerDays?: number; outcomeDays?: number }) => {
      const cairn = await ctx.cairn('maintain');
      const report = await cairn.maintain({
        ...(opts.dryRun ? { dryRun: true } : {}),
        ...(opts.floor !== undefined ? { floor: opts.floor } : {}),
        ...(opts.ledgerDays !== undefined ? { ledgerDays: opts.ledgerDays } : {}),
        ...(opts.outcomeDays !== undefined ? { outcomeDays: opts.outcomeDays } : {}),
        vacuum: opts.vacuum,
      });
      if (ctx.json) return ctx.printJson(report);
      for (const line of maintainLines(report)) ctx.out(line);
    },
  );

  run(
    program
      .command('review')
      .summary('the review queue: near-duplicates, contradictions, stale memories')
      .description(
        'cairn review                       list open items (--all: resolved ones and automatic supersedes too)\n' +
          'cairn review resolve ID --keep MID  keep one memory, forget the others (restorable)\n' +
          'cairn review resolve ID --merge     merge the memories into the oldest\n' +
          'cairn review resolve ID --dismiss   keep them all\n' +
          'cairn review undo ID                undo a resolution or an automatic supersede',
      )
      .argument('[action]', 'list | resolve | undo', 'list')
      .argument('[id]', 'review item id')
      .option('--keep <memoryId>', 'with resolve: the memory to keep')
      .option('--merge', 'with resolve: merge into the oldest memory')
      .option('--dismiss', 'with resolve: keep every memory as it is')
      .option('--all', 'with list: resolved items too')
      .option('--kind <kinds>', `with list: ${REVIEW_KINDS.join(', ')}`, list)
      .option('--all-projects', 'with list: every project')
      .option('-n, --limit <n>', 'with list: how many', positiveInt('limit'), 50),
    async (
      ctx,
      action: string,
      id: string | undefined,
      opts: { keep?: string; merge?: boolean; dismiss?: boolean; all?: boolean; kind?: string[]; allProjects?: boolean; limit: number },
    ) => {
      const cairn = await ctx.cairn('review');
      if (action === 'list') {
        for (const kind of opts.kind ?? []) if (!REVIEW_KINDS.includes(kind as ReviewKind)) throw invalid(`--kind must be among ${REVIEW_KINDS.join(', ')}`, 'kind');
        const entries = await cairn.review({
          limit: opts.limit,
          ...(opts.all ? { all: true } : {}),
          ...(opts.allProjects ? { allProjects: true } : {}),
          ...(opts.kind ? { kinds: opts.kind as ReviewKind[] } : {}),
        });
        if (ctx.json) return ctx.printJson(entries);
        if (entries.length === 0) ctx.out(opts.all ? 'the review queue is empty' : 'nothing to review (cairn maintain rebuilds the queue)');
        for (const line of reviewLines(entries)) ctx.out(line);
        return;
      }
      if (id === undefined) throw invalid(`cairn review ${action} needs a review item id (see \`cairn review\`)`, 'id');
      if (action === 'resolve') {
        const chosen = [opts.keep !== undefined, opts.merge === true, opts.dismiss === true].filter(Boolean).length;
        if (chosen !== 1) throw invalid('resolve needs exactly one of --keep MEMORY_ID, --merge, --dismiss', 'action');
        const how: ReviewAction = opts.keep !== undefined ? { keep: opts.keep } : opts.merge ? { merge: true } : { dismiss: true };
        const result = await cairn.resolveReview(id, how);
        if (ctx.json) return ctx.printJson(result);
        ctx.out(`${result.item.id} resolved: ${result.item.resolution}${result.forgotten.length > 0 ? ` · forgotten ${result.forgotten.join(', ')} (cairn review undo ${id})` : ''}`);
        return;
      }
      if (action === 'undo') {
        const result = await cairn.undoReview(id);
        if (ctx.json) return ctx.printJson(result);
        ctx.out(`${result.item.id} undone${result.restored.length > 0 ? ` · restored ${result.restored.join(', ')}` : ''}${result.forgotten.length > 0 ? ` · forgotten ${result.forgotten.join(', ')}` : ''}`);
        return;
      }
      throw invalid(`unknown review action "${action}" (list, resolve or undo)`, 'action');
    },
  );
}
