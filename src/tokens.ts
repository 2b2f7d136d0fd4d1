/**
 * Token counts for budgets, hints and benchmarks.
 *
 * Claude's current tokenizer is not public. cairn counts against o200k_base (the 200K-entry BPE
 * of `gpt-tokenizer`, a maintained library), the closest public modern tokenizer; on the
 * transcripts in ../shared, cl100k_base counts within 0.5% of it.
 *
 * - {@link estimateTokens}: what every surface uses, hooks included. It walks the text once in the
 *   pieces o200k's pre-tokenizer cuts (words with their leading space or mark, digit runs, mark runs,
 *   whitespace) and adds what such a piece costs on average, from a table fitted against o200k on
 *   the tuning half of ../shared's transcripts (`cairn bench tokens`). No vocabulary is loaded:
 *   loading o200k's 200K ranks takes 0.5–1.7 s, more than a hook's whole budget. chars / 4, used
 *   before, undercounts code-heavy text by 13–16% and overcounts prose by 3–5%.
 * - {@link loadTokenCounter}: the exact o200k count, loaded on first use, for surfaces that must
 *   honour a budget exactly (`cairn context --budget N`).
 */

/** The kinds of piece the estimate tells apart (o200k's pre-tokenizer, seen through ASCII). */
export type PieceKind = 'word' | 'spaceWord' | 'markWord' | 'marks' | 'digits' | 'spaces' | 'newline' | 'nonAscii';

export const PIECE_KINDS: readonly PieceKind[] = ['word', 'spaceWord', 'markWord', 'marks', 'digits', 'spaces', 'newline', 'nonAscii'];

/** Pieces longer than this cost {@link PieceCosts.beyond} per further character. */
export const PIECE_TABLE_LENGTH = 16;

/** What a piece costs in o200k tokens: by its length (index 0 = length 1), and per character past the table. */
export interface PieceCosts {
  byLength: readonly number[];
  beyond: number;
}

/**
 * Fitted by `cairn bench tokens --data ../shared/data` on the tuning half only (the run's details
 * print the fit; docs/TOKENS.md has the errors on both halves).
 */
export const PIECE_COSTS: Readonly<Record<PieceKind, PieceCosts>> = {
  word: { byLength: [1, 1.009, 1.083, 1.046, 1.128, 1.208, 1.232, 1.254, 1.408, 1.371, 1.49, 1.166, 2.723, 1.308, 1.405, 1.502], beyond: 0.097 }, // 51,702 pieces
  spaceWord: { byLength: [1, 1, 1, 1.023, 1.049, 1.035, 1.045, 1.09, 1.134, 1.108, 1.089, 1.171, 1.116, 1.401, 1.153, 1.172], beyond: 0.019 }, // 113,576 pieces
  markWord: { byLength: [1, 1.015, 1.033, 1.293, 1.182, 1.191, 1.266, 1.679, 1.445, 1.786, 1.586, 1.94, 2.869, 3.323, 3.323, 3.323], beyond: 0 }, // 48,297 pieces
  marks: { byLength: [1, 1.003, 1.094, 1.436, 1.561, 1.986, 2.504, 2.247, 3.25, 3.313, 3.376, 3.439, 3.502, 3.565, 3.628, 3.691], beyond: 0.063 }, // 116,750 pieces
  digits: { byLength: [1, 1, 1, 2, 2, 2, 3, 3, 3, 3.333, 3.666, 3.999, 5, 5, 5.333, 5.666], beyond: 0.333 }, // 40,078 pieces
  spaces: { byLength: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], beyond: 0 }, // 56,086 pieces
  newline: { byLength: [1, 1, 1, 1.017, 1, 1.017, 1.034, 1.051, 1.068, 1.085, 1.102, 1.119, 1.136, 1.153, 1.17, 1.187], beyond: 0.017 }, // 16,621 pieces
  nonAscii: { byLength: [1.009, 2.19, 2.214, 2.403, 2.592, 2.781, 2.97, 3.159, 3.348, 3.537, 3.726, 3.915, 4.104, 4.293, 4.482, 4.671], beyond: 0.189 }, // 25,513 pieces
};

// Character classes of ASCII, looked up once per character (a hook estimates ~150K characters
// in a cold process, where every helper call is paid in full).
const UPPER = 1;
const LOWER = 2;
const DIGIT = 3;
const NEWLINE = 4;
const SPACE = 5;
const MARK = 6;
const NON_ASCII = 7;
const CLASS = new Uint8Array(128).map((_, c) =>
  c >= 65 && c <= 90 ? UPPER : c >= 97 && c <= 122 ? LOWER : c >= 48 && c <= 57 ? DIGIT : c === 10 || c === 13 ? NEWLINE : c === 32 || c === 9 || c === 11 || c === 12 ? SPACE : MARK,
);
/** Class of each UTF-16 unit of `text` (non-ASCII as NON_ASCII), read once: the scanner then looks classes up, no call per character. */
function classesOf(text: string): Uint8Array {
  const n = text.length;
  const out = new Uint8Array(n + 1);
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    out[i] = c < 128 ? (CLASS[c] as number) : NON_ASCII;
  }
  return out;
}

/**
 * Walk `text` in the pieces o200k's pre-tokenizer cuts it into, approximately: a word is an
 * optional leading space or single mark, upper-case letters, then lower-case ones (so `getUserName`
 * is three pieces); digits, runs of marks, whitespace runs and runs of non-ASCII characters are
 * pieces of their own, and line ends stay with the marks before them. The pieces cover the text in
 * order (a word's length includes the space or mark it borrows). One pass, no allocation per piece.
 */
export function forEachPiece(text: string, visit: (kind: PieceKind, length: number) => void): void {
  const n = text.length;
  // A class past the end (0) ends every run.
  const cls = classesOf(text);
  let i = 0;
  let spacePrefix = false;
  while (i < n) {
    const k = cls[i] as number;
    if (k === UPPER || k === LOWER || (k === MARK && !spacePrefix && (cls[i + 1] as number) !== 0 && (cls[i + 1] as number) <= LOWER)) {
      // A word, with the space or single mark before it.
      const start = spacePrefix ? i - 1 : i;
      const kind: PieceKind = spacePrefix ? 'spaceWord' : k === MARK ? 'markWord' : 'word';
      let j = k === MARK ? i + 1 : i;
      while (cls[j] === UPPER) j++;
      while (cls[j] === LOWER) j++;
      visit(kind, j - start);
      spacePrefix = false;
      i = j;
    } else if (k === DIGIT || k === NON_ASCII) {
      let j = i + 1;
      while (cls[j] === k) j++;
      visit(k === DIGIT ? 'digits' : 'nonAscii', j - i);
      i = j;
    } else if (k === MARK) {
      let j = i + 1;
      while (cls[j] === MARK) j++;
      // Line ends stay with the marks before them (`;\n`, `{\n` are single o200k tokens).
      while (cls[j] === NEWLINE) j++;
      visit('marks', j - i + (spacePrefix ? 1 : 0));
      spacePrefix = false;
      i = j;
    } else {
      let j = i;
      let afterNewline = -1;
      for (let c = k; c === SPACE || c === NEWLINE; c = cls[++j] as number) if (c === NEWLINE) afterNewline = j + 1;
      if (afterNewline > 0) visit('newline', afterNewline - i);
      const rest = j - (afterNewline > 0 ? afterNewline : i);
      if (rest > 0) {
        // The last space before a word or a mark belongs to it (` word`, ` (`); the rest is one piece.
        const next = cls[j] as number;
        const lends = next === UPPER || next === LOWER || next === MARK;
        if (rest > 1 || !lends) visit('spaces', lends ? rest - 1 : rest);
        spacePrefix = lends;
      }
      i = j;
    }
  }
}

/** What one piece costs by `costs`. */
export function pieceCost(costs: PieceCosts, length: number): number {
  const table = costs.byLength;
  if (length <= table.length) return table[length - 1] ?? 1;
  return (table[table.length - 1] ?? 1) + (length - table.length) * costs.beyond;
}

/** {@link PIECE_COSTS} flattened for {@link estimateTokens}: kind K's cost of length L at K * 16 + L - 1. */
const KIND_INDEX: Readonly<Record<PieceKind, number>> = { word: 0, spaceWord: 1, markWord: 2, marks: 3, digits: 4, spaces: 5, newline: 6, nonAscii: 7 };
const COST = new Float64Array(PIECE_KINDS.length * PIECE_TABLE_LENGTH);
const BEYOND = new Float64Array(PIECE_KINDS.length);
for (const kind of PIECE_KINDS) {
  const k = KIND_INDEX[kind];
  PIECE_COSTS[kind].byLength.forEach((cost, length) => (COST[k * PIECE_TABLE_LENGTH + length] = cost));
  BEYOND[k] = PIECE_COSTS[kind].beyond;
}
const K_WORD = 0;
const K_SPACE_WORD = 1;
const K_MARK_WORD = 2;
const K_MARKS = 3;
const K_DIGITS = 4;
const K_SPACES = 5;
const K_NEWLINE = 6;
const K_NON_ASCII = 7;

/** {@link pieceCost} of a piece of kind `k` (an index of {@link COST}) and `length`. */
function costOf(k: number, length: number): number {
  const base = k * PIECE_TABLE_LENGTH;
  return length <= PIECE_TABLE_LENGTH ? (COST[base + length - 1] as number) : (COST[base + PIECE_TABLE_LENGTH - 1] as number) + (length - PIECE_TABLE_LENGTH) * (BEYOND[k] as number);
}

/**
 * Estimated o200k token count of `text`, rounded up (see the module comment: within ~1% of o200k
 * on ../shared's code-heavy text and ~5% over on prose; a few per cent either way on one text).
 * Fast enough for every hook: one pass over the characters, no vocabulary.
 *
 * The same walk as {@link forEachPiece}, the same pieces summed in the same order (so the same
 * number to the bit), written out in one function that reads each character's class once, as it
 * goes: a hook runs with V8's optimizing compiler off (src/hooks/run.ts), where the callback per
 * piece, the class array made per text and the second pass over it cost ~30% more CPU.
 * test/tokens/estimate-equivalence.test.ts holds it to {@link forEachPiece}.
 */
export function estimateTokens(text: string): number {
  const n = text.length;
  let total = 0;
  let i = 0;
  let spacePrefix = false;
  // `k` is the class of the character at the scan's position (`c`), 0 past the end, which ends every run.
  let c = n > 0 ? text.charCodeAt(0) : 0;
  let k = n > 0 ? (c < 128 ? (CLASS[c] as number) : NON_ASCII) : 0;
  while (i < n) {
    if (k === UPPER || k === LOWER) {
      const start = spacePrefix ? i - 1 : i;
      const kind = spacePrefix ? K_SPACE_WORD : K_WORD;
      let j = i;
      while (k === UPPER) {
        j++;
        c = text.charCodeAt(j);
        k = j < n ? (c < 128 ? (CLASS[c] as number) : NON_ASCII) : 0;
      }
      while (k === LOWER) {
        j++;
        c = text.charCodeAt(j);
        k = j < n ? (c < 128 ? (CLASS[c] as number) : NON_ASCII) : 0;
      }
      total += costOf(kind, j - start);
      spacePrefix = false;
      i = j;
    } else if (k === MARK) {
      let j = i + 1;
      c = text.charCodeAt(j);
      k = j < n ? (c < 128 ? (CLASS[c] as number) : NON_ASCII) : 0;
      if (!spacePrefix && k !== 0 && k <= LOWER) {
        while (k === UPPER) {
          j++;
          c = text.charCodeAt(j);
          k = j < n ? (c < 128 ? (CLASS[c] as number) : NON_ASCII) : 0;
        }
        while (k === LOWER) {
          j++;
          c = text.charCodeAt(j);
          k = j < n ? (c < 128 ? (CLASS[c] as number) : NON_ASCII) : 0;
        }
        total += costOf(K_MARK_WORD, j - i);
      } else {
        while (k === MARK) {
          j++;
          c = text.charCodeAt(j);
          k = j < n ? (c < 128 ? (CLASS[c] as number) : NON_ASCII) : 0;
        }
        while (k === NEWLINE) {
          j++;
          c = text.charCodeAt(j);
          k = j < n ? (c < 128 ? (CLASS[c] as number) : NON_ASCII) : 0;
        }
        total += costOf(K_MARKS, j - i + (spacePrefix ? 1 : 0));
      }
      spacePrefix = false;
      i = j;
    } else if (k === DIGIT || k === NON_ASCII) {
      const run = k;
      let j = i;
      while (k === run) {
        j++;
        c = text.charCodeAt(j);
        k = j < n ? (c < 128 ? (CLASS[c] as number) : NON_ASCII) : 0;
      }
      total += costOf(run === DIGIT ? K_DIGITS : K_NON_ASCII, j - i);
      i = j;
    } else {
      let j = i;
      let afterNewline = -1;
      while (k === SPACE || k === NEWLINE) {
        if (k === NEWLINE) afterNewline = j + 1;
        j++;
        c = text.charCodeAt(j);
        k = j < n ? (c < 128 ? (CLASS[c] as number) : NON_ASCII) : 0;
      }
      if (afterNewline > 0) total += costOf(K_NEWLINE, afterNewline - i);
      const rest = j - (afterNewline > 0 ? afterNewline : i);
      if (rest > 0) {
        const lends = k === UPPER || k === LOWER || k === MARK;
        if (rest > 1 || !lends) total += costOf(K_SPACES, lends ? rest - 1 : rest);
        spacePrefix = lends;
      }
      i = j;
    }
  }
  return Math.ceil(total);
}

/** An exact token counter (o200k_base). */
export type TokenCounter = (text: string) => number;

/** Which tokenizer {@link loadTokenCounter} counts with. */
export const EXACT_TOKENIZER = 'o200k_base';

/**
 * The exact o200k_base count from `gpt-tokenizer`, imported on first use (its 200K ranks take
 * 0.5–1.7 s to load, so no hook loads it; the module system keeps it for the process).
 */
export async function loadTokenCounter(): Promise<TokenCounter> {
  const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
  return (text: string) => countTokens(text);
}
