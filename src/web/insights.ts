/**
 * What the overview shows beside the counts, read from files under the cairn home: recall
 * quality from the latest `cairn bench` result of each suite (`<home>/bench/results/<suite>.json`,
 * written by every bench run), and what the hooks did in the last sessions (`<home>/logs/hooks.log`).
 */
import { existsSync, openSync, readdirSync, readFileSync, readSync, closeSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchReport, Metric } from '../bench/types.js';

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
