/**
 * Fact ids: `f` and 11 characters of Crockford base32 (55 bits of a SHA-256) over the session, the
 * kind and the text. The same detail in the same session always has the same id — re-ingesting a
 * transcript, or reading it on another machine, gives the ids the context already quoted — and an
 * agent can type it back (`expand f3k9w2m7q1xz`).
 */
import { hash } from 'node:crypto';
import type { FactKind } from '../../types.js';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const LENGTH = 11;

/** Whether a string has the shape of a fact id. */
export const FACT_ID = /^f[0-9a-hjkmnp-tv-z]{11}$/;

export function factId(sessionId: string, kind: FactKind, text: string): string {
  // One-shot hash of the same bytes as update(sessionId).update('\0')…: the same ids, less overhead.
  const digest = hash('sha256', `${sessionId}\0${kind}\0${text}`, 'buffer');
  let out = 'f';
  let bits = 0;
  let value = 0;
  for (let i = 0; out.length <= LENGTH; i++) {
    value = (value << 8) | (digest[i] as number);
    bits += 8;
    while (bits >= 5 && out.length <= LENGTH) {
      bits -= 5;
      out += ALPHABET[(value >> bits) & 31];
    }
    value &= (1 << bits) - 1;
  }
  return out;
}

export function isFactId(value: string): boolean {
  return FACT_ID.test(value);
}
