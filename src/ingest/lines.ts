/**
 * Complete lines from a file descriptor, from a byte offset, with large buffered reads. A partial
 * last line (no `\n` yet: the agent is still writing it) is never consumed. A line longer than
 * `maxLineBytes` is passed over without being held in memory.
 */
import { readSync } from 'node:fs';

export interface LineScanOptions {
  /** Stop (at a line boundary) once this many bytes were consumed. */
  maxBytes: number;
  /** Longer lines are reported through `onTooLong` and skipped. */
  maxLineBytes: number;
  /** Size of one read. @default 4 MiB */
  chunkBytes?: number;
}

export interface LineScan {
  /** Byte offset just after the last complete line consumed. */
  offset: number;
  /** Number of the last line consumed (1-based, continuing from `startLine`). */
  line: number;
  /** True when the end of the file was reached (what is left, if anything, is a partial line). */
  done: boolean;
}

export type LineHandler = (text: string, line: number, offset: number) => void;

const NEWLINE = 10;
const CR = 13;

/**
 * Call `onLine` for every complete line from `start`. `startLine` is the number of lines before
 * `start`. Returns where reading stopped.
 */
export function scanLines(
  fd: number,
  start: number,
  startLine: number,
  onLine: LineHandler,
  onTooLong: (line: number, bytes: number) => void,
  options: LineScanOptions,
): LineScan {
  const chunk = Math.max(1024, Math.min(options.chunkBytes ?? 4 * 1024 * 1024, options.maxLineBytes + 1));
  let buf = Buffer.allocUnsafe(chunk);
  let filled = 0;
  /** File offset of buf[0]. */
  let bufStart = start;
  let readPos = start;
  let consumed = start;
  let line = startLine;
  let skipping = false;
  let skippedBytes = 0;

  for (;;) {
    if (consumed - start >= options.maxBytes) return { offset: consumed, line, done: false };
    const n = readSync(fd, buf, filled, buf.length - filled, readPos);
    if (n === 0) return { offset: consumed, line, done: true };
    readPos += n;
    filled += n;
    const view = buf.subarray(0, filled);
    let lineStart = 0;
    for (let nl = view.indexOf(NEWLINE, 0); nl !== -1; nl = view.indexOf(NEWLINE, lineStart)) {
      line++;
      if (skipping) {
        onTooLong(line, skippedBytes + nl);
        skipping = false;
        skippedBytes = 0;
      } else {
        const end = nl > lineStart && view[nl - 1] === CR ? nl - 1 : nl;
        if (end > lineStart) onLine(view.toString('utf8', lineStart, end), line, bufStart + lineStart);
      }
      lineStart = nl + 1;
      consumed = bufStart + lineStart;
      if (consumed - start >= options.maxBytes) return { offset: consumed, line, done: false };
    }
    const leftover = filled - lineStart;
    if (skipping) {
      skippedBytes += leftover;
      filled = 0;
      bufStart = readPos;
    } else if (leftover > options.maxLineBytes) {
      skipping = true;
      skippedBytes = leftover;
      filled = 0;
      bufStart = readPos;
    } else {
      if (lineStart > 0) buf.copy(buf, 0, lineStart, filled);
      filled = leftover;
      bufStart += lineStart;
      if (filled === buf.length) {
        const grown = Buffer.allocUnsafe(Math.min(buf.length * 2, options.maxLineBytes + 1 + chunk));
        buf.copy(grown, 0, 0, filled);
        buf = grown;
      }
    }
  }
}
