import { closeSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Cairn } from '../cairn.js';
import { LIMITS, bound, contentText } from '../ingest/text.js';
import { storable } from '../ingest/wellformed.js';
import { sanitize } from '../privacy/redact.js';
import type { TurnRecord } from '../types.js';

/**
 * After /compact, what Claude Code appended to a transcript the PreCompact hook had ingested: the
 * compact boundary and the summary. SessionStart(compact) reads them here — a small parse, none of
 * the ingest and distill modules — builds its context with them, and leaves their ingest to a
 * detached child (src/hooks/run.ts). Anything else past the ingest cursor sends the hook down the
 * synchronous path, which ingests first as before.
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
  /** The boundary and summary turns, in transcript order. */
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

/** One tail line as a pending turn; null for any line that is not a compact boundary or summary of `session`. */
function tailTurn(line: unknown, session: string): PendingTurn | null {
  if (!isObject(line) || line.sessionId !== session || line.isSidechain === true) return null;
  const at = timeOf(line.timestamp);
  if (line.type === 'system' && line.subtype === 'compact_boundary') {
    const meta = isObject(line.compactMetadata) ? line.compactMetadata : null;
    const trigger = meta?.trigger === 'manual' || meta?.trigger === 'auto' ? meta.trigger : null;
    const preTokens = typeof meta?.preTokens === 'number' ? meta.preTokens : null;
    const details = [trigger, preTokens !== null ? `${preTokens} tokens` : null].filter((d) => d !== null).join(', ');
    return { role: 'system', text: details.length > 0 ? `Conversation compacted (${details})` : 'Conversation compacted', flags: ['compact-boundary'], at };
  }
  if (line.type !== 'user' || line.isMeta === true || !isObject(line.message)) return null;
  const content = line.message.content;
  if (line.isCompactSummary !== true && !(typeof content === 'string' && content.startsWith(CONTINUED))) return null;
  const raw = contentText(content);
  // A longer summary is cut by ingest in another order: left to ingest.
  if (raw.length > 64 * 1024) return null;
  const text = storedText(raw, LIMITS.summary);
  return text.length > 0 ? { role: 'summary', text, flags: ['compact-summary'], at } : null;
}

/**
 * The compaction lines `path` holds past its ingest cursor, when they are all it holds there: a
 * cursor exists (the PreCompact hook ingested the transcript), no ingest run waits to be distilled,
 * at most {@link COMPACT_TAIL_MAX_BYTES} are new, and every new line — whole, valid UTF-8 JSON — is
 * `session`'s compact boundary or summary, with a summary among them. Null otherwise: the caller
 * ingests as before (ingest checks what this does not, such as a replaced file's head).
 */
export async function compactTail(cairn: Cairn, path: string, session: string): Promise<CompactTail | null> {
  const substrate = cairn.deps.store.substrate;
  if (!cairn.deps.store.capabilities.substrate || !substrate) return null;
  let file: string;
  let size: number;
  try {
    file = realpathSync(resolve(path));
    size = statSync(file).size;
  } catch {
    return null;
  }
  const cursor = await substrate.getCursor(file);
  if (cursor === null || cursor.offset > size || cursor.size > size) return null;
  const bytes = size - cursor.offset;
  if (bytes === 0 || bytes > COMPACT_TAIL_MAX_BYTES) return null;
  const runs = await cairn.deps.store.getState(RUNS_KEY);
  if (runs !== null && runs !== '') return null;
  const buffer = Buffer.allocUnsafe(bytes);
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return null;
  }
  let read = 0;
  try {
    while (read < bytes) {
      const n = readSync(fd, buffer, read, bytes - read, cursor.offset + read);
      if (n === 0) break;
      read += n;
    }
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
  if (read !== bytes || buffer[bytes - 1] !== 0x0a) return null;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(buffer);
  } catch {
    return null;
  }
  const turns: PendingTurn[] = [];
  for (const line of text.split('\n')) {
    if (line.trim().length === 0) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return null;
    }
    const turn = tailTurn(value, session);
    if (turn === null) return null;
    turns.push(turn);
  }
  return turns.some((t) => t.role === 'summary') ? { turns, bytes } : null;
}
