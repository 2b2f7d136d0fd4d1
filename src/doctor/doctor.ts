import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Cairn } from '../cairn.js';
import { readCores } from '../context/core.js';
import { searchEmbedder } from '../deps.js';
import { sameModel, switchStatus } from '../embed/switch.js';
import type { EmbedderIdentity } from '../types.js';

export type CheckStatus = 'ok' | 'warn' | 'fail';

export interface DoctorCheck {
  check: string;
  status: CheckStatus;
  detail: string;
  /** What to do about it (absent when ok). */
  advice?: string;
}

export interface DoctorInput {
  cairn: Cairn;
  /** The data home (for logs). */
  home: string;
  /** Claude Code settings files to look for cairn's hooks in. */
  claudeSettings: string[];
  /** The embedder the configuration asks for, if any. */
  configuredEmbedder: string | null;
  /** Why there is no embedder although none was turned off (the default model's files are missing or damaged). */
  embedderNote?: string;
  now: number;
}

const DAY = 86_400_000;

/**
 * The index holds another model than the configured one: a switch is under way (warn, with its
 * progress and what recall searches meanwhile), or the store cannot stage one (fail).
 */
async function switchCheck(cairn: Cairn, index: EmbedderIdentity, embedder: EmbedderIdentity): Promise<DoctorCheck> {
  const head = `the vector index holds ${index.model}, the configured embedder is ${embedder.model}`;
  if (!cairn.deps.store.vectorStaging) return { check: 'embedder', status: 'fail', detail: head, advice: 'run `cairn reindex`' };
  const under = await switchStatus(cairn.deps.store);
  const staged = under && sameModel(under.to, embedder) ? under.staged : 0;
  const memories = under?.memories ?? (await cairn.deps.store.stats()).memories;
  const searching = await searchEmbedder(cairn.deps);
  const recall = searching && sameModel(searching, index) ? `recall searches ${index.model}'s vectors meanwhile` : `recall runs on BM25 alone meanwhile (${index.model} cannot be loaded here)`;
  return {
    check: 'embedder',
    status: 'warn',
    detail: `${head}: switching, ${staged} of ${memories} memories have the new vector; ${recall}`,
    advice: 'the background fill continues the switch after ingests and `cairn remember` and swaps the index at once when complete; `cairn reindex` finishes it now',
  };
}

/** Integrity and setup checks with repair advice (`cairn doctor`). Reads only; changes nothing. */
export async function doctor(input: DoctorInput): Promise<DoctorCheck[]> {
  const { cairn } = input;
  const checks: DoctorCheck[] = [];
  const status = await cairn.status({ verify: true });
  checks.push({ check: 'store', status: 'ok', detail: `${status.store.name} at ${status.store.location}, schema v${status.stats.schemaVersion}, ${status.stats.active} active memories` });

  const problems = (await cairn.deps.store.integrityCheck?.()) ?? [];
  if (problems.length === 0) checks.push({ check: 'integrity', status: 'ok', detail: 'database, full-text index and vectors are consistent' });
  for (const p of problems) checks.push({ check: p.check, status: 'fail', detail: p.problem, advice: p.advice });

  const indexModel = status.stats.vectorModel;
  if (status.embedder?.unavailable) {
    checks.push({ check: 'embedder', status: 'fail', detail: `${status.embedder.model} is unavailable, recall runs on BM25 alone: ${status.embedder.unavailable}`, advice: 'fetch the model again as the detail says; nothing stored was changed' });
  } else if (indexModel && status.embedder && (indexModel.model !== status.embedder.model || indexModel.dimension !== status.embedder.dimension)) {
    checks.push(await switchCheck(cairn, indexModel, status.embedder));
  } else if (input.configuredEmbedder === null && input.embedderNote) {
    checks.push({ check: 'embedder', status: 'warn', detail: `recall runs on BM25 alone: ${input.embedderNote}`, advice: 'fetch the model as the detail says, or set "embedder": null in config.json to keep BM25 alone; nothing stored was changed' });
  } else if (input.configuredEmbedder === null) {
    checks.push({ check: 'embedder', status: 'ok', detail: 'turned off ("embedder": null or none): recall runs on BM25 (full-text) alone' });
  } else if (status.stats.vectors < status.stats.memories) {
    checks.push({
      check: 'embedder',
      status: 'warn',
      detail: `${status.embedder?.model ?? input.configuredEmbedder}: ${status.stats.memories - status.stats.vectors} memories wait for a vector (found by BM25 meanwhile)`,
      advice: 'the background fill embeds them after the next ingest or in an idle MCP server; `cairn reindex --fill` does it now',
    });
  } else checks.push({ check: 'embedder', status: 'ok', detail: `${status.embedder?.model ?? input.configuredEmbedder}, ${status.stats.vectors} vectors` });
  for (const warning of status.stats.warnings ?? []) checks.push({ check: 'store', status: 'warn', detail: warning });

  const settings = input.claudeSettings.filter((path) => existsSync(path)).map((path) => ({ path, text: readFileSync(path, 'utf8') }));
  const installed = settings.filter((s) => /(?:cairn(\.js)?['"]? hook|cairn-hook\.cjs['"]?) session-start/.test(s.text));
  // Written before the context came in parts: Claude Code cuts a longer one to a 2,000-character preview (src/hooks/parts.ts).
  const unparted = installed.filter((s) => !/(?:cairn(\.js)?['"]? hook|cairn-hook\.cjs['"]?) session-start --parts \d/.test(s.text));
  checks.push(
    installed.length === 0
      ? { check: 'claude code hooks', status: 'warn', detail: 'not installed: memories do not come back after /compact by themselves', advice: 'run `cairn install claude`' }
      : unparted.length > 0
        ? {
            check: 'claude code hooks',
            status: 'warn',
            detail: `installed by an earlier cairn in ${unparted.map((s) => s.path).join(', ')}: one SessionStart command, so Claude Code shows the model a 2,000-character preview of a context over 10,000 characters`,
            advice: 'run `cairn install claude` again (it registers the context in parts)',
          }
        : { check: 'claude code hooks', status: 'ok', detail: `installed in ${installed.map((s) => s.path).join(', ')}` },
  );

  for (const core of readCores(cairn.deps.core)) {
    if (core.overBudget) checks.push({ check: `core memory (${core.which})`, status: 'warn', detail: `${core.path} has ${core.lines} lines, over its budget of ${core.budget}`, advice: 'trim it with `cairn core edit`' });
  }

  const log = join(input.home, 'logs', 'hooks.log');
  if (existsSync(log)) {
    const recent = readFileSync(log, 'utf8')
      .split('\n')
      .filter((line) => line.includes('"level":"error"'))
      .filter((line) => {
        const at = Date.parse((/"t":"([^"]+)"/.exec(line) ?? [])[1] ?? '');
        return Number.isFinite(at) && input.now - at < DAY;
      });
    checks.push(
      recent.length === 0
        ? { check: 'hooks log', status: 'ok', detail: 'no hook errors in the last day' }
        : { check: 'hooks log', status: 'warn', detail: `${recent.length} hook errors in the last day; last: ${(/"error":"([^"]*)"/.exec(recent.at(-1) ?? '') ?? [])[1] ?? '?'}`, advice: `see ${log}` },
    );
  }

  if (status.stats.sizeBytes !== null && existsSync(`${status.store.location}-wal`)) {
    const wal = statSync(`${status.store.location}-wal`).size;
    if (wal > 256 * 1024 * 1024) checks.push({ check: 'write-ahead log', status: 'warn', detail: `${(wal / 1e6).toFixed(0)} MB`, advice: 'run `cairn maintain` (it checkpoints and vacuums)' });
  }
  return checks;
}
