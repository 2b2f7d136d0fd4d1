/**
 * What the SQLite and PostgreSQL substrates share: the rows of sessions, compactions and
 * corrections (same columns in both schemas) and what part of a turn is indexed.
 */
import type { Agent, CompactionRecord, CorrectionRecord, SessionRecord, TurnRecord } from '../types.js';

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
