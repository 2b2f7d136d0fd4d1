/**
 * The tiny self-made Model2Vec model committed under test/fixtures/embed/tiny-wordpiece, built
 * here so the committed bytes can be checked against the writer (see static.test.ts).
 */
import { writeSafetensors } from '../../src/embed/safetensors.js';

export const TINY_VOCAB = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', 'hello', 'world', '##s', 'cat', 'dog', '!', 'cafe', '中'] as const;
export const TINY_DIMENSION = 4;

/** Row i of the table: distinct, easy-to-read values. */
export function tinyRow(id: number): number[] {
  return [id + 1, (id % 3) - 1, id % 2 === 0 ? 0.5 : -0.5, id / 4];
}

export function tinyTokenizerJson(): string {
  const vocab = Object.fromEntries(TINY_VOCAB.map((token, id) => [token, id]));
  const special = (id: number, content: string) => ({
    id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
  });
  return `${JSON.stringify(
    {
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: [special(0, '[PAD]'), special(1, '[UNK]'), special(2, '[CLS]'), special(3, '[SEP]')],
      normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
      pre_tokenizer: { type: 'BertPreTokenizer' },
      post_processor: null,
      decoder: null,
      model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 20, vocab },
    },
    null,
    2,
  )}\n`;
}

export function tinyConfigJson(): string {
  return `${JSON.stringify({ model_type: 'model2vec', hidden_dim: TINY_DIMENSION, normalize: true }, null, 2)}\n`;
}

export function tinyTable(): number[] {
  return TINY_VOCAB.flatMap((_, id) => tinyRow(id));
}

export function tinySafetensors(dtype: 'F32' | 'F16' | 'I8' = 'F32'): Uint8Array {
  const data = dtype === 'I8' ? tinyTable().map((v) => Math.round(v * 10)) : tinyTable();
  return writeSafetensors({ embeddings: { dtype, shape: [TINY_VOCAB.length, TINY_DIMENSION], data } });
}
