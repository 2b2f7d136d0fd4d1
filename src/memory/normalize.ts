import { sanitize } from '../privacy/redact.js';
import { sha256Hex } from '../runtime.js';
import { CairnError } from '../errors.js';
import type { Kind } from '../types.js';

/** Longest memory text accepted, in characters. A memory is a note, not a document. */
export const MAX_TEXT_CHARS = 8_192;
export const MAX_TAGS = 32;
export const MAX_TAG_CHARS = 64;

/** Text as compared for exact duplicates: Unicode NFKC, lower case, whitespace collapsed. */
export function normalizeText(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
}

export function contentHash(text: string): string {
  return sha256Hex(normalizeText(text));
}

export function sha256(text: string): string {
  return sha256Hex(text);
}

/** Validate memory text after redaction; throws a one-line CairnError naming the limit. */
export function checkText(text: string, field = 'text'): string {
  const trimmed = text.trim();
  if (trimmed.length === 0) throw new CairnError('TEXT_EMPTY', `${field} is empty (nothing left to store after removing private spans)`, { field });
  if (trimmed.length > MAX_TEXT_CHARS) {
    throw new CairnError(
      'TEXT_TOO_LONG',
      `${field} is ${trimmed.length} characters; the limit is ${MAX_TEXT_CHARS} — store the finding, not the file`,
      { field },
    );
  }
  return trimmed;
}

export function normalizeTags(tags: readonly string[] | undefined): string[] {
  const out = new Set<string>();
  for (const raw of tags ?? []) {
    // Redacted before lower-casing: secret shapes are case-sensitive (`AKIA…`, `PMAK-…`).
    const tag = sanitize(raw).text.trim().toLowerCase().replace(/\s+/g, '-');
    if (tag.length === 0) continue;
    if (tag.length > MAX_TAG_CHARS) throw new CairnError('INVALID_INPUT', `tag "${tag.slice(0, 20)}…" is longer than ${MAX_TAG_CHARS} characters`, { field: 'tags' });
    out.add(tag);
  }
  if (out.size > MAX_TAGS) throw new CairnError('INVALID_INPUT', `${out.size} tags given; the limit is ${MAX_TAGS}`, { field: 'tags' });
  return [...out];
}

export const PRIORITY_IMPORTANCE = { high: 0.9, medium: 0.6, low: 0.3 } as const;
export type Priority = keyof typeof PRIORITY_IMPORTANCE;

/** Default importance by kind when the caller gives neither importance nor priority. */
export const KIND_IMPORTANCE: Record<Kind, number> = {
  correction: 0.8,
  preference: 0.7,
  decision: 0.7,
  procedure: 0.7,
  fact: 0.6,
  continuation: 0.6,
  entity: 0.5,
  note: 0.4,
};
