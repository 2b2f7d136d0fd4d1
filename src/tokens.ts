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

/**
 * Estimated o200k token count of `text`, rounded up (see the module comment: within ~1% of o200k
 * on ../shared's code-heavy text and ~5% over on prose; a few per cent either way on one text).
 * Fast enough for every hook: one pass over the characters, no vocabulary.
 */
export function estimateTokens(text: string): number {
  let total = 0;
  forEachPiece(text, (kind, length) => {
    const costs = PIECE_COSTS[kind];
    total += length <= PIECE_TABLE_LENGTH ? (costs.byLength[length - 1] as number) : pieceCost(costs, length);
  });
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
