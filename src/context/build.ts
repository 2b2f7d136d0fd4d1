import { invalid } from '../errors.js';
import type { Deps } from '../deps.js';
import type { CorePaths } from './core.js';
import type { RankerRegistry } from './rankers.js';
import { admissible } from '../recall/isolation.js';
import { termCoverage } from '../recall/recall.js';
import { FileReader } from '../workspace/files.js';
import { retrieve } from '../recall/retrieve.js';
import { fusionWeights } from '../recall/fusion.js';
import type { Kind, Memory, MemoryFilter, TurnRecord } from '../types.js';
import { coreForInjection, readCores } from './core.js';
import type { Candidate, RankContext } from './rankers.js';
import { estimateTokens } from '../tokens.js';
import { packSession, type ChosenDetail, type SessionBudget } from './session-context.js';
import { LEARN_FROM_LAST, learnedDelta, learnedDetails } from './learn.js';
import { adjusted, DEFAULT_VALUE_MODEL, type ValueModel } from './value-model.js';
import { workingSetLines, workingSetOf } from './working-set.js';
import { itemLine, prepareContext, prepareItem, preparedTerms, type PreparedContext } from './prepare.js';

export interface ContextInput {
  /** What the agent is about to do; without it, the session's and project's most valuable memories. */
  query?: string;
  /** Token budget for the whole Markdown (estimated o200k tokens, src/tokens.ts), any size from 50 to 200,000. @default DEFAULT_CONTEXT_BUDGET (4000) */
  budget?: number;
  /**
   * Grow `budget` with the favoured session's size when it has a history and there is no query
   * (the session-start hook after /compact: src/hooks/events.ts `compactSizing`): the whole context
   * gets `share` × the rough tokens of the session's own candidate lines, at least `budget`, at most
   * `max` (≤ 200,000). Without it — `cairn context --budget N` — the budget is exactly `budget`.
   * The result's `budget` is the one packed into.
   */
  sessionBudget?: SessionBudget;
  /** Ranker name from the registry. @default 'composite' */
  ranker?: string;
  /** Memories of this session are favoured (after /compact: the session that was just compacted). */
  favorSession?: string | null;
  /** Include core memory files. @default true */
  core?: boolean;
  /** Seed for the random ranker. @default 1 */
  seed?: number;
  /** Candidates considered. @default 120 with a query, 300 without */
  candidates?: number;
  /** Count included memories as accessed. @default false */
  touch?: boolean;
  /** Memory ids the agent already has in this context window (the injection ledger): left out. */
  exclude?: ReadonlySet<string>;
  /** Session fact ids the agent already has in this context window: left out of a session's details. */
  excludeFacts?: ReadonlySet<string>;
  /** Include the favoured session's working set (its details, after /compact). @default true */
  workingSet?: boolean;
  /** The value-per-token model for a session's details (learned adjustments applied). @default DEFAULT_VALUE_MODEL */
  valueModel?: ValueModel;
  /**
   * Learn from use: adjust the value model by what this project's earlier compactions showed
   * (src/context/learn.ts: the use rate per fact kind, shrunk and bounded, nothing before two
   * measured compactions; and the details other sessions of the project needed again after theirs,
   * the `usedBefore` feature). On by default since replayed in session order it raised the share on
   * the report half and the external set at the 4K default (docs/BENCHMARKS.md, fidelity and
   * fidelity-external); `false` packs with the shipped model alone. Ignored when `valueModel` is given.
   * @default true
   */
  learnFromUse?: boolean;
  /**
   * Leave out a session detail that the favoured session's latest compaction summary already holds
   * verbatim: after /compact that summary is in the agent's context window, so repeating its details
   * spends the budget twice (the session-start hook sets this). @default false
   */
  omitSummarized?: boolean;
  /** Reads files for the staleness checks (a recording reader tells a cache which files the context depends on). @default a new FileReader */
  files?: FileReader;
  /**
   * The candidates gathered and prepared ahead of time for this very store state (no query, no
   * favoured session's history, nothing excluded: src/context/cache.ts checks that); ranking and
   * packing still run here, with this build's clock.
   */
  prepared?: PreparedContext;
  /**
   * What {@link candidatePool} returns for this very input and store state, read ahead of time
   * (after /compact: the pool the PreCompact hook's detached child gathered, src/hooks/events.ts);
   * used instead of running its queries. Exclusions and project isolation still apply here.
   */
  pool?: readonly Memory[];
  /**
   * Turns of the favoured session its transcript holds and the store does not yet (after /compact:
   * the compact boundary and summary whose ingest the session-start hook leaves to a detached
   * child, src/hooks/compact-tail.ts), as ingest will store them: read after the stored ones,
   * numbered on from them.
   */
  pendingTurns?: ReadonlyArray<Pick<TurnRecord, 'role' | 'text' | 'flags' | 'at'>>;
  /**
   * Text the caller prints right before the Markdown (the session-start hook's note after
   * /compact): not part of `markdown`, but counted in `tokens` (the estimate of lead + markdown,
   * 0 when there is no markdown), so the caller needs no second pass over the whole text.
   * @default ''
   */
  lead?: string;
}

/** `stored` followed by `pending`, numbered on from the last stored turn as ingest numbers them. */
function withPending(stored: readonly TurnRecord[], pending: NonNullable<ContextInput['pendingTurns']>, session: string): TurnRecord[] {
  let seq = stored.reduce((max, t) => Math.max(max, t.seq), 0);
  const line = stored.reduce((max, t) => Math.max(max, t.sourceLine), 0);
  const added = pending.map((t, i): TurnRecord => ({ id: `${session}:pending:${i}`, sessionId: session, seq: ++seq, role: t.role, text: t.text, toolName: null, toolInput: null, toolUseId: null, isError: false, flags: [...t.flags], at: t.at, sourceUuid: null, sourceLine: line + i + 1 }));
  return [...stored, ...added];
}

/** The text of a session's latest compaction summary (what the agent's context window holds after /compact), or ''. */
function latestSummary(turns: readonly TurnRecord[]): string {
  for (let i = turns.length - 1; i >= 0; i--) {
    const turn = turns[i] as TurnRecord;
    if (turn.role === 'summary' || turn.flags.includes('compact-summary')) return turn.text;
  }
  return '';
}

export interface ContextSection {
  name: string;
  tokens: number;
  ids: string[];
}

export interface ContextResult {
  markdown: string;
  tokens: number;
  budget: number;
  ranker: string;
  query: string | null;
  sections: ContextSection[];
  /** Candidates left out, and why. */
  omitted: Array<{ id: string; reason: 'budget' | 'near-duplicate'; detail?: string }>;
  warnings: string[];
  /** For a session with a history: every detail included, with the model's value (what learning from use compares against). */
  details?: ChosenDetail[];
}

type SectionKey = 'continuation' | 'rules' | 'facts';
const SECTION_TITLES: Record<SectionKey, string> = {
  continuation: 'Where we left off',
  rules: 'Corrections and rules',
  facts: 'Facts and decisions',
};
/** Share of the budget left after core that each section may take before back-filling. */
const SECTION_SHARE: Record<SectionKey, number> = { continuation: 0.25, rules: 0.4, facts: 1 };

function sectionOf(kind: Kind): SectionKey {
  if (kind === 'continuation') return 'continuation';
  if (kind === 'correction' || kind === 'procedure' || kind === 'preference') return 'rules';
  return 'facts';
}

const NEAR_DUPLICATE_JACCARD = 0.6;
const FAVOR_SESSION_BOOST = 1.5;
const STALE_FILE_FACTOR = 0.5;
/** Share of the budget (after core) the favoured session's working set may take. */
const WORKING_SET_SHARE = 0.3;
const WORKING_SET_TITLE = 'Files and commands of this session';

/**
 * Whether two term sets are near-duplicates (Jaccard ≥ `threshold`). Jaccard is at most
 * |smaller| / |larger| (shared ≤ |smaller|, union ≥ |larger|), so sets whose sizes alone rule it
 * out are not compared term by term: the same answers, for most pairs without a pass.
 */
function nearDuplicate(a: Set<string>, b: Set<string>, threshold: number): boolean {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  if (large.size === 0 || small.size / large.size < threshold) return false;
  let shared = 0;
  for (const t of small) if (large.has(t)) shared++;
  return shared / (a.size + b.size - shared) >= threshold;
}

/**
 * The memories a context considers beside those retrieved for its query: pinned memories,
 * continuation state, the favoured session's, and (without a query) the most recent and most
 * important ones — in that order, each once.
 */
export async function candidatePool(deps: Deps, input: Pick<ContextInput, 'query' | 'candidates' | 'favorSession'>, filter: MemoryFilter): Promise<Memory[]> {
  const limit = input.candidates ?? (input.query ? 120 : 300);
  const lists: Memory[][] = await Promise.all([
    deps.store.listMemories({ ...filter, pinned: true, limit: 50 }),
    deps.store.listMemories({ ...filter, kinds: ['continuation'], order: 'updated-desc', limit: 20 }),
    input.favorSession ? deps.store.listMemories({ ...filter, session: input.favorSession, order: 'updated-desc', limit }) : Promise.resolve([]),
    input.query ? Promise.resolve([]) : deps.store.listMemories({ ...filter, order: 'updated-desc', limit }),
    input.query ? Promise.resolve([]) : deps.store.listMemories({ ...filter, order: 'importance-desc', limit: Math.ceil(limit / 2) }),
  ]);
  const seen = new Set<string>();
  const pool: Memory[] = [];
  for (const list of lists) {
    for (const memory of list) {
      if (seen.has(memory.id)) continue;
      seen.add(memory.id);
      pool.push(memory);
    }
  }
  return pool;
}

/** The memories a context considers (retrieved for the query, pinned, continuation, the favoured session's, recent and important ones), less `exclude`. */
export async function gatherCandidates(deps: Deps, input: ContextInput, filter: MemoryFilter): Promise<{ candidates: Candidate[]; maxRrf: number; bm25Max: number; cosineMax: number | null }> {
  const limit = input.candidates ?? (input.query ? 120 : 300);
  const byId = new Map<string, Candidate>();
  const blank = (memory: Memory): Candidate => ({ memory, bm25Rank: null, bm25: null, vectorRank: null, cosine: null, rrf: 0, coverage: 0 });
  let maxRrf = 0;
  let bm25Max = 0;
  let cosineMax: number | null = null;
  if (input.query && input.query.trim().length > 0) {
    const retrieved = await retrieve(deps, { query: input.query, filter, limit });
    ({ maxRrf, bm25Max, cosineMax } = retrieved);
    const { fused, terms, cosines } = retrieved;
    const memories = new Map((await deps.store.getMemories(fused.map((f) => f.id))).map((m) => [m.id, m]));
    for (const hit of fused) {
      const memory = memories.get(hit.id);
      if (!memory) continue;
      byId.set(memory.id, {
        memory,
        bm25Rank: hit.ranks[0] ?? null,
        bm25: hit.scores[0] ?? null,
        vectorRank: hit.ranks[1] ?? null,
        cosine: cosines.get(hit.id) ?? null,
        rrf: hit.rrf,
        coverage: termCoverage(terms, memory),
      });
    }
  }
  for (const memory of input.pool ?? (await candidatePool(deps, input, filter))) if (!byId.has(memory.id)) byId.set(memory.id, blank(memory));
  if (input.exclude) for (const id of input.exclude) byId.delete(id);
  // Projects stay apart: other projects' memories and project-unknown sessions' never come in; user-scope rules do.
  for (const [id, c] of byId) if (!admissible(c.memory, filter.project ?? null)) byId.delete(id);
  return { candidates: [...byId.values()], maxRrf, bm25Max, cosineMax };
}

/**
 * Every candidate of this store's no-query context for `deps.project`, gathered and prepared (see
 * src/context/prepare.ts); `files` reads the files their staleness checks look at.
 */
export function prepareNoQueryContext(deps: Deps, files: FileReader, input: Pick<ContextInput, 'candidates'> = {}): Promise<PreparedContext> {
  const filter: MemoryFilter = deps.project === null ? { project: null } : { project: deps.project };
  return prepareContext(deps, (f) => gatherCandidates(deps, { ...input }, f), filter, files);
}

/** Candidates prepared per section, as a multiple of the budget left after core (in estimated tokens). */
const PREPARE_SLACK = 1.5;

/** A memory's line cost before it is prepared: text and id at ~4 characters a token. */
function roughTokens(memory: Memory): number {
  return Math.ceil((memory.text.length + 32) / 4);
}


/**
 * The context injected into an agent: core memory first, then continuation state, then
 * corrections and rules, then facts — relevant to the query (or to the session and project when
 * there is none) — packed greedily by value per token into the budget, without near-duplicates,
 * as Markdown carrying each memory's id.
 */
/** What context building needs beyond the operations' wiring: the core memory files and the rankers. */
export interface ContextDeps extends Deps {
  /** Core memory files (project and user). */
  core: CorePaths;
  rankers: RankerRegistry;
}

/**
 * The default context budget, chosen from the fidelity curve on the tuning half (share of needed
 * details at 1K/2K/4K/8K: 0.38 / 0.60 / 0.77 / 0.78 — the curve flattens after 4K; see
 * docs/BENCHMARKS.md). Claude Code's summaries it sits beside are 1,700–6,100 tokens.
 */
export const DEFAULT_CONTEXT_BUDGET = 4000;

/** A context's `tokens`: its Markdown's, with the caller's lead before it (see {@link ContextInput.lead}). */
function tokensWithLead(lead: string | undefined, markdown: string): number {
  return markdown.length > 0 && lead ? estimateTokens(`${lead}${markdown}`) : estimateTokens(markdown);
}

/** The first lines of every context (counted in its budget). */
export function contextHeader(project: string | null): string {
  return `# cairn memory${project ? ` — ${project}` : ''}\n` + '<!-- Exact findings kept across /compact and sessions. Expand an id with the get tool or `cairn get ID`. -->\n';
}

export async function buildContext(deps: ContextDeps, input: ContextInput = {}): Promise<ContextResult> {
  const budget = input.budget ?? DEFAULT_CONTEXT_BUDGET;
  if (!Number.isFinite(budget) || budget < 50 || budget > 200_000) throw invalid(`budget must be 50–200000 tokens (got ${budget})`, 'budget');
  const rankerName = input.ranker ?? 'composite';
  const ranker = deps.rankers.get(rankerName);
  const warnings: string[] = [];
  const filter: MemoryFilter = deps.project === null ? { project: null } : { project: deps.project };

  const header = contextHeader(deps.project);
  let used = estimateTokens(header);
  const parts: string[] = [header];
  const sections: ContextSection[] = [];

  if (input.core !== false) {
    for (const core of readCores(deps.core)) {
      if (!core.exists || core.text.trim().length === 0) continue;
      if (core.overBudget) warnings.push(`${core.which} core memory ${core.path} has ${core.lines} lines, over its budget of ${core.budget}`);
      const block = `## Core memory (${core.which})\n${coreForInjection(core)}\n`;
      const tokens = estimateTokens(block);
      parts.push(block);
      used += tokens;
      sections.push({ name: `core:${core.which}`, tokens, ids: [] });
    }
  }

  // A session with a history (after /compact, on resume), no query: its details by the value model.
  const storedTurns =
    input.favorSession && input.workingSet !== false && deps.store.capabilities.substrate && deps.store.substrate
      ? await deps.store.substrate.getTurns(input.favorSession, { limit: 50_000 })
      : [];
  const sessionTurns = input.pendingTurns && input.pendingTurns.length > 0 && input.favorSession && storedTurns.length > 0 ? withPending(storedTurns, input.pendingTurns, input.favorSession) : storedTurns;
  if (input.favorSession && sessionTurns.length > 0 && !input.query) {
    const { candidates } = await gatherCandidates(deps, input, filter);
    // Learning from use: the project's latest measured compactions adjust the kinds' weights and
    // say which details earlier sessions needed again (learn.ts). One read of the ledger.
    const learning = !input.valueModel && input.learnFromUse !== false && deps.store.ledger ? await deps.store.ledger.outcomes({ project: deps.project, reason: 'compact', last: LEARN_FROM_LAST }) : null;
    const pack = await packSession(deps, {
      session: input.favorSession,
      turns: sessionTurns,
      memories: candidates.map((c) => c.memory),
      budget: Math.max(0, budget - used),
      ranker: rankerName,
      seed: input.seed ?? 1,
      ...(input.valueModel ? { model: input.valueModel } : learning ? { model: adjusted(DEFAULT_VALUE_MODEL, learnedDelta(learning)), learned: learnedDetails(learning, input.favorSession) } : {}),
      ...(input.exclude || input.excludeFacts ? { exclude: new Set([...(input.exclude ?? []), ...(input.excludeFacts ?? [])]) } : {}),
      ...(input.omitSummarized ? { inContext: latestSummary(sessionTurns) } : {}),
      ...(input.sessionBudget ? { grow: { share: input.sessionBudget.share, max: Math.min(200_000, input.sessionBudget.max), spent: used } } : {}),
    });
    sections.push(...pack.sections);
    const included = pack.chosen.flatMap((c) => (c.memoryId ? [c.memoryId] : []));
    if (input.touch && included.length > 0) await deps.store.touch(included, deps.clock.now(), false);
    const markdown = pack.chosen.length === 0 && sections.length === 0 ? '' : `${parts.join('')}${pack.text}`;
    return { markdown, tokens: tokensWithLead(input.lead, markdown), budget: pack.budget > Math.max(0, budget - used) ? pack.budget + used : budget, ranker: rankerName, query: input.query ?? null, sections, omitted: pack.omitted, warnings, details: pack.chosen };
  }

  // The favoured session's working set: files and commands verbatim, from its transcript.
  let workingBlock: string | null = null;
  let workingTokens = 0;
  const workingSet = sessionTurns.length > 0 ? workingSetOf(sessionTurns) : null;
  const setWorkingBlock = (tokens: number): void => {
    if (!workingSet) return;
    const header = `\n## ${WORKING_SET_TITLE}\n`;
    const lines = workingSetLines(workingSet, tokens - estimateTokens(header));
    used -= workingTokens;
    workingBlock = lines.length > 0 ? `${header}${lines.join('\n')}\n` : null;
    workingTokens = workingBlock ? estimateTokens(workingBlock) : 0;
    used += workingTokens;
  };
  setWorkingBlock(Math.floor(Math.max(0, budget - used) * WORKING_SET_SHARE));

  const { candidates, maxRrf, bm25Max, cosineMax } = input.prepared ?? (await gatherCandidates(deps, input, filter));
  const ready = input.prepared?.items;
  const lazyTerms = input.prepared?.termsOf;
  // The same cosine share as recall's fusion for this embedder (the rank fusion in retrieve uses its weights too).
  const vectorSignalShare = fusionWeights(deps.embedder?.model ?? null, deps.fusion).vectorSignalShare;
  const rankContext: RankContext = { now: deps.clock.now(), hasQuery: Boolean(input.query), maxRrf, bm25Max, cosineMax, vectorSignalShare, session: deps.session, seed: input.seed ?? 1 };
  const scored = candidates.map((c) => {
    let score = ranker(c, rankContext);
    if (input.favorSession && c.memory.session === input.favorSession) score *= FAVOR_SESSION_BOOST;
    if (c.memory.pinned) score += 10;
    return { c, score };
  });

  const omitted: ContextResult['omitted'] = [];
  const omittedEarly: ContextResult['omitted'] = [];
  const chosen = new Map<SectionKey, Array<{ memory: Memory; line: string; tokens: number; terms: Set<string> }>>([
    ['continuation', []],
    ['rules', []],
    ['facts', []],
  ]);
  const chosenTerms: Array<{ id: string; terms: Set<string> }> = [];
  const remainingAfterCore = Math.max(0, budget - used);
  const sectionUsed: Record<SectionKey, number> = { continuation: 0, rules: 0, facts: 0 };
  // Header lines of sections cost tokens once a section has an item.
  const sectionHeaderTokens = (key: SectionKey): number => estimateTokens(`\n## ${SECTION_TITLES[key]}\n`);

  // Only what could fit is prepared (staleness, exact line, token count): candidates in order of
  // value per estimated token, per section until it holds PREPARE_SLACK times the budget. At 100K
  // memories this was most of a session-start hook's context time; the rest are left out for budget.
  const proxySum: Record<SectionKey, number> = { continuation: 0, rules: 0, facts: 0 };
  const worth = scored
    .map((s) => ({ ...s, proxy: roughTokens(s.c.memory) }))
    .sort((a, b) => b.score / b.proxy - a.score / a.proxy || b.score - a.score)
    .filter((s) => {
      const key = sectionOf(s.c.memory.kind);
      if (proxySum[key] >= remainingAfterCore * PREPARE_SLACK && !s.c.memory.pinned) {
        omittedEarly.push({ id: s.c.memory.id, reason: 'budget' });
        return false;
      }
      proxySum[key] += s.proxy;
      return true;
    });
  const files = input.files ?? new FileReader();
  const prepared = worth.map(({ c, score }) => {
    const item = ready?.[c.memory.id] ?? prepareItem(deps, c.memory, files);
    const line = itemLine(c.memory, item.note);
    // A finding about a file that is gone is worth less, not nothing (it may have moved).
    return { c, score: item.missing ? score * STALE_FILE_FACTOR : score, line, tokens: item.tokens, item };
  });
  prepared.sort((a, b) => b.score / b.tokens - a.score / a.tokens || b.score - a.score);

  const tryAdd = (item: (typeof prepared)[number], key: SectionKey, cap: number): boolean => {
    const headerCost = (chosen.get(key)?.length ?? 0) === 0 ? sectionHeaderTokens(key) : 0;
    const cost = item.tokens + headerCost;
    if (used + cost > budget || sectionUsed[key] + cost > cap) return false;
    const stored = item.item.terms ?? lazyTerms?.(item.c.memory.id);
    const terms = new Set(preparedTerms({ terms: stored }, item.c.memory));
    const dup = chosenTerms.find((other) => nearDuplicate(terms, other.terms, NEAR_DUPLICATE_JACCARD));
    if (dup) {
      omitted.push({ id: item.c.memory.id, reason: 'near-duplicate', detail: dup.id });
      return true;
    }
    chosen.get(key)?.push({ memory: item.c.memory, line: item.line, tokens: item.tokens, terms });
    chosenTerms.push({ id: item.c.memory.id, terms });
    used += cost;
    sectionUsed[key] += cost;
    return true;
  };

  const pending: typeof prepared = [];
  for (const key of ['continuation', 'rules', 'facts'] as const) {
    const cap = remainingAfterCore * SECTION_SHARE[key];
    for (const item of prepared) {
      if (sectionOf(item.c.memory.kind) !== key) continue;
      if (!tryAdd(item, key, cap)) pending.push(item);
    }
  }
  // Back-fill what the section caps left over, best value first.
  pending.sort((a, b) => b.score / b.tokens - a.score / a.tokens);
  for (const item of pending) {
    if (!tryAdd(item, sectionOf(item.c.memory.kind), Infinity)) omitted.push({ id: item.c.memory.id, reason: 'budget' });
  }

  omitted.push(...omittedEarly);

  // Memories packed; what budget is left goes to more of the working set.
  if (workingSet && used < budget) setWorkingBlock(workingTokens + (budget - used));

  for (const key of ['continuation', 'rules', 'facts'] as const) {
    if (key === 'rules' && workingBlock) {
      parts.push(workingBlock);
      sections.push({ name: 'working-set', tokens: workingTokens, ids: [] });
    }
    const items = chosen.get(key) ?? [];
    if (items.length === 0) continue;
    // Within a section, the most valuable first (the packing order was by value per token).
    const order = new Map(scored.map((s) => [s.c.memory.id, s.score]));
    items.sort((a, b) => (order.get(b.memory.id) ?? 0) - (order.get(a.memory.id) ?? 0));
    parts.push(`\n## ${SECTION_TITLES[key]}\n${items.map((i) => i.line).join('\n')}\n`);
    sections.push({ name: key, tokens: sectionUsed[key], ids: items.map((i) => i.memory.id) });
  }

  const included = sections.flatMap((s) => s.ids);
  if (input.touch && included.length > 0) await deps.store.touch(included, deps.clock.now(), false);
  const markdown = included.length === 0 && sections.length === 0 ? '' : parts.join('');
  return {
    markdown,
    tokens: tokensWithLead(input.lead, markdown),
    budget,
    ranker: rankerName,
    query: input.query ?? null,
    sections,
    omitted,
    warnings,
  };
}
