/**
 * Request body limits for `cairn serve` and `cairn ui` (issue #17.5): a body over the limit is
 * refused with 413 and a JSON error before it is read — at once when `Content-Length` says so,
 * after at most the limit's bytes when the body is chunked — and before any token is checked, so
 * no caller, read-only tokens included, can make the server hold a large body. The connection is
 * closed after the 413 so the rest of the body is not read either.
 *
 * Built on Hono's maintained `bodyLimit` middleware; this module only fixes the limit and the
 * error's shape (the one every other error of these servers has).
 */
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';

/** Largest request body accepted: 1 MiB (a memory's text is at most 8,192 characters). */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** `1 MiB`, `512 KiB`, `100 bytes`. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** Middleware refusing bodies over `maxBytes` with `413 {"error": {"code": "TOO_LARGE", …}}`. */
export function limitBody(maxBytes: number = DEFAULT_MAX_BODY_BYTES): MiddlewareHandler {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) throw new RangeError(`body limit must be a positive integer, got ${maxBytes}`);
  return bodyLimit({
    maxSize: maxBytes,
    onError: (c) =>
      c.json(
        { error: { code: 'TOO_LARGE', message: `the request body is over the ${formatBytes(maxBytes)} limit`, field: 'body' } },
        413,
        { Connection: 'close' },
      ),
  });
}
