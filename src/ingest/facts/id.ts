/**
 * Fact ids: `f` and 11 characters of Crockford base32 (55 bits of a SHA-256) over the session, the
 * kind and the text. The same detail in the same session always has the same id — re-ingesting a
 * transcript, or reading it on another machine, gives the ids the context already quoted — and an
 * agent can type it back (`expand f3k9w2m7q1xz`).
 */
import { hash } from 'node:crypto';
import type { FactKind } from '../../types.js';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
/** {@link ALPHABET}'s character codes, by 5-bit value. */
const CODES = Array.from(ALPHABET, (c) => c.charCodeAt(0));

/** Whether a string has the shape of a fact id. */
export const FACT_ID = /^f[0-9a-hjkmnp-tv-z]{11}$/;

/** The value of the hex digit at `i` of a lower-case hex string. */
function nibble(hex: string, i: number): number {
  const code = hex.charCodeAt(i);
  return code <= 57 ? code - 48 : code - 87;
}

/** The id character of the low 5 bits of `value`. */
function letter(value: number): number {
  return CODES[value & 31] as number;
}

/** Seven hex digits from `at`: 28 bits. */
function bits28(hex: string, at: number): number {
  let value = 0;
  for (let i = at; i < at + 7; i++) value = (value << 4) | nibble(hex, i);
  return value;
}

export function factId(sessionId: string, kind: FactKind, text: string): string {
  // One-shot hash of the same bytes as update(sessionId).update('\0')…: the same ids, less overhead.
  // The digest as hex (a string, no Buffer to allocate); its first 55 bits are the first 14 hex
  // digits less their last bit, read as two 28-bit halves, and the id is made in one string.
  const hex = hash('sha256', `${sessionId}\0${kind}\0${text}`, 'hex');
  const high = bits28(hex, 0);
  const low = bits28(hex, 7);
  return String.fromCharCode(
    102, // f
    letter(high >>> 23),
    letter(high >>> 18),
    letter(high >>> 13),
    letter(high >>> 8),
    letter(high >>> 3),
    letter(((high & 7) << 2) | (low >>> 26)),
    letter(low >>> 21),
    letter(low >>> 16),
    letter(low >>> 11),
    letter(low >>> 6),
    letter(low >>> 1),
  );
}

export function isFactId(value: string): boolean {
  return FACT_ID.test(value);
}
