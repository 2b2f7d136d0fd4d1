/**
 * Learn from use (issue #15, item 9): when ingest reads a session that the injection ledger holds
 * windows for, look at the conversation after each window's start (a compaction, a session start,
 * a first injection) and decide, with the fidelity bench's own matcher (used-details.ts), which
 * injected memories and session facts the agent used afterwards, and which needed details —
 * used after a compaction, known before it — nothing injected carried. The ledger gets the use
 * marks ({@link Ledger.markUsed}) and one outcome per window; measuring again replaces both.
 */
import type { Deps } from '../deps.js';
import { readConversation, type Conversation, type ConversationTurn } from '../ingest/conversation.js';
import type { LedgerInjection, LedgerOutcome, LedgerStore, LedgerWindow, Memory, OutcomeCounts, SessionFact } from '../types.js';
import { carries, extractDetails, neededDetails } from '../ledger/used-details.js';
import { LEARNED_PER_OUTCOME, learnKey } from './learn.js';

/** What one pass over the ingested sessions measured. */
export interface UseSummary {
  /** Windows measured (new or re-measured). */
  windows: number;
  injected: number;
  used: number;
  missed: number;
}

/** A transcript's timestamp and cairn's clock may differ by this much (ms) and still meet. */
const SLACK_MS = 2_000;
const SHELL_TOOLS = new Set(['bash', 'shell', 'exec_command', 'run_shell_command', 'local_shell']);
const MEMORY_KIND: Record<string, string> = { correction: 'rule', preference: 'rule', procedure: 'rule', decision: 'decision', continuation: 'continuation' };

const toolBase = (name: string | null): string => (name ?? '').slice((name ?? '').lastIndexOf('__') + ((name ?? '').includes('__') ? 2 : 0)).toLowerCase();

/** A tool input's string values, unescaped (as the bench reads `tool_use` inputs). */
function inputText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(inputText).join('\n');
  if (value && typeof value === 'object') return Object.values(value as Record<string, unknown>).map(inputText).join('\n');
  return '';
}

function parsedInput(raw: string | null): unknown {
  if (raw === null) return null;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

const spoken = (t: ConversationTurn): boolean => !t.flags.includes('meta') && !t.flags.includes('compact-summary') && !t.flags.includes('compact-boundary');

/** The text the matcher reads: what the user and agent wrote and tool inputs; tool outputs when `withResults`. */
export function conversationText(turns: readonly ConversationTurn[], withResults: boolean): string {
  const out: string[] = [];
  for (const t of turns) {
    if (!spoken(t)) continue;
    if (t.role === 'user' || t.role === 'assistant') out.push(t.text);
    else if (t.role === 'tool_call') out.push(inputText(parsedInput(t.toolInput)));
    else if (withResults && t.role === 'tool_result') out.push(t.text);
  }
  return out.join('\n');
}

/** Shell command lines the turns ran. */
export function shellCommands(turns: readonly ConversationTurn[]): string[] {
  const out: string[] = [];
  for (const t of turns) {
    if (t.role !== 'tool_call' || !SHELL_TOOLS.has(toolBase(t.toolName))) continue;
    const input = parsedInput(t.toolInput) as { command?: unknown; cmd?: unknown } | null;
    const command = input && typeof input === 'object' ? (input.command ?? input.cmd) : null;
    if (typeof command === 'string') out.push(command);
    else if (Array.isArray(command)) out.push(command.filter((c) => typeof c === 'string').join(' '));
  }
  return out;
}

/** Where a window's "after" starts and ends in a session's turns, and where its "before" ends. */
export function windowSpan(turns: readonly ConversationTurn[], windows: readonly LedgerWindow[], k: number): { beforeEnd: number; start: number; end: number } {
  const window = windows[k] as LedgerWindow;
  const next = windows[k + 1];
  const firstAtOrAfter = (at: number): number => {
    const i = turns.findIndex((t) => t.at !== null && t.at >= at - SLACK_MS);
    return i < 0 ? turns.length : i;
  };
  let beforeEnd = firstAtOrAfter(window.at);
  if (window.reason === 'compact') {
    // The compaction this window follows: the last boundary written before the hook ran.
    let boundary = -1;
    turns.forEach((t, i) => {
      if (t.flags.includes('compact-boundary') && (t.at === null || t.at <= window.at + SLACK_MS)) boundary = i;
    });
    if (boundary >= 0) beforeEnd = boundary;
  }
  let start = beforeEnd;
  while (start < turns.length && !spoken(turns[start] as ConversationTurn)) start++;
  const end = next ? Math.max(start, firstAtOrAfter(next.at)) : turns.length;
  return { beforeEnd, start, end };
}

function factLine(fact: SessionFact): string {
  const at = fact.path ? ` ${fact.path}${fact.line !== null ? `:${fact.line}` : ''}` : '';
  return `${fact.text}${at} ${fact.note ?? ''}`;
}

/** A call line the context injected is recorded as the block `call:<name>` (the line reads `name(`). */
export const CALL_BLOCK = 'call:';

/** The items learn from use can judge: memories, session facts and call lines (not core memory or the working set). */
const measurableItems = (injection: LedgerInjection): string[] => [...injection.memories, ...injection.facts, ...injection.blocks.filter((b) => b.startsWith(CALL_BLOCK))];

const factKind = (fact: SessionFact): string => (fact.kind === 'path' && fact.line !== null ? 'pathLine' : fact.kind);
const memoryKind = (memory: Memory): string => MEMORY_KIND[memory.kind] ?? 'fact';

function count(kinds: Record<string, OutcomeCounts>, kind: string, field: keyof OutcomeCounts): void {
  const c = (kinds[kind] ??= { injected: 0, used: 0, missed: 0 });
  c[field] = (c[field] ?? 0) + 1;
}

export interface WindowInput {
  session: string;
  project: string | null;
  window: LedgerWindow;
  injections: readonly LedgerInjection[];
  before: readonly ConversationTurn[];
  after: readonly ConversationTurn[];
  facts: ReadonlyMap<string, SessionFact>;
  memories: ReadonlyMap<string, Memory>;
  /** Seq of the first turn after the window's start: facts first seen before it were candidates. */
  startSeq: number;
  at: number;
}

/**
 * Measure one window (pure): which injected items carry a detail used afterwards (after a
 * compaction: a needed detail, used after it and known before it, as the bench labels), and which
 * needed details nothing injected carried, with the session facts that held them.
 */
export function measureWindow(input: WindowInput): { outcome: LedgerOutcome; used: Map<number, string[]> } {
  const compact = input.window.reason === 'compact';
  const afterText = conversationText(input.after, false);
  const usedDetails = [...extractDetails(afterText, shellCommands(input.after))];
  const needed = compact ? neededDetails(conversationText(input.before, true), afterText, shellCommands(input.after)) : [];
  const labels = compact ? needed : usedDetails;
  const kinds: Record<string, OutcomeCounts> = {};
  const lines: string[] = [];
  const itemUsed = new Map<string, boolean>();
  for (const injection of input.injections) {
    for (const id of measurableItems(injection)) {
      if (itemUsed.has(id)) continue;
      const fact = input.facts.get(id);
      const memory = fact ? undefined : input.memories.get(id);
      const call = id.startsWith(CALL_BLOCK) ? `${id.slice(CALL_BLOCK.length)}(` : null;
      if (!fact && !memory && !call) continue;
      const line = fact ? factLine(fact) : memory ? memory.text : (call as string);
      lines.push(line);
      const used = carries(line, labels);
      itemUsed.set(id, used);
      const kind = fact ? factKind(fact) : memory ? memoryKind(memory) : 'call';
      count(kinds, kind, 'injected');
      if (used) count(kinds, kind, 'used');
    }
  }
  const given = lines.join('\n');
  const missedDetails = needed.filter((d) => !given.includes(d));
  const missedFacts: string[] = [];
  for (const fact of input.facts.values()) {
    if (fact.first.seq >= input.startSeq || itemUsed.has(fact.id)) continue;
    // A candidate the context left out (compaction windows: every fact known before it).
    if (compact) count(kinds, factKind(fact), 'left');
    if (!carries(factLine(fact), missedDetails)) continue;
    missedFacts.push(fact.id);
    count(kinds, factKind(fact), 'missed');
  }
  const used = new Map<number, string[]>();
  for (const injection of input.injections) used.set(injection.id, measurableItems(injection).filter((id) => itemUsed.get(id) === true));
  const usedCount = [...itemUsed.values()].filter(Boolean).length;
  return {
    used,
    outcome: {
      session: input.session,
      window: input.window.window,
      project: input.project,
      reason: input.window.reason,
      measuredAt: input.at,
      turnsAfter: input.after.length,
      injected: itemUsed.size,
      used: usedCount,
      needed: needed.length,
      missed: missedDetails.length,
      missedFacts: missedFacts.sort(),
      kinds,
      // What later sessions of the project learn from: the details needed after this compaction.
      learned: [...new Set(needed.map(learnKey))].sort().slice(0, LEARNED_PER_OUTCOME),
    },
  };
}

export interface MeasureOptions {
  /** How to read a transcript (tests pass a fixture reader). @default readConversation */
  read?: (path: string) => Conversation;
  /**
   * A session's open (last) window that was measured less than this long ago is not measured again
   * yet: the Stop hook ingests after every turn, and each measurement re-reads the whole transcript.
   * Closed windows are measured again whenever the conversation after them grew. @default 300000 (5 min)
   */
  remeasureAfterMs?: number;
}

/**
 * Measure use in the given sessions (those an ingest just touched). Only sessions the ledger has
 * context injections for are read again, and a session is skipped when every window was measured
 * after its last turn; a failure is logged, never thrown (ingest must not fail on it).
 */
export async function measureUse(deps: Deps, sessions: Iterable<string>, options: MeasureOptions = {}): Promise<UseSummary> {
  const summary: UseSummary = { windows: 0, injected: 0, used: 0, missed: 0 };
  const ledger = deps.store.ledger;
  const substrate = deps.store.substrate;
  if (!ledger || !substrate) return summary;
  for (const session of sessions) {
    try {
      await measureSession(deps, ledger, session, options, summary);
    } catch (error) {
      deps.logger.error('learn-from-use: measuring a session failed', { session, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return summary;
}

async function measureSession(deps: Deps, ledger: LedgerStore, session: string, options: MeasureOptions, summary: UseSummary): Promise<void> {
  const substrate = deps.store.substrate;
  if (!substrate) return;
  const injections = (await ledger.injections(session, { target: 'context' })).filter((i) => measurableItems(i).length > 0);
  if (injections.length === 0) return;
  const record = await substrate.getSession(session);
  if (!record) return;
  const known = await ledger.outcomes({ session });
  const windowsWith = new Set(injections.map((i) => i.window));
  if (record.endedAt !== null && [...windowsWith].every((w) => known.some((o) => o.window === w && o.measuredAt >= record.endedAt!))) return;
  const windows = await ledger.windows(session);
  // Only the open window changed since the last measurement, and that was moments ago: wait.
  const open = windows.at(-1);
  const recent = known.find((o) => o.window === open?.window);
  const others = [...windowsWith].filter((w) => w !== open?.window);
  // A closed window measured after the next one opened has its whole aftermath measured.
  const othersDone = others.every((w) => {
    const next = windows.find((x) => x.window > w);
    return known.some((o) => o.window === w && next !== undefined && o.measuredAt >= next.at);
  });
  if (recent && othersDone && deps.clock.now() - recent.measuredAt < (options.remeasureAfterMs ?? 300_000)) return;
  const conversation = (options.read ?? readConversation)(record.sourcePath);
  const turns = conversation.turns.filter((t) => t.sessionId === session);
  if (turns.length === 0) return;
  const facts = new Map((await substrate.listFacts(session, { limit: 20_000 })).map((f) => [f.id, f]));
  const memoryIds = [...new Set(injections.flatMap((i) => i.memories))];
  const memories = new Map((memoryIds.length > 0 ? await deps.store.getMemories(memoryIds) : []).map((m) => [m.id, m]));
  for (let k = 0; k < windows.length; k++) {
    const window = windows[k] as LedgerWindow;
    const inWindow = injections.filter((i) => i.window === window.window);
    if (inWindow.length === 0) continue;
    const span = windowSpan(turns, windows, k);
    const after = turns.slice(span.start, span.end).filter(spoken);
    if (!after.some((t) => t.role === 'user' || t.role === 'assistant')) continue;
    const previous = known.find((o) => o.window === window.window);
    if (previous && previous.turnsAfter === after.length) continue;
    const { outcome, used } = measureWindow({
      session,
      project: inWindow.find((i) => i.project !== null)?.project ?? record.project,
      window,
      injections: inWindow,
      before: turns.slice(0, span.beforeEnd),
      after,
      facts,
      memories,
      startSeq: (after[0] as ConversationTurn).seq,
      at: deps.clock.now(),
    });
    for (const [id, list] of used) await ledger.markUsed(id, list, outcome.measuredAt);
    await ledger.recordOutcome(outcome);
    summary.windows++;
    summary.injected += outcome.injected;
    summary.used += outcome.used;
    summary.missed += outcome.missed;
  }
}
