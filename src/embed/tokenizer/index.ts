/**
 * A Hugging Face `tokenizer.json` reader, implementing the normalizers, pre-tokenizers and models
 * that static (Model2Vec) embedders need, and producing the same ids as the reference
 * `tokenizers` library's `encode(text, add_special_tokens=False)`.
 */
import { asObject, badConfig, bool, str } from './config.js';
import { buildModel } from './models.js';
import { buildNormalizer, type Normalizer } from './normalizers.js';
import { buildPreTokenizer } from './pre-tokenizers.js';

export interface Tokenizer {
  /** Token ids of `text`, without special tokens (no [CLS] / [SEP]). */
  encode(text: string): number[];
  /** The token strings of `text` (for inspection and tests). */
  tokenize(text: string): string[];
  /** Token → id, added tokens included. */
  tokenToId(token: string): number | undefined;
  idToToken(id: number): string | undefined;
  /** Every token (model vocabulary and added tokens), in id order. */
  readonly tokens: readonly string[];
  /** The model's `unk_token` id (WordPiece, WordLevel); null for Unigram, which names none. */
  readonly unkTokenId: number | null;
}

interface AddedToken {
  id: number;
  content: string;
  singleWord: boolean;
  lstrip: boolean;
  rstrip: boolean;
  normalized: boolean;
}

type Segment = { text: string; id?: undefined } | { text?: undefined; id: number };

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Split `text` around added tokens, leftmost-longest, honouring single_word / lstrip / rstrip.
 * Returns null when there is nothing to split (the common case, kept allocation-free).
 */
function addedTokenSplitter(tokens: AddedToken[], normalize: Normalizer | null): ((text: string) => Segment[] | null) | null {
  if (tokens.length === 0) return null;
  const entries = tokens
    .map((token) => ({ ...token, content: normalize ? normalize(token.content) : token.content }))
    .filter((token) => token.content.length > 0)
    .sort((a, b) => b.content.length - a.content.length);
  if (entries.length === 0) return null;
  const alternatives = entries.map((token) => {
    let source = `(${escape(token.content)})`;
    if (token.singleWord) source = `(?<![\\p{L}\\p{N}_])${source}(?![\\p{L}\\p{N}_])`;
    if (token.lstrip) source = `\\p{White_Space}*${source}`;
    if (token.rstrip) source = `${source}\\p{White_Space}*`;
    return source;
  });
  const regex = new RegExp(alternatives.join('|'), 'gu');
  const firstChars = new Set(entries.map((token) => token.content[0]!));
  const anyLstrip = entries.some((token) => token.lstrip);
  return (text) => {
    if (!anyLstrip && ![...firstChars].some((char) => text.includes(char))) return null;
    const segments: Segment[] = [];
    let last = 0;
    for (const match of text.matchAll(regex)) {
      const group = match.findIndex((value, index) => index > 0 && value !== undefined);
      const token = entries[group - 1];
      if (!token) continue;
      if (match.index > last) segments.push({ text: text.slice(last, match.index) });
      segments.push({ id: token.id });
      last = match.index + match[0].length;
    }
    if (segments.length === 0) return null;
    if (last < text.length) segments.push({ text: text.slice(last) });
    return segments;
  };
}

/** Build a tokenizer from the parsed content of a `tokenizer.json` file. */
export function parseTokenizer(json: unknown): Tokenizer {
  const config = asObject(json, 'tokenizer.json');
  const normalize = buildNormalizer(config['normalizer']);
  const preTokenize = buildPreTokenizer(config['pre_tokenizer']);
  const model = buildModel(config['model']);

  const added: AddedToken[] = [];
  const addedList = config['added_tokens'];
  for (const entry of Array.isArray(addedList) ? addedList : []) {
    const token = asObject(entry, 'added_tokens[]');
    if (typeof token['id'] !== 'number' || typeof token['content'] !== 'string') throw badConfig('an added token lacks id or content');
    added.push({
      id: token['id'],
      content: token['content'],
      singleWord: bool(token, 'single_word', false),
      lstrip: bool(token, 'lstrip', false),
      rstrip: bool(token, 'rstrip', false),
      normalized: bool(token, 'normalized', !bool(token, 'special', false)),
    });
  }
  const splitRaw = addedTokenSplitter(added.filter((t) => !t.normalized), null);
  const splitNormalized = addedTokenSplitter(added.filter((t) => t.normalized), normalize);

  const addedIds = new Map(added.map((token) => [token.content, token.id]));
  const tokenToId = (token: string): number | undefined => addedIds.get(token) ?? model.vocab.get(token);
  let maxId = -1;
  for (const id of model.vocab.values()) if (id > maxId) maxId = id;
  for (const id of addedIds.values()) if (id > maxId) maxId = id;
  const tokens = new Array<string | undefined>(maxId + 1).fill(undefined);
  for (const [token, id] of model.vocab) tokens[id] = token;
  for (const [token, id] of addedIds) tokens[id] = token;
  const denseTokens = tokens.filter((token): token is string => token !== undefined);

  const truncation = config['truncation'] === null || config['truncation'] === undefined ? null : asObject(config['truncation'], 'truncation');
  const maxLength = truncation && typeof truncation['max_length'] === 'number' ? truncation['max_length'] : Infinity;
  const truncateLeft = truncation ? str(truncation, 'direction', 'Right') === 'Left' : false;

  function encodeNormalized(text: string, out: number[]): void {
    for (const piece of preTokenize([text])) if (piece.length > 0) model.tokenize(piece, out);
  }

  function encodePlain(text: string, out: number[]): void {
    const normalized = normalize(text);
    const segments = splitNormalized?.(normalized);
    if (!segments) return encodeNormalized(normalized, out);
    for (const segment of segments) {
      if (segment.id !== undefined) out.push(segment.id);
      else encodeNormalized(segment.text, out);
    }
  }

  function encode(text: string): number[] {
    const out: number[] = [];
    const segments = splitRaw?.(text);
    if (!segments) encodePlain(text, out);
    else for (const segment of segments) segment.id !== undefined ? out.push(segment.id) : encodePlain(segment.text, out);
    if (out.length > maxLength) return truncateLeft ? out.slice(out.length - maxLength) : out.slice(0, maxLength);
    return out;
  }

  return {
    encode,
    tokenize: (text) => encode(text).map((id) => tokens[id] ?? ''),
    tokenToId,
    idToToken: (id) => tokens[id],
    tokens: denseTokens,
    unkTokenId: model.unkTokenId,
  };
}
