/**
 * What every reader writes into: sessions with their running totals, turns with stable ids and
 * sequence numbers, compactions, session facts (extracted from each turn's full text before it is
 * bounded), bad-line and unknown-type counters, and the serialisable state that lets the next
 * pass continue where this one stopped. All text goes through the privacy sanitizer here, so no
 * reader can forget it.
 */
import { sanitize, type RedactionResult } from '../privacy/redact.js';
import type { Agent, CompactionRecord, CorrectionRecord, FactKind, FactRecord, SessionRecord, TurnRecord, TurnRole } from '../types.js';
import { findCorrections, type PendingUser } from './correction-finder.js';
import { extractTurnFacts, type PendingCall } from './facts/extract.js';
import { factId } from './facts/id.js';
import { LIMITS, bound } from './text.js';
import { storable, storableFields } from './wellformed.js';
import { emptyStats, type ReaderStats } from './types.js';

/** The outcome of the line being read, strongest first (see `ReaderStats.outcomes`). */
const OUTCOME_RANK = { none: 0, passed: 1, meta: 2, unknown: 3, bad: 4, stored: 5 } as const;
type Outcome = keyof typeof OUTCOME_RANK;

/** A session's running state inside one file (serialised into the cursor). */
export interface SessionAcc {
  id: string;
  cwd: string | null;
  branch: string | null;
  parentId: string | null;
  title: string | null;
  /** A title taken from a summary beats one taken from the first prompt. */
  titleFromSummary: boolean;
  startedAt: number | null;
  endedAt: number | null;
  /** Token totals contributed by this file so far (from its first byte). */
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
  /** Next turn sequence number. */
  seq: number;
}

/** The builder's part of a cursor's state. */
export interface BuilderState {
  sessions: Record<string, SessionAcc>;
  /** Per session, the latest agent turn (premise for the next correction). */
  lastAgent: Record<string, string>;
  /** Per session, the user message awaiting the agent's reply (a concession marks it a correction). */
  pending?: Record<string, PendingUser>;
  /** Tool calls awaiting their result (`${sessionId}|${toolUseId}` → call), for the command's outcome. */
  calls?: Array<[string, PendingCall]>;
}

export interface TurnInput {
  role: TurnRole;
  text: string;
  /** `uuid` of the source line, or null to key the turn by its line number. */
  uuid: string | null;
  line: number;
  at: number | null;
  toolName?: string | null;
  toolInput?: string | null;
  toolUseId?: string | null;
  /** A tool call's arguments as parsed (else `toolInput` is parsed for its facts). */
  toolArgs?: unknown;
  isError?: boolean;
  flags?: string[];
  /** Explicit id (merged messages re-emitted across passes keep their first id). */
  id?: string;
  /** Explicit sequence number (a re-emitted turn keeps its place). */
  seq?: number;
  /** Bound for `text`; defaults by role. */
  limit?: number;
}

const ROLE_LIMIT: Record<TurnRole, number> = {
  user: LIMITS.message,
  assistant: LIMITS.message,
  tool_call: LIMITS.tool,
  tool_result: LIMITS.tool,
  system: LIMITS.system,
  summary: LIMITS.summary,
};

/** Cheap test for a `<private>` or `</private>` tag in any letter case. */
function hasPrivateTag(text: string): boolean {
  return text.includes('rivate>') || text.includes('RIVATE>');
}

/** Everything a reader pass produced, before the runner adds the cursor. */
export interface BuiltBatch {
  sessions: SessionRecord[];
  turns: TurnRecord[];
  compactions: CompactionRecord[];
  corrections: CorrectionRecord[];
  facts: FactRecord[];
  state: BuilderState;
}

/** Texts up to this length are sanitized whole (see `turn`). */
const WHOLE_SANITIZE_MAX = 64 * 1024;
/** Tool calls remembered across passes while their results are awaited. */
const MAX_CALLS = 64;
/** Fact ids remembered within a pass (the same detail recurs turn after turn). */
const MAX_IDS = 50_000;
/**
 * Texts at least this long are sanitized once per pass: the same file read twice, the same
 * output pasted again, a help text repeated — 13% of the characters ingest scanned over
 * ../shared's transcripts were such repeats. Shorter texts cost less to scan than to remember.
 */
const SANITIZED_MEMO_MIN = 512;
/** Characters of text remembered with their sanitized form, per pass at most. */
const SANITIZED_MEMO_CHARS = 8 * 1024 * 1024;

export class BatchBuilder {
  readonly agent: Agent;
  readonly path: string;
  readonly stats: ReaderStats = emptyStats();
  readonly turns: TurnRecord[] = [];
  readonly compactions: CompactionRecord[] = [];
  readonly facts: FactRecord[] = [];
  private readonly calls: Map<string, PendingCall>;
  private readonly factIds = new Map<string, Map<FactKind, Map<string, string>>>();
  private factIdCount = 0;
  /** Texts sanitized in this pass (see {@link SANITIZED_MEMO_MIN}). */
  private readonly sanitized = new Map<string, RedactionResult>();
  private sanitizedChars = 0;
  private readonly sessions = new Map<string, SessionAcc>();
  private readonly touched = new Set<string>();
  private readonly lastAgent: Map<string, string>;
  private readonly pending: Map<string, PendingUser>;
  /** Turn ids emitted in this pass, to number several turns from one line and drop repeats. */
  private readonly emitted = new Map<string, TurnRecord>();
  private outcome: Outcome = 'none';
  private passReason = '';
  private lineKey = '';
  private lineNo = -1;
  private lineCount = 0;

  /** Sees every turn added with its full text (see `ReadOptions.onTurn`). */
  private readonly observer: ((turn: TurnRecord, full: { text: string; toolInput: string | null }) => void) | null;

  constructor(agent: Agent, path: string, state: BuilderState | null, observer: BatchBuilder['observer'] = null) {
    this.agent = agent;
    this.observer = observer;
    this.path = path;
    for (const [id, acc] of Object.entries(state?.sessions ?? {})) this.sessions.set(id, acc);
    this.lastAgent = new Map(Object.entries(state?.lastAgent ?? {}));
    this.pending = new Map(Object.entries(state?.pending ?? {}));
    this.calls = new Map(Array.isArray(state?.calls) ? state.calls.filter((e) => Array.isArray(e) && typeof e[0] === 'string' && typeof e[1] === 'object' && e[1] !== null) : []);
  }

  /** The session `id`, created on first use. Marks it as touched by this pass. */
  session(id: string): SessionAcc {
    let acc = this.sessions.get(id);
    if (!acc) {
      acc = {
        id,
        cwd: null,
        branch: null,
        parentId: null,
        title: null,
        titleFromSummary: false,
        startedAt: null,
        endedAt: null,
        inputTokens: 0,
        outputTokens: 0,
        cacheReadTokens: 0,
        cacheCreationTokens: 0,
        seq: 0,
      };
      this.sessions.set(id, acc);
    }
    this.touched.add(id);
    return acc;
  }

  /** Whether a session is already known (from this pass or an earlier one). */
  hasSession(id: string): boolean {
    return this.sessions.has(id);
  }

  /** Widen the session's time span. */
  time(session: SessionAcc, at: number | null): void {
    if (at === null) return;
    if (session.startedAt === null || at < session.startedAt) session.startedAt = at;
    if (session.endedAt === null || at > session.endedAt) session.endedAt = at;
  }

  /** Set the title from a prompt (only when none yet) or from a summary (always wins). */
  title(session: SessionAcc, text: string, fromSummary: boolean): void {
    if (session.titleFromSummary && !fromSummary) return;
    if (!fromSummary && session.title !== null) return;
    const line = text.replace(/\s+/g, ' ').trim();
    if (line.length === 0) return;
    session.title = this.clean(line.length > LIMITS.title ? `${line.slice(0, LIMITS.title - 1)}…` : line, LIMITS.title);
    session.titleFromSummary = fromSummary;
  }

  /**
   * Sanitize (drop `<private>` spans, redact secrets) and bound a text. What comes back is always
   * the output of the sanitizer itself, so the write boundary need not scan it again (see
   * ingest/seal.ts).
   */
  clean(text: string, max: number): string {
    if (text.length > max && hasPrivateTag(text)) return this.cut(this.redact(text), max);
    if (text.length > max) return this.redact(bound(text, max));
    return this.redact(text);
  }

  /**
   * `sanitized` bounded to `max`. A cut joins a head and a tail that were never side by side
   * (and {@link bound} may slice a long token), so a cut text is sanitized again: both the kept
   * head and tail and their seam are then exactly what the sanitizer says.
   */
  private cut(sanitized: string, max: number): string {
    const bounded = bound(sanitized, max);
    return bounded === sanitized ? sanitized : this.redact(bounded);
  }

  private redact(text: string): string {
    let result = text.length >= SANITIZED_MEMO_MIN ? this.sanitized.get(text) : undefined;
    if (result === undefined) {
      // Escape sequences go first: a secret split by a colour code is whole again for the detectors.
      result = sanitize(storable(text));
      if (text.length >= SANITIZED_MEMO_MIN && this.sanitizedChars + text.length <= SANITIZED_MEMO_CHARS) {
        this.sanitized.set(text, result);
        this.sanitizedChars += text.length;
      }
    }
    const { found } = result;
    for (const kind in found) this.stats.redactions[kind] = (this.stats.redactions[kind] ?? 0) + (found[kind] ?? 0);
    return result.text;
  }

  /**
   * The id for the next turn from a source line: `${sessionId}:${uuid ?? line}`, then `:1`, `:2` …
   * for further turns from the same line.
   */
  allocateId(session: SessionAcc, uuid: string | null, line: number): string {
    const key = `${session.id}:${uuid ?? line}`;
    // Only turns from the same line are numbered on; the same uuid on another line is a
    // repeated line, and gets the same id (so it is dropped as a duplicate).
    if (key === this.lineKey && line === this.lineNo) this.lineCount++;
    else {
      this.lineKey = key;
      this.lineNo = line;
      this.lineCount = 0;
    }
    return this.lineCount === 0 ? key : `${key}:${this.lineCount}`;
  }

  /**
   * Add a turn. Its id is `${sessionId}:${uuid ?? line}`, with `:1`, `:2` … for further turns
   * from the same line. Returns null for an empty text (nothing worth storing).
   */
  turn(session: SessionAcc, input: TurnInput): TurnRecord | null {
    const limit = input.limit ?? ROLE_LIMIT[input.role];
    // A text of ordinary size is sanitized whole once: the stored text is cut from it and its
    // facts are read from it, so no secret detector runs twice over the same characters. A huge
    // one (a 50 MB output) is sanitized only where it is kept, its facts checked in their lines.
    let sanitized: string | null = null;
    let cleaned: string;
    if (input.role !== 'tool_call' && input.text.length > 0 && input.text.length <= WHOLE_SANITIZE_MAX) {
      sanitized = this.redact(input.text);
      cleaned = this.cut(sanitized, limit);
    } else {
      cleaned = this.clean(input.text, limit);
    }
    // Tool results pass the same output as text and summary: sanitize it once.
    const toolInput =
      input.toolInput == null ? null : input.toolInput === input.text && limit === LIMITS.tool ? cleaned : this.clean(input.toolInput, LIMITS.tool);
    const text = cleaned.trim();
    if (text.length === 0 && toolInput === null) {
      this.pass('empty text');
      return null;
    }
    const id = input.id ?? this.allocateId(session, input.uuid, input.line);
    const previous = this.emitted.get(id);
    if (previous && input.id === undefined) {
      this.pass('repeated line');
      return null;
    }
    this.mark('stored');
    const turn: TurnRecord = {
      id,
      sessionId: session.id,
      seq: input.seq ?? session.seq++,
      role: input.role,
      text,
      toolName: input.toolName ?? null,
      toolInput,
      toolUseId: input.toolUseId ?? null,
      isError: input.isError ?? false,
      flags: input.flags ?? [],
      at: input.at,
      sourceUuid: input.uuid,
      sourceLine: input.line,
    };
    if (previous) {
      // A merged message re-emitted in the same pass: update the earlier record in place.
      Object.assign(previous, turn);
      this.collectFacts(previous, input, sanitized);
      return previous;
    }
    this.emitted.set(id, turn);
    this.turns.push(turn);
    this.touched.add(session.id);
    this.time(session, input.at);
    this.collectFacts(turn, input, sanitized);
    this.observer?.(turn, { text: input.text, toolInput: input.toolInput ?? null });
    return turn;
  }

  /**
   * The facts of a turn just added, from the full text the reader gave (never from the bounded
   * text): `sanitized` is that text already sanitized whole, else the sink redacts each fact.
   */
  private collectFacts(turn: TurnRecord, input: TurnInput, sanitized: string | null): void {
    const callKey = input.toolUseId != null ? `${turn.sessionId}|${input.toolUseId}` : null;
    const call = turn.role === 'tool_result' && callKey !== null ? (this.calls.get(callKey) ?? null) : null;
    let found;
    try {
      found = extractTurnFacts({
        role: turn.role,
        text: turn.role === 'tool_call' ? '' : (sanitized ?? storable(input.text)),
        sanitized: sanitized !== null,
        toolName: turn.toolName,
        toolArgs: turn.role === 'tool_call' ? (input.toolArgs !== undefined ? input.toolArgs : (input.toolInput ?? input.text)) : undefined,
        flags: turn.flags,
        isError: turn.isError,
        call,
      });
    } catch (error) {
      // A bug in a scanner must not cost the file: the turn is kept, the miss is counted.
      this.stats.factErrors++;
      this.bad(input.line, `facts not extracted: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    this.stats.factsRedacted += found.redacted;
    for (const fact of found.facts) {
      this.facts.push({
        id: this.factId(turn.sessionId, fact.kind, fact.text),
        sessionId: turn.sessionId,
        kind: fact.kind,
        text: fact.text,
        path: fact.path,
        line: fact.line,
        note: fact.note,
        turnId: turn.id,
        seq: turn.seq,
        role: turn.role,
        toolName: turn.toolName,
        at: turn.at,
      });
    }
    if (turn.role === 'tool_call' && callKey !== null) {
      this.calls.delete(callKey);
      this.calls.set(callKey, { turnId: turn.id, seq: turn.seq, at: turn.at, toolName: turn.toolName ?? 'tool', command: found.command, path: found.path, firstLine: found.firstLine });
      if (this.calls.size > MAX_CALLS) this.calls.delete(this.calls.keys().next().value as string);
    }
    if (call !== null && callKey !== null) {
      this.calls.delete(callKey);
      // The command's outcome belongs to the command, on the call's turn.
      if (call.command !== null && found.commandNote !== null) {
        this.facts.push({
          id: this.factId(turn.sessionId, 'command', call.command),
          sessionId: turn.sessionId,
          kind: 'command',
          text: call.command,
          path: null,
          line: null,
          note: found.commandNote,
          turnId: call.turnId,
          seq: call.seq,
          role: 'tool_call',
          toolName: call.toolName,
          at: call.at,
        });
      }
    }
  }

  /**
   * {@link factId}, remembered per session and kind by the fact's text (no key string is made: the
   * text is the string the scanner cut, hashed once for every look-up it takes part in).
   */
  private factId(sessionId: string, kind: FactKind, text: string): string {
    let byKind = this.factIds.get(sessionId);
    if (byKind === undefined) this.factIds.set(sessionId, (byKind = new Map()));
    let byText = byKind.get(kind);
    if (byText === undefined) byKind.set(kind, (byText = new Map()));
    let id = byText.get(text);
    if (id === undefined) {
      id = factId(sessionId, kind, text);
      if (this.factIdCount >= MAX_IDS) {
        // A pure function of its inputs: forgetting changes no id.
        for (const kinds of this.factIds.values()) for (const texts of kinds.values()) texts.clear();
        this.factIdCount = 0;
      }
      byText.set(text, id);
      this.factIdCount++;
    }
    return id;
  }

  compaction(record: Omit<CompactionRecord, 'summary'> & { summary: string | null }): CompactionRecord {
    const compaction: CompactionRecord = {
      ...record,
      summary: record.summary === null ? null : this.clean(record.summary, LIMITS.summary),
    };
    const existing = this.compactions.findIndex((c) => c.id === compaction.id);
    if (existing >= 0) this.compactions[existing] = compaction;
    else this.compactions.push(compaction);
    this.mark('stored');
    this.touched.add(record.sessionId);
    return compaction;
  }

  bad(line: number, reason: string): void {
    this.stats.badLines.push({ line, reason });
    this.mark('bad');
  }

  /** The line is injected context (`isMeta`, environment blocks …), dropped on purpose. */
  meta(): void {
    this.stats.metaDropped++;
    this.mark('meta');
  }

  /** The line was read and is deliberately not kept (`reason`: what kind of line it is). */
  pass(reason: string): void {
    if (OUTCOME_RANK.passed > OUTCOME_RANK[this.outcome]) {
      this.outcome = 'passed';
      this.passReason = reason;
    }
  }

  /** Something of the line was kept in the session itself (its cwd, its token totals …). */
  kept(): void {
    this.mark('stored');
  }

  private mark(outcome: Outcome): void {
    if (OUTCOME_RANK[outcome] > OUTCOME_RANK[this.outcome]) this.outcome = outcome;
  }

  /** Start accounting for a new line. */
  beginLine(): void {
    this.outcome = 'none';
    this.passReason = '';
  }

  /** Count the line just read under its outcome (a line that left no trace is "nothing to keep"). */
  endLine(): void {
    const o = this.stats.outcomes;
    switch (this.outcome) {
      case 'stored':
      case 'bad':
      case 'unknown':
      case 'meta':
        o[this.outcome]++;
        break;
      case 'passed':
        o.passed[this.passReason] = (o.passed[this.passReason] ?? 0) + 1;
        break;
      default:
        o.passed['nothing to keep'] = (o.passed['nothing to keep'] ?? 0) + 1;
    }
    this.outcome = 'none';
  }

  unknown(type: string): void {
    const key = type.length > 60 ? `${type.slice(0, 60)}…` : type;
    this.stats.unknownTypes[key] = (this.stats.unknownTypes[key] ?? 0) + 1;
    this.mark('unknown');
  }

  /** Sessions touched in this pass as records; corrections; the state to carry forward. */
  finish(): BuiltBatch {
    const sessions: SessionRecord[] = [];
    for (const id of this.touched) {
      const acc = this.sessions.get(id);
      if (!acc) continue;
      sessions.push({
        id: acc.id,
        agent: this.agent,
        project: null,
        cwd: acc.cwd,
        branch: acc.branch,
        parentId: acc.parentId,
        startedAt: acc.startedAt,
        endedAt: acc.endedAt,
        inputTokens: acc.inputTokens,
        outputTokens: acc.outputTokens,
        cacheReadTokens: acc.cacheReadTokens,
        cacheCreationTokens: acc.cacheCreationTokens,
        compactions: 0,
        sourcePath: this.path,
        title: acc.title,
      });
    }
    const corrections = findCorrections(this.turns, { lastAgent: this.lastAgent, pending: this.pending, ifConceded: new Map() });
    // Ids, paths, names come from the lines as they are: lone surrogates and escape sequences go.
    for (const record of sessions) storableFields(record);
    for (const record of this.turns) storableFields(record);
    for (const record of this.compactions) storableFields(record);
    for (const record of this.facts) storableFields(record);
    for (const record of corrections) storableFields(record);
    const state: BuilderState = {
      sessions: Object.fromEntries(this.sessions),
      lastAgent: Object.fromEntries(this.lastAgent),
      pending: Object.fromEntries(this.pending),
      calls: [...this.calls.entries()].slice(-MAX_CALLS),
    };
    this.stats.facts += this.facts.length;
    return { sessions, turns: this.turns, compactions: this.compactions, corrections, facts: this.facts, state };
  }
}
