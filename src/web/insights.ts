/**
 * What the overview shows beside the counts, read from files under the cairn home: recall
 * quality from the latest `cairn bench` result of each suite (`<home>/bench/results/<suite>.json`,
 * written by every bench run), and what the hooks did in the last sessions (`<home>/logs/hooks.log`).
 */
import { existsSync, openSync, readdirSync, readFileSync, readSync, closeSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchReport, Metric } from '../bench-report.js';
import type { Cairn } from '../cairn.js';
import { learnedForProject, type ProjectLearned } from '../context/learn.js';
import { useByProject, type ProjectUse } from '../ledger/use-summary.js';

export interface QualityResult {
  suite: string;
  description: string;
  /** The command that reproduces it, when it ran, on which commit, with which options. */
  command: string;
  date: string;
  commit: string | null;
  dirty: boolean | null;
  quick: boolean;
  load: number;
  /** The retrieval-quality figures (shares from 0 to 1). */
  metrics: Array<Pick<Metric, 'name' | 'value' | 'target' | 'anchor' | 'pass' | 'note'>>;
}

export interface Quality {
  results: QualityResult[];
  /** Where the results are read from. */
  dir: string;
  /** Commands that produce the results, for when there are none. */
  commands: string[];
}

/** The suites that measure recall quality (their figures are shares). */
const QUALITY_SUITES = ['beir', 'locomo', 'fidelity', 'peers'];

export function benchQuality(home: string | null): Quality {
  const commands = ['cairn bench beir --data ../shared/data', 'cairn bench locomo --data ../shared/data'];
  if (home === null) return { results: [], dir: '', commands };
  const dir = join(home, 'bench', 'results');
  const results: QualityResult[] = [];
  for (const file of existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')).sort() : []) {
    let report: BenchReport;
    try {
      report = JSON.parse(readFileSync(join(dir, file), 'utf8')) as BenchReport;
    } catch {
      continue; // a half-written or foreign file: not a result
    }
    for (const result of report.results ?? []) {
      const metrics = (result.metrics ?? []).filter((m) => m.unit === 'share' && m.value !== null);
      if (result.status !== 'ok' || metrics.length === 0) continue;
      results.push({
        suite: result.suite,
        description: result.description,
        command: result.env?.command ?? report.env?.command ?? `cairn bench ${result.suite}`,
        date: result.env?.date ?? report.env?.date ?? '',
        commit: result.env?.commit ?? null,
        dirty: result.env?.dirty ?? null,
        quick: report.options?.quick === true,
        load: result.load?.start ?? 0,
        metrics: metrics.map(({ name, value, target, anchor, pass, note }) => ({ name, value, target, anchor, pass, ...(note ? { note } : {}) })),
      });
    }
  }
  results.sort((a, b) => QUALITY_SUITES.indexOf(a.suite) - QUALITY_SUITES.indexOf(b.suite) || a.suite.localeCompare(b.suite));
  return { results, dir, commands };
}

export interface HookRun {
  at: number;
  event: string;
  /** What the hook gave the agent: `json`/`text` (context injected) or `none`. */
  output: string | null;
  ms: number | null;
  error: string | null;
}

export interface HookSession {
  session: string | null;
  first: number;
  last: number;
  runs: HookRun[];
}

export interface HookActivity {
  /** Where this comes from (`hook-log`: the hooks' log, which records runs but not what they injected). */
  source: 'hook-log';
  path: string;
  sessions: HookSession[];
}

/** Bytes read from the end of the log: the last sessions, without reading a large file whole. */
const TAIL_BYTES = 512 * 1024;

function tail(path: string, bytes: number): string {
  const size = statSync(path).size;
  const start = Math.max(0, size - bytes);
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(size - start);
    readSync(fd, buffer, 0, buffer.length, start);
    const text = buffer.toString('utf8');
    return start > 0 ? text.slice(text.indexOf('\n') + 1) : text;
  } finally {
    closeSync(fd);
  }
}

/** The hooks' runs in the last `limit` sessions, newest session first. */
export function hookActivity(home: string | null, limit = 8): HookActivity {
  const path = home === null ? '' : join(home, 'logs', 'hooks.log');
  if (home === null || !existsSync(path)) return { source: 'hook-log', path, sessions: [] };
  const bySession = new Map<string | null, HookSession>();
  for (const line of tail(path, TAIL_BYTES).split('\n')) {
    if (!line.trim()) continue;
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    const at = Date.parse(String(entry.t ?? ''));
    if (Number.isNaN(at)) continue;
    const failed = entry.message === 'hook failed';
    if (entry.message !== 'hook' && !failed) continue;
    const session = typeof entry.session === 'string' ? entry.session : null;
    const group = bySession.get(session) ?? { session, first: at, last: at, runs: [] };
    group.first = Math.min(group.first, at);
    group.last = Math.max(group.last, at);
    group.runs.push({
      at,
      event: String(entry.event ?? '?'),
      output: typeof entry.output === 'string' ? entry.output : null,
      ms: typeof entry.ms === 'number' ? entry.ms : null,
      error: failed ? String(entry.error ?? 'failed') : null,
    });
    bySession.set(session, group);
  }
  const sessions = [...bySession.values()].sort((a, b) => b.last - a.last).slice(0, limit);
  return { source: 'hook-log', path, sessions };
}

export interface InjectedItem {
  id: string;
  /** A memory, a session fact, or a block (core memory, the working set). */
  kind: 'memory' | 'fact' | 'block';
  /** The memory's text (first 160 characters); null for a fact, a block, or a memory no longer stored. */
  text: string | null;
  /** Whether the agent used it afterwards; null when that was not measured. */
  used: boolean | null;
}

export interface InjectionView {
  at: number;
  window: number;
  via: string;
  name: string;
  tokens: number;
  /** `context`: it went into the window; `summary`: guidance for the compaction summary. */
  target: string;
  items: InjectedItem[];
}

export interface LedgerSession {
  session: string;
  project: string | null;
  lastAt: number;
  windows: Array<{ window: number; at: number; reason: string }>;
  /** Newest last, at most {@link SHOWN_INJECTIONS}. */
  injections: InjectionView[];
  /** Injections in the ledger for this session (more than shown when it is long). */
  injectionCount: number;
  tokens: number;
  /** Whether any injection of this session says which items were used afterwards. */
  usageKnown: boolean;
  /** Whether its transcript has been ingested (so the browser can open the session). */
  ingested: boolean;
}

export interface Injections {
  /** `ledger`: what each hook and tool gave the model (the store has a ledger); `hook-log`: only that the hooks ran. */
  source: 'ledger' | 'hook-log';
  ledger: LedgerSession[];
  hookLog: HookActivity;
  /** Learn from use per project: compactions measured, items injected, share used afterwards, needed details missed, and what learning changed. */
  use: Array<ProjectUse & { learned: ProjectLearned }>;
}

const SHOWN_INJECTIONS = 40;

/**
 * What each hook and tool injected in the last `limit` sessions, from the injection ledger
 * (`cairn.ledger`, src/ledger/ledger.ts) when the store has one; the hook log comes along for
 * sessions from before the ledger.
 */
export async function injections(cairn: Cairn, home: string | null, limit = 8): Promise<Injections> {
  const hookLog = hookActivity(home, limit);
  const reader = cairn.ledger;
  if (!reader) return { source: 'hook-log', ledger: [], hookLog, use: [] };
  const sessions: LedgerSession[] = [];
  for (const info of await reader.sessions({ limit })) {
    const full = await reader.get(info.session);
    if (!full) continue;
    const shown = full.injections.slice(-SHOWN_INJECTIONS);
    const texts = new Map((await cairn.deps.store.getMemories([...new Set(shown.flatMap((i) => i.memories))])).map((m) => [m.id, m.text]));
    if (shown.some((i) => i.facts.length > 0)) {
      for (const f of (await cairn.deps.store.substrate?.listFacts(info.session, { limit: 20_000 })) ?? []) texts.set(f.id, f.text);
    }
    const ingested = (await cairn.deps.store.substrate?.getSession(info.session)) != null;
    sessions.push({
      session: info.session,
      ingested,
      project: full.project ?? info.project,
      lastAt: info.lastAt,
      windows: full.windows,
      injectionCount: full.injections.length,
      tokens: full.injections.reduce((sum, i) => sum + i.tokens, 0),
      usageKnown: full.injections.some((i) => Array.isArray(i.used)),
      injections: shown.map((i) => {
        const used = Array.isArray(i.used) ? new Set(i.used) : null;
        const item = (id: string, kind: InjectedItem['kind']): InjectedItem => ({
          id,
          kind,
          text: kind === 'block' ? null : (texts.get(id)?.slice(0, 160) ?? null),
          // Learn from use measures memories, session facts and call lines; core memory and the working set never.
          used: used && (kind !== 'block' || id.startsWith('call:')) ? used.has(id) : null,
        });
        return {
          at: i.at,
          window: i.window,
          via: i.via,
          name: i.name,
          tokens: i.tokens,
          target: i.target,
          items: [...i.memories.map((id) => item(id, 'memory')), ...i.facts.map((id) => item(id, 'fact')), ...i.blocks.map((id) => item(id, 'block'))],
        };
      }),
    });
  }
  const outcomes = await reader.outcomes();
  return { source: 'ledger', ledger: sessions, hookLog, use: useByProject(outcomes).map((p) => ({ ...p, learned: learnedForProject(outcomes, p.project) })) };
}
