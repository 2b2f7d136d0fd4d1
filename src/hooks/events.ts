import { closeSync, openSync, readSync } from 'node:fs';
import type { Cairn } from '../cairn.js';
import { candidatePool, DEFAULT_CONTEXT_BUDGET, prepareNoQueryContext, type ContextResult } from '../context/build.js';
import { contextCachePath, readCachedContext, RecordingFileReader, writeCachedContext, type ContextCacheKey } from '../context/cache.js';
import type { PreparedContext } from '../context/prepare.js';
import type { RecallHit } from '../recall/recall.js';
import type { Memory } from '../types.js';
import { estimateTokens } from '../tokens.js';
import { detectFormat } from '../ingest/detect.js';
import type { PendingTurn } from './compact-tail.js';

/**
 * The hook events cairn answers, by their CLI names, with Claude Code's and Gemini CLI's names as
 * aliases. `before-model` is Gemini CLI's BeforeModel: the post-compression context (src/hooks/gemini.ts).
 */
export const HOOK_EVENTS = ['session-start', 'prompt', 'pre-compact', 'stop', 'session-end', 'subagent-stop', 'before-model'] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

const ALIASES: Record<string, HookEvent> = {
  sessionstart: 'session-start',
  'session-start': 'session-start',
  userpromptsubmit: 'prompt',
  prompt: 'prompt',
  'user-prompt-submit': 'prompt',
  precompact: 'pre-compact',
  'pre-compact': 'pre-compact',
  stop: 'stop',
  sessionend: 'session-end',
  'session-end': 'session-end',
  subagentstop: 'subagent-stop',
  'subagent-stop': 'subagent-stop',
  // Gemini CLI's names.
  beforeagent: 'prompt',
  precompress: 'pre-compact',
  afteragent: 'stop',
  beforemodel: 'before-model',
  'before-model': 'before-model',
};

export function parseHookEvent(name: string): HookEvent | null {
  return ALIASES[name.toLowerCase()] ?? null;
}

/** Claude Code's hook input (every field optional: hooks tolerate missing and unknown fields). */
export interface HookInput {
  session_id?: string;
  transcript_path?: string;
  cwd?: string;
  hook_event_name?: string;
  /** SessionStart: startup | resume | clear | compact */
  source?: string;
  /** PreCompact: manual | auto */
  trigger?: string;
  custom_instructions?: string;
  /** UserPromptSubmit */
  prompt?: string;
  [key: string]: unknown;
}

/** What a hook prints: JSON for Claude Code, plain text (pre-compact), or nothing. */
export type HookOutput = { kind: 'json'; value: Record<string, unknown> } | { kind: 'text'; value: string } | { kind: 'none' };

export interface HookSettings {
  /** session-start context budget in tokens. @default DEFAULT_CONTEXT_BUDGET (4000, from the fidelity curve) */
  sessionStartBudget: number;
  /**
   * session-start budget right after /compact, for the compacted session's details. @default 5000:
   * on the tuning half of the shared transcripts the share of needed details grows 0.79 / 0.89 /
   * 0.94 / 0.95 / 0.97 at 3K / 4K / 5K / 6K / 8K; past 5K each 1K adds under 0.02 (docs/BENCHMARKS.md, fidelity).
   */
  compactBudget: number;
  /**
   * After /compact the budget grows with the session: the whole context gets `share` × the rough
   * tokens of the compacted session's own candidate lines, never under `compactBudget`, never over
   * `max` (src/context/session-context.ts `sizedBudget`). @default { share: 0.85, max: 16000 }:
   * 0.85 is the largest share of its own pool at which a tuning-half cut of ../shared (pool above
   * the 5K floor) reached 95% of its own ceiling (0.83, rounded up); the tuning half has no session
   * long enough to reach the top, so 16,000 is the top of the curve the suite measures (8% of a
   * 200K-token window), not a fitted value (docs/BENCHMARKS.md, fidelity: "A budget sized to the
   * session"). `null`: the fixed `compactBudget`.
   */
  compactSizing: { share: number; max: number } | null;
  /** prompt hook budget. @default 300 */
  promptBudget: number;
  /** A prompt hit must score at least this (composite score). @default 0.45 */
  promptMinScore: number;
  /** …and match at least this share of the prompt's terms, or this cosine. */
  promptMinCoverage: number;
  promptMinCosine: number;
  /** pre-compact must-keep list budget. @default 600 */
  preCompactBudget: number;
  /**
   * The most characters the session-start text may hold, whatever its token budget: a client that
   * caps one hook's text (Claude Code: 10,000 characters a hook) gets it in parts, so the hook is
   * told how many (src/hooks/parts.ts). A longer context is packed again into a smaller budget.
   * Unset: no limit (Codex and Gemini CLI take the whole text).
   */
  maxChars?: number;
}

export const DEFAULT_HOOK_SETTINGS: HookSettings = {
  sessionStartBudget: DEFAULT_CONTEXT_BUDGET,
  compactBudget: 5000,
  compactSizing: { share: 0.85, max: 16_000 },
  promptBudget: 300,
  promptMinScore: 0.45,
  promptMinCoverage: 0.34,
  promptMinCosine: 0.55,
  preCompactBudget: 600,
};

/** Whether a recall hit is relevant enough to interrupt the agent with it. */
export function relevantToPrompt(hit: RecallHit, settings: HookSettings): boolean {
  if (hit.memory.kind === 'continuation') return false;
  if (hit.score < settings.promptMinScore) return false;
  return hit.why.coverage >= settings.promptMinCoverage || (hit.why.cosine ?? 0) >= settings.promptMinCosine;
}

/** Ids of a context result: memories, session facts, and blocks without an id (core memory, the working set). */
export function contextItems(result: Pick<ContextResult, 'sections' | 'details'>): { memories: string[]; facts: string[]; blocks: string[] } {
  const memories = new Set(result.sections.flatMap((s) => s.ids));
  const facts = new Set<string>();
  for (const detail of result.details ?? []) {
    if (detail.memoryId) memories.add(detail.memoryId);
    if (detail.factId) facts.add(detail.factId);
  }
  return {
    memories: [...memories],
    facts: [...facts],
    // Call lines (`call:name`) too, so learn from use can tell whether the agent used them.
    blocks: [...result.sections.filter((s) => s.name.startsWith('core:') || s.name === 'working-set').map((s) => s.name), ...(result.details ?? []).filter((d) => d.key.startsWith('call:')).map((d) => d.key)],
  };
}

/** Marks a PreCompact injection whose output the client shows in the next window (a manual /compact). */
export const ECHOED_BLOCK = 'echoed-after-compact';

/**
 * Claude Code shows a manual /compact's PreCompact output in the new context window (as the
 * command's output): what that guidance listed is in the window, so the post-compact context
 * leaves it out. After an automatic compaction only the summary carries it, so it is given again.
 */
async function carryEchoedGuidance(ledger: NonNullable<Cairn['ledger']>, session: string, previousWindow: number): Promise<boolean> {
  const guidance = (await ledger.injections(session, { window: previousWindow, target: 'summary' })).filter((i) => i.name === 'pre-compact').at(-1);
  if (!guidance || !guidance.blocks.includes(ECHOED_BLOCK)) return false;
  await ledger.record({ session, via: 'hook', name: 'pre-compact', memories: guidance.memories, facts: guidance.facts, tokens: guidance.tokens });
  return guidance.memories.length + guidance.facts.length > 0;
}

/** The precomputed session-start context (src/context/cache.ts): where it lives and what it is keyed to. */
export interface SessionStartCache {
  /** The data home (entries under `cache/context/`). */
  home: string;
  /** The store's generation now; null when the store has none (then nothing is cached). */
  generation: () => string | null;
  /** The code and configuration that build contexts (package version, module stamps, embedder spec). */
  code: string;
  /** Told whether the cache served (`hit`) or why not (`miss: …`), for the hook's log. */
  onLookup?: (outcome: string) => void;
}

function startupKey(cairn: Cairn, settings: HookSettings, cache: SessionStartCache): ContextCacheKey {
  return { kind: 'startup', project: cairn.deps.project, workspaceRoot: cairn.deps.workspaceRoot, budget: settings.sessionStartBudget, code: cache.code };
}

/**
 * Whether `session` starts from nothing: no turns, no memories of its own. Then its session-start
 * context is the project's startup context, which does not depend on the session.
 */
async function startsFromNothing(cairn: Cairn, session: string | null): Promise<boolean> {
  if (session === null) return true;
  const { store, project } = cairn.deps;
  const substrate = store.capabilities.substrate ? store.substrate : undefined;
  if (substrate && (await substrate.getTurns(session, { limit: 1 })).length > 0) return false;
  return (await store.listMemories({ project, session, limit: 1 })).length === 0;
}

/**
 * Gather and prepare the startup context of `cairn`'s project and store it for the next
 * SessionStart, when the store did not change meanwhile. Run off the agent's critical path
 * (`cairn hook refresh-context`, after a Stop / SessionEnd ingest). Nothing is touched or
 * recorded: this is groundwork, not an injection. Returns whether an entry was written.
 */
export async function refreshStartupContext(cairn: Cairn, settings: HookSettings, cache: SessionStartCache): Promise<boolean> {
  const before = cache.generation();
  if (before === null) return false;
  const builtAt = cairn.deps.clock.now();
  const files = new RecordingFileReader(cairn.deps.workspaceRoot);
  const prepared = await prepareNoQueryContext(cairn.deps, files);
  if (cache.generation() !== before) return false;
  const key = startupKey(cairn, settings, cache);
  writeCachedContext(contextCachePath(cache.home, key), { key, generation: before, files: files.files(), builtAt, prepared });
  return true;
}

function compactKey(cairn: Cairn, settings: HookSettings, cache: SessionStartCache, session: string): ContextCacheKey {
  return { kind: 'compact', session, project: cairn.deps.project, workspaceRoot: cairn.deps.workspaceRoot, budget: settings.compactBudget, code: cache.code };
}

/**
 * Gather the candidate pool of `session`'s context after /compact and store it for its
 * SessionStart(compact), when the store did not change meanwhile. Run by the PreCompact hook's
 * detached child (`cairn hook prepare-compact`) while the client compacts (an LLM call of several
 * seconds). Only the pool is kept — the memories the context's queries return: the session's
 * details depend on the compaction summary, which the client writes into the transcript after
 * PreCompact and the SessionStart hook ingests. Nothing is touched or recorded. Returns whether an
 * entry was written.
 */
export async function prepareCompactContext(cairn: Cairn, settings: HookSettings, cache: SessionStartCache, session: string): Promise<boolean> {
  const before = cache.generation();
  if (before === null) return false;
  const builtAt = cairn.deps.clock.now();
  // The filter the context builder uses (src/context/build.ts buildContext).
  const filter = cairn.deps.project === null ? { project: null } : { project: cairn.deps.project };
  const pool = await candidatePool(cairn.deps, { favorSession: session }, filter);
  if (cache.generation() !== before) return false;
  const key = compactKey(cairn, settings, cache, session);
  const candidates = pool.map((memory) => ({ memory, bm25Rank: null, bm25: null, vectorRank: null, cosine: null, rrf: 0, coverage: 0 }));
  writeCachedContext(contextCachePath(cache.home, key), { key, generation: before, files: [], builtAt, prepared: { candidates, maxRrf: 0, bm25Max: 0, cosineMax: null, items: {} } });
  return true;
}

/**
 * After /compact, what the store was when the SessionStart hook started, before it ingested the
 * transcript's new lines (the compaction summary): the pool prepared at PreCompact is used when it
 * was made at this generation and that ingest wrote no memory (it may add turns and session facts,
 * which are read from the store as always). `generation` null: not usable, `reason` says why.
 */
export interface CompactStart {
  generation: string | null;
  reason?: string;
  /** The compaction lines the hook read from the transcript and left to a detached ingest (src/hooks/compact-tail.ts): the context is built with them. */
  pendingTurns?: PendingTurn[];
}

/**
 * session-start: the context for this session; after /compact it favours the compacted session.
 * With the injection ledger, `startup`, `clear` and `compact` start a new context window and
 * `resume` continues one: what the window already holds (memories, core memory, the working set)
 * is left out, so nothing is given twice. A session that starts from nothing is served the
 * precomputed startup context when it is still valid (`cache`; see src/context/cache.ts).
 */
export async function sessionStart(cairn: Cairn, input: HookInput, settings: HookSettings, cache?: SessionStartCache, compactStart?: CompactStart): Promise<HookOutput> {
  const compacted = input.source === 'compact';
  const session = typeof input.session_id === 'string' && input.session_id.length > 0 ? input.session_id : null;
  const ledger = session ? cairn.ledger : undefined;
  // Taken before this hook writes anything (the ledger's window, touches).
  const generation = cache && !compacted ? cache.generation() : null;
  let echoed = false;
  if (ledger && session) {
    const previous = compacted ? await ledger.currentWindow(session) : null;
    await ledger.startWindow(session, typeof input.source === 'string' ? input.source : undefined);
    if (previous) echoed = await carryEchoedGuidance(ledger, session, previous.window);
  }
  const seen = ledger && session ? await ledger.seen(session) : null;
  let prepared: PreparedContext | undefined;
  if (cache && !compacted) {
    const fresh = !echoed && (!seen || (seen.memories.size === 0 && seen.facts.size === 0 && seen.blocks.size === 0)) && (await startsFromNothing(cairn, session));
    const key = startupKey(cairn, settings, cache);
    const lookup = fresh ? readCachedContext(contextCachePath(cache.home, key), key, generation) : { hit: false as const, reason: 'session has a history' };
    cache.onLookup?.(lookup.hit ? 'hit' : `miss: ${lookup.reason}`);
    if (lookup.hit) prepared = lookup.prepared;
  }
  let pool: Memory[] | undefined;
  if (cache && compacted && session) {
    const key = compactKey(cairn, settings, cache, session);
    const lookup = compactStart?.generation ? readCachedContext(contextCachePath(cache.home, key), key, compactStart.generation) : { hit: false as const, reason: compactStart?.reason ?? 'no store generation' };
    cache.onLookup?.(lookup.hit ? 'hit' : `miss: ${lookup.reason}`);
    if (lookup.hit) pool = lookup.prepared.candidates.map((c) => c.memory);
  }
  const lead = compacted
    ? 'cairn: the conversation was just compacted. These exact details were established before it (ids in brackets; the `get` tool or `cairn get ID` expands them):\n\n'
    : '';
  const build = (budget: number, sized: boolean) => cairn.context({
    budget,
    // After /compact: sized to the compacted session (a long one needs more of its details back).
    ...(sized && compacted && settings.compactSizing ? { sessionBudget: settings.compactSizing } : {}),
    // Counted with the Markdown (result.tokens), as printed: one pass over the text, not two.
    ...(lead.length > 0 ? { lead } : {}),
    ...(session ? { favorSession: session } : {}),
    touch: true,
    // The compaction summary is in the window already: its details are not given twice.
    omitSummarized: true,
    ...(seen ? { exclude: seen.memories, excludeFacts: seen.facts, core: ![...seen.blocks].some((b) => b.startsWith('core:')), workingSet: !seen.blocks.has('working-set') } : {}),
    // Gathered and prepared after the last write: only ranking and packing run here.
    ...(prepared ? { prepared } : {}),
    // After /compact: the pool gathered at PreCompact for this session and store state.
    ...(pool ? { pool } : {}),
    ...(compacted && compactStart?.pendingTurns ? { pendingTurns: compactStart.pendingTurns } : {}),
  });
  let result = await build(compacted ? settings.compactBudget : settings.sessionStartBudget, true);
  // Over the characters the client takes (in all its parts): packed again into a budget smaller by
  // the share it was over, and again if the estimate still lands over (at most twice).
  for (let again = 0; settings.maxChars !== undefined && again < 2 && lead.length + result.markdown.length > settings.maxChars; again++) {
    result = await build(Math.max(50, Math.floor(result.budget * (settings.maxChars / (lead.length + result.markdown.length)) * 0.97)), false);
  }
  if (result.markdown.length === 0) {
    if (!echoed) return { kind: 'none' };
    const note = 'cairn: the conversation was just compacted. The exact details cairn kept for it are the ones listed in the /compact output above; nothing else in memory is new to this session.';
    return { kind: 'json', value: { hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: note } } };
  }
  const text = `${lead}${result.markdown}`;
  // The printed text's tokens: the context counted them with the lead (a pass over ~16K characters saved).
  if (ledger && session) await ledger.record({ session, via: 'hook', name: 'session-start', ...contextItems(result), tokens: result.tokens });
  return {
    kind: 'json',
    value: { hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: text } },
  };
}

/**
 * prompt: the few memories relevant to the prompt, above a threshold, within a small budget —
 * leaving out what the session's context window already holds (the injection ledger).
 */
export async function promptSubmit(cairn: Cairn, input: HookInput, settings: HookSettings): Promise<HookOutput> {
  const prompt = typeof input.prompt === 'string' ? input.prompt.trim() : '';
  if (prompt.length < 3 || prompt.startsWith('/')) return { kind: 'none' };
  const session = typeof input.session_id === 'string' && input.session_id.length > 0 ? input.session_id : null;
  const ledger = session ? cairn.ledger : undefined;
  const seen = ledger && session ? await ledger.seen(session) : null;
  const { hits } = await cairn.recall({ query: prompt.slice(0, 2000), k: 8, touch: false, checkFiles: false });
  const chosen: string[] = [];
  const ids: string[] = [];
  let used = estimateTokens('cairn memories relevant to this prompt:\n');
  for (const hit of hits) {
    if (!relevantToPrompt(hit, settings)) continue;
    if (seen?.memories.has(hit.memory.id)) continue;
    const line = `- ${hit.memory.text.replace(/\s*\n\s*/g, ' ⏎ ')} [${hit.memory.id}]`;
    const cost = estimateTokens(`${line}\n`);
    if (used + cost > settings.promptBudget) continue;
    used += cost;
    chosen.push(line);
    ids.push(hit.memory.id);
  }
  if (chosen.length === 0) return { kind: 'none' };
  await cairn.deps.store.touch(ids, cairn.deps.clock.now(), true);
  if (ledger && session) await ledger.record({ session, via: 'hook', name: 'prompt', memories: ids, tokens: used });
  return {
    kind: 'json',
    value: {
      hookSpecificOutput: {
        hookEventName: 'UserPromptSubmit',
        additionalContext: `cairn memories relevant to this prompt:\n${chosen.join('\n')}`,
      },
    },
  };
}

/**
 * Whether the client puts PreCompact's output into its compaction request. Claude Code appends it
 * to the summary's instructions. Codex (0.171: PreCompact output is continue / stopReason /
 * systemMessage only, and its compaction prompt is fixed — test/e2e/codex-compact.test.ts) does
 * not, so a list printed there reaches no model and must not be recorded as given to the summary.
 * Told apart by the transcript the hook names.
 */
function guidanceReachesSummary(input: HookInput): boolean {
  const path = input.transcript_path;
  if (typeof path !== 'string' || path.length === 0) return true;
  let fd: number | null = null;
  try {
    fd = openSync(path, 'r');
    const head = Buffer.alloc(64 * 1024);
    const read = readSync(fd, head, 0, head.length, 0);
    const detected = detectFormat(path, head.subarray(0, read).toString('utf8'));
    return detected.format === null || detected.format === 'claude-code';
  } catch {
    return true;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/** pre-compact: the must-keep details, appended by Claude Code to its compaction instructions. */
export async function preCompact(cairn: Cairn, input: HookInput, settings: HookSettings): Promise<HookOutput> {
  // Other clients (Codex): the hook still ingested, and its child still prepares the post-compact pool.
  if (!guidanceReachesSummary(input)) return { kind: 'none' };
  const result = await cairn.context({
    budget: settings.preCompactBudget,
    core: false,
    ...(input.session_id ? { favorSession: input.session_id } : {}),
  });
  const items = result.markdown
    .split('\n')
    .filter((line) => line.startsWith('- '))
    .map((line) => line.replace(/ \[[0-9A-Z]{26}\]$/, ''));
  if (items.length === 0) return { kind: 'none' };
  const value = `Keep these exact details verbatim in the summary (signatures, file:line locations, commands, the user's corrections):\n${items.join('\n')}\n`;
  // Guidance for the compaction request, not part of the next context window.
  const session = typeof input.session_id === 'string' && input.session_id.length > 0 ? input.session_id : null;
  if (cairn.ledger && session) {
    const { memories, facts, blocks } = contextItems(result);
    // A manual /compact shows this output in the next window too (see carryEchoedGuidance).
    if (input.trigger === 'manual') blocks.push(ECHOED_BLOCK);
    await cairn.ledger.record({ session, via: 'hook', name: 'pre-compact', target: 'summary', memories, facts, blocks, tokens: estimateTokens(value) });
  }
  return { kind: 'text', value };
}
