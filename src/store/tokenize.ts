/**
 * The code-aware tokenizer shared by every full-text index (memories, turns) and by queries.
 *
 * Backends index the output of {@link indexTerms} with a plain word tokenizer (SQLite FTS5
 * `unicode61 tokenchars '_'`, PostgreSQL `simple`), so the same terms come out everywhere:
 * an identifier is kept whole (`process_workspace_changes`, `processworkspacechanges`,
 * `resolver_rs_214`) and also split on camelCase, snake_case, kebab-case, dots and path
 * separators, so `processWorkspaceChanges`, `workspace changes` and `resolver.rs:214` all match.
 *
 * It runs on every ingested turn, so it is a hand-written scanner over char codes (regular
 * expressions with Unicode classes ran at ~5 MB/s), and it writes the terms of a text straight
 * into one buffer ({@link indexText}) instead of making a string of each term, an array of parts
 * per compound and joining them all: over real transcript turns that halved its time (23 → 12 ns
 * per character), and its output is a one-byte string whenever it can be. That buffer is reused
 * from call to call (a fact's text is a few dozen characters, where making it cost more than
 * filling it).
 */

import { scriptTerms } from './script-terms.js';

export { scriptTerms, TERMS_VERSION } from './script-terms.js';

const MAX_TERM = 64;
const SPACE = 32;
const UNDERSCORE = 95;

/** Letters and digits: ASCII by range; beyond ASCII, everything but the common punctuation and symbol blocks. */
function isAlnum(c: number): boolean {
  if (c < 128) return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57);
  if (c <= 0xbf) return c === 0xaa || c === 0xb2 || c === 0xb3 || c === 0xb5 || c === 0xb9 || c === 0xba || (c >= 0xbc && c <= 0xbe);
  if (c === 0xd7 || c === 0xf7) return false;
  if (c >= 0x2000 && c <= 0x2bff) return false; // punctuation, symbols, arrows, box drawing
  if (c >= 0x3000 && c <= 0x303f) return false; // CJK punctuation
  if (c >= 0xfe00 && c <= 0xfe0f) return false; // variation selectors
  if (c >= 0xfe30 && c <= 0xfe4f) return false;
  if (c >= 0xff00 && c <= 0xff0f) return false; // fullwidth punctuation
  if (c >= 0xff1a && c <= 0xff20) return false;
  if (c >= 0xff3b && c <= 0xff40) return false;
  if (c >= 0xff5b && c <= 0xff65) return false;
  if (c >= 0xd800 && c <= 0xdfff) return false; // astral planes (emoji, rare CJK) are not indexed
  if (c === 0x30fb) return false; // katakana middle dot
  if (c === 0xfeff || c === 0xfffd) return false;
  return true;
}

/** Word characters of a compound run: letters, digits, `_` and `$`. */
function isWordChar(c: number): boolean {
  return c === 95 || c === 36 || isAlnum(c);
}

/** Single-character joiners inside a compound: . / \ : # @ - */
function isJoiner(c: number): boolean {
  return c === 46 || c === 47 || c === 92 || c === 58 || c === 35 || c === 64 || c === 45;
}

function isUpperCode(word: string, i: number): boolean {
  const c = word.charCodeAt(i);
  if (c < 128) return c >= 65 && c <= 90;
  const ch = word[i] as string;
  return ch !== ch.toLowerCase() && ch === ch.toUpperCase();
}

function isLowerCode(word: string, i: number): boolean {
  const c = word.charCodeAt(i);
  if (c < 128) return c >= 97 && c <= 122;
  const ch = word[i] as string;
  return ch !== ch.toUpperCase() && ch === ch.toLowerCase();
}

function isDigitCode(word: string, i: number): boolean {
  const c = word.charCodeAt(i);
  return c >= 48 && c <= 57;
}

/**
 * The index text being written: terms separated by single spaces. Terms never contain a space
 * (they are letters, digits and `_`), so the text splits back into them. Kept as bytes while
 * every character fits in one (Latin-1, nearly always), so the string made of it is a one-byte
 * string: half the size to copy to a worker or encode for SQLite. The first wider character
 * turns it into UTF-16 code units.
 *
 * One writer is reused from call to call ({@link writerFor}): ingest tokenizes a few hundred
 * thousand short texts (a fact's path or command), where a `Buffer` and two `Int32Array`s made
 * per call cost more than the characters.
 */
class TermWriter {
  private bytes: Buffer;
  private units: Uint16Array | null = null;
  private wide = false;
  private length = 0;
  /** Start and end offsets of the parts of the compound being read (see {@link wordIndexText}). */
  partStarts = new Int32Array(16);
  partEnds = new Int32Array(16);

  constructor(capacity: number) {
    this.bytes = Buffer.allocUnsafe(Math.max(64, capacity));
  }

  /** Empty again, with room for at least `capacity` bytes (grown past it on demand, as ever). */
  reset(capacity: number): void {
    this.length = 0;
    this.wide = false;
    if (this.bytes.length < capacity) this.bytes = Buffer.allocUnsafe(capacity);
  }

  /** The size of its larger buffer, bytes or code units (for {@link writerFor}'s bound). */
  get capacity(): number {
    return Math.max(this.bytes.length, this.units?.length ?? 0);
  }

  /** Room for one more part (`count` parts held): both part arrays doubled when full. */
  roomForPart(count: number): void {
    if (count < this.partStarts.length) return;
    this.partStarts = grown(this.partStarts);
    this.partEnds = grown(this.partEnds);
  }

  /** Append `source[from, to)` as one term. */
  range(source: string, from: number, to: number): void {
    this.put(source, from, to, this.length > 0 ? SPACE : -1);
  }

  term(term: string): void {
    this.put(term, 0, term.length, this.length > 0 ? SPACE : -1);
  }

  /** Append parts `first` to `last` (exclusive) of `source` as one term, joined by `separator` (a char code, or -1 for none). */
  joined(source: string, first: number, last: number, separator: number): void {
    const starts = this.partStarts;
    const ends = this.partEnds;
    for (let k = first; k < last; k++) {
      this.put(source, starts[k] as number, ends[k] as number, k > first ? separator : this.length > 0 ? SPACE : -1);
    }
  }

  /** Append `lead` (a char code, or -1 for none) and `source[from, to)`. */
  private put(source: string, from: number, to: number, lead: number): void {
    if (this.wide) {
      this.putWide(source, from, to, lead);
      return;
    }
    const bytes = this.bytes;
    if (this.length + (to - from) + 1 > bytes.length) {
      this.grow(to - from + 1);
      this.put(source, from, to, lead);
      return;
    }
    let p = this.length;
    if (lead >= 0) bytes[p++] = lead;
    for (let k = from; k < to; k++) {
      const c = source.charCodeAt(k);
      if (c > 255) {
        this.widen();
        this.putWide(source, from, to, lead);
        return;
      }
      bytes[p++] = c;
    }
    this.length = p;
  }

  private putWide(source: string, from: number, to: number, lead: number): void {
    if (this.length + (to - from) + 1 > (this.units as Uint16Array).length) this.grow(to - from + 1);
    const units = this.units as Uint16Array;
    let p = this.length;
    if (lead >= 0) units[p++] = lead;
    for (let k = from; k < to; k++) units[p++] = source.charCodeAt(k);
    this.length = p;
  }

  /** Every byte written so far becomes a UTF-16 code unit. */
  private widen(): void {
    const bytes = this.bytes;
    if (this.units === null || this.units.length < bytes.length) this.units = new Uint16Array(bytes.length);
    const units = this.units;
    for (let k = 0; k < this.length; k++) units[k] = bytes[k] as number;
    this.wide = true;
  }

  private grow(needed: number): void {
    if (!this.wide) {
      const size = Math.max(2 * this.bytes.length, this.length + needed + 64);
      const bigger = Buffer.allocUnsafe(size);
      this.bytes.copy(bigger, 0, 0, this.length);
      this.bytes = bigger;
    } else {
      const units = this.units as Uint16Array;
      const size = Math.max(2 * units.length, this.length + needed + 64);
      const bigger = new Uint16Array(size);
      bigger.set(units.subarray(0, this.length));
      this.units = bigger;
    }
  }

  /** The terms written, joined by spaces. */
  text(): string {
    if (!this.wide) return this.bytes.toString('latin1', 0, this.length);
    const units = this.units as Uint16Array;
    const length = this.length;
    // Node decodes UTF-16LE natively, far faster than String.fromCharCode over chunks.
    if (LITTLE_ENDIAN) return Buffer.from(units.buffer, units.byteOffset, length * 2).toString('utf16le');
    const chunks: string[] = [];
    for (let from = 0; from < length; from += CHUNK) {
      chunks.push(String.fromCharCode.apply(null, units.subarray(from, Math.min(length, from + CHUNK)) as unknown as number[]));
    }
    return chunks.join('');
  }
}

/** The largest writer kept for the next call, in bytes (or code units): texts past ~40,000 characters get their own. */
const REUSED_CAPACITY = 64 * 1024;
/** The writer reused from call to call (one per thread: module state, reset by every call). */
let reused: TermWriter | null = null;

/**
 * A writer for a text of `n` characters, empty: the reused one while it fits under
 * {@link REUSED_CAPACITY}, a new one for longer texts (so a one-off megabyte text holds no
 * megabyte buffer afterwards). No call re-enters {@link wordIndexText}, so one writer suffices.
 */
function writerFor(n: number): TermWriter {
  const capacity = Math.max(64, n + (n >> 1) + 16);
  if (capacity > REUSED_CAPACITY) return new TermWriter(capacity);
  if (reused === null || reused.capacity > REUSED_CAPACITY) reused = new TermWriter(REUSED_CAPACITY / 16);
  reused.reset(capacity);
  return reused;
}

/** Whether a Uint16Array holds its code units little-endian (every common platform). */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
/** Char codes turned into a string per call of String.fromCharCode (its arguments are limited). */
const CHUNK = 8192;

/**
 * Write the camelCase pieces of `text[from, to)` (fooBar → foo, bar; HTTPServer → http, server)
 * when there is more than one, as ranges of `lowered` (the same length as `text`).
 */
function writeCamel(text: string, lowered: string, from: number, to: number, out: TermWriter): void {
  let start = from;
  let cuts = 0;
  for (let i = from + 1; i < to; i++) {
    if (!isUpperCode(text, i)) continue;
    // lower/digit → Upper, or Upper → Upper followed by a lower-case letter (HTTPServer → HTTP Server)
    const cut = isLowerCode(text, i - 1) || isDigitCode(text, i - 1) || (isUpperCode(text, i - 1) && i + 1 < to && isLowerCode(text, i + 1));
    if (!cut) continue;
    out.range(lowered, start, i);
    start = i;
    cuts++;
  }
  if (cuts > 0) out.range(lowered, start, to);
}

/**
 * {@link writeCamel} for a word whose lower-case form has another length (İ → i̇): cut positions
 * found in `word` are applied to `lower`, as they always were.
 */
function writeCamelUnequal(word: string, lower: string, out: TermWriter): void {
  let start = 0;
  let cuts = 0;
  const n = word.length;
  for (let i = 1; i < n; i++) {
    if (!isUpperCode(word, i)) continue;
    const cut = isLowerCode(word, i - 1) || isDigitCode(word, i - 1) || (isUpperCode(word, i - 1) && i + 1 < n && isLowerCode(word, i + 1));
    if (!cut) continue;
    out.term(lower.slice(start, i));
    start = i;
    cuts++;
  }
  if (cuts > 0) out.term(lower.slice(start));
}

/** A copy of `array` with twice the room. */
function grown(array: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const bigger = new Int32Array(array.length * 2);
  bigger.set(array);
  return bigger;
}


/**
 * The terms of a compound in a text whose lower-case form has another length (İ → i̇): its parts
 * are lower-cased one by one, as strings.
 */
function writeCompoundUnequal(
  text: string,
  starts: Int32Array,
  ends: Int32Array,
  count: number,
  lastSlashPart: number,
  lineColon: number,
  hasUnderscore: boolean,
  out: TermWriter,
): void {
  const parts: string[] = new Array<string>(count);
  for (let k = 0; k < count; k++) parts[k] = text.slice(starts[k] as number, ends[k] as number).toLowerCase();
  const whole = parts.join('_');
  if (whole.length <= MAX_TERM) out.term(whole);
  if (lastSlashPart >= 0 && count - lastSlashPart > 1) out.term(parts.slice(lastSlashPart).join('_'));
  if (lineColon > 0 && lineColon === count - 1 && isAllDigits(parts[count - 1] as string)) {
    const fileStart = Math.max(0, lastSlashPart);
    const before = text.charCodeAt((starts[count - 1] as number) - 2);
    if (!(before >= 48 && before <= 57) && lineColon - fileStart > 1) out.term(parts.slice(fileStart, lineColon).join('_'));
  }
  for (let k = 0; k < count; k++) {
    const lower = parts[k] as string;
    if (lower.length <= MAX_TERM) out.term(lower);
    if ((ends[k] as number) - (starts[k] as number) > 1) writeCamelUnequal(text.slice(starts[k] as number, ends[k] as number), lower, out);
  }
  if (hasUnderscore) {
    const squashed = parts.join('');
    if (squashed.length <= MAX_TERM) out.term(squashed);
  }
}

/** Whether `text[from, to)` is all ASCII digits (and not empty). */
function isAllDigitRange(text: string, from: number, to: number): boolean {
  for (let k = from; k < to; k++) {
    const c = text.charCodeAt(k);
    if (c < 48 || c > 57) return false;
  }
  return to > from;
}

/**
 * The string stored in a full-text column: the index terms of `text`, lower-cased, in order,
 * duplicates kept, joined by single spaces (see {@link indexTerms}): the words of
 * {@link wordIndexText}, then the {@link scriptTerms}.
 */
export function indexText(text: string): string {
  const words = wordIndexText(text);
  const scripts = scriptTerms(text);
  if (scripts.length === 0) return words;
  return words.length === 0 ? scripts : `${words} ${scripts}`;
}

/** The word terms of `text` alone: what {@link indexText} was at terms version 1. */
export function wordIndexText(text: string): string {
  const n = text.length;
  const out = writerFor(n);
  // Lower-case once (native and fast); take parts from it. A few characters change length when
  // lower-cased (İ → i̇); then parts are lower-cased one by one instead.
  const lowered = text.toLowerCase();
  const sameLength = lowered.length === n;
  // Start and end offsets of the current compound's parts (the writer's arrays, grown on demand).
  let partStarts = out.partStarts;
  let partEnds = out.partEnds;
  let i = 0;
  while (i < n) {
    // Skip to the next word character.
    while (i < n && !isWordChar(text.charCodeAt(i))) i++;
    if (i >= n) break;
    let count = 0;
    let lastSlashPart = -1; // index of the first part after the last / or \
    let hasUnderscore = false;
    let lineColon = -1; // number of parts before a final ':' joiner
    // Whether a part holds an ASCII capital or any non-ASCII letter: when not, lower-casing changed
    // none of its characters, and no part needs the camelCase look (hasInnerUpper would say false).
    let cased = false;
    for (;;) {
      // A run of word characters; letters/digits split into parts at '_' and '$'.
      let partStart = -1;
      while (i < n) {
        const c = text.charCodeAt(i);
        if (c < 128 ? (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || (c >= 65 && c <= 90 && (cased = true)) : isAlnum(c) && (cased = true)) {
          if (partStart < 0) partStart = i;
        } else if (c === 95 || c === 36) {
          if (c === 95) hasUnderscore = true;
          if (partStart >= 0) {
            if (count === partStarts.length) {
              out.roomForPart(count);
              partStarts = out.partStarts;
              partEnds = out.partEnds;
            }
            partStarts[count] = partStart;
            partEnds[count] = i;
            count++;
          }
          partStart = -1;
        } else break;
        i++;
      }
      if (partStart >= 0) {
        if (count === partStarts.length) {
          out.roomForPart(count);
          partStarts = out.partStarts;
          partEnds = out.partEnds;
        }
        partStarts[count] = partStart;
        partEnds[count] = i;
        count++;
      }
      // A joiner followed by a word character continues the compound.
      if (i >= n) break;
      const c = text.charCodeAt(i);
      let width = 0;
      // `i + 1 < n` first: a read past the end (NaN, equal to nothing) would throw the compiled code away.
      if (c === 58 && i + 1 < n && text.charCodeAt(i + 1) === 58) width = 2; // ::
      else if (c === 45 && i + 1 < n && text.charCodeAt(i + 1) === 62) width = 2; // ->
      else if (isJoiner(c)) width = 1;
      if (width === 0 || i + width >= n || !isWordChar(text.charCodeAt(i + width))) break;
      if (width === 1 && (c === 47 || c === 92)) lastSlashPart = count;
      lineColon = width === 1 && c === 58 ? count : -1;
      i += width;
    }
    if (count === 0) continue;
    if (count === 1) {
      // One part, the common case (a plain or capitalised word): no strings made at all.
      const from = partStarts[0] as number;
      const to = partEnds[0] as number;
      if (sameLength) {
        if (to - from <= MAX_TERM) out.range(lowered, from, to);
        if (cased && to - from > 1 && hasInnerUpper(text, lowered, from, to, true)) writeCamel(text, lowered, from, to, out);
      } else {
        const lower = text.slice(from, to).toLowerCase();
        if (lower.length <= MAX_TERM) out.term(lower);
        if (to - from > 1) writeCamelUnequal(text.slice(from, to), lower, out);
      }
      continue;
    }
    if (!sameLength) {
      writeCompoundUnequal(text, partStarts, partEnds, count, lastSlashPart, lineColon, hasUnderscore, out);
      continue;
    }
    // Several parts: the compound whole, its file name, its parts and their camelCase pieces.
    let letters = 0;
    for (let k = 0; k < count; k++) letters += (partEnds[k] as number) - (partStarts[k] as number);
    if (letters + count - 1 <= MAX_TERM) out.joined(lowered, 0, count, UNDERSCORE);
    // A path also answers to its file name, with and without the line: resolver_rs_214, resolver_rs.
    if (lastSlashPart >= 0 && count - lastSlashPart > 1) out.joined(lowered, lastSlashPart, count, UNDERSCORE);
    if (lineColon > 0 && lineColon === count - 1 && isAllDigitRange(text, partStarts[count - 1] as number, partEnds[count - 1] as number)) {
      const fileStart = Math.max(0, lastSlashPart);
      const before = text.charCodeAt((partStarts[count - 1] as number) - 2);
      // `name:12` where the character before the colon is not a digit (foo.ts:12, not 10:30)
      if (!(before >= 48 && before <= 57) && lineColon - fileStart > 1) out.joined(lowered, fileStart, lineColon, UNDERSCORE);
    }
    for (let k = 0; k < count; k++) {
      const from = partStarts[k] as number;
      const to = partEnds[k] as number;
      if (to - from <= MAX_TERM) out.range(lowered, from, to);
      // Split on the original's case, only when the part has an upper-case letter after its first.
      if (cased && to - from > 1 && hasInnerUpper(text, lowered, from, to, true)) writeCamel(text, lowered, from, to, out);
    }
    // Keep the joined form of snake_case too: process_workspace_changes → processworkspacechanges.
    if (hasUnderscore && letters <= MAX_TERM) out.joined(lowered, 0, count, -1);
  }
  return out.text();
}

/** The terms a piece of text is indexed under, lower-cased, in order, with duplicates kept. */
export function indexTerms(text: string): string[] {
  const joined = indexText(text);
  return joined.length === 0 ? [] : joined.split(' ');
}

function isAllDigits(s: string): boolean {
  for (let k = 0; k < s.length; k++) {
    const c = s.charCodeAt(k);
    if (c < 48 || c > 57) return false;
  }
  return s.length > 0;
}

/** Whether text[from+1..to) holds a character that lower-casing changed (an upper-case letter). */
function hasInnerUpper(text: string, lowered: string, from: number, to: number, sameLength: boolean): boolean {
  if (!sameLength) return true;
  for (let k = from + 1; k < to; k++) if (lowered.charCodeAt(k) !== text.charCodeAt(k)) return true;
  return false;
}


/** Distinct query terms (same analysis as indexing), capped so a pasted log cannot explode a query. */
export function queryTerms(query: string, max = 32): string[] {
  const seen = new Set<string>();
  for (const term of indexTerms(query)) {
    if (seen.size >= max) break;
    seen.add(term);
  }
  return [...seen];
}
