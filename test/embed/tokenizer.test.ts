import { describe, expect, it } from 'vitest';
import { parseTokenizer } from '../../src/embed/tokenizer/index.js';
import { buildNormalizer } from '../../src/embed/tokenizer/normalizers.js';
import { buildPreTokenizer, splitWith } from '../../src/embed/tokenizer/pre-tokenizers.js';

const bert = { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true };

function wordPiece(vocab: string[], extra: Record<string, unknown> = {}) {
  return parseTokenizer({
    normalizer: bert,
    pre_tokenizer: { type: 'BertPreTokenizer' },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 10, vocab: Object.fromEntries(vocab.map((t, i) => [t, i])) },
    ...extra,
  });
}

describe('normalizers', () => {
  it('BertNormalizer cleans controls, spaces CJK, strips accents and lower-cases per character', () => {
    const normalize = buildNormalizer(bert);
    expect(normalize('Héllo\tWörld')).toBe('hello world');
    expect(normalize('a\u0000b\u200bc\ufffdd\u0085e')).toBe('abcde');
    expect(normalize('x中y')).toBe('x 中 y');
    expect(normalize('ΟΔΥΣΣΕΥΣ')).toBe('οδυσσευσ'); // no final-sigma rule, like Rust's char::to_lowercase
    expect(normalize('İ')).toBe('i'); // İ → i + combining dot, and the dot is a stripped accent
  });

  it('keeps accents when strip_accents is false', () => {
    expect(buildNormalizer({ ...bert, strip_accents: false })('Café')).toBe('café');
  });

  it('runs sequences of Replace and Strip', () => {
    const normalize = buildNormalizer({
      type: 'Sequence',
      normalizers: [
        { type: 'Replace', pattern: { String: '.' }, content: ' . ' },
        { type: 'Replace', pattern: { Regex: '\\s+' }, content: ' ' },
        { type: 'Strip', strip_left: true, strip_right: true },
      ],
    });
    expect(normalize('  a.b   c ')).toBe('a . b c');
  });

  it('rejects what it does not implement, naming it', () => {
    expect(() => buildNormalizer({ type: 'Precompiled' })).toThrow(/unsupported normalizer type Precompiled/);
  });
});

describe('pre-tokenizers', () => {
  it('BertPreTokenizer drops whitespace and isolates punctuation, ASCII symbols included', () => {
    const split = buildPreTokenizer({ type: 'BertPreTokenizer' });
    expect(split(["don't stop—now $5+x"])).toEqual(['don', "'", 't', 'stop', '—', 'now', '$', '5', '+', 'x']);
  });

  it('Whitespace splits words from runs of symbols', () => {
    expect(buildPreTokenizer({ type: 'Whitespace' })(['héllo, wörld!!'])).toEqual(['héllo', ',', 'wörld', '!!']);
  });

  it('Metaspace replaces spaces, prepends the marker and splits before it', () => {
    const split = buildPreTokenizer({ type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true });
    expect(split(['hello  world'])).toEqual(['▁hello', '▁', '▁world']);
    expect(buildPreTokenizer({ type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: false })(['a b'])).toEqual(['▁a▁b']);
    expect(split([''])).toEqual([]);
  });

  it('splits with every delimiter behaviour', () => {
    const dash = /-/g;
    expect(splitWith('a-b--c', dash, 'Removed')).toEqual(['a', 'b', 'c']);
    expect(splitWith('a-b--c', dash, 'Isolated')).toEqual(['a', '-', 'b', '-', '-', 'c']);
    expect(splitWith('a-b--c', dash, 'Contiguous')).toEqual(['a', '-', 'b', '--', 'c']);
    expect(splitWith('a-b--c', dash, 'MergedWithPrevious')).toEqual(['a-', 'b-', '-', 'c']);
    expect(splitWith('a-b--c', dash, 'MergedWithNext')).toEqual(['a', '-b', '-', '-c']);
  });
});

describe('WordPiece', () => {
  const tokenizer = wordPiece(['[UNK]', 'un', '##aff', '##able', 'aff', '!', '##s', 'a']);

  it('matches greedily longest-first with ## continuations', () => {
    expect(tokenizer.tokenize('unaffable!')).toEqual(['un', '##aff', '##able', '!']);
  });

  it('turns a word with an unmatchable part, or longer than max_input_chars_per_word, into one [UNK]', () => {
    expect(tokenizer.tokenize('unaffablex affs')).toEqual(['[UNK]', 'aff', '##s']);
    expect(tokenizer.tokenize('a'.repeat(11))).toEqual(['[UNK]']);
    expect(tokenizer.unkTokenId).toBe(0);
  });

  it('splits added tokens out of the raw text first, honouring single_word', () => {
    const withAdded = wordPiece(['[UNK]', 'a', '[MASK]', '<x>'], {
      added_tokens: [
        { id: 2, content: '[MASK]', special: true, normalized: false },
        { id: 3, content: '<x>', special: true, normalized: false, single_word: true },
      ],
    });
    expect(withAdded.tokenize('a[MASK]a')).toEqual(['a', '[MASK]', 'a']);
    // '<x>' glued to a word is not a single word: it goes through the model as '<', 'x', '>'.
    expect(withAdded.tokenize('a <x> a<x>')).toEqual(['a', '<x>', 'a', '[UNK]', '[UNK]', '[UNK]']);
  });
});

describe('Unigram', () => {
  const tokenizer = parseTokenizer({
    normalizer: null,
    pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
    model: {
      type: 'Unigram',
      unk_id: 0,
      vocab: [['<unk>', 0], ['▁', -2], ['▁ab', -1], ['▁a', -1.5], ['b', -1.5], ['c', -2.4], ['bc', -2], ['▁abc', -5]],
    },
  });

  it('picks the best-scoring segmentation (Viterbi)', () => {
    expect(tokenizer.tokenize('abc')).toEqual(['▁ab', 'c']); // -3.4 beats ▁a+bc (-3.5) and ▁abc (-5)
    expect(tokenizer.tokenize('ab')).toEqual(['▁ab']);
  });

  it('breaks score ties towards the path found first, as the reference does', () => {
    const tie = parseTokenizer({
      pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
      model: { type: 'Unigram', unk_id: 0, vocab: [['<unk>', 0], ['▁ab', -1], ['▁abc', -1.5], ['cd', -2], ['d', -1.5], ['c', -10]] },
    });
    // ▁ab+cd and ▁abc+d both score -3: the candidate whose last piece starts earlier is kept.
    expect(tie.tokenize('abcd')).toEqual(['▁ab', 'cd']);
  });

  it('fuses runs of unknown characters into one unknown token and keeps it', () => {
    expect(tokenizer.tokenize('xyzb')).toEqual(['▁', '<unk>', 'b']);
    expect(tokenizer.unkTokenId).toBeNull();
  });

  it('falls back to byte tokens when byte_fallback is on', () => {
    const bytes = parseTokenizer({
      model: { type: 'Unigram', unk_id: 0, byte_fallback: true, vocab: [['<unk>', 0], ['a', -1], ['<0xC3>', -3], ['<0xA9>', -3]] },
    });
    expect(bytes.tokenize('aé')).toEqual(['a', '<0xC3>', '<0xA9>']);
  });
});

describe('tokenizer.json errors', () => {
  it('names unsupported models', () => {
    expect(() => parseTokenizer({ model: { type: 'BPE', vocab: {}, merges: [] } })).toThrow(/unsupported model type BPE/);
  });

  it('requires the unk token to be in the vocabulary', () => {
    expect(() => parseTokenizer({ model: { type: 'WordPiece', unk_token: '[UNK]', vocab: { a: 0 } } })).toThrow(/unk_token/);
  });
});
