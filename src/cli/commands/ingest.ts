import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { invalid } from '../../errors.js';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { parseSince } from '../../history/history.js';
import { defaultTranscriptRoots } from '../../ingest/index.js';
import type { LineOutcomes } from '../../ingest/types.js';
import type { Agent, TurnRole } from '../../types.js';
import { when } from '../format.js';
import { fillAfterWrite, INGEST_FILL_SECONDS } from '../fill.js';
import { ProgressBar } from '../progress.js';
import { fillLine } from './reindex.js';
import { foundLines } from '../where.js';
import { distillLines } from './distill.js';
import { list, positiveInt, type Run } from './memory.js';

/** `12,345 lines: 9,000 stored, 3,000 passed over (2,000 bookkeeping event, …), 5 bad, 2 of unknown types, 40 injected context`. */
export function outcomeLine(lines: number, o: LineOutcomes): string {
  const n = (v: number): string => v.toLocaleString('en-US');
  const passed = Object.entries(o.passed).sort((a, b) => b[1] - a[1]);
  const passedTotal = passed.reduce((sum, [, v]) => sum + v, 0);
  const parts = [`${n(o.stored)} stored`];
  if (passedTotal > 0) parts.push(`${n(passedTotal)} passed over (${passed.map(([reason, v]) => `${n(v)} ${reason}`).join(', ')})`);
  if (o.bad > 0) parts.push(`${n(o.bad)} bad`);
  if (o.unknown > 0) parts.push(`${n(o.unknown)} of unknown types`);
  if (o.meta > 0) parts.push(`${n(o.meta)} injected context`);
  return `${n(lines)} lines: ${parts.join(', ')}`;
}

function nonNegativeInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw invalid(`fill-seconds must be a whole number of seconds, 0 or more (got "${value}")`, 'fill-seconds');
  return n;
}

export function registerIngestCommands(program: Command, run: Run): void {
  run(
    program
      .command('ingest')
      .summary('read agent transcripts into searchable history')
      .description(
        'Read Claude Code, Codex, Gemini, Cursor, Aider and generic JSONL transcripts into session history, incrementally\n' +
          '(unchanged files are skipped by size and mtime; appended files are read from where the last run stopped).\n' +
          'Without paths: the standard folders that exist (~/.claude/projects or $CLAUDE_CONFIG_DIR/projects, ~/.codex/sessions, ~/.gemini/tmp).',
      )
      .argument('[paths...]', 'files or folders')
      .option('--headless', 'the transcripts come from headless runs (claude -p, codex exec): no continuation notes for their sessions')
      .option('--fill-seconds <n>', `then embed memories still without a vector for at most this many seconds, one filler at a time (0: skip; default ${INGEST_FILL_SECONDS})`, nonNegativeInt, INGEST_FILL_SECONDS),
    async (ctx, paths: string[], opts: { headless?: boolean; fillSeconds: number }) => {
      const home = ctx.io.env.HOME ?? homedir();
      const roots = paths.length > 0 ? paths.map((p) => resolve(ctx.io.cwd, p)) : defaultTranscriptRoots(ctx.io.env, home);
      const missing = paths.length > 0 ? roots.filter((root) => !existsSync(root)) : [];
      if (missing.length > 0) throw invalid(`${missing.join(', ')}: no such file or folder`, 'paths');
      if (roots.length === 0) {
        if (ctx.json) return ctx.printJson({ files: 0, roots: [], note: 'no transcript folders found' });
        ctx.out('no transcript folders found (looked for ~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp); pass paths to ingest');
        return;
      }
      const cairn = await ctx.cairn('ingest');
      const bar = new ProgressBar(ctx.io.stderr, 'ingesting', 0, 'bytes');
      const summary = await cairn.ingest(roots, {
        byProject: true,
        headless: opts.headless === true,
        measureUse: true,
        onProgress: (p) => {
          bar.setTotal(p.bytesTotal);
          bar.update(p.bytesDone, `${p.filesDone}/${p.filesTotal} files`);
        },
      });
      bar.done();
      // The memories went in without vectors (no model load while reading): fill them now, bounded.
      const vectors = await fillAfterWrite(ctx.config, cairn.deps.store, { seconds: opts.fillSeconds, by: 'ingest', background: ctx.io.env.CAIRN_HOOK_CHILD === '1' });
      // An upgraded store's older memories into the BM25 postings (each open fills only a batch; resumable).
      const postings = await cairn.deps.store.fillTextSearchIndex?.();
      const postingsFilled = postings && postings.filled > 0 ? postings.filled : 0;
      if (ctx.json) return ctx.printJson({ roots, ...summary, ...(vectors ? { vectors: { ...vectors, ms: Math.round(vectors.ms) } } : {}), ...(postingsFilled > 0 ? { postingsFilled } : {}) });
      ctx.out(
        `${summary.filesChanged} of ${summary.files} files read · ${summary.sessions} sessions · ${summary.turns} new turns · ` +
          `${summary.toolCalls} tool calls · ${summary.corrections} corrections · ${summary.compactions} compactions`,
      );
      ctx.out(`${(summary.bytes / 1e6).toFixed(1)} MB in ${summary.seconds.toFixed(2)} s (${summary.mbPerSecond.toFixed(0)} MB/s) · ${summary.badLines} bad line${summary.badLines === 1 ? '' : 's'} · ${summary.skipped} file${summary.skipped === 1 ? '' : 's'} skipped`);
      if (summary.lines > 0) ctx.out(outcomeLine(summary.lines, summary.outcomes));
      if (summary.distilled) for (const line of distillLines(summary.distilled)) ctx.out(line);
      for (const line of foundLines(summary.projects ?? [], cairn.deps.project)) ctx.out(line);
      if (summary.use) ctx.out(`used after   ${summary.use.windows} context window${summary.use.windows === 1 ? '' : 's'} measured: ${summary.use.used} of ${summary.use.injected} injected items used afterwards · ${summary.use.missed} needed details missed (cairn status)`);
      const redacted = Object.entries(summary.redactions);
      if (redacted.length > 0) ctx.out(`redacted: ${redacted.map(([k, n]) => `${n}× ${k}`).join(', ')}`);
      for (const bad of summary.badLineSamples.slice(0, 10)) ctx.note(`bad line ${bad.path}:${bad.line}: ${bad.reason}`);
      for (const skip of summary.skippedSamples.slice(0, 10)) ctx.note(`skipped ${skip.path}: ${skip.reason}`);
      if (vectors) ctx.out(`vectors      ${fillLine(vectors)}`);
      if (postingsFilled > 0) ctx.out(`index        BM25 postings of ${postingsFilled} older memories filled`);
    },
  );

  run(
    program
      .command('sessions')
      .summary('list ingested agent sessions')
      .option('--project <id>', 'only this project')
      .option('--agent <agent>', 'claude-code | codex | gemini | aider | cursor | generic')
      .option('-n, --limit <n>', 'how many', positiveInt('limit'), 30)
      .option('--offset <n>', 'skip this many', (v: string) => Number(v), 0),
    async (ctx, opts: { project?: string; agent?: Agent; limit: number; offset: number }) => {
      const cairn = await ctx.cairn();
      const rows = await cairn.sessions({ ...opts });
      if (ctx.json) return ctx.printJson(rows);
      if (rows.length === 0) ctx.out('no sessions yet (run `cairn ingest`)');
      for (const s of rows) {
        const tokens = s.inputTokens + s.outputTokens;
        ctx.out(
          `${s.startedAt ? when(s.startedAt) : '????-??-?? ??:??'}  ${s.agent.padEnd(11)} ${s.id}  ${s.project ?? s.cwd ?? ''}` +
            `${s.compactions ? `  ${s.compactions} compactions` : ''}${tokens ? `  ${tokens} tokens` : ''}${s.parentId ? `  (subagent of ${s.parentId})` : ''}`,
        );
        if (s.title) ctx.out(`    ${s.title.slice(0, 120)}`);
      }
    },
  );

  run(
    program
      .command('history')
      .summary('search raw transcript turns')
      .description('Full-text search over every ingested turn, e.g. cairn history "flaky test" --since 7d')
      .argument('<query...>', 'what to look for')
      .option('--project <id>', 'only this project')
      .option('--session <id>', 'only this session')
      .option('--agent <agent>', 'only this agent')
      .option('--role <roles>', 'user, assistant, tool_call, tool_result, system, summary', list)
      .option('--since <when>', 'e.g. 7d, 12h, or a date')
      .option('-n, --limit <n>', 'how many', positiveInt('limit'), 20),
    async (ctx, words: string[], opts: { project?: string; session?: string; agent?: Agent; role?: TurnRole[]; since?: string; limit: number }) => {
      const cairn = await ctx.cairn();
      const hits = await cairn.history({
        query: words.join(' '),
        limit: opts.limit,
        ...(opts.project ? { project: opts.project } : {}),
        ...(opts.session ? { sessionId: opts.session } : {}),
        ...(opts.agent ? { agent: opts.agent } : {}),
        ...(opts.role ? { roles: opts.role } : {}),
        ...(opts.since ? { since: parseSince(opts.since, Date.now()) } : {}),
      });
      if (ctx.json) return ctx.printJson(hits);
      if (hits.length === 0) ctx.out('no turns match');
      for (const hit of hits) {
        const t = hit.turn;
        ctx.out(`${t.at ? when(t.at) : '????'}  ${hit.session.agent} ${hit.session.id.slice(0, 12)} #${t.seq} ${t.role}${t.toolName ? `(${t.toolName})` : ''}  ${hit.session.project ?? ''}`);
        ctx.out(`    ${hit.snippet.replace(/\s+/g, ' ')}`);
      }
    },
  );
}
