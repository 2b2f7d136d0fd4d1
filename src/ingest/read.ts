/**
 * Read one transcript file from its cursor: the pure, worker-safe entry point of ingest.
 *
 * Given the file's previous cursor it checks that the file is still the same file (the head
 * hash of the bytes the cursor saw, and the size), continues from the cursor's offset with the
 * reader's saved state — or starts again from byte 0 when the file was rewritten, replaced or
 * truncated — and returns the records and the new cursor, ready to be written in one
 * transaction. It never throws for bad input: malformed lines are counted, unreadable files
 * come back with `skipped`.
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { IngestCursor } from '../types.js';
import { BatchBuilder, type BuilderState } from './builder.js';
import { detectFormat } from './detect.js';
import { scanLines } from './lines.js';
import { createAiderParser } from './readers/aider.js';
import { createClaudeCodeParser } from './readers/claude-code.js';
import { createCodexParser } from './readers/codex.js';
import { createCursorParser } from './readers/cursor.js';
import { parseGeminiDocument, createGeminiLineParser } from './readers/gemini.js';
import { createGenericParser } from './readers/generic.js';
import type { DocumentParser, LineParserFactory } from './readers/shared.js';
import { isObject } from './text.js';
import { FORMAT_AGENT, TRANSCRIPT_FORMATS, emptyStats, outcomeTotal, type ReadOptions, type ReadResult, type TranscriptFormat } from './types.js';

/** Bytes hashed to recognise a file again. */
export const HEAD_BYTES = 4096;
/** Bytes looked at to detect a format. */
const SNIFF_BYTES = 64 * 1024;
/** Whole-document formats larger than this are passed over. */
const MAX_DOCUMENT_BYTES = 256 * 1024 * 1024;
const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
const DEFAULT_MAX_LINE = 128 * 1024 * 1024;

const LINE_READERS: Partial<Record<TranscriptFormat, LineParserFactory>> = {
  'claude-code': createClaudeCodeParser,
  codex: createCodexParser,
  'gemini-jsonl': createGeminiLineParser,
  aider: createAiderParser,
  cursor: createCursorParser,
  generic: createGenericParser,
};

const DOCUMENT_READERS: Partial<Record<TranscriptFormat, DocumentParser>> = {
  'gemini-json': parseGeminiDocument,
};

/** What a cursor's `state` holds. */
interface CursorState {
  format: TranscriptFormat | null;
  /** Lines consumed so far. */
  line: number;
  builder: BuilderState | null;
  reader: unknown;
}

function cursorState(cursor: IngestCursor | null): CursorState | null {
  if (cursor === null || !isObject(cursor.state)) return null;
  const { format, line, builder, reader } = cursor.state;
  const knownFormat = typeof format === 'string' && (TRANSCRIPT_FORMATS as readonly string[]).includes(format);
  return {
    format: knownFormat ? (format as TranscriptFormat) : null,
    line: typeof line === 'number' ? line : 0,
    builder: isObject(builder) ? (builder as unknown as BuilderState) : null,
    reader,
  };
}

function sha256(buffer: Buffer): string {
  return createHash('sha256').update(buffer).digest('hex');
}

function readHead(fd: number, size: number, bytes: number): Buffer {
  const length = Math.min(size, bytes);
  const buffer = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const n = readSync(fd, buffer, filled, length - filled, filled);
    if (n === 0) break;
    filled += n;
  }
  return buffer.subarray(0, filled);
}

function skippedResult(reason: string, cursor: IngestCursor | null): ReadResult {
  return {
    batch: { sessions: [], turns: [], compactions: [], corrections: [], facts: [], cursor },
    stats: emptyStats(),
    format: null,
    skipped: reason,
    restarted: false,
    done: true,
  };
}

/**
 * Read `path` from `previous` (null: from the start). Never throws for bad or unreadable input.
 * @example
 * const { batch, stats } = readTranscript('/home/me/.claude/projects/-repo/abc.jsonl', await store.getCursor(path));
 * await store.writeSubstrate(batch);
 */
export function readTranscript(path: string, previous: IngestCursor | null, options: ReadOptions = {}): ReadResult {
  const now = options.now ?? Date.now();
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    return skippedResult(`cannot open: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, null);
  }
  try {
    try {
      return readOpen(fd, path, previous, options, now);
    } catch (error) {
      // A cursor state this code cannot continue from (damaged, or written by another version):
      // read the file again from its start rather than never again.
      if (previous === null || (error as NodeJS.ErrnoException).code !== undefined) throw error;
      const result = readOpen(fd, path, null, options, now);
      return { ...result, restarted: true };
    }
  } catch (error) {
    // An I/O error mid-read (EISDIR, EIO, the file vanished): pass the file over, keep the cursor.
    return skippedResult(`cannot read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, null);
  } finally {
    closeSync(fd);
  }
}

function readOpen(fd: number, path: string, previous: IngestCursor | null, options: ReadOptions, now: number): ReadResult {
  const stat = fstatSync(fd);
  if (!stat.isFile()) return skippedResult('not a regular file', null);
  const size = stat.size;
  const head = readHead(fd, size, SNIFF_BYTES);
  const headHash = sha256(head.subarray(0, Math.min(size, HEAD_BYTES)));

  let saved = cursorState(previous);
  let restarted = false;
  if (previous !== null && saved !== null) {
    if (saved.format === null) {
      // It was not a transcript when last seen; it changed since, so look again.
      saved = null;
    } else {
      const sameHead = sha256(head.subarray(0, Math.min(previous.size, HEAD_BYTES, head.length))) === previous.headHash;
      if (!sameHead || size < previous.offset) {
        restarted = true;
        saved = null;
      }
    }
  }

  let format: TranscriptFormat | null = options.format ?? saved?.format ?? null;
  if (format === null) {
    const detection = detectFormat(path, head.toString('utf8'));
    if (detection.format === null) {
      // Remember the verdict so an unchanged file is skipped by its stat alone next time.
      const cursor: IngestCursor = {
        path,
        size,
        mtimeMs: stat.mtimeMs,
        offset: size,
        headHash,
        state: { format: null, skipped: detection.reason },
        updatedAt: now,
      };
      return skippedResult(detection.reason, cursor);
    }
    format = detection.format;
    saved = null;
  }

  const agent = FORMAT_AGENT[format];
  const documentReader = DOCUMENT_READERS[format];
  const lineReader = LINE_READERS[format];
  // Documents are always read whole, so their totals start from nothing each time.
  const builder = new BatchBuilder(agent, path, documentReader === undefined ? (saved?.builder ?? null) : null, options.onTurn ?? null);
  let offset = saved !== null && previous !== null ? previous.offset : 0;
  let line = saved?.line ?? 0;
  let done = true;
  let readerState: unknown = null;
  if (documentReader !== undefined) {
    // Whole-document formats are rewritten in place by their agent: always read them whole.
    builder.beginLine();
    if (size > MAX_DOCUMENT_BYTES) {
      builder.bad(1, `document larger than ${MAX_DOCUMENT_BYTES} bytes`);
    } else {
      const text = size <= head.length ? head.toString('utf8') : readHead(fd, size, size).toString('utf8');
      documentReader(builder, path, text);
    }
    builder.endLine();
    line = 1;
    builder.stats.lines = 1;
    offset = size;
    builder.stats.bytes = size;
  } else if (lineReader !== undefined) {
    const parser = lineReader(builder, path, saved?.reader ?? null);
    const startOffset = offset;
    const scan = scanLines(
      fd,
      offset,
      line,
      (text, lineNo, lineOffset) => {
        builder.beginLine();
        parser.line(text, lineNo, lineOffset);
        builder.endLine();
      },
      (lineNo, bytes) => {
        builder.beginLine();
        builder.bad(lineNo, `line of ${bytes} bytes exceeds the ${options.maxLineBytes ?? DEFAULT_MAX_LINE} byte limit`);
        builder.endLine();
      },
      { maxBytes: options.maxBytes ?? DEFAULT_MAX_BYTES, maxLineBytes: options.maxLineBytes ?? DEFAULT_MAX_LINE },
    );
    const ended = parser.end(scan.done);
    readerState = ended.state;
    offset = scan.offset;
    builder.stats.lines = scan.line - line;
    // Blank lines are never handed to the reader: count them here, so every line has an outcome.
    const blank = builder.stats.lines - outcomeTotal(builder.stats.outcomes);
    if (blank > 0) builder.stats.outcomes.passed['blank line'] = (builder.stats.outcomes.passed['blank line'] ?? 0) + blank;
    line = scan.line;
    // A rewind that would not move past where this pass started (one block larger than
    // maxBytes) is ignored, so a caller looping until done always makes progress.
    if (ended.rewind !== undefined && (scan.done || ended.rewind.offset > startOffset)) {
      offset = ended.rewind.offset;
      line = ended.rewind.line;
    }
    builder.stats.bytes = Math.max(0, scan.offset - startOffset);
    done = scan.done;
  }

  const built = builder.finish();
  const state: CursorState = { format, line, builder: built.state, reader: readerState };
  const cursor: IngestCursor = {
    path,
    size,
    mtimeMs: stat.mtimeMs,
    offset,
    headHash,
    state: state as unknown as Record<string, unknown>,
    updatedAt: now,
  };
  return {
    batch: { sessions: built.sessions, turns: built.turns, compactions: built.compactions, corrections: built.corrections, facts: built.facts, cursor },
    stats: builder.stats,
    format,
    restarted,
    done,
  };
}
