/**
 * `fidelity`: the mission's own measure. On real Claude Code sessions that contain a /compact,
 * cut each at its boundary, let cairn ingest only the part before it through the real hook path
 * (pre-compact, then session-start with source "compact"), and compare the share of needed
 * details — exact strings used after the compaction that already appeared before it — carried by
 * (a) Claude Code's own summary, (b) cairn's context at the summary's token count (per ranker),
 * (c) summary + cairn, (d) a recency cut of the conversation at the same count.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { loadConfig, openCairn } from '../../config.js';
import { RANKER_NAMES } from '../../context/rankers.js';
import { estimateTokens } from '../../context/tokens.js';
import { runHook } from '../../hooks/run.js';
import { coverage, neededDetails, recencyBaseline, splitAtCompactions } from '../fidelity.js';
import { atLeast, metric } from '../metrics.js';
import { round } from '../stats.js';
import type { BenchContext, Dataset, Metric, Suite, SuiteOutcome } from '../types.js';

function transcriptsWithCompactions(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const stat = statSync(path);
      if (stat.isDirectory()) walk(path);
      else if (name.endsWith('.jsonl') && readFileSync(path, 'utf8').includes('"compact_boundary"')) out.push(path);
    }
  };
  walk(root);
  return out.sort();
}

async function hook(event: string, input: Record<string, unknown>, home: string): Promise<string> {
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await runHook(event, { stdin: Readable.from([JSON.stringify(input)]), stdout, env: { CAIRN_HOOK_INLINE: '1' }, cwd: home, home });
  return out;
}

interface SessionFigures {
  session: string;
  trigger: string | null;
  needed: number;
  summaryTokens: number;
  summary: number;
  cairn: Record<string, number>;
  summaryPlusCairn: number;
  recency: number;
  hookContext: number;
  hookContextTokens: number;
  missedBySummaryFoundByCairn: string[];
}

export const fidelitySuite: Suite = {
  name: 'fidelity',
  description: 'share of post-/compact exact details restored: Claude Code summary vs cairn context vs both vs a recency cut',
  async run(ctx: BenchContext): Promise<SuiteOutcome> {
    const root = join(ctx.dataDir, 'transcripts', 'claude-code');
    if (!existsSync(root)) return { status: 'skipped', reason: `no transcripts at ${root} (the shared data folder)` };
    const files = transcriptsWithCompactions(root);
    if (files.length === 0) return { status: 'skipped', reason: `no transcript with a compact boundary under ${root}` };
    const hash = createHash('sha256');
    const perSession: SessionFigures[] = [];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      hash.update(text);
      const lines = text.split('\n').filter((l) => l.length > 0);
      for (const [index, split] of splitAtCompactions(lines).entries()) {
        const needed = neededDetails(split);
        if (needed.length === 0) continue;
        const session = `${basename(file, '.jsonl')}#${index + 1}`;
        ctx.log(`fidelity: ${session}: ${needed.length} needed details`);
        const work = mkdtempSync(join(tmpdir(), 'cairn-fidelity-'));
        try {
          const home = join(work, 'home');
          mkdirSync(home);
          const transcript = join(work, basename(file));
          const first = JSON.parse(split.before.find((l) => l.includes('"sessionId"')) ?? '{}') as { sessionId?: string; cwd?: string };
          const sessionId = first.sessionId ?? basename(file, '.jsonl');
          const base = { session_id: sessionId, transcript_path: transcript, cwd: first.cwd ?? work };
          writeFileSync(transcript, `${split.before.join('\n')}\n`);
          await hook('pre-compact', { ...base, hook_event_name: 'PreCompact', trigger: split.trigger ?? 'auto' }, home);
          writeFileSync(transcript, `${[...split.before, ...split.boundary].join('\n')}\n`);
          const started = await hook('session-start', { ...base, hook_event_name: 'SessionStart', source: 'compact' }, home);
          let hookContext = '';
          try {
            hookContext = (JSON.parse(started) as { hookSpecificOutput?: { additionalContext?: string } }).hookSpecificOutput?.additionalContext ?? '';
          } catch {
            hookContext = '';
          }
          const summaryTokens = estimateTokens(split.summary);
          const { cairn } = await openCairn(loadConfig({ home, env: {} }), { cwd: base.cwd, actor: 'bench', session: sessionId });
          const byRanker: Record<string, number> = {};
          let composite = '';
          try {
            for (const ranker of RANKER_NAMES) {
              const context = await cairn.context({ budget: Math.max(50, summaryTokens), favorSession: sessionId, ranker, seed: ctx.seed });
              byRanker[ranker] = round(coverage(needed, context.markdown).share);
              if (ranker === 'composite') composite = context.markdown;
            }
          } finally {
            await cairn.close();
          }
          const summaryCov = coverage(needed, split.summary);
          const cairnCov = coverage(needed, composite);
          perSession.push({
            session,
            trigger: split.trigger,
            needed: needed.length,
            summaryTokens,
            summary: round(summaryCov.share),
            cairn: byRanker,
            summaryPlusCairn: round(coverage(needed, `${split.summary}\n${composite}`).share),
            recency: round(coverage(needed, recencyBaseline(split, summaryTokens)).share),
            hookContext: round(coverage(needed, hookContext).share),
            hookContextTokens: estimateTokens(hookContext),
            missedBySummaryFoundByCairn: cairnCov.found.filter((d) => !summaryCov.found.includes(d)).slice(0, 20),
          });
        } finally {
          rmSync(work, { recursive: true, force: true });
        }
      }
    }
    if (perSession.length === 0) return { status: 'skipped', reason: 'no compaction with needed details found' };
    // Pool over sessions, weighting each by its needed details (the share of all needed details).
    const total = perSession.reduce((sum, s) => sum + s.needed, 0);
    const pooled = (pick: (s: SessionFigures) => number): number => round(perSession.reduce((sum, s) => sum + pick(s) * s.needed, 0) / total);
    const summary = pooled((s) => s.summary);
    const cairn = pooled((s) => s.cairn.composite ?? 0);
    const both = pooled((s) => s.summaryPlusCairn);
    const metrics: Metric[] = [
      metric('summary share (Claude Code)', summary, 'share', { anchor: 'Claude Code’s own summary, measured' }),
      metric('cairn share at summary tokens', cairn, 'share', { target: atLeast(round(2 * summary)), anchor: '≥ 2× the summary’s share' }),
      metric('summary + cairn share', both, 'share', { target: atLeast(0.8) }),
      metric('recency cut at summary tokens', pooled((s) => s.recency), 'share', { anchor: 'baseline' }),
      metric('cairn session-start hook context', pooled((s) => s.hookContext), 'share', {
        note: `~${Math.round(perSession.reduce((a, s) => a + s.hookContextTokens, 0) / perSession.length)} tokens`,
      }),
      ...RANKER_NAMES.filter((r) => r !== 'composite').map((ranker) => metric(`cairn share, ranker ${ranker}`, pooled((s) => s.cairn[ranker] ?? 0), 'share')),
    ];
    const dataset: Dataset = { name: `claude-code transcripts with compactions (${files.length} files)`, sha256: hash.digest('hex'), generator: null, buildMs: null, cachedBuildMs: null };
    return { status: 'ok', datasets: [dataset], metrics, details: { sessions: perSession, neededTotal: total } };
  },
};
