/**
 * Lines of a stream with a size limit (issue #17.5): a line longer than the limit is passed over
 * as it streams by — never held in memory whole — and reported as {@link LineTooLong}, so
 * `cairn import` of a file with a 2 GB line answers with that line's number, not with an
 * out-of-memory crash. Lines are split on `\n` (a trailing `\r` is dropped) and decoded as UTF-8
 * only once complete, so a character split across chunks is kept whole.
 */

/** Largest `cairn import` line accepted: 1 MiB (a memory's text is at most 8,192 characters). */
export const IMPORT_MAX_LINE_BYTES = 1024 * 1024;

/** A line that was over the limit: how many bytes it had. */
export interface LineTooLong {
  tooLong: number;
}

const NEWLINE = 10;

function finish(parts: Buffer[], size: number): string {
  const text = (parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, size)).toString('utf8');
  return text.endsWith('\r') ? text.slice(0, -1) : text;
}

/** Every line of `input` (chunks of bytes or text), with lines over `maxBytes` reported, not read. */
export async function* boundedLines(input: AsyncIterable<Buffer | string>, maxBytes: number = IMPORT_MAX_LINE_BYTES): AsyncGenerator<string | LineTooLong> {
  let parts: Buffer[] = [];
  let size = 0;
  /** Bytes of the current line when it is over the limit; -1 while it is not. */
  let skipped = -1;
  for await (const chunk of input) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let from = 0;
    for (;;) {
      const nl = buf.indexOf(NEWLINE, from);
      const end = nl === -1 ? buf.length : nl;
      const length = end - from;
      if (skipped >= 0) skipped += length;
      else if (size + length > maxBytes) {
        skipped = size + length;
        parts = [];
        size = 0;
      } else if (length > 0) {
        // A copy: the stream may reuse its chunk's memory.
        parts.push(Buffer.from(buf.subarray(from, end)));
        size += length;
      }
      if (nl === -1) break;
      if (skipped >= 0) yield { tooLong: skipped };
      else yield finish(parts, size);
      parts = [];
      size = 0;
      skipped = -1;
      from = nl + 1;
    }
  }
  if (skipped >= 0) yield { tooLong: skipped };
  else if (size > 0) yield finish(parts, size);
}
