/**
 * Types shared by the transcript readers and the incremental runner. Everything a reader takes
 * and returns is plain data (structured-clone safe), so readers can run inside worker threads.
 */
import type { Agent, SubstrateBatch, TurnRecord } from '../types.js';

/** The transcript layouts cairn reads. */
export const TRANSCRIPT_FORMATS = ['claude-code', 'codex', 'gemini-jsonl', 'gemini-json', 'aider', 'cursor', 'generic'] as const;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];

/** The agent each format belongs to. */
export const FORMAT_AGENT: Record<TranscriptFormat, Agent> = {
  'claude-code': 'claude-code',
  codex: 'codex',
  'gemini-jsonl': 'gemini',
  'gemini-json': 'gemini',
  aider: 'aider',
  cursor: 'cursor',
  generic: 'generic',
};

/** A malformed line: 1-based line number and why it was passed over. */
export interface BadLine {
  line: number;
  reason: string;
}

/** What one reader pass saw, besides the records it produced. */
export interface ReaderStats {
  /** Complete lines consumed (documents count as one line). */
  lines: number;
  badLines: BadLine[];
  /** Line types the reader does not know, with how often each was passed over. */
  unknownTypes: Record<string, number>;
  /** Bytes consumed (up to the last complete line). */
  bytes: number;
  /** Lines that are injected context (`isMeta`, `<system-reminder>`, caveats) and were dropped. */
  metaDropped: number;
  /** Distinct assistant messages started in this pass (Claude Code: distinct `message.id`s). */
  assistantMessages: number;
  /** Secrets redacted, by kind, as reported by the privacy sanitizer. */
  redactions: Record<string, number>;
  /** Session fact occurrences extracted from the turns of this pass. */
  facts: number;
  /** Facts redacted or dropped because a secret overlapped them. */
  factsRedacted: number;
  /** Turns whose facts could not be extracted (a scanner failed; counted, the turn is kept). */
  factErrors: number;
  /**
   * What became of each line consumed, exactly one outcome per line (`lines` is their sum):
   * `stored` (it gave a turn, a compaction or session data), `bad`, `unknown` (a type no reader
   * knows), `meta` (injected context), or `passed` (read and deliberately not kept, by reason:
   * bookkeeping lines, repeats, empty text, blank lines).
   */
  outcomes: LineOutcomes;
}

/** Lines by what became of them (see {@link ReaderStats.outcomes}). */
export interface LineOutcomes {
  stored: number;
  bad: number;
  unknown: number;
  meta: number;
  passed: Record<string, number>;
}

export function emptyOutcomes(): LineOutcomes {
  return { stored: 0, bad: 0, unknown: 0, meta: 0, passed: {} };
}

/** The number of lines the outcomes account for. */
export function outcomeTotal(outcomes: LineOutcomes): number {
  let total = outcomes.stored + outcomes.bad + outcomes.unknown + outcomes.meta;
  for (const n of Object.values(outcomes.passed)) total += n;
  return total;
}

/** Options for one reader pass. */
export interface ReadOptions {
  /**
   * Stop after consuming about this many bytes (at a line boundary); the runner calls again to
   * continue. Bounds memory and the size of one store transaction.
   * @default 64 MiB
   */
  maxBytes?: number;
  /**
   * A line longer than this is passed over as a bad line without being held in memory.
   * @default 128 MiB
   */
  maxLineBytes?: number;
  /** Timestamp written into the new cursor's `updatedAt`. @default Date.now() */
  now?: number;
  /** Force a format instead of detecting it from the path and the first line. */
  format?: TranscriptFormat;
  /**
   * Called for every turn added, with the full text and tool input the reader gave (before they
   * are sanitized and bounded). In-thread reads only (a function does not cross to a worker);
   * what `readConversation` is built on.
   */
  onTurn?: (turn: TurnRecord, full: { text: string; toolInput: string | null }) => void;
}

/** The result of reading one file from its cursor. */
export interface ReadResult {
  /** Records and the file's new cursor, ready for `SubstrateStore.writeSubstrate`. */
  batch: SubstrateBatch;
  stats: ReaderStats;
  /** The detected (or remembered) format; null when the file is not a transcript cairn reads. */
  format: TranscriptFormat | null;
  /** Why the file was passed over (not a transcript, unreadable, …); absent when it was read. */
  skipped?: string;
  /** True when the previous cursor no longer matched the file (rewritten, replaced, truncated). */
  restarted: boolean;
  /** True when the read stopped at the end of the file (false: `maxBytes` reached, call again). */
  done: boolean;
}

export function emptyStats(): ReaderStats {
  return {
    lines: 0,
    badLines: [],
    unknownTypes: {},
    bytes: 0,
    metaDropped: 0,
    assistantMessages: 0,
    redactions: {},
    facts: 0,
    factsRedacted: 0,
    factErrors: 0,
    outcomes: emptyOutcomes(),
  };
}
