/**
 * The tokenizer.json models (Hugging Face tokenizers) that static embedders use: WordPiece (BERT
 * vocabularies such as potion-base-8M's), Unigram (SentencePiece-style) and WordLevel.
 * BPE is not implemented: no Model2Vec model we support uses it.
 */
import { asObject, badConfig, bool, str, unsupported, type Json } from './config.js';

export interface TokenModel {
  /** Append the ids of one pre-tokenized piece to `out`. */
  tokenize(piece: string, out: number[]): void;
  /** Token → id for every token of the model. */
  readonly vocab: Map<string, number>;
  /** The `unk_token` id for models that name one (WordPiece, WordLevel); Unigram has none. */
  readonly unkTokenId: number | null;
}

/** Pieces longer than this are not cached (a Metaspace tokenizer may hand over a whole text). */
const MAX_CACHED_PIECE = 48;
const MAX_CACHE_ENTRIES = 50_000;

/** A piece → ids memo, cleared when it grows too large (no eviction order needed for a memo). */
class PieceCache {
  private readonly map = new Map<string, number[]>();

  get(piece: string): number[] | undefined {
    return piece.length <= MAX_CACHED_PIECE ? this.map.get(piece) : undefined;
  }

  set(piece: string, ids: number[]): void {
    if (piece.length > MAX_CACHED_PIECE) return;
    if (this.map.size >= MAX_CACHE_ENTRIES) this.map.clear();
    this.map.set(piece, ids);
  }
}

function push(out: number[], ids: number[]): void {
  for (let i = 0; i < ids.length; i++) out.push(ids[i]!);
}

function countCodePoints(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0xdc00 || code > 0xdfff) count++;
  }
  return count;
}

function isLowSurrogate(text: string, index: number): boolean {
  const code = text.charCodeAt(index);
  return code >= 0xdc00 && code <= 0xdfff;
}

function objectVocab(value: unknown): Map<string, number> {
  const object = asObject(value, 'model.vocab');
  const vocab = new Map<string, number>();
  for (const token in object) {
    const id = object[token];
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0) throw badConfig(`model.vocab[${JSON.stringify(token)}] is not an integer id`);
    vocab.set(token, id);
  }
  return vocab;
}

function unkIdOf(vocab: Map<string, number>, config: Json): number {
  const unkToken = str(config, 'unk_token', '[UNK]');
  const id = vocab.get(unkToken);
  if (id === undefined) throw badConfig(`unk_token ${unkToken} is not in the vocabulary`);
  return id;
}

/** Greedy longest-match-first WordPiece, with `##`-style continuation pieces. */
function wordPiece(config: Json): TokenModel {
  const vocab = objectVocab(config['vocab']);
  const unkTokenId = unkIdOf(vocab, config);
  const prefix = str(config, 'continuing_subword_prefix', '##');
  const maxChars = typeof config['max_input_chars_per_word'] === 'number' ? config['max_input_chars_per_word'] : 100;
  let longest = 0;
  for (const token of vocab.keys()) longest = Math.max(longest, token.length);
  const cache = new PieceCache();

  function pieceIds(word: string): number[] {
    if (word.length > maxChars && countCodePoints(word) > maxChars) return [unkTokenId];
    const ids: number[] = [];
    let start = 0;
    while (start < word.length) {
      let end = Math.min(word.length, start + longest);
      if (end < word.length && isLowSurrogate(word, end)) end--;
      let found = -1;
      while (end > start) {
        const piece = start === 0 ? word.slice(0, end) : prefix + word.slice(start, end);
        const id = vocab.get(piece);
        if (id !== undefined) {
          found = id;
          break;
        }
        end--;
        if (end > start && isLowSurrogate(word, end)) end--;
      }
      if (found < 0) return [unkTokenId];
      ids.push(found);
      start = end;
    }
    return ids;
  }

  return {
    vocab,
    unkTokenId,
    tokenize(piece, out) {
      let ids = cache.get(piece);
      if (!ids) {
        ids = pieceIds(piece);
        cache.set(piece, ids);
      }
      push(out, ids);
    },
  };
}

function wordLevel(config: Json): TokenModel {
  const vocab = objectVocab(config['vocab']);
  const unkTokenId = unkIdOf(vocab, config);
  return {
    vocab,
    unkTokenId,
    tokenize(piece, out) {
      out.push(vocab.get(piece) ?? unkTokenId);
    },
  };
}

interface TrieNode {
  children: Map<number, TrieNode>;
  /** Token id ending here, or -1. */
  id: number;
}

/** The reference's penalty for an unknown character, below the lowest-scoring piece. */
const UNK_PENALTY = 10;

/** SentencePiece-style Unigram: the Viterbi segmentation with the highest total log-probability. */
function unigram(config: Json): TokenModel {
  const list = config['vocab'];
  if (!Array.isArray(list)) throw badConfig('Unigram model.vocab is not a list');
  const vocab = new Map<string, number>();
  const scores = new Float64Array(list.length);
  const root: TrieNode = { children: new Map(), id: -1 };
  let minScore = Infinity;
  list.forEach((entry, id) => {
    if (!Array.isArray(entry) || typeof entry[0] !== 'string' || typeof entry[1] !== 'number') {
      throw badConfig(`Unigram model.vocab[${id}] is not a [piece, score] pair`);
    }
    const [piece, score] = entry as [string, number];
    vocab.set(piece, id);
    scores[id] = score;
    minScore = Math.min(minScore, score);
    let node = root;
    for (const char of piece) {
      const code = char.codePointAt(0)!;
      let child = node.children.get(code);
      if (!child) {
        child = { children: new Map(), id: -1 };
        node.children.set(code, child);
      }
      node = child;
    }
    node.id = id;
  });
  // The reference builds its map with later duplicates winning; the trie must agree.
  const unkId = typeof config['unk_id'] === 'number' ? config['unk_id'] : null;
  const byteFallback = bool(config, 'byte_fallback', false);
  const unkScore = minScore - UNK_PENALTY;
  const cache = new PieceCache();

  function unknown(): number {
    if (unkId === null) throw badConfig('Unigram model met an unknown character but has no unk_id');
    return unkId;
  }

  function byteIds(text: string): number[] | null {
    const ids: number[] = [];
    for (const byte of new TextEncoder().encode(text)) {
      const id = vocab.get(`<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`);
      if (id === undefined) return null;
      ids.push(id);
    }
    return ids;
  }

  function pieceIds(piece: string): number[] {
    const chars = Array.from(piece, (c) => c.codePointAt(0)!);
    const size = chars.length;
    const bestScore = new Float64Array(size + 1);
    const bestStart = new Int32Array(size + 1).fill(-1);
    const bestId = new Int32Array(size + 1).fill(-1);
    bestStart[0] = 0;
    for (let start = 0; start < size; start++) {
      if (bestStart[start] === -1) continue;
      const base = bestScore[start]!;
      let hasSingle = false;
      let node: TrieNode | undefined = root;
      for (let end = start; end < size; end++) {
        node = node.children.get(chars[end]!);
        if (!node) break;
        if (node.id < 0) continue;
        const candidate = base + scores[node.id]!;
        const at = end + 1;
        if (bestStart[at] === -1 || candidate > bestScore[at]!) {
          bestScore[at] = candidate;
          bestStart[at] = start;
          bestId[at] = node.id;
        }
        if (end === start) hasSingle = true;
      }
      if (!hasSingle) {
        const at = start + 1;
        const candidate = base + unkScore;
        if (bestStart[at] === -1 || candidate > bestScore[at]!) {
          bestScore[at] = candidate;
          bestStart[at] = start;
          bestId[at] = unknown();
        }
      }
    }
    // Walk back, fusing runs of unknown pieces into one, as the reference does.
    const segments: Array<[number, number, boolean]> = [];
    for (let end = size; end > 0; ) {
      const start = bestStart[end]!;
      const isUnk = unkId !== null && bestId[end] === unkId;
      const last = segments[segments.length - 1];
      if (isUnk && last && last[2]) last[0] = start;
      else segments.push([start, end, isUnk]);
      end = start;
    }
    segments.reverse();
    const ids: number[] = [];
    for (const [start, end, isUnk] of segments) {
      const text = String.fromCodePoint(...chars.slice(start, end));
      const id = isUnk ? undefined : vocab.get(text);
      if (id !== undefined) {
        ids.push(id);
        continue;
      }
      const bytes = byteFallback ? byteIds(text) : null;
      if (bytes) push(ids, bytes);
      else ids.push(unknown());
    }
    return ids;
  }

  return {
    vocab,
    unkTokenId: null,
    tokenize(piece, out) {
      if (piece.length === 0) return;
      let ids = cache.get(piece);
      if (!ids) {
        ids = pieceIds(piece);
        cache.set(piece, ids);
      }
      push(out, ids);
    },
  };
}

/** Build the model a tokenizer.json describes. */
export function buildModel(value: unknown): TokenModel {
  const config = asObject(value, 'model');
  const type = str(config, 'type', '');
  switch (type) {
    case 'WordPiece':
      return wordPiece(config);
    case 'WordLevel':
      return wordLevel(config);
    case 'Unigram':
      return unigram(config);
    default:
      // Old WordPiece files carry no type but a continuing_subword_prefix.
      if (!type && typeof config['continuing_subword_prefix'] === 'string') return wordPiece(config);
      throw unsupported(`model type ${type || '(none)'}`);
  }
}
