/**
 * Where the scanners put what they find for one turn: deduplicated, capped per kind, and redacted
 * in context. A fact is a fragment of the text (a path, a URL, an id …), so it is checked against
 * the secrets found in its own line — a value that is only recognisable as a secret by the key
 * before it (`API_KEY=…`, `password: …`) is caught as surely as in the stored turn text.
 */
import { findSecrets, type SecretSpan } from '../../privacy/detectors.js';
import { redactSecrets } from '../../privacy/redact.js';
import type { FactKind } from '../../types.js';

/** A fact found in one turn's text, before it is tied to the turn. */
export interface ExtractedFact {
  kind: FactKind;
  text: string;
  path: string | null;
  line: number | null;
  note: string | null;
}

export interface FactExtra {
  path?: string | null;
  line?: number | null;
  note?: string | null;
}

/**
 * How many facts of each kind one turn keeps. A tool output that lists 5,000 files yields the
 * first forty: enough for the details that matter, without one turn flooding the session.
 */
export const FACT_CAPS: Readonly<Record<FactKind, number>> = {
  path: 40,
  symbol: 40,
  command: 4,
  error: 6,
  test: 30,
  config: 24,
  version: 12,
  url: 16,
  id: 16,
  call: 40,
};

/** Raw details remembered per turn (enough for any real output; past it they are checked again). */
const MAX_RAW_KEYS = 4096;
/** Lines longer than this are checked for secrets in a window around the fact. */
const CONTEXT_WINDOW = 2_000;
/** Texts up to this size are scanned for secrets whole once their line windows add up to more. */
const WHOLE_TEXT_MAX = 256 * 1024;

export class FactSink {
  readonly facts: ExtractedFact[] = [];
  /** Facts dropped because a secret overlapped them. */
  redacted = 0;
  /**
   * Facts kept, by kind and then by (clean) text. Maps by kind, made when a kind is first met,
   * rather than one map keyed by `kind + text`: no key string is concatenated for each fact found.
   */
  private readonly keys = new Map<FactKind, Map<string, ExtractedFact>>();
  /** Outcome of each raw text seen in this turn, by kind: kept or dropped. */
  private readonly raw = new Map<FactKind, Map<string, ExtractedFact | null>>();
  /** Raw texts remembered, over every kind (at most {@link MAX_RAW_KEYS}). */
  private rawCount = 0;
  private readonly counts = new Map<FactKind, number>();
  private text = '';
  private readonly spans = new Map<number, { end: number; spans: SecretSpan[] }>();
  /** The secrets of the whole current text, once the line windows would cost more than one pass. */
  private whole: SecretSpan[] | null = null;
  /** Characters of the current text scanned in line windows so far. */
  private scanned = 0;

  /** The texts given are sanitized already (see {@link presanitized}). */
  private trusted = false;

  /**
   * Every text this sink will see went through the privacy sanitizer whole (secrets replaced by
   * `[REDACTED:kind]` with all their context): facts are kept as found, and the ones holding a
   * redaction marker are counted as redacted.
   */
  presanitized(): void {
    this.trusted = true;
  }

  /** The text the next spans refer to. */
  source(text: string): void {
    this.text = text;
    this.spans.clear();
    this.whole = null;
    this.scanned = 0;
  }

  full(kind: FactKind): boolean {
    return (this.counts.get(kind) ?? 0) >= FACT_CAPS[kind];
  }

  /**
   * Add a fact found at `[start, end)` of the current text. `force` adds it past the kind's cap
   * (a failed test, the last error line). Returns the fact as kept (redacted), or null.
   */
  add(kind: FactKind, text: string, start: number, end: number, extra: FactExtra = {}, force = false): ExtractedFact | null {
    if (!force && this.full(kind)) return null;
    // The same detail again (a path:line on each of 200,000 lines): its first outcome stands, with
    // no second secret scan. Only the note of a test or a command can change (below).
    let raw = this.raw.get(kind);
    const seen = raw?.get(text);
    if (seen !== undefined) {
      if (seen !== null && extra.note === 'failed') seen.note = 'failed';
      return seen;
    }
    const clean = this.redact(text, start, end);
    const fact = this.keep(kind, clean, extra);
    if (this.rawCount < MAX_RAW_KEYS) {
      if (raw === undefined) this.raw.set(kind, (raw = new Map()));
      raw.set(text, fact);
      this.rawCount++;
    }
    return fact;
  }

  private keep(kind: FactKind, clean: string | null, extra: FactExtra): ExtractedFact | null {
    if (clean === null || clean.length === 0) return null;
    let keys = this.keys.get(kind);
    if (keys === undefined) this.keys.set(kind, (keys = new Map()));
    const known = keys.get(clean);
    if (known !== undefined) {
      // The same test failing after passing (or the reverse) in one output: the failure wins.
      if (extra.note === 'failed') known.note = 'failed';
      return known;
    }
    let note = extra.note ?? null;
    if (note !== null && kind === 'symbol') note = redactSecrets(note).text;
    const fact: ExtractedFact = { kind, text: clean, path: extra.path ?? null, line: extra.line ?? null, note };
    keys.set(clean, fact);
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
    this.facts.push(fact);
    return fact;
  }

  /**
   * The fact's text with the secrets that overlap `[start, end)` in its line removed. A fact whose
   * text is not a verbatim slice (`path:line`, `name@version`) is dropped when a secret touches it.
   */
  private redact(text: string, start: number, end: number): string | null {
    if (this.trusted) {
      if (text.includes('[REDACTED:')) this.redacted++;
      return text;
    }
    const spans = this.secretsAround(start, end);
    if (spans.length === 0) return text;
    const verbatim = this.text.slice(start, end) === text;
    const overlapping = spans.filter((s) => s.start < end && s.end > start).sort((a, b) => a.start - b.start);
    if (overlapping.length === 0) return text;
    if (!verbatim) {
      this.redacted++;
      return null;
    }
    let out = '';
    let copied = start;
    for (const span of overlapping) {
      const from = Math.max(span.start, copied);
      if (from > copied) out += this.text.slice(copied, from);
      if (span.end > copied) {
        out += `[REDACTED:${span.kind}]`;
        copied = Math.min(end, span.end);
      }
    }
    out += this.text.slice(copied, end);
    this.redacted++;
    return out;
  }

  /** Secrets in the line around `[start, end)` (a window of it when the line is long), cached per line. */
  private secretsAround(start: number, end: number): SecretSpan[] {
    let lineStart = this.text.lastIndexOf('\n', start - 1) + 1;
    // Two lines more before it: a `.netrc` password is named by the `machine`/`login` lines above.
    for (let k = 0; k < 2 && lineStart > 0; k++) lineStart = this.text.lastIndexOf('\n', lineStart - 2) + 1;
    let lineEnd = this.text.indexOf('\n', end);
    if (lineEnd < 0) lineEnd = this.text.length;
    if (start - lineStart > CONTEXT_WINDOW) lineStart = start - CONTEXT_WINDOW;
    if (lineEnd - end > CONTEXT_WINDOW) lineEnd = end + CONTEXT_WINDOW;
    const cached = this.spans.get(lineStart);
    if (cached !== undefined && cached.end >= end) return cached.spans;
    if (this.whole !== null) return this.whole;
    // Windows overlap (each takes two lines of context above): once they would add up to more
    // than the text, one pass over all of it is cheaper, and it sees at least as much context.
    this.scanned += lineEnd - lineStart;
    if (this.scanned > this.text.length && this.text.length <= WHOLE_TEXT_MAX) {
      this.whole = findSecrets(this.text);
      return this.whole;
    }
    const spans = findSecrets(this.text.slice(lineStart, lineEnd)).map((s) => ({ ...s, start: s.start + lineStart, end: s.end + lineStart }));
    this.spans.set(lineStart, { end: lineEnd, spans });
    return spans;
  }
}
