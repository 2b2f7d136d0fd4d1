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
 * expressions with Unicode classes ran at ~5 MB/s; this runs at well over 100 MB/s).
 */

const MAX_TERM = 64;

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

/** Push the camelCase pieces of `word` (fooBar → foo, bar; HTTPServer → http, server) when there is more than one. */
function pushCamel(word: string, lower: string, out: string[]): void {
  let start = 0;
  let cuts = 0;
  const n = word.length;
  for (let i = 1; i < n; i++) {
    if (!isUpperCode(word, i)) continue;
    // lower/digit → Upper, or Upper → Upper followed by a lower-case letter (HTTPServer → HTTP Server)
    const cut = isLowerCode(word, i - 1) || isDigitCode(word, i - 1) || (isUpperCode(word, i - 1) && i + 1 < n && isLowerCode(word, i + 1));
    if (!cut) continue;
    if (cuts === 0) out.push(lower.slice(0, i));
    else out.push(lower.slice(start, i));
    start = i;
    cuts++;
  }
  if (cuts > 0) out.push(lower.slice(start));
}

/** The terms a piece of text is indexed under, lower-cased, in order, with duplicates kept. */
export function indexTerms(text: string): string[] {
  const out: string[] = [];
  const n = text.length;
  // Lower-case once (native and fast); slice parts from it. A few characters change length when
  // lower-cased (İ → i̇); then parts are lower-cased one by one instead.
  const lowered = text.toLowerCase();
  const sameLength = lowered.length === n;
  const lowerOf = (from: number, to: number): string => (sameLength ? lowered.slice(from, to) : text.slice(from, to).toLowerCase());
  const starts: number[] = [];
  const ends: number[] = [];
  let i = 0;
  while (i < n) {
    // Skip to the next word character.
    while (i < n && !isWordChar(text.charCodeAt(i))) i++;
    if (i >= n) break;
    starts.length = 0;
    ends.length = 0;
    let lastSlashPart = -1; // index of the first part after the last / or \
    let hasUnderscore = false;
    let lineColon = -1; // number of parts before a final ':' joiner
    for (;;) {
      // A run of word characters; letters/digits split into parts at '_' and '$'.
      let partStart = -1;
      while (i < n) {
        const c = text.charCodeAt(i);
        if (isAlnum(c)) {
          if (partStart < 0) partStart = i;
        } else if (c === 95 || c === 36) {
          if (c === 95) hasUnderscore = true;
          if (partStart >= 0) {
            starts.push(partStart);
            ends.push(i);
          }
          partStart = -1;
        } else break;
        i++;
      }
      if (partStart >= 0) {
        starts.push(partStart);
        ends.push(i);
      }
      // A joiner followed by a word character continues the compound.
      if (i >= n) break;
      const c = text.charCodeAt(i);
      let width = 0;
      if (c === 58 && text.charCodeAt(i + 1) === 58) width = 2; // ::
      else if (c === 45 && text.charCodeAt(i + 1) === 62) width = 2; // ->
      else if (isJoiner(c)) width = 1;
      if (width === 0 || i + width >= n || !isWordChar(text.charCodeAt(i + width))) break;
      if (width === 1 && (c === 47 || c === 92)) lastSlashPart = starts.length;
      lineColon = width === 1 && c === 58 ? starts.length : -1;
      i += width;
    }
    const count = starts.length;
    if (count === 0) continue;
    const parts: string[] = new Array<string>(count);
    for (let k = 0; k < count; k++) parts[k] = lowerOf(starts[k] as number, ends[k] as number);

    let whole = parts[0] as string;
    if (count > 1) {
      whole = parts.join('_');
      if (whole.length <= MAX_TERM) out.push(whole);
      // A path also answers to its file name, with and without the line: resolver_rs_214, resolver_rs.
      if (lastSlashPart >= 0 && count - lastSlashPart > 1) out.push(parts.slice(lastSlashPart).join('_'));
      if (lineColon > 0 && lineColon === count - 1 && isAllDigits(parts[count - 1] as string)) {
        const fileStart = Math.max(0, lastSlashPart);
        const before = text.charCodeAt((starts[count - 1] as number) - 2);
        // `name:12` where the character before the colon is not a digit (foo.ts:12, not 10:30)
        if (!(before >= 48 && before <= 57) && lineColon - fileStart > 1) out.push(parts.slice(fileStart, lineColon).join('_'));
      }
    }
    for (let k = 0; k < count; k++) {
      const lower = parts[k] as string;
      if (lower.length <= MAX_TERM) out.push(lower);
      const from = starts[k] as number;
      const to = ends[k] as number;
      // Split on the original's case, only when the part has an upper-case letter after its first.
      if (to - from > 1 && hasInnerUpper(text, lowered, from, to, sameLength)) {
        pushCamel(text.slice(from, to), lower, out);
      }
    }
    // Keep the joined form of snake_case too: process_workspace_changes → processworkspacechanges.
    if (hasUnderscore && count > 1) {
      const squashed = parts.join('');
      if (squashed.length <= MAX_TERM) out.push(squashed);
    }
  }
  return out;
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

/** The string stored in a full-text column: the index terms joined by spaces. */
export function indexText(text: string): string {
  return indexTerms(text).join(' ');
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
