/**
 * What the SQLite and PostgreSQL substrates share: the rows of sessions, compactions,
 * corrections and session facts (same columns in both schemas), how fact occurrences are summed
 * up, and what part of a turn is indexed.
 */
import type {
  Agent,
  CompactionRecord,
  CorrectionRecord,
  FactKind,
  FactListOptions,
  FactSource,
  SessionFact,
  SessionFactDetail,
  SessionRecord,
  TurnRecord,
  TurnRole,
} from '../types.js';
import { indexText } from './tokenize.js';

export interface SessionRow {
  id: string;
  agent: string;
  project: string | null;
  cwd: string | null;
  branch: string | null;
  parent_id: string | null;
  started_at: number | null;
  ended_at: number | null;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_creation_tokens: number;
  compactions: number;
  source_path: string;
  title: string | null;
}

export function rowToSession(row: SessionRow): SessionRecord {
  return {
    id: row.id,
    agent: row.agent as Agent,
    project: row.project,
    cwd: row.cwd,
    branch: row.branch,
    parentId: row.parent_id,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    cacheReadTokens: row.cache_read_tokens,
    cacheCreationTokens: row.cache_creation_tokens,
    compactions: row.compactions,
    sourcePath: row.source_path,
    title: row.title,
  };
}

export interface CompactionRow {
  id: string;
  session_id: string;
  trigger: string | null;
  pre_tokens: number | null;
  summary: string | null;
  at: number | null;
  seq: number;
  source_line: number;
}

export function rowToCompaction(row: CompactionRow): CompactionRecord {
  return {
    id: row.id,
    sessionId: row.session_id,
    trigger: row.trigger === 'manual' || row.trigger === 'auto' ? row.trigger : null,
    preTokens: row.pre_tokens,
    summary: row.summary,
    at: row.at,
    seq: row.seq,
    sourceLine: row.source_line,
  };
}

export interface CorrectionRow {
  id: string;
  session_id: string;
  premise_turn_id: string | null;
  correction_turn_id: string;
  kind: string;
  lang: string | null;
  text: string;
  at: number | null;
}

export function rowToCorrection(row: CorrectionRow): CorrectionRecord {
  return {
    id: row.id,
    sessionId: row.session_id,
    premiseTurnId: row.premise_turn_id,
    correctionTurnId: row.correction_turn_id,
    kind: row.kind as CorrectionRecord['kind'],
    lang: row.lang,
    text: row.text,
    at: row.at,
  };
}

/** How much of a tool's output is indexed: its head and its tail. */
const TOOL_OUTPUT_HEAD = 600;
const TOOL_OUTPUT_TAIL = 200;

/**
 * The text a turn is indexed under, before tokenizing: its tool name and its text — all of it
 * for the user's and the agent's words, the head and tail of a tool's output (tokenizing whole
 * outputs would cost most of ingest's time for little recall; the stored text keeps them).
 */
export function turnIndexSource(turn: Pick<TurnRecord, 'text' | 'toolName' | 'role'>): string {
  let text = turn.text ?? '';
  if (turn.role === 'tool_result' && text.length > TOOL_OUTPUT_HEAD + TOOL_OUTPUT_TAIL) {
    text = `${text.slice(0, TOOL_OUTPUT_HEAD)} ${text.slice(text.length - TOOL_OUTPUT_TAIL)}`;
  }
  return turn.toolName === null ? text : `${turn.toolName} ${text}`;
}

/**
 * The text a turn is indexed under (see turnIndexSource), tokenized. Pure, so ingest workers
 * compute it ahead into `TurnRecord.terms`.
 * @example turn.terms = turnIndexText(turn);
 */
export function turnIndexText(turn: Pick<TurnRecord, 'text' | 'toolName' | 'role'>): string {
  return indexText(turnIndexSource(turn));
}

/** A `session_facts` row's own columns. */
export interface FactColumnsRow {
  id: string;
  session_id: string;
  kind: string;
  text: string;
  path: string | null;
  line: number | null;
}

/** One occurrence of a fact joined with the fact: what both stores select to list facts. */
export interface FactRefRow extends FactColumnsRow {
  turn_id: string;
  seq: number;
  role: string;
  tool_name: string | null;
  at: number | null;
  note: string | null;
}

/** The columns of {@link FactRefRow}, for `SELECT` (facts aliased `f`, occurrences `r`). */
export const FACT_REF_COLUMNS = 'f.id, f.session_id, f.kind, f.text, f.path, f.line, r.turn_id, r.seq, r.role, r.tool_name, r.at, r.note';

/** Default half-width of `FactListOptions.nearSeq`'s window, in turns. */
export const FACT_NEAR_WINDOW = 20;
/** Default `FactListOptions.limit`. */
export const FACT_LIST_LIMIT = 500;

function sourceOf(row: FactRefRow): FactSource {
  return { turnId: row.turn_id, seq: row.seq, role: row.role as TurnRole, toolName: row.tool_name, at: row.at, note: row.note };
}

/**
 * Sum up fact occurrences (in any order) into one {@link SessionFactDetail} per fact, with its
 * occurrences oldest first. Shared so both stores count, order and pick notes the same way.
 */
export function factsFromRows(rows: readonly FactRefRow[]): SessionFactDetail[] {
  const byId = new Map<string, { row: FactRefRow; sources: FactSource[] }>();
  for (const row of rows) {
    const entry = byId.get(row.id);
    if (entry === undefined) byId.set(row.id, { row, sources: [sourceOf(row)] });
    else entry.sources.push(sourceOf(row));
  }
  const facts: SessionFactDetail[] = [];
  for (const { row, sources } of byId.values()) {
    sources.sort((a, b) => a.seq - b.seq || (a.turnId < b.turnId ? -1 : a.turnId > b.turnId ? 1 : 0));
    let note: string | null = null;
    for (let i = sources.length - 1; i >= 0 && note === null; i--) note = sources[i]?.note ?? null;
    facts.push({
      id: row.id,
      sessionId: row.session_id,
      kind: row.kind as FactKind,
      text: row.text,
      path: row.path,
      line: row.line,
      note,
      occurrences: sources.length,
      first: sources[0] as FactSource,
      last: sources[sources.length - 1] as FactSource,
      byUser: sources.some((s) => s.role === 'user'),
      sources,
    });
  }
  return facts;
}

/** Without its occurrence list. */
export function factSummary(fact: SessionFactDetail): SessionFact {
  const { sources: _sources, ...summary } = fact;
  return summary;
}

/**
 * The facts a listing returns from the occurrences selected by seq range and kind: those near
 * `nearSeq` when asked, most recently seen first, at most `limit`.
 */
export function listedFacts(rows: readonly FactRefRow[], options: FactListOptions): SessionFact[] {
  let facts = factsFromRows(rows);
  if (options.nearSeq !== undefined) {
    const near = options.nearSeq;
    const window = options.window ?? FACT_NEAR_WINDOW;
    facts = facts.filter((fact) => fact.sources.some((s) => Math.abs(s.seq - near) <= window));
  }
  facts.sort((a, b) => b.last.seq - a.last.seq || b.occurrences - a.occurrences || (a.id < b.id ? -1 : 1));
  return facts.slice(0, Math.max(0, options.limit ?? FACT_LIST_LIMIT)).map(factSummary);
}

/** The text a fact is indexed under (before tokenizing): its text as written. */
export function factIndexSource(fact: { text: string }): string {
  return fact.text;
}

/** A fact's full-text index terms (SQLite, or `FactRecord.terms` computed ahead by ingest workers). */
export function factIndexText(fact: { text: string }): string {
  return indexText(factIndexSource(fact));
}

/** A `turns` row as a driver returns it; `is_error` and `flags` as the dialect stores them. */
export interface StoredTurnRow {
  id: string;
  session_id: string;
  seq: number;
  role: string;
  text: string;
  tool_name: string | null;
  tool_input: string | null;
  tool_use_id: string | null;
  is_error: unknown;
  flags: unknown;
  at: number | null;
  source_uuid: string | null;
  source_line: number;
}

/** How a dialect stores a turn's error mark (0/1, boolean) and flags (JSON text, text[]). */
export interface TurnDecoding {
  isError(value: unknown): boolean;
  flags(value: unknown): string[];
}

export function rowToTurn(row: StoredTurnRow, decode: TurnDecoding): TurnRecord {
  return {
    id: row.id,
    sessionId: row.session_id,
    seq: row.seq,
    role: row.role as TurnRole,
    text: row.text,
    toolName: row.tool_name,
    toolInput: row.tool_input,
    toolUseId: row.tool_use_id,
    isError: decode.isError(row.is_error),
    flags: decode.flags(row.flags),
    at: row.at,
    sourceUuid: row.source_uuid,
    sourceLine: row.source_line,
  };
}

const SNIPPET_RADIUS = 80;

/** A short excerpt of `text` around the first place a query term (or its stem) occurs. */
export function snippetFor(text: string, terms: string[]): string {
  const lower = text.toLowerCase();
  let best = -1;
  let length = 0;
  for (const term of terms) {
    for (const candidate of [term, term.replaceAll('_', ' '), term.length > 5 ? term.slice(0, Math.max(4, term.length - 3)) : null]) {
      if (candidate === null) continue;
      const at = lower.indexOf(candidate);
      if (at >= 0 && (best < 0 || at < best)) {
        best = at;
        length = candidate.length;
        break;
      }
    }
  }
  const flat = (s: string): string => s.replace(/\s+/g, ' ');
  if (best < 0) return flat(text.length > 2 * SNIPPET_RADIUS ? `${text.slice(0, 2 * SNIPPET_RADIUS)}…` : text);
  const start = Math.max(0, best - SNIPPET_RADIUS);
  const end = Math.min(text.length, best + length + SNIPPET_RADIUS);
  return flat(`${start > 0 ? '…' : ''}${text.slice(start, end)}${end < text.length ? '…' : ''}`);
}
