/**
 * A transcript of any agent as one conversation with its compactions, for measuring what a
 * compaction loses (`cairn bench fidelity`) the same way for every agent that compacts: Claude
 * Code's compact boundary, Codex's `compacted` lines, Gemini CLI's `<state_snapshot>` compression.
 *
 * It reads the file with the same readers as ingest, so a compaction here is exactly what ingest
 * stores, but keeps each turn's FULL text and tool input as the agent wrote them (not sanitized,
 * not bounded): a measure of details needs every detail. Nothing is written anywhere.
 */
import type { Agent, CompactionRecord, TurnRecord } from '../types.js';
import { readTranscript } from './read.js';
import { FORMAT_AGENT, type TranscriptFormat } from './types.js';

/** One turn with its full text: a stored turn's identity, not its bounded text and input. */
export interface ConversationTurn extends Pick<TurnRecord, 'id' | 'sessionId' | 'seq' | 'role' | 'toolName' | 'flags' | 'at'> {
  /** The full text (tool output for a result), as the reader gave it. */
  text: string;
  /** A tool call's full arguments (JSON or raw); null otherwise. */
  toolInput: string | null;
  /** Line of the transcript the turn came from (1-based; documents: the message index). */
  line: number;
}

/** A compaction and where it falls in the conversation. */
export interface ConversationCompaction {
  /** The compaction record ingest stores for it (id = its boundary turn). */
  record: CompactionRecord;
  /** Index in `turns` of the boundary turn (flag `compact-boundary`). */
  boundaryIndex: number;
  /** The summary the agent continued from, when the transcript holds it. */
  summary: string | null;
}

export interface Conversation {
  agent: Agent | null;
  format: TranscriptFormat | null;
  turns: ConversationTurn[];
  compactions: ConversationCompaction[];
  /** Why the file could not be read as a transcript, when it could not. */
  skipped?: string;
}

/** One compaction's split: what came before it, the summary, what came after (up to the next one). */
export interface ConversationSplit {
  compaction: ConversationCompaction;
  /** Turns before the boundary (all of them, from the session's start). */
  before: ConversationTurn[];
  /** Turns after the boundary and its summary, up to the next boundary of the same session. */
  after: ConversationTurn[];
}

/**
 * Read `path` whole as a conversation.
 * @example
 * const conversation = readConversation('~/.codex/sessions/2026/01/02/rollout-….jsonl');
 * for (const split of splitConversation(conversation)) score(split.before, split.compaction.summary, split.after);
 */
export function readConversation(path: string, options: { format?: TranscriptFormat } = {}): Conversation {
  const turns: ConversationTurn[] = [];
  const byId = new Map<string, number>();
  const compactions: CompactionRecord[] = [];
  let cursor = null;
  let format: TranscriptFormat | null = null;
  for (;;) {
    const result = readTranscript(path, cursor, {
      ...(options.format !== undefined ? { format: options.format } : {}),
      onTurn: (turn: TurnRecord, full) => {
        const entry: ConversationTurn = {
          id: turn.id,
          sessionId: turn.sessionId,
          seq: turn.seq,
          role: turn.role,
          text: full.text,
          toolName: turn.toolName,
          toolInput: turn.role === 'tool_call' ? full.toolInput : null,
          flags: [...turn.flags],
          at: turn.at,
          line: turn.sourceLine ?? 0,
        };
        const known = byId.get(turn.id);
        if (known !== undefined) turns[known] = entry;
        else {
          byId.set(turn.id, turns.length);
          turns.push(entry);
        }
      },
    });
    if (result.skipped !== undefined) return { agent: null, format: null, turns: [], compactions: [], skipped: result.skipped };
    format = result.format;
    for (const compaction of result.batch.compactions) {
      const at = compactions.findIndex((c) => c.id === compaction.id);
      if (at >= 0) compactions[at] = compaction;
      else compactions.push(compaction);
    }
    const next = result.batch.cursor;
    if (result.done || next === null || (cursor !== null && next.offset <= cursor.offset)) break;
    cursor = next;
  }
  // Each session's turns in their order (a merged message re-emitted later keeps its place).
  const order = new Map<string, number>();
  for (const t of turns) if (!order.has(t.sessionId)) order.set(t.sessionId, order.size);
  turns.sort((a, b) => (order.get(a.sessionId) as number) - (order.get(b.sessionId) as number) || a.seq - b.seq);
  const index = new Map(turns.map((t, i) => [t.id, i]));
  return {
    agent: format === null ? null : FORMAT_AGENT[format],
    format,
    turns,
    compactions: compactions
      .map((record) => ({ record, boundaryIndex: index.get(record.id) ?? -1, summary: record.summary }))
      .filter((c) => c.boundaryIndex >= 0)
      .sort((a, b) => a.boundaryIndex - b.boundaryIndex),
  };
}

/** One split per compaction, in order (the turns of other sessions in the file are left out). */
export function splitConversation(conversation: Conversation): ConversationSplit[] {
  const { turns } = conversation;
  return conversation.compactions.map((compaction, k) => {
    const session = compaction.record.sessionId;
    const next = conversation.compactions.slice(k + 1).find((c) => c.record.sessionId === session);
    const end = next?.boundaryIndex ?? turns.length;
    const before = turns.slice(0, compaction.boundaryIndex).filter((t) => t.sessionId === session);
    const after = turns.slice(compaction.boundaryIndex + 1, end).filter((t) => t.sessionId === session && !t.flags.includes('compact-summary'));
    return { compaction, before, after };
  });
}
