/**
 * The tokenizer.json pre-tokenizers (Hugging Face tokenizers): each splits a normalised string
 * into the pieces ("words") the model tokenizes one by one.
 */
import { asObject, bool, pattern, str, unsupported, type Json } from './config.js';

/** Split every piece further; `pieces` is in text order. */
export type PreTokenizer = (pieces: string[]) => string[];

export type SplitBehavior = 'Removed' | 'Isolated' | 'MergedWithPrevious' | 'MergedWithNext' | 'Contiguous';

/** BERT punctuation: ASCII punctuation (which includes symbols like $ + < = > ^ ` | ~) or Unicode P*. */
const BERT_PUNCT = '\\p{P}!-\\/:-@\\[-`{-~';
const BERT_WORDS = new RegExp(`[^\\p{White_Space}${BERT_PUNCT}]+|[${BERT_PUNCT}]`, 'gu');
const ASCII_BERT_WORDS = /[^ \t\n\r\f\v!-/:-@[-`{-~]+|[!-/:-@[-`{-~]/g;
const PLAIN_ASCII = /^[\x20-\x7e]*$/;
/** Rust regex `\w` with Unicode: alphabetic, marks, decimal digits, connector punctuation, joiners. */
const WORD_CHAR = '\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}';
const WHITESPACE_WORDS = new RegExp(`[${WORD_CHAR}]+|[^${WORD_CHAR}\\p{White_Space}]+`, 'gu');
const NON_WHITESPACE = /[^\p{White_Space}]+/gu;
const PUNCT = new RegExp(`[${BERT_PUNCT}]`, 'gu');
const DIGIT = /[0-9]/g;
const DIGITS = /[0-9]+/g;

/** Split `text` around the matches of `delimiter` (a global regex) with the given behaviour. */
export function splitWith(text: string, delimiter: RegExp, behavior: SplitBehavior, invert = false): string[] {
  const ranges: Array<[number, number, boolean]> = [];
  let last = 0;
  for (const match of text.matchAll(delimiter)) {
    const start = match.index;
    const end = start + match[0].length;
    if (end === start) continue;
    if (start > last) ranges.push([last, start, invert]);
    ranges.push([start, end, !invert]);
    last = end;
  }
  if (last < text.length) ranges.push([last, text.length, invert]);

  const out: string[] = [];
  let pendingPrefix = '';
  for (let i = 0; i < ranges.length; i++) {
    const [start, end, isDelimiter] = ranges[i]!;
    const piece = text.slice(start, end);
    if (!isDelimiter) {
      out.push(pendingPrefix + piece);
      pendingPrefix = '';
      continue;
    }
    // As in the reference: a delimiter merges only with a neighbouring non-delimiter piece.
    const previousIsDelimiter = i > 0 && ranges[i - 1]![2];
    const nextIsPiece = i + 1 < ranges.length && !ranges[i + 1]![2];
    switch (behavior) {
      case 'Removed':
        break;
      case 'Isolated':
        out.push(piece);
        break;
      case 'Contiguous':
        if (previousIsDelimiter && out.length > 0) out[out.length - 1] += piece;
        else out.push(piece);
        break;
      case 'MergedWithPrevious':
        if (i > 0 && !previousIsDelimiter && out.length > 0) out[out.length - 1] += piece;
        else out.push(piece);
        break;
      case 'MergedWithNext':
        if (nextIsPiece) pendingPrefix = piece;
        else out.push(piece);
        break;
    }
  }
  return out;
}

function eachPiece(split: (piece: string, index: number) => string[]): PreTokenizer {
  return (pieces) => {
    if (pieces.length === 1) return split(pieces[0]!, 0);
    const out: string[] = [];
    pieces.forEach((piece, index) => {
      for (const part of split(piece, index)) out.push(part);
    });
    return out;
  };
}

function matches(regex: RegExp): PreTokenizer {
  return eachPiece((piece) => piece.match(regex) ?? []);
}

/** Whitespace removed, each punctuation character its own piece. */
export const bertPreTokenizer: PreTokenizer = eachPiece(
  (piece) => (PLAIN_ASCII.test(piece) ? piece.match(ASCII_BERT_WORDS) : piece.match(BERT_WORDS)) ?? [],
);

function behaviorOf(config: Json, fallback: SplitBehavior): SplitBehavior {
  const value = str(config, 'behavior', fallback);
  const known: SplitBehavior[] = ['Removed', 'Isolated', 'MergedWithPrevious', 'MergedWithNext', 'Contiguous'];
  if (!(known as string[]).includes(value)) throw unsupported(`split behavior ${value}`);
  return value as SplitBehavior;
}

function metaspace(config: Json): PreTokenizer {
  const replacement = str(config, 'replacement', '▁');
  let scheme = str(config, 'prepend_scheme', '');
  if (!scheme) scheme = bool(config, 'add_prefix_space', true) ? 'always' : 'never';
  const split = bool(config, 'split', true);
  const splitter = new RegExp(replacement.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gu');
  return eachPiece((piece, index) => {
    // The reference cannot prepend to an empty string, so an empty piece stays empty.
    if (piece.length === 0) return [];
    let out = piece.replaceAll(' ', replacement);
    const prepend = scheme === 'always' || (scheme === 'first' && index === 0);
    if (prepend && !out.startsWith(replacement)) out = replacement + out;
    return split ? splitWith(out, splitter, 'MergedWithNext') : [out];
  });
}

/** Build the pre-tokenizer a tokenizer.json describes (`null` → the whole text is one piece). */
export function buildPreTokenizer(value: unknown): PreTokenizer {
  if (value === null || value === undefined) return (pieces) => pieces;
  const config = asObject(value, 'pre_tokenizer');
  const type = str(config, 'type', '');
  switch (type) {
    case 'BertPreTokenizer':
      return bertPreTokenizer;
    case 'Whitespace':
      return matches(WHITESPACE_WORDS);
    case 'WhitespaceSplit':
      return matches(NON_WHITESPACE);
    case 'Punctuation': {
      const behavior = behaviorOf(config, 'Isolated');
      return eachPiece((piece) => splitWith(piece, PUNCT, behavior));
    }
    case 'Digits': {
      const individual = bool(config, 'individual_digits', false);
      return eachPiece((piece) => splitWith(piece, individual ? DIGIT : DIGITS, 'Isolated'));
    }
    case 'Metaspace':
      return metaspace(config);
    case 'Split': {
      const regex = pattern(config['pattern'], 'Split pre-tokenizer');
      const behavior = behaviorOf(config, 'Isolated');
      const invert = bool(config, 'invert', false);
      return eachPiece((piece) => splitWith(piece, regex, behavior, invert));
    }
    case 'Sequence': {
      const list = config['pretokenizers'];
      const steps = (Array.isArray(list) ? list : []).map(buildPreTokenizer);
      return (pieces) => steps.reduce((acc, step) => step(acc), pieces);
    }
    default:
      throw unsupported(`pre_tokenizer type ${type || '(none)'}`);
  }
}
