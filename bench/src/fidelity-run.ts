/**
 * One fidelity measurement: a transcript cut at a compaction (real or chosen), cairn fed only the
 * part before it through the real hook path (pre-compact, then session-start with source
 * "compact"), and the share of needed details carried by each text at each budget.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { estimateTokens } from 'cairn-memory';
import { contextHeader, DEFAULT_HOOK_SETTINGS, gatherCandidates, loadConfig, openCairn, runHook, SESSION_START_PARTS, sessionCandidates, type Detail } from 'cairn-memory/testing';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { coverage, recencyBaseline as claudeRecency, type CompactSplit } from './fidelity.js';
import { classifyMisses, type Miss } from './fidelity-misses.js';
import { round } from './stats.js';

/** Budgets of the curve (tokens), and the rankers compared at each. */
export const FIDELITY_BUDGETS = [1000, 2000, 4000, 8000] as const;
export const FIDELITY_RANKERS = ['composite', 'recency', 'random'] as const;

export interface CutFigures {
  /** `<file>#<n>` for a real compaction, `<file>@<share>` for a chosen cut. */
  cut: string;
  sessionId: string;
  half: 'tuning' | 'report';
  real: boolean;
  trigger: string | null;
  needed: number;
  /** Claude Code's summary: its tokens and share (real compactions only). */
  summaryTokens: number | null;
  /** The same counted with a real tokenizer (o200k_base, gpt-tokenizer): the unit of the equal-token comparison. */
  summaryRealTokens: number | null;
  /** Real tokens of cairn's context at the summary's token count (≤ summaryRealTokens). */
  cairnRealTokens: number | null;
  summary: number | null;
  /** What the session-start hook injected (default budget), and its tokens. */
  hookContext: number;
  hookContextTokens: number;
  /** Summary + the hook's context (real compactions only). */
  summaryPlusHook: number | null;
  /**
   * After a manual /compact Claude Code shows PreCompact's output in the new window (the command's
   * output line, test/hooks/fixtures/claude-code-2.1.197-compact), and the hook leaves what it listed
   * out: the hook's text with that echo, and summary + both. Null when nothing is echoed (automatic
   * compactions, chosen cuts).
   */
  hookWithEcho: number | null;
  summaryPlusHookWithEcho: number | null;
  /** At the summary's token count (real compactions only): cairn per ranker, recency, summary + cairn. */
  atSummary: { cairn: Record<string, number>; recency: number; summaryPlusCairn: number } | null;
  /** Per budget: cairn per ranker, and a recency cut of the conversation. */
  byBudget: Record<string, { cairn: Record<string, number>; recency: number }>;
  /** Needed details no text carried (for reading, capped). */
  missedByCairn: string[];
  /** Needed details that no candidate line holds at all (no budget would carry them), for reading, capped; and their count. */
  notCandidates: string[];
  notCandidatesCount: number;
  /**
   * The product's own learn-from-use on this cut (src/context/use.ts): after the hook, the rest of
   * the session ingested with `measureUse` — items the hook injected, how many the agent used
   * afterwards, the needed details it found and how many nothing injected carried.
   */
  product: { injected: number; used: number; needed: number; missed: number } | null;
  /** Each needed detail the hook's text (default budget) left out, with its cause (fidelity-misses.ts). */
  misses: Miss[];
}

async function hook(event: string, input: Record<string, unknown>, home: string, parts?: { parts: number; part: number }): Promise<string> {
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await runHook(event, { stdin: Readable.from([JSON.stringify(input)]), stdout, env: { CAIRN_HOOK_INLINE: '1' }, cwd: home, home, ...(parts ? { parts } : {}) });
  return out;
}

/**
 * The session-start text the model reads from Claude Code as `cairn install claude` wires it: the
 * context in SESSION_START_PARTS parts, one per command, each within the client's 10,000-character
 * cap (src/hooks/parts.ts), joined as the client joins them.
 */
async function sessionStartText(input: Record<string, unknown>, home: string): Promise<string> {
  const texts = [additionalContext(await hook('session-start', input, home, { parts: SESSION_START_PARTS, part: 1 }))];
  for (let part = 2; part <= SESSION_START_PARTS; part++) texts.push(additionalContext(await hook('session-start', input, home, { parts: SESSION_START_PARTS, part })));
  return texts.filter((t) => t.length > 0).join('\n');
}

function additionalContext(stdout: string): string {
  try {
    return (JSON.parse(stdout) as { hookSpecificOutput?: { additionalContext?: string } }).hookSpecificOutput?.additionalContext ?? '';
  } catch {
    return '';
  }
}

export interface MeasureInput {
  file: string;
  cut: string;
  split: CompactSplit;
  needed: string[];
  half: 'tuning' | 'report';
  seed: number;
  /**
   * Another agent's transcript (Codex): its session and folder, and its recency cut. Claude Code's
   * are read from the lines. Misses are classified for Claude Code's transcripts only.
   */
  agent?: { session: string; cwd: string | null; recency: (split: CompactSplit, tokens: number) => string };
}

/** A cut's candidate details as the context saw them, for fitting and replaying the value model offline. */
export interface CutCandidates {
  details: Detail[];
  endSeq: number;
  /** Tokens the context spends before the details (its header): offline packing gets the rest. */
  headerTokens: number;
  needed: string[];
}

/** Measure one cut in a throw-away home. */
export async function measureCut(input: MeasureInput): Promise<{ figures: CutFigures; candidates: CutCandidates }> {
  const { split, needed } = input;
  const work = mkdtempSync(join(tmpdir(), 'cairn-fidelity-'));
  try {
    const home = join(work, 'home');
    mkdirSync(home);
    const transcript = join(work, basename(input.file));
    const first = input.agent ? { sessionId: input.agent.session, cwd: input.agent.cwd ?? undefined } : (JSON.parse(split.before.find((l) => l.includes('"sessionId"')) ?? '{}') as { sessionId?: string; cwd?: string; agentId?: string });
    const parent = first.sessionId ?? basename(input.file, '.jsonl');
    // A subagent's transcript is its own session in cairn (the reader keys it `<parent>/agent-<id>`).
    const sessionId = 'agentId' in first && typeof first.agentId === 'string' ? `${parent}/agent-${first.agentId}` : parent;
    const recencyBaseline = input.agent?.recency ?? claudeRecency;
    const base = { session_id: sessionId, transcript_path: transcript, cwd: first.cwd ?? work };
    writeFileSync(transcript, `${split.before.join('\n')}\n`);
    const guidance = await hook('pre-compact', { ...base, hook_event_name: 'PreCompact', trigger: split.trigger ?? 'auto' }, home);
    const echo = split.real && split.trigger === 'manual' && guidance.trim().length > 0 ? guidance : null;
    writeFileSync(transcript, `${[...split.before, ...split.boundary].join('\n')}\n`);
    const hookText = await sessionStartText({ ...base, hook_event_name: 'SessionStart', source: 'compact' }, home);

    const summaryTokens = split.real ? estimateTokens(split.summary) : null;
    const summaryRealTokens = split.real ? countTokens(split.summary) : null;
    let cairnRealTokens: number | null = null;
    const { cairn } = await openCairn(loadConfig({ home, env: {} }), { cwd: base.cwd, actor: 'bench', session: sessionId });
    const byBudget: CutFigures['byBudget'] = {};
    let atSummary: CutFigures['atSummary'] = null;
    let defaultText = '';
    let candidates: CutCandidates = { details: [], endSeq: 0, headerTokens: 0, needed };
    let factTexts: string[] = [];
    let storedText = '';
    try {
      const build = async (budget: number, ranker: string): Promise<string> =>
        (await cairn.context({ budget: Math.max(50, budget), favorSession: sessionId, ranker, seed: input.seed })).markdown;
      for (const budget of FIDELITY_BUDGETS) {
        const byRanker: Record<string, number> = {};
        for (const ranker of FIDELITY_RANKERS) {
          const text = await build(budget, ranker);
          byRanker[ranker] = round(coverage(needed, text).share);
          if (ranker === 'composite' && budget === DEFAULT_HOOK_SETTINGS.sessionStartBudget) defaultText = text;
        }
        byBudget[String(budget)] = { cairn: byRanker, recency: round(coverage(needed, recencyBaseline(split, budget)).share) };
      }
      if (summaryRealTokens !== null) {
        // Equal tokens by a real tokenizer: chars/4 overcounts prose (the summary) and undercounts
        // code-heavy lines (cairn's), so the budget shrinks until cairn's text counts no more.
        const fit = async (ranker: string): Promise<string> => {
          let budget = summaryRealTokens;
          let text = await build(budget, ranker);
          for (let i = 0; i < 6 && countTokens(text) > summaryRealTokens && budget > 50; i++) {
            budget = Math.floor((budget * summaryRealTokens) / countTokens(text) * 0.99);
            text = await build(budget, ranker);
          }
          return text;
        };
        const byRanker: Record<string, number> = {};
        let composite = '';
        for (const ranker of FIDELITY_RANKERS) {
          const text = await fit(ranker);
          byRanker[ranker] = round(coverage(needed, text).share);
          if (ranker === 'composite') composite = text;
        }
        cairnRealTokens = countTokens(composite);
        let recency = recencyBaseline(split, summaryRealTokens);
        while (recency.length > 0 && countTokens(recency) > summaryRealTokens) recency = recency.slice(Math.ceil(recency.length * 0.05));
        atSummary = {
          cairn: byRanker,
          recency: round(coverage(needed, recency).share),
          summaryPlusCairn: round(coverage(needed, `${split.summary}\n${composite}`).share),
        };
      }
      const deps = cairn.deps;
      const turns = deps.store.substrate ? await deps.store.substrate.getTurns(sessionId, { limit: 50_000 }) : [];
      const memories = (await gatherCandidates(deps, { favorSession: sessionId }, { project: deps.project })).candidates.map((c) => c.memory);
      const { details, endSeq } = await sessionCandidates(deps, sessionId, turns, memories);
      candidates = { details, endSeq, headerTokens: estimateTokens(contextHeader(deps.project)), needed };
      const facts = deps.store.substrate ? await deps.store.substrate.listFacts(sessionId, { limit: 100_000 }) : [];
      factTexts = facts.map((f) => [f.text, f.path ?? '', f.note ?? '', f.kind === 'symbol' ? `${f.text}(` : ''].join('\n'));
      storedText = turns.map((t) => `${t.text}\n${t.toolInput ?? ''}`).join('\n');
    } finally {
      await cairn.close();
    }
    // The product measures the same compaction: the session goes on, `cairn ingest` reads it and
    // marks use. Real compactions only: a chosen cut has no boundary in the transcript to find.
    let product: CutFigures['product'] = null;
    if (split.real) {
      writeFileSync(transcript, `${[...split.before, ...split.boundary, ...split.after].join('\n')}\n`);
      const reopened = await openCairn(loadConfig({ home, env: {} }), { cwd: base.cwd, actor: 'bench', session: sessionId });
      try {
        await reopened.cairn.ingest([transcript], { measureUse: true, distill: false });
        const outcome = (await reopened.cairn.ledger?.outcomes({ session: sessionId }))?.at(-1);
        if (outcome) product = { injected: outcome.injected, used: outcome.used, needed: outcome.needed, missed: outcome.missed };
      } finally {
        await reopened.cairn.close();
      }
    }
    const carried = `${split.summary}\n${hookText}\n${defaultText}`;
    const figures: CutFigures = {
      cut: input.cut,
      sessionId,
      half: input.half,
      real: split.real,
      trigger: split.trigger,
      needed: needed.length,
      summaryTokens,
      summaryRealTokens,
      cairnRealTokens,
      summary: split.real ? round(coverage(needed, split.summary).share) : null,
      hookContext: round(coverage(needed, hookText).share),
      hookContextTokens: estimateTokens(hookText),
      summaryPlusHook: split.real ? round(coverage(needed, `${split.summary}\n${hookText}`).share) : null,
      hookWithEcho: echo !== null ? round(coverage(needed, `${echo}\n${hookText}`).share) : null,
      summaryPlusHookWithEcho: echo !== null ? round(coverage(needed, `${split.summary}\n${echo}\n${hookText}`).share) : null,
      atSummary,
      byBudget,
      missedByCairn: needed.filter((d) => !carried.includes(d)).slice(0, 40),
      notCandidates: [],
      notCandidatesCount: 0,
      product,
      misses: [],
    };
    const pool = candidates.details.map((d) => d.line).join('\n');
    const absent = needed.filter((d) => !pool.includes(d));
    figures.notCandidates = absent.slice(0, 60);
    figures.notCandidatesCount = absent.length;
    if (!input.agent) figures.misses = classifyMisses({ needed, hookText: `${split.summary}\n${hookText}`, candidateLines: candidates.details.map((d) => d.line), factTexts, storedText, before: split.before });
    return { figures, candidates };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
