/**
 * `fidelity`: the mission's own measure (issue #15). For each compaction in the shared Claude Code
 * transcripts — the real ones, with Claude Code's summary, and cut points chosen at fixed shares of
 * sessions without one — the exact details used after it that were known before it, and the share
 * carried by: Claude Code's summary; a recency cut of the conversation; cairn's session-start
 * context at its default budget (the real hook path); cairn at the summary's token count; summary +
 * cairn; and cairn at 1K/2K/4K/8K per ranker (composite, recency, random), so the ranker decides.
 * Sessions are split into a tuning half and a report half before any figure is seen (see
 * `assignHalves`); both halves are reported, and only the tuning half may inform heuristics.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { basename, join } from 'node:path';
import { DEFAULT_VALUE_MODEL } from 'cairn-memory';
import { DEFAULT_HOOK_SETTINGS } from 'cairn-memory/testing';
import { assignHalves, cutPoints, neededDetails, splitAtCompactions, type CompactSplit } from '../fidelity.js';
import { fitOnTuning, pooledShare, replayLearning, replayRows, topWeights, type ReplayCut } from '../fidelity-model.js';
import { FIDELITY_BUDGETS, FIDELITY_RANKERS, measureCut, type CutFigures } from '../fidelity-run.js';
import { codexNeeded, codexRecency, codexSession, codexSplits } from '../fidelity-codex.js';
import { tallyMisses } from '../fidelity-misses.js';
import { atLeast, metric } from '../metrics.js';
import { round } from '../stats.js';
import type { BenchContext, Dataset, Metric, Suite, SuiteOutcome } from '../types.js';

/** A cut needs at least this many needed details to say anything. */
export const MIN_NEEDED = 5;

/** Transcript files of real sessions: not Claude Code's own compaction subagent, not test expectations. */
export function transcriptFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.jsonl') && !name.startsWith('agent-acompact') && !name.startsWith('expected-')) out.push(path);
    }
  };
  walk(root);
  return out.sort();
}

export interface Unit {
  file: string;
  lines: string[];
  sessionId: string;
  /** Subagent files carry their parent's session id; the agent id tells them apart. */
  key: string;
}

export function unitOf(file: string, text: string): Unit | null {
  const lines = text.split('\n').filter((l) => l.length > 0);
  for (const line of lines) {
    if (!line.includes('"sessionId"')) continue;
    try {
      const value = JSON.parse(line) as { sessionId?: unknown; agentId?: unknown };
      if (typeof value.sessionId !== 'string') continue;
      return { file, lines, sessionId: value.sessionId, key: `${value.sessionId}/${typeof value.agentId === 'string' ? value.agentId : 'main'}` };
    } catch {
      continue;
    }
  }
  return null;
}

/** The session's working folder (its first cwd), the project key of the learning replay; '' when none. */
export function cwdOf(lines: readonly string[]): string {
  for (const line of lines.slice(0, 50)) {
    const m = /"cwd":"([^"]+)"/.exec(line);
    if (m) return m[1] as string;
  }
  return '';
}

/** The first timestamp of a transcript (ISO strings sort in time order), '' when none. */
export function startOf(lines: readonly string[]): string {
  for (const line of lines.slice(0, 50)) {
    const m = /"timestamp":"([^"]+)"/.exec(line);
    if (m) return m[1] as string;
  }
  return '';
}

/** Pooled share over cuts, each weighted by its needed details (the share of all needed details). */
export function pooled(cuts: CutFigures[], pick: (c: CutFigures) => number | null | undefined): number | null {
  let sum = 0;
  let total = 0;
  for (const c of cuts) {
    const value = pick(c);
    if (value === null || value === undefined) continue;
    sum += value * c.needed;
    total += c.needed;
  }
  return total === 0 ? null : round(sum / total);
}

export const label = (budget: number): string => `${budget / 1000}K`;

/**
 * The manual compactions again, with PreCompact's output that Claude Code echoes in the new window
 * counted beside the hook's text (what the agent has there); none when no compaction was manual.
 */
function echoRows(name: string, real: CutFigures[]): Metric[] {
  const manual = real.filter((c) => c.hookWithEcho !== null);
  if (manual.length === 0) return [];
  const note = `${manual.length} manual /compact, ${manual.reduce((n, c) => n + c.needed, 0)} needed details; the same compactions without the echo: hook ${pooled(manual, (c) => c.hookContext)}, summary + hook ${pooled(manual, (c) => c.summaryPlusHook)}`;
  return [
    metric(`${name}: manual /compact, cairn's hook + the echoed PreCompact list`, pooled(manual, (c) => c.hookWithEcho), 'share', { note }),
    metric(`${name}: manual /compact, summary + hook + the echoed PreCompact list`, pooled(manual, (c) => c.summaryPlusHookWithEcho), 'share'),
  ];
}

/** Rows of one half; another agent's rows (`agent`) carry its name and are not judged (the targets are Claude Code's). */
function halfMetrics(half: 'tuning' | 'report', cuts: CutFigures[], agent?: { prefix: string; summary: string }): Metric[] {
  return cutRows(`${agent?.prefix ?? ''}${half}`, cuts, { judged: half === 'report' && agent === undefined, ...(agent ? { summary: agent.summary } : {}) });
}

/**
 * On how many cuts cairn's own candidates packed newest first (ranker `recency`) carry more needed
 * details than the value model's order, and (in the note) on how many fewer: pooled shares hide
 * whether the order wins on a few cuts or on most (docs/BENCHMARKS.md, fidelity: "Why newest first
 * ties the value model").
 */
function newestFirstRow(name: string, cuts: CutFigures[], pick: (c: CutFigures) => Record<string, number> | undefined): Metric {
  let ahead = 0;
  let behind = 0;
  let measured = 0;
  for (const c of cuts) {
    const byRanker = pick(c);
    const recency = byRanker?.recency;
    const model = byRanker?.composite;
    if (recency === undefined || model === undefined) continue;
    measured++;
    if (recency > model) ahead++;
    else if (recency < model) behind++;
  }
  return metric(name, ahead, 'cuts', { note: `behind on ${behind}, level on ${measured - ahead - behind} of ${measured} cuts` });
}

/**
 * The rows of a set of cuts, named `<name>: …`: against the agent's summary at real compactions
 * (`summary` names it; Claude Code's by default), then per budget and ranker over all cuts.
 * `judged` sets the targets on the summary rows.
 */
export function cutRows(name: string, cuts: CutFigures[], options: { judged: boolean; summary?: string }): Metric[] {
  const real = cuts.filter((c) => c.real);
  const { judged } = options;
  const agent = options.summary === undefined ? undefined : { summary: options.summary };
  const needed = (list: CutFigures[]): number => list.reduce((n, c) => n + c.needed, 0);
  const realNote = `${real.length} real compactions, ${needed(real)} needed details`;
  const allNote = `${cuts.length} cuts (${real.length} real), ${needed(cuts)} needed details`;
  const out: Metric[] = [];
  const summary = pooled(real, (c) => c.summary);
  if (real.length > 0 && summary !== null) {
    const atSummary = pooled(real, (c) => c.atSummary?.cairn.composite);
    out.push(
      metric(`${name}: ${agent?.summary ?? 'Claude Code summary'}`, summary, 'share', { anchor: `${agent?.summary ?? 'Claude Code’s own summary'}, measured`, note: realNote }),
      metric(`${name}: cairn at the summary's token count`, atSummary, 'share', {
        ...(judged ? { target: atLeast(round(2 * summary)) } : {}),
        anchor: '≥ 2× the summary’s share',
        note: `equal o200k tokens: summary ~${Math.round(real.reduce((a, c) => a + (c.summaryRealTokens ?? 0), 0) / real.length)}, cairn ~${Math.round(real.reduce((a, c) => a + (c.cairnRealTokens ?? 0), 0) / real.length)}`,
      }),
      metric(`${name}: cairn at its default budget (session-start hook)`, pooled(real, (c) => c.hookContext), 'share', {
        // Sized to the session after /compact (src/hooks/events.ts compactSizing): the mean and the most it spent.
        note: `~${Math.round(real.reduce((a, c) => a + c.hookContextTokens, 0) / real.length)} tokens, at most ${Math.max(...real.map((c) => c.hookContextTokens))}`,
      }),
      metric(`${name}: summary + cairn (hook, default budget)`, pooled(real, (c) => c.summaryPlusHook), 'share', judged ? { target: atLeast(0.9) } : {}),
      ...echoRows(name, real),
      metric(`${name}: summary + cairn at the summary's token count`, pooled(real, (c) => c.atSummary?.summaryPlusCairn), 'share'),
      metric(`${name}: recency cut at the summary's token count`, pooled(real, (c) => c.atSummary?.recency), 'share', { anchor: 'baseline' }),
      ...FIDELITY_RANKERS.filter((r) => r !== 'composite').map((r) => metric(`${name}: cairn at the summary's token count, ranker ${r}`, pooled(real, (c) => c.atSummary?.cairn[r]), 'share')),
      newestFirstRow(`${name}: real compactions where ranker recency is ahead of the value model at the summary's token count`, real, (c) => c.atSummary?.cairn),
    );
  }
  const measured = cuts.filter((c) => c.product !== null);
  const sum = (pick: (p: NonNullable<CutFigures['product']>) => number): number => measured.reduce((n, c) => n + pick(c.product!), 0);
  if (measured.length > 0) {
    out.push(
      metric(`${name}: product learn-from-use: injected items used afterwards`, sum((p) => p.injected) === 0 ? null : round(sum((p) => p.used) / sum((p) => p.injected)), 'share', {
        note: `${measured.length} real compactions through the hook, then cairn ingest: ${sum((p) => p.used)} of ${sum((p) => p.injected)} items`,
      }),
      metric(`${name}: product learn-from-use: needed details nothing injected carried`, sum((p) => p.needed) === 0 ? null : round(sum((p) => p.missed) / sum((p) => p.needed)), 'share', {
        note: `${sum((p) => p.missed)} of ${sum((p) => p.needed)} needed (the bench finds ${measured.reduce((n, c) => n + c.needed, 0)}; it counts the whole hook text, the product only the items the ledger names)`,
      }),
    );
  }
  for (const budget of FIDELITY_BUDGETS) {
    const key = String(budget);
    out.push(
      metric(`${name}: cairn @${label(budget)} (all cuts)`, pooled(cuts, (c) => c.byBudget[key]?.cairn.composite), 'share', budget === FIDELITY_BUDGETS[0] ? { note: allNote } : {}),
      metric(`${name}: recency cut @${label(budget)} (all cuts)`, pooled(cuts, (c) => c.byBudget[key]?.recency), 'share'),
      ...FIDELITY_RANKERS.filter((r) => r !== 'composite').map((r) => metric(`${name}: cairn @${label(budget)}, ranker ${r}`, pooled(cuts, (c) => c.byBudget[key]?.cairn[r]), 'share')),
      newestFirstRow(`${name}: cuts where ranker recency is ahead of the value model @${label(budget)}`, cuts, (c) => c.byBudget[key]?.cairn),
    );
  }
  return out;
}

/**
 * Codex rollouts (issue #15 item 8): the same measure through the same hooks, over the rollouts
 * under transcripts/codex — real compactions (`compacted` lines) and cut points — with halves of
 * their own. Rows are prefixed `codex`; none is judged (the targets are set on Claude Code's).
 */
async function codexPart(ctx: BenchContext, hash: ReturnType<typeof createHash>): Promise<{ cuts: CutFigures[]; sessions: number; metrics: Metric[] }> {
  const root = join(ctx.dataDir, 'transcripts', 'codex');
  if (!existsSync(root)) return { cuts: [], sessions: 0, metrics: [] };
  // One file per session: the longest (fixtures hold a session's turns in parts too).
  const units = new Map<string, { file: string; lines: string[]; cwd: string | null }>();
  for (const file of transcriptFiles(root)) {
    const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l.length > 0);
    const session = codexSession(lines);
    if (!session) continue;
    const known = units.get(session.id);
    if (!known || known.lines.length < lines.length) units.set(session.id, { file, lines, cwd: session.cwd });
  }
  const plan: Array<{ session: string; file: string; cwd: string | null; cut: string; split: CompactSplit; needed: string[] }> = [];
  for (const [session, unit] of [...units.entries()].sort((a, b) => a[1].file.localeCompare(b[1].file))) {
    hash.update(unit.lines.join('\n'));
    const name = basename(unit.file, '.jsonl');
    for (const split of codexSplits(unit.lines)) {
      const needed = codexNeeded(split);
      if (needed.length >= MIN_NEEDED) plan.push({ session, file: unit.file, cwd: unit.cwd, cut: `${name}${split.real ? '#' : '@'}${split.before.length}`, split, needed });
    }
  }
  const halves = assignHalves(plan.map((p) => ({ id: p.session, real: plan.some((q) => q.session === p.session && q.split.real) })));
  const cuts: CutFigures[] = [];
  for (const item of plan) {
    const half = halves.get(item.session) ?? 'report';
    ctx.log(`fidelity: codex ${item.cut} (${half}${item.split.real ? ', real compaction' : ''}): ${item.needed.length} needed details`);
    const { figures } = await measureCut({ file: item.file, cut: item.cut, split: item.split, needed: item.needed, half, seed: ctx.seed, agent: { session: item.session, cwd: item.cwd, recency: codexRecency } });
    cuts.push(figures);
  }
  const agent = { prefix: 'codex ', summary: 'Codex summary' };
  const metrics: Metric[] = [];
  for (const half of ['report', 'tuning'] as const) {
    const list = cuts.filter((c) => c.half === half);
    if (list.length === 0) {
      metrics.push(metric(`codex ${half}: cuts measured`, 0, 'cuts', { note: `no Codex rollout of this half has a compaction or cut point with ≥ ${MIN_NEEDED} needed details` }));
      continue;
    }
    metrics.push(...halfMetrics(half, list, agent));
    // A cut point has no summary to sit beside: the hook's own share is the row to read there.
    metrics.push(metric(`codex ${half}: cairn's post-compact hook alone (all cuts)`, pooled(list, (c) => c.hookContext), 'share', { note: `${list.length} cuts, ${list.reduce((n, c) => n + c.needed, 0)} needed details, ~${Math.round(list.reduce((a, c) => a + c.hookContextTokens, 0) / list.length)} tokens` }));
  }
  return { cuts, sessions: units.size, metrics };
}

export const fidelitySuite: Suite = {
  name: 'fidelity',
  description: 'share of post-/compact exact details restored: Claude Code summary vs cairn (per budget and ranker) vs both vs a recency cut; tuning and report halves; the same on Codex rollouts (codex rows)',
  async run(ctx: BenchContext): Promise<SuiteOutcome> {
    const root = join(ctx.dataDir, 'transcripts', 'claude-code');
    if (!existsSync(root)) return { status: 'skipped', reason: `no transcripts at ${root} (the shared data folder)` };
    const hash = createHash('sha256');
    // One unit per session and agent: the longest file (some fixtures hold a session's prefix too).
    const units = new Map<string, Unit>();
    for (const file of transcriptFiles(root)) {
      const text = readFileSync(file, 'utf8');
      const unit = unitOf(file, text);
      if (!unit) continue;
      const known = units.get(unit.key);
      if (!known || known.lines.length < unit.lines.length) units.set(unit.key, unit);
    }
    const plan: Array<{ unit: Unit; cut: string; split: CompactSplit; needed: string[] }> = [];
    for (const unit of [...units.values()].sort((a, b) => a.file.localeCompare(b.file))) {
      hash.update(unit.lines.join('\n'));
      const name = basename(unit.file, '.jsonl');
      const cuts = cutPoints(unit.lines);
      const splits = [...splitAtCompactions(unit.lines).map((s, i) => ({ split: s, cut: `${name}#${i + 1}` })), ...cuts.map((s) => ({ split: s, cut: `${name}@${s.before.length}` }))];
      for (const { split, cut } of splits) {
        const needed = neededDetails(split);
        if (needed.length >= MIN_NEEDED) plan.push({ unit, cut, split, needed });
      }
    }
    if (plan.length === 0) return { status: 'skipped', reason: `no compaction or cut point with ≥ ${MIN_NEEDED} needed details under ${root}` };
    const halves = assignHalves(plan.map((p) => ({ id: p.unit.sessionId, real: plan.some((q) => q.unit.sessionId === p.unit.sessionId && q.split.real) })));
    const cuts: CutFigures[] = [];
    const modelCuts: ReplayCut[] = [];
    for (const item of plan) {
      const half = halves.get(item.unit.sessionId) ?? 'report';
      ctx.log(`fidelity: ${item.cut} (${half}${item.split.real ? ', real compaction' : ''}): ${item.needed.length} needed details`);
      const { figures, candidates } = await measureCut({ file: item.unit.file, cut: item.cut, split: item.split, needed: item.needed, half, seed: ctx.seed });
      cuts.push(figures);
      modelCuts.push({ cut: item.cut, sessionId: item.unit.sessionId, half, candidates, startedAt: startOf(item.unit.lines), position: item.split.before.length, project: cwdOf(item.unit.lines) });
    }
    const metrics: Metric[] = [...halfMetrics('report', cuts.filter((c) => c.half === 'report')), ...halfMetrics('tuning', cuts.filter((c) => c.half === 'tuning'))];
    const codex = await codexPart(ctx, hash);
    metrics.push(...codex.metrics);
    // Why the default budget's context missed what it missed — tuning half only: reading the
    // report half's misses would be tuning on it.
    const tuningMisses = cuts.filter((c) => c.half === 'tuning').flatMap((c) => c.misses);
    const tally = tallyMisses(tuningMisses);
    const missNote = (n: number): string => `${n} of ${tuningMisses.length} missed`;
    metrics.push(
      metric('tuning: missed at the default budget, never captured', tally.byCause.notCaptured, 'details', { note: `${missNote(tally.byCause.notCaptured)}; ${tally.notCapturedInStoredText} still in the stored turn text` }),
      metric('tuning: missed at the default budget, captured but ranked out', tally.byCause.rankedOut, 'details', { note: missNote(tally.byCause.rankedOut) }),
      metric('tuning: missed at the default budget, captured but no line carries it', tally.byCause.rendered, 'details', { note: missNote(tally.byCause.rendered) }),
      ...Object.entries(tally.notCaptured)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 12)
        .map(([key, n]) => metric(`tuning: never captured: ${key}`, n, 'details')),
    );
    // The cuts' candidates, kept for reading and for replaying the model offline (fidelity-model.ts).
    mkdirSync(ctx.cacheDir, { recursive: true });
    writeFileSync(join(ctx.cacheDir, 'fidelity-cuts.json'), JSON.stringify(modelCuts));
    // The value model: refit on the tuning half (never the report half), scored on both with the product's packer.
    const fit = fitOnTuning(modelCuts);
    const budget = DEFAULT_HOOK_SETTINGS.sessionStartBudget;
    for (const half of ['report', 'tuning'] as const) {
      const list = modelCuts.filter((c) => c.half === half);
      for (const b of FIDELITY_BUDGETS) {
        metrics.push(metric(`${half}: model refit on the tuning half @${label(b)} (offline)`, pooledShare(list, fit.model, b), 'share', b === FIDELITY_BUDGETS[0] ? { note: `${fit.examples} examples, ${fit.positives} positive` } : {}));
      }
    }
    // Learning from use, replayed in the order the sessions happened: each session scored with what
    // earlier sessions taught (per project, and user-wide), never with its own.
    const replay: Record<string, ReturnType<typeof replayLearning>> = {};
    for (const b of [budget, 2000]) {
      for (const scope of ['project', 'user'] as const) {
        const steps = replayLearning(modelCuts, DEFAULT_VALUE_MODEL, b, scope);
        replay[`${scope}@${b}`] = steps;
        for (const half of ['report', 'tuning'] as const) {
          metrics.push(...replayRows(`${half}: learn from use @${label(b)}, ${scope === 'user' ? 'user-wide' : 'per project'}`, steps.filter((s) => s.half === half)));
        }
      }
    }
    const dataset: Dataset = {
      name: `claude-code transcripts: ${units.size} sessions/agents, ${cuts.filter((c) => c.real).length} real compactions, ${cuts.filter((c) => !c.real).length} cut points; codex rollouts: ${codex.sessions} sessions, ${codex.cuts.filter((c) => c.real).length} real compactions, ${codex.cuts.filter((c) => !c.real).length} cut points`,
      sha256: hash.digest('hex'),
      generator: null,
      buildMs: null,
      cachedBuildMs: null,
    };
    // `sessions`: the real compactions in the shape the fidelity chart reads.
    const sessions = cuts
      .filter((c) => c.real && c.atSummary)
      .map((c) => ({ session: `${c.cut} (${c.half})`, needed: c.needed, summary: c.summary ?? 0, cairn: c.atSummary?.cairn ?? {}, summaryPlusCairn: c.atSummary?.summaryPlusCairn ?? 0, recency: c.atSummary?.recency ?? 0 }));
    return {
      status: 'ok',
      datasets: [dataset],
      metrics,
      details: { sessions, cuts, codexCuts: codex.cuts, model: { shipped: DEFAULT_VALUE_MODEL, refit: fit.model, refitTop: topWeights(fit.model), examples: fit.examples, positives: fit.positives }, replay, defaultBudget: DEFAULT_HOOK_SETTINGS.sessionStartBudget, halves: Object.fromEntries(halves), neededTotal: cuts.reduce((n, c) => n + c.needed, 0) },
    };
  },
};
