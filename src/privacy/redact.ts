/**
 * Secret redaction and `<private>` spans (SPEC §7): nothing secret is stored or indexed.
 *
 * Runs on every transcript turn during ingest, so text without a candidate costs a few `indexOf`
 * passes and comes back as the same string instance (see detectors.ts for how secrets are found).
 */
import { findSecrets, type SecretSpan } from './detectors.js';

/** What {@link redactSecrets} and {@link sanitize} return. */
export interface RedactionResult {
  /** The text with every secret replaced by `[REDACTED:<kind>]`. */
  text: string;
  /** How many secrets of each kind were replaced; empty when none. */
  found: Record<string, number>;
}

/**
 * Replace every secret in `text` with `[REDACTED:<kind>]`: provider API keys and tokens
 * (Anthropic, OpenAI, AWS, GitHub, GitLab, Slack, Stripe, Google, npm, PyPI, Hugging Face, Twilio,
 * SendGrid, Azure, DigitalOcean, Discord, Telegram), JWTs, PEM private keys (the whole block),
 * bearer / basic auth credentials, passwords in URLs (the URL is kept), and values assigned to
 * secret-named keys (`API_KEY=…`, `password: …`, `"apiKey": "…"`). Idempotent.
 *
 * @example
 * redactSecrets('postgres://app:hunter2@db/prod').text // 'postgres://app:[REDACTED:url-password]@db/prod'
 */
export function redactSecrets(text: string): RedactionResult {
  const found: Record<string, number> = {};
  const spans = findSecrets(text);
  if (spans.length === 0) return { text, found };

  let out = '';
  let copied = 0;
  for (const span of mergeOverlapping(spans)) {
    out += `${text.slice(copied, span.start)}[REDACTED:${span.kind}]`;
    copied = span.end;
    found[span.kind] = (found[span.kind] ?? 0) + 1;
  }
  return { text: out + text.slice(copied), found };
}

/**
 * Sorted, disjoint spans. Overlapping spans (an `API_KEY=sk-…` seen both as an OpenAI key and as
 * an assignment; a JWT inside a bearer header) become their union, named by the most specific kind,
 * so no character of any detected secret survives.
 */
function mergeOverlapping(spans: SecretSpan[]): SecretSpan[] {
  spans.sort((a, b) => a.start - b.start || a.priority - b.priority);
  const merged: SecretSpan[] = [];
  for (const span of spans) {
    const last = merged[merged.length - 1];
    if (last !== undefined && span.start < last.end) {
      if (span.end > last.end) last.end = span.end;
      if (span.priority < last.priority) {
        last.kind = span.kind;
        last.priority = span.priority;
      }
    } else {
      merged.push({ ...span });
    }
  }
  return merged;
}

const PRIVATE_TAG = /<(\/?)private>/gi;

const PRIVATE_TAG_REST = /private>/iy;

/** A `<` scan is much faster than a case-insensitive regex search over the whole text. */
function hasPrivateTag(text: string): boolean {
  for (let i = text.indexOf('<'); i !== -1; i = text.indexOf('<', i + 1)) {
    if ((text.charCodeAt(i + 1) | 32) === 112 /* p */) {
      PRIVATE_TAG_REST.lastIndex = i + 1;
      if (PRIVATE_TAG_REST.test(text)) return true;
    }
  }
  return false;
}

/**
 * Remove `<private>…</private>` spans (case-insensitive, across lines, nested spans counted).
 * An unclosed `<private>` drops everything after it. Text without one is returned as is.
 */
export function stripPrivate(text: string): string {
  if (!hasPrivateTag(text)) return text;
  let out = '';
  let copied = 0;
  let depth = 0;
  let spanStart = 0;
  PRIVATE_TAG.lastIndex = 0;
  for (let m = PRIVATE_TAG.exec(text); m !== null; m = PRIVATE_TAG.exec(text)) {
    if (m[1] !== '/') {
      if (depth === 0) spanStart = m.index;
      depth++;
    } else if (depth > 0 && --depth === 0) {
      out += text.slice(copied, spanStart);
      copied = m.index + m[0].length;
    }
  }
  return depth > 0 ? out + text.slice(copied, spanStart) : out + text.slice(copied);
}

/** What cairn applies to any text before storing or indexing it: {@link stripPrivate}, then {@link redactSecrets}. */
export function sanitize(text: string): RedactionResult {
  return redactSecrets(stripPrivate(text));
}
