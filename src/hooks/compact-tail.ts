import { closeSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Cairn } from '../cairn.js';
import { LIMITS, bound, contentText, tagContent } from '../ingest/text.js';
import { READ_TYPES } from '../ingest/readers/claude-code-lines.js';
import { storable } from '../ingest/wellformed.js';
import { sanitize } from '../privacy/redact.js';
import type { TurnRecord } from '../types.js';

/**
 * After /compact, what Claude Code wrote to a transcript the PreCompact hook had ingested, read by
 * SessionStart(compact) here — a small parse, none of the ingest and distill modules — so that it
 * builds its context without ingesting first and leaves the ingest to a detached child
 * (src/hooks/run.ts). Each line is decided by what ingest (src/ingest/readers/claude-code.ts) does
 * with it: lines it stores nothing from are passed over, the compact boundary, the summary and the
 * `/compact` command become the turns ingest would store, and anything else — a line of another
 * kind, one ingest would take facts from, anything doubtful — sends the hook down the synchronous
 * path, which ingests first as before.
 *
 * Claude Code 2.1.197 writes the compaction (boundary, summary, the `/compact` command and its
 * output) only after the SessionStart hooks are done: while the hook runs, all that is new is a
 * `mode` line (test/hooks/fixtures/claude-code-2.1.197-compact). The boundary and summary are read
 * here all the same, for a client that writes them first.
 */

/** Up to this many bytes past the ingest cursor are read here; more goes through ingest (the bound the hooks' inline ingests use too). */
export const COMPACT_TAIL_MAX_BYTES = 4 * 1024 * 1024;

/** The state key where ingest registers runs waiting to be distilled (src/history/resume.ts `RUNS_KEY`, see INGEST_RUNS_KEY in run.ts). */
const RUNS_KEY = 'ingest:runs';

/** How Claude Code opens a compaction summary written as a plain user message (src/ingest/readers/claude-code.ts). */
const CONTINUED = 'This session is being continued from a previous conversation';

/** The turns the tail adds, as ingest would store them but for their ids, sequence numbers and source lines. */
export type PendingTurn = Pick<TurnRecord, 'role' | 'text' | 'flags' | 'at'>;

export interface CompactTail {
  /** The turns ingest will store from the tail (none, or the compaction's), in transcript order. */
  turns: PendingTurn[];
  /** Bytes past the ingest cursor. */
  bytes: number;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function timeOf(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const t = Date.parse(value);
  return Number.isFinite(t) ? t : null;
}

/**
 * A text as ingest stores a turn of it (src/ingest/builder.ts `turn`, for texts up to 64 KB):
 * secrets redacted and `<private>` spans dropped, bounded to `max` (a cut sanitized again), trimmed.
 */
function storedText(raw: string, max: number): string {
  const sanitized = sanitize(storable(raw)).text;
  const bounded = bound(sanitized, max);
  return (bounded === sanitized ? sanitized : sanitize(storable(bounded)).text).trim();
}

/** How Claude Code writes the `/compact` command (and any slash command) as a user message. */
const COMMAND_NAME = '<command-name>';
/** The meta line before a slash command's lines; ingest stores nothing from it, with or without `isMeta`. */
const CAVEAT = '<local-command-caveat>';

/** `system` subtypes ingest stores nothing from (bookkeeping). */
const SYSTEM_NOTHING = new Set(['stop_hook_summary', 'turn_duration']);
/** Queue operations that only change which prompts wait (kept in the cursor; a `remove` stores the prompt as a turn). */
const QUEUE_NOTHING = new Set(['enqueue', 'dequeue', 'popAll']);

/** What ingest does with one tail line: a turn it stores, nothing, or a reason to leave the line to ingest. */
type LineOutcome = { turn: PendingTurn } | { nothing: true } | { ingest: string };

const NOTHING: LineOutcome = { nothing: true };

function tailLine(line: unknown, session: string): LineOutcome {
  if (!isObject(line)) return { ingest: 'a line that is not an object' };
  const type = line.type;
  // Types the reader does not read — bookkeeping, `mode`, `last-prompt`, Claude Code 2.1.3xx's
  // `atis-latch` and request log, a type a newer client adds: it stores nothing from them.
  if (typeof type === 'string' && !READ_TYPES.has(type)) return NOTHING;
  if (line.sessionId !== session || line.isSidechain === true) return { ingest: `a ${String(type)} line of another session or a sidechain` };
  if (type === 'queue-operation') return typeof line.operation === 'string' && QUEUE_NOTHING.has(line.operation) ? NOTHING : { ingest: `queue operation ${String(line.operation)}` };
  const at = timeOf(line.timestamp);
  if (type === 'system') {
    if (typeof line.subtype === 'string' && SYSTEM_NOTHING.has(line.subtype)) return NOTHING;
    if (line.subtype !== 'compact_boundary') return { ingest: `a system ${String(line.subtype)} line` };
    const meta = isObject(line.compactMetadata) ? line.compactMetadata : null;
    const trigger = meta?.trigger === 'manual' || meta?.trigger === 'auto' ? meta.trigger : null;
    const preTokens = typeof meta?.preTokens === 'number' ? meta.preTokens : null;
    const details = [trigger, preTokens !== null ? `${preTokens} tokens` : null].filter((d) => d !== null).join(', ');
    return { turn: { role: 'system', text: details.length > 0 ? `Conversation compacted (${details})` : 'Conversation compacted', flags: ['compact-boundary'], at } };
  }
  if (type !== 'user') return { ingest: `a ${String(type)} line` };
  if (line.isMeta === true) return NOTHING;
  if (!isObject(line.message)) return { ingest: 'a user line without a message' };
  const content = line.message.content;
  if (line.isCompactSummary === true || (typeof content === 'string' && content.startsWith(CONTINUED))) {
    const raw = contentText(content);
    // A longer summary is cut by ingest in another order: left to ingest.
    if (raw.length > 64 * 1024) return { ingest: 'a summary over 64 KB' };
    const text = storedText(raw, LIMITS.summary);
    return text.length > 0 ? { turn: { role: 'summary', text, flags: ['compact-summary'], at } } : { ingest: 'an empty summary' };
  }
  // Plain strings only: ingest strips <system-reminder> spans and joins blocks first, left to it.
  if (typeof content !== 'string' || content.includes('<system-reminder')) return { ingest: 'a user message' };
  const text = content.trim();
  if (text.startsWith(CAVEAT)) return NOTHING;
  if (text.startsWith(COMMAND_NAME)) {
    // Stored as the command line, flagged `slash-command` (no facts are taken from it).
    const name = (tagContent(text, 'command-name') ?? '').trim();
    const args = (tagContent(text, 'command-args') ?? '').trim();
    const command = storedText(`${name.startsWith('/') ? name : `/${name}`}${args.length > 0 ? ` ${args}` : ''}`, LIMITS.message);
    return command.length > 1 && command.length <= 1024 ? { turn: { role: 'user', text: command, flags: ['slash-command'], at } } : { ingest: 'a slash command' };
  }
  // The command's output (ingest takes facts from it), prompts, tool results: left to ingest.
  return { ingest: 'a user message' };
}

/**
 * What `path` holds past its ingest cursor, when ingest would store nothing from it but the turns
 * read here: a cursor exists (the PreCompact hook ingested the transcript), no ingest run waits to
 * be distilled, 1 to {@link COMPACT_TAIL_MAX_BYTES} bytes are new, and every new line — whole,
 * valid UTF-8 JSON — is one {@link tailLine} decides (`session`'s compaction lines, or lines ingest
 * passes over). Otherwise why not, in a few words: the caller ingests first, as before (ingest
 * checks what this does not, such as a replaced file's head).
 */
export async function compactTail(cairn: Cairn, path: string, session: string): Promise<CompactTail | string> {
  const substrate = cairn.deps.store.substrate;
  if (!cairn.deps.store.capabilities.substrate || !substrate) return 'no ingest cursors in this store';
  let file: string;
  let size: number;
  try {
    file = realpathSync(resolve(path));
    size = statSync(file).size;
  } catch {
    return 'transcript not readable';
  }
  const cursor = await substrate.getCursor(file);
  if (cursor === null) return 'transcript never ingested';
  // Codex fires SessionStart(compact) too; its rollout files are left to ingest.
  if (cursor.state.format !== 'claude-code') return 'not a Claude Code transcript';
  if (cursor.offset > size || cursor.size > size) return 'transcript shrank';
  const bytes = size - cursor.offset;
  if (bytes === 0) return 'nothing new';
  if (bytes > COMPACT_TAIL_MAX_BYTES) return 'over 4 MB new';
  const runs = await cairn.deps.store.getState(RUNS_KEY);
  if (runs !== null && runs !== '') return 'a distill pending';
  const buffer = Buffer.allocUnsafe(bytes);
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return 'transcript not readable';
  }
  let read = 0;
  try {
    while (read < bytes) {
      const n = readSync(fd, buffer, read, bytes - read, cursor.offset + read);
      if (n === 0) break;
      read += n;
    }
  } catch {
    return 'transcript not readable';
  } finally {
    closeSync(fd);
  }
  if (read !== bytes || buffer[bytes - 1] !== 0x0a) return 'a line not finished';
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(buffer);
  } catch {
    return 'not UTF-8';
  }
  const turns: PendingTurn[] = [];
  for (const line of text.split('\n')) {
    if (line.trim().length === 0) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return 'a line not JSON';
    }
    const outcome = tailLine(value, session);
    if ('ingest' in outcome) return outcome.ingest;
    if ('turn' in outcome) turns.push(outcome.turn);
  }
  return { turns, bytes };
}
