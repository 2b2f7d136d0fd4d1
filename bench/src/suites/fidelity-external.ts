/**
 * `fidelity-external`: the fidelity measure (suites/fidelity.ts, the same method and code) on real
 * sessions from other repositories than ../shared's — issue #15's acceptance is measured on
 * sessions nobody tuned to. scripts/fetch-external-sessions.mjs puts them in a folder with a
 * manifest (`cairn-external-sessions/1`); `--data <that folder>` points the suite at it. Every
 * row is labelled `external`: a report set only, never used to choose anything. Summary rows exist
 * only where the set holds a real compaction with the agent's own summary.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, resolve, sep } from 'node:path';
import { DEFAULT_VALUE_MODEL } from 'cairn-memory';
import { DEFAULT_HOOK_SETTINGS, invalid } from 'cairn-memory/testing';
import { cutPoints, neededDetails, splitAtCompactions, type CompactSplit } from '../fidelity.js';
import { codexNeeded, codexRecency, codexSession, codexSplits } from '../fidelity-codex.js';
import { tallyMisses } from '../fidelity-misses.js';
import { replayLearning, replayRows, replayShare, type ReplayCut } from '../fidelity-model.js';
import { FIDELITY_BUDGETS, measureCut, type CutFigures } from '../fidelity-run.js';
import { metric } from '../metrics.js';
import type { BenchContext, Dataset, Metric, Suite, SuiteOutcome } from '../types.js';
import { cutRows, label, MIN_NEEDED, pooled, startOf, unitOf } from './fidelity.js';

export const EXTERNAL_MANIFEST_SCHEMA = 'cairn-external-sessions/1';

/** One transcript the manifest lists. */
export interface ExternalSession {
  /** The transcript's format. */
  agent: 'claude-code' | 'codex';
  /** The agent that ran the session when it is not the format's own (Cursor chats are written as Claude Code transcripts); absent: `agent`. */
  origin?: string;
  package: string;
  version: string;
  licence: string;
  /** Relative to the manifest's folder, `/`-separated. */
  path: string;
  sha256: string;
  turns: number;
  compactions: number;
}

export interface ExternalManifest {
  schema: typeof EXTERNAL_MANIFEST_SCHEMA;
  sessions: ExternalSession[];
}

/** Read and check the manifest and every transcript it lists; a one-line error names what is wrong. */
export function readExternalSet(dir: string): { manifest: ExternalManifest; files: Array<{ session: ExternalSession; file: string; text: string }> } {
  const path = join(dir, 'manifest.json');
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw invalid(`${path} is not JSON (${error instanceof Error ? error.message : String(error)}); re-run scripts/fetch-external-sessions.mjs`, 'data');
  }
  const manifest = value as Partial<ExternalManifest> | null;
  if (!manifest || manifest.schema !== EXTERNAL_MANIFEST_SCHEMA || !Array.isArray(manifest.sessions)) {
    throw invalid(`${path} is not an external-session manifest (schema "${EXTERNAL_MANIFEST_SCHEMA}" with a sessions list)`, 'data');
  }
  const root = resolve(dir);
  const files = manifest.sessions.map((session, i) => {
    const ok = session && (session.agent === 'claude-code' || session.agent === 'codex') && typeof session.path === 'string' && typeof session.sha256 === 'string';
    if (!ok) throw invalid(`${path}: session ${i} needs agent (claude-code or codex), path and sha256`, 'data');
    const file = resolve(root, ...session.path.split('/'));
    if (!file.startsWith(root + sep)) throw invalid(`${path}: session ${i} path "${session.path}" leaves the folder`, 'data');
    if (!existsSync(file)) throw invalid(`${file} is listed in the manifest but missing; re-run scripts/fetch-external-sessions.mjs`, 'data');
    const bytes = readFileSync(file);
    if (createHash('sha256').update(bytes).digest('hex') !== session.sha256) {
      throw invalid(`${file} does not match its sha256 in the manifest; re-run scripts/fetch-external-sessions.mjs`, 'data');
    }
    return { session, file, text: bytes.toString('utf8') };
  });
  return { manifest: manifest as ExternalManifest, files };
}

interface PlannedCut {
  file: string;
  cut: string;
  split: CompactSplit;
  needed: string[];
  agent?: { session: string; cwd: string | null };
  /** For the learning replay (Claude Code's cuts): the session (a subagent's is its parent's), when it started, its project. */
  replay?: { sessionId: string; startedAt: string; project: string };
}

/** Claude Code's transcripts: one unit per session and agent, split at real compactions and cut points. */
function claudePlan(files: Array<{ file: string; text: string; session: ExternalSession }>): { plan: PlannedCut[]; units: number } {
  const plan: PlannedCut[] = [];
  let units = 0;
  for (const { file, text, session } of files) {
    const unit = unitOf(file, text);
    if (!unit) continue;
    units++;
    const name = basename(file, '.jsonl');
    const splits = [...splitAtCompactions(unit.lines).map((s, i) => ({ split: s, cut: `${name}#${i + 1}` })), ...cutPoints(unit.lines).map((s) => ({ split: s, cut: `${name}@${s.before.length}` }))];
    for (const { split, cut } of splits) {
      const needed = neededDetails(split);
      // The project is the package the sessions came from (one repository), as the product keys a
      // project by its repository, not by the folder a session or worktree subagent started in.
      const replay = { sessionId: unit.sessionId, startedAt: startOf(unit.lines), project: session.package };
      if (needed.length >= MIN_NEEDED) plan.push({ file, cut, split, needed, replay });
    }
  }
  return { plan, units };
}

/** Codex rollouts: split at `compacted` lines and cut points. */
function codexPlan(files: Array<{ file: string; text: string }>): { plan: PlannedCut[]; units: number } {
  const plan: PlannedCut[] = [];
  let units = 0;
  for (const { file, text } of files) {
    const lines = text.split('\n').filter((l) => l.length > 0);
    const session = codexSession(lines);
    if (!session) continue;
    units++;
    const name = basename(file, '.jsonl');
    for (const split of codexSplits(lines)) {
      const needed = codexNeeded(split);
      if (needed.length >= MIN_NEEDED) plan.push({ file, cut: `${name}${split.real ? '#' : '@'}${split.before.length}`, split, needed, agent: { session: session.id, cwd: session.cwd } });
    }
  }
  return { plan, units };
}

/** The hook's own share over all cuts: a cut point has no summary to sit beside. */
function hookAloneRow(name: string, cuts: CutFigures[]): Metric {
  return metric(`${name}: cairn's post-compact hook alone (all cuts)`, pooled(cuts, (c) => c.hookContext), 'share', {
    note: `${cuts.length} cuts (${cuts.filter((c) => c.real).length} real), ${cuts.reduce((n, c) => n + c.needed, 0)} needed details, ~${Math.round(cuts.reduce((a, c) => a + c.hookContextTokens, 0) / Math.max(1, cuts.length))} tokens`,
  });
}

/**
 * The hook and the budget curve for one package's cuts (one repository): the set pools packages
 * of different size, agents and exports, so each is reported on its own as well.
 */
function packageRows(name: string, cuts: CutFigures[]): Metric[] {
  return [
    hookAloneRow(name, cuts),
    ...FIDELITY_BUDGETS.map((b) =>
      metric(`${name}: cairn / recency cut @${label(b)} (all cuts)`, pooled(cuts, (c) => c.byBudget[String(b)]?.cairn.composite), 'share', {
        note: `recency cut ${pooled(cuts, (c) => c.byBudget[String(b)]?.recency)?.toFixed(3) ?? '—'}`,
      }),
    ),
  ];
}

/** Why the hook missed what it missed, for a set of cuts: read to describe failures, never to choose anything. */
function missRows(name: string, cuts: CutFigures[], top: number): Metric[] {
  const misses = cuts.flatMap((c) => c.misses);
  const tally = tallyMisses(misses);
  const note = (n: number): string => `${n} of ${misses.length} missed`;
  return [
    metric(`${name}: missed at the default budget, never captured`, tally.byCause.notCaptured, 'details', { note: `${note(tally.byCause.notCaptured)}; ${tally.notCapturedInStoredText} still in the stored turn text` }),
    metric(`${name}: missed at the default budget, captured but ranked out`, tally.byCause.rankedOut, 'details', { note: note(tally.byCause.rankedOut) }),
    metric(`${name}: missed at the default budget, captured but no line carries it`, tally.byCause.rendered, 'details', { note: note(tally.byCause.rendered) }),
    ...Object.entries(tally.notCaptured)
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([key, n]) => metric(`${name}: never captured: ${key}`, n, 'details')),
  ];
}

/**
 * Learning from use replayed over the set in session order (issue #15 item 9): each cut scored by
 * the shipped model plus what EARLIER sessions of its project taught, never its own session's.
 * The cuts' candidates are kept as `fidelity-external-cuts.json` in the bench cache for offline replays.
 *
 * The weight of what earlier sessions needed (`usedBefore`) is the one number chosen on this set:
 * on the replay of its tuning repositories ({@link learnHalf}), so the rows of its report
 * repositories are the held-out figure; `kind weights only` is the learning without it.
 */
function learnReplay(ctx: BenchContext, cuts: ReplayCut[]): Metric[] {
  if (cuts.length === 0) return [];
  mkdirSync(ctx.cacheDir, { recursive: true });
  writeFileSync(join(ctx.cacheDir, 'fidelity-external-cuts.json'), JSON.stringify(cuts));
  const budgets = [...new Set([1000, 2000, 4000, DEFAULT_HOOK_SETTINGS.sessionStartBudget])].sort((a, b) => a - b);
  const hook = DEFAULT_HOOK_SETTINGS.sessionStartBudget;
  return budgets.flatMap((b) => {
    const name = `external: learn from use @${label(b)}${b === hook ? ' (hook default)' : ''}, per project`;
    const report = cuts.filter((c) => learnHalf(c.project) === 'report');
    const kindsOnly = replayLearning(report, DEFAULT_VALUE_MODEL, b, 'project', {}, false);
    return [
      ...replayRows(name, replayLearning(cuts, DEFAULT_VALUE_MODEL, b, 'project')),
      ...replayRows(`${name}, tuning repositories`, replayLearning(cuts.filter((c) => learnHalf(c.project) === 'tuning'), DEFAULT_VALUE_MODEL, b, 'project')),
      ...replayRows(`${name}, report repositories`, replayLearning(report, DEFAULT_VALUE_MODEL, b, 'project')),
      metric(`${name}, report repositories: kind weights only`, replayShare(kindsOnly, 'learned'), 'share', { note: 'learned without what earlier sessions needed (usedBefore)' }),
    ];
  });
}

/**
 * Which part of the external set the learning's one chosen number (`usedBefore`'s weight) was tuned
 * on: a repository is `tuning` when the first hex digit of the sha256 of its package name is below
 * 8 (fixed before any figure was computed), else `report`.
 */
export function learnHalf(project: string): 'tuning' | 'report' {
  return createHash('sha256').update(project).digest('hex').charCodeAt(0) < '8'.charCodeAt(0) ? 'tuning' : 'report';
}

export const fidelityExternalSuite: Suite = {
  name: 'fidelity-external',
  description:
    'the fidelity measure on real sessions from other repositories than ../shared (fetched by scripts/fetch-external-sessions.mjs; `--data <its folder>`): a report set, never tuned on',
  async run(ctx: BenchContext): Promise<SuiteOutcome> {
    if (!existsSync(join(ctx.dataDir, 'manifest.json'))) {
      return {
        status: 'skipped',
        reason: `no external-session manifest in ${ctx.dataDir}: run \`node scripts/fetch-external-sessions.mjs\`, then \`cairn bench fidelity-external --data ~/.cache/cairn/external-sessions\``,
      };
    }
    const { files } = readExternalSet(ctx.dataDir);
    const claude = claudePlan(files.filter((f) => f.session.agent === 'claude-code'));
    const codex = codexPlan(files.filter((f) => f.session.agent === 'codex'));
    if (claude.plan.length + codex.plan.length === 0) return { status: 'skipped', reason: `no compaction or cut point with ≥ ${MIN_NEEDED} needed details in ${ctx.dataDir}` };
    const fileOf = new Map<CutFigures, string>();
    const replayCuts: ReplayCut[] = [];
    const measure = async (list: PlannedCut[], agentName: string): Promise<CutFigures[]> => {
      const out: CutFigures[] = [];
      for (const item of list) {
        ctx.log(`fidelity-external: ${agentName} ${item.cut}${item.split.real ? ' (real compaction)' : ''}: ${item.needed.length} needed details`);
        const agent = item.agent ? { agent: { ...item.agent, recency: codexRecency } } : {};
        const { figures, candidates } = await measureCut({ file: item.file, cut: item.cut, split: item.split, needed: item.needed, half: 'report', seed: ctx.seed, ...agent });
        fileOf.set(figures, item.file);
        if (item.replay) replayCuts.push({ cut: item.cut, half: 'report', candidates, position: item.split.before.length, ...item.replay });
        out.push(figures);
      }
      return out;
    };
    const claudeCuts = await measure(claude.plan, 'claude-code');
    const codexCuts = await measure(codex.plan, 'codex');
    const metrics: Metric[] = [];
    if (claudeCuts.length > 0) {
      metrics.push(...cutRows('external', claudeCuts, { judged: true }), hookAloneRow('external', claudeCuts));
      metrics.push(...missRows('external', claudeCuts, 12));
    } else {
      metrics.push(metric('external: cuts measured', 0, 'cuts', { note: `no Claude Code transcript has a compaction or cut point with ≥ ${MIN_NEEDED} needed details` }));
    }
    const sessionOf = (c: CutFigures): ExternalSession | undefined => files.find((f) => f.file === fileOf.get(c))?.session;
    const packageOf = (c: CutFigures): string => sessionOf(c)?.package ?? '';
    const packages = [...new Set(claudeCuts.map(packageOf))];
    if (packages.length > 1) for (const p of packages) metrics.push(...packageRows(`external ${p}`, claudeCuts.filter((c) => packageOf(c) === p)));
    // Sessions another agent ran, written as Claude Code transcripts, pooled on their own as well.
    const originOf = (c: CutFigures): string => sessionOf(c)?.origin ?? sessionOf(c)?.agent ?? '';
    const origins = [...new Set(claudeCuts.map(originOf))];
    if (origins.length > 1) {
      for (const o of origins) {
        const own = claudeCuts.filter((c) => originOf(c) === o);
        metrics.push(...packageRows(`external, ${o} sessions`, own), ...missRows(`external, ${o} sessions`, own, 5));
      }
    }
    metrics.push(...learnReplay(ctx, replayCuts));
    if (codexCuts.length > 0) metrics.push(...cutRows('external codex', codexCuts, { judged: false, summary: 'Codex summary' }), hookAloneRow('external codex', codexCuts));
    // One dataset per package: what it holds, and a hash over its transcripts' hashes.
    const versions = [...new Set(files.map((f) => `${f.session.package} ${f.session.version}`))];
    const datasets: Dataset[] = versions.map((p) => {
      const own = files.filter((f) => `${f.session.package} ${f.session.version}` === p);
      const count = (agent: string): number => own.filter((f) => f.session.agent === agent).length;
      const of = (cuts: CutFigures[]): CutFigures[] => cuts.filter((c) => own.some((f) => f.file === fileOf.get(c)));
      return {
        name: `${p} (${own[0]?.session.licence ?? 'licence unknown'}): ${count('claude-code')} Claude Code transcripts (${of(claudeCuts).filter((c) => c.real).length} real compactions, ${of(claudeCuts).filter((c) => !c.real).length} cut points measured), ${count('codex')} Codex rollouts (${of(codexCuts).length} cut points measured)`,
        sha256: own.reduce((h, f) => h.update(f.session.sha256), createHash('sha256')).digest('hex'),
        generator: null,
        buildMs: null,
        cachedBuildMs: null,
      };
    });
    return {
      status: 'ok',
      datasets,
      metrics,
      details: { cuts: claudeCuts, codexCuts, neededTotal: claudeCuts.reduce((n, c) => n + c.needed, 0) },
    };
  },
};
