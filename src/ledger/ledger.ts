/**
 * The injection ledger: what each hook and MCP tool gave the agent, per session and context
 * window — memory ids, session fact ids, blocks (core memory, the working set), tokens, the event
 * and the time. Reached as `cairn.ledger` (undefined when the store has none).
 *
 * - Hooks and MCP tools call {@link Ledger.seen} before injecting and skip what the session's
 *   current window already holds, then {@link Ledger.record} what they gave. Never the same
 *   memory twice in one context window.
 * - A context window starts at the session's start and at each compaction or /clear
 *   ({@link Ledger.startWindow} with Claude Code's SessionStart `source`). `resume` keeps the window.
 * - PreCompact guidance is recorded with target `summary`: it shapes the compaction summary and
 *   is not part of the next window.
 * - Learn-from-use (src/context/use.ts, run after ingest) decides which items the agent used
 *   afterwards and writes it back with {@link Ledger.markUsed}, with one outcome per window
 *   (used, needed details missed; {@link Ledger.outcomes}); {@link Ledger.itemStats} sums
 *   injected / measured / used per item.
 *
 * Storage: tables `ledger_windows`, `ledger_injections`, `ledger_items` (SQLite migration 008,
 * PostgreSQL 007), and `ledger_outcomes` (SQLite 009, PostgreSQL 008). Ids and counts only, never text.
 *
 * @example
 * const seen = await cairn.ledger?.seen(sessionId);
 * const fresh = hits.filter((h) => !seen?.memories.has(h.memory.id));
 * await cairn.ledger?.record({ session: sessionId, via: 'mcp', name: 'recall', memories: fresh.map((h) => h.memory.id), tokens });
 */
import type { Clock, InjectionTarget, InjectionVia, LedgerInjection, LedgerItemStats, LedgerOutcome, LedgerStore, LedgerWindow, OutcomeQuery } from '../types.js';

export type { InjectionTarget, InjectionVia, LedgerInjection, LedgerItemStats, LedgerOutcome, LedgerWindow, OutcomeCounts } from '../types.js';

/** What the current context window of a session already holds (target `context` only). */
export interface WindowContents {
  /** The window number, or null when the session has no window yet. */
  window: number | null;
  memories: Set<string>;
  facts: Set<string>;
  blocks: Set<string>;
}

/** One injection to record; `project` defaults to cairn's project, `at` to now, `target` to `context`. */
export interface RecordInput {
  session: string;
  via: InjectionVia;
  name: string;
  target?: InjectionTarget;
  memories?: string[];
  facts?: string[];
  blocks?: string[];
  tokens: number;
  project?: string | null;
  at?: number;
}

/** A session's ledger, as the browser's overview shows it. */
export interface LedgerSessionDetail {
  session: string;
  project: string | null;
  /** The current window. */
  window: number;
  windows: LedgerWindow[];
  injections: LedgerInjection[];
}

export interface Ledger {
  /**
   * Mark the start of a context window from a SessionStart `source`: `startup`, `clear` and
   * `compact` open a new window; `resume` (and anything else) keeps the current one, opening
   * window 0 when the session has none.
   */
  startWindow(session: string, source: string | undefined): Promise<LedgerWindow>;
  /** The session's current window, or null when it has none. */
  currentWindow(session: string): Promise<LedgerWindow | null>;
  /** The ids the session's current window already holds. */
  seen(session: string): Promise<WindowContents>;
  /** Record one injection into the session's current window. */
  record(input: RecordInput): Promise<LedgerInjection>;
  /** Injections of a session, oldest first (one window's when given). */
  injections(session: string, options?: { window?: number; target?: InjectionTarget }): Promise<LedgerInjection[]>;
  /** Sessions with injections, most recent first. */
  sessions(options?: { limit?: number; project?: string | null }): Promise<Array<{ session: string; project: string | null; lastAt: number }>>;
  /** A session's windows and injections, or null when it has none. */
  get(session: string): Promise<LedgerSessionDetail | null>;
  /** Learn-from-use: which items of an injection the agent used afterwards (the rest: not used). */
  markUsed(injectionId: number, used: string[]): Promise<void>;
  /** Per-item totals (injected, measured, used, last injected), for the value model. */
  itemStats(options?: { ids?: string[]; project?: string | null }): Promise<Map<string, LedgerItemStats>>;
  /** What learn-from-use measured after each window (src/context/use.ts), oldest first. */
  outcomes(options?: OutcomeQuery): Promise<LedgerOutcome[]>;
}

const NEW_WINDOW_SOURCES = new Set(['startup', 'clear', 'compact']);

/** The ledger over a store's {@link LedgerStore}, with cairn's clock and project. */
export function createLedger(store: LedgerStore, clock: Clock, project: string | null): Ledger {
  return {
    startWindow(session, source) {
      const reason = source && source.length > 0 ? source : 'startup';
      return store.openWindow(session, reason, clock.now(), { project, onlyIfNone: !NEW_WINDOW_SOURCES.has(reason) });
    },
    currentWindow: (session) => store.currentWindow(session),
    async seen(session) {
      const window = await store.currentWindow(session);
      const contents: WindowContents = { window: window?.window ?? null, memories: new Set(), facts: new Set(), blocks: new Set() };
      if (!window) return contents;
      for (const injection of await store.injections(session, { window: window.window, target: 'context' })) {
        for (const id of injection.memories) contents.memories.add(id);
        for (const id of injection.facts) contents.facts.add(id);
        for (const id of injection.blocks) contents.blocks.add(id);
      }
      return contents;
    },
    record(input) {
      return store.record({
        session: input.session,
        project: input.project === undefined ? project : input.project,
        via: input.via,
        name: input.name,
        target: input.target ?? 'context',
        memories: input.memories ?? [],
        facts: input.facts ?? [],
        blocks: input.blocks ?? [],
        tokens: input.tokens,
        at: input.at ?? clock.now(),
      });
    },
    injections: (session, options) => store.injections(session, options),
    sessions: (options) => store.sessions(options),
    async get(session) {
      const [windows, injections] = await Promise.all([store.windows(session), store.injections(session)]);
      if (windows.length === 0 && injections.length === 0) return null;
      return {
        session,
        project: injections.find((i) => i.project !== null)?.project ?? null,
        window: windows.at(-1)?.window ?? 0,
        windows,
        injections,
      };
    },
    markUsed: (injectionId, used) => store.markUsed(injectionId, used, clock.now()),
    itemStats: (options) => store.itemStats(options),
    outcomes: (options) => store.outcomes(options),
  };
}
