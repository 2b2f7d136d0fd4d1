import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStaticEmbedder, loadStaticEmbedder } from '../../src/embed/static.js';
import { writeSafetensors } from '../../src/embed/safetensors.js';
import { parseTokenizer } from '../../src/embed/tokenizer/index.js';
import { dot } from '../../src/embed/vector.js';
import { TINY_DIMENSION, TINY_VOCAB, tinyConfigJson, tinyRow, tinySafetensors, tinyTokenizerJson } from './tiny-model.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const tinyFolder = path.join(repoRoot, 'test/fixtures/embed/tiny-wordpiece');
const fixtures = path.resolve(repoRoot, '../shared/data/model2vec-fixtures');
const haveFixtures = existsSync(fixtures);
if (!haveFixtures) console.warn(`[skip] Model2Vec reference fixtures not found at ${fixtures}; skipping reference-output tests`);

function expectedMean(tokens: string[]): number[] {
  const sum = new Array<number>(TINY_DIMENSION).fill(0);
  for (const token of tokens) {
    const row = tinyRow(TINY_VOCAB.indexOf(token as (typeof TINY_VOCAB)[number]));
    row.forEach((v, d) => (sum[d]! += v));
  }
  const norm = Math.hypot(...sum);
  return sum.map((v) => v / norm);
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}

describe('static embedder on the committed tiny model', () => {
  let temp: string;
  beforeAll(async () => {
    temp = await mkdtemp(path.join(tmpdir(), 'cairn-static-'));
  });
  afterAll(async () => {
    await rm(temp, { recursive: true, force: true });
  });

  it('keeps the committed fixture in sync with the writer', () => {
    expect(readFileSync(path.join(tinyFolder, 'tokenizer.json'), 'utf8')).toBe(tinyTokenizerJson());
    expect(readFileSync(path.join(tinyFolder, 'config.json'), 'utf8')).toBe(tinyConfigJson());
    expect(new Uint8Array(readFileSync(path.join(tinyFolder, 'model.safetensors')))).toEqual(tinySafetensors());
  });

  it('names the model after the folder and reports the dimension', async () => {
    const embedder = await loadStaticEmbedder(tinyFolder);
    expect(embedder.model).toBe('static:tiny-wordpiece');
    expect(embedder.dimension).toBe(TINY_DIMENSION);
    expect((await loadStaticEmbedder(tinyFolder, { name: 'mine' })).model).toBe('static:mine');
  });

  it('mean-pools the token rows, drops unknown tokens and normalises', async () => {
    const embedder = await loadStaticEmbedder(tinyFolder);
    const cases: Array<[string, string[]]> = [
      ['hello world', ['hello', 'world']],
      ['Hello, WORLD!', ['hello', 'world', '!']], // ',' is unknown and dropped
      ['worlds', ['world', '##s']],
      ['Café', ['cafe']], // accents stripped with lowercase
      ['中文 cat', ['中', 'cat']], // CJK characters are words of their own; 文 is unknown
      ['[CLS] dog', ['[CLS]', 'dog']], // added tokens are matched in the raw text
    ];
    const vectors = await embedder.embed(cases.map(([text]) => text));
    cases.forEach(([text, tokens], i) => {
      expect(maxAbsDiff(vectors[i]!, expectedMean(tokens)), text).toBeLessThan(1e-6);
      expect(Math.sqrt(dot(vectors[i]!, vectors[i]!))).toBeCloseTo(1, 6);
    });
  });

  it('gives the zero vector to a text without any known token, as the reference does', async () => {
    const embedder = await loadStaticEmbedder(tinyFolder);
    const [empty, unknown] = await embedder.embed(['', '🙂 zebra']);
    expect(Array.from(empty!)).toEqual([0, 0, 0, 0]);
    expect(Array.from(unknown!)).toEqual([0, 0, 0, 0]);
  });

  it('truncates like the reference: to maxTokens × median token length characters, then maxTokens tokens', async () => {
    // The tiny vocabulary's median token length is 4, so maxTokens 3 keeps 12 characters.
    const embedder = await loadStaticEmbedder(tinyFolder, { maxTokens: 3 });
    const [chars, tokens] = embedder.embedSync(['hello world cat dog', 'hello!!!!!!!!!!']);
    expect(maxAbsDiff(chars!, expectedMean(['hello', 'world']))).toBeLessThan(1e-6);
    expect(maxAbsDiff(tokens!, expectedMean(['hello', '!', '!']))).toBeLessThan(1e-6);
  });

  it('reads float16 and int8 tables', async () => {
    for (const dtype of ['F16', 'I8'] as const) {
      const folder = path.join(temp, `tiny-${dtype}`);
      await mkdir(folder);
      await writeFile(path.join(folder, 'tokenizer.json'), tinyTokenizerJson());
      await writeFile(path.join(folder, 'model.safetensors'), tinySafetensors(dtype));
      const embedder = await loadStaticEmbedder(folder);
      const [vector] = await embedder.embed(['hello cat dog']);
      expect(maxAbsDiff(vector!, expectedMean(['hello', 'cat', 'dog'])), dtype).toBeLessThan(dtype === 'F16' ? 1e-3 : 2e-2);
    }
  });

  it('applies a vocabulary-quantisation mapping and per-token weights', () => {
    const tokenizer = parseTokenizer(JSON.parse(tinyTokenizerJson()));
    // Two rows; hello → row 1 with weight 2, world → row 0 with weight 1.
    const mapping = new Int32Array(TINY_VOCAB.length).fill(0);
    mapping[TINY_VOCAB.indexOf('hello')] = 1;
    const weights = new Float64Array(TINY_VOCAB.length).fill(1);
    weights[TINY_VOCAB.indexOf('hello')] = 2;
    const embedder = createStaticEmbedder(
      { tokenizer, embeddings: new Float32Array([1, 0, 0, 1]), dimension: 2, mapping, weights },
      { name: 'quantised' },
    );
    const [vector] = embedder.embedSync(['hello world']);
    // (2·[0,1] + 1·[1,0]) / 2 normalised
    expect(maxAbsDiff(vector!, [1 / Math.sqrt(5), 2 / Math.sqrt(5)])).toBeLessThan(1e-7);
  });

  it('finds the model in a sentence-transformers module subfolder', async () => {
    const folder = path.join(temp, 'st-layout');
    await mkdir(path.join(folder, '0_StaticEmbedding'), { recursive: true });
    await writeFile(path.join(folder, 'modules.json'), JSON.stringify([{ idx: 0, name: '0', path: '0_StaticEmbedding', type: 'sentence_transformers.models.StaticEmbedding' }]));
    await writeFile(path.join(folder, '0_StaticEmbedding/tokenizer.json'), tinyTokenizerJson());
    const table = Array.from({ length: TINY_VOCAB.length }, (_, id) => tinyRow(id)).flat();
    await writeFile(path.join(folder, '0_StaticEmbedding/model.safetensors'), writeSafetensors({ 'embedding.weight': { dtype: 'F32', shape: [TINY_VOCAB.length, TINY_DIMENSION], data: table } }));
    const embedder = await loadStaticEmbedder(folder);
    const [vector] = await embedder.embed(['cat']);
    expect(maxAbsDiff(vector!, expectedMean(['cat']))).toBeLessThan(1e-6);
  });

  it('fails clearly on a missing folder, missing files and a corrupt table', async () => {
    await expect(loadStaticEmbedder(path.join(temp, 'nope'))).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const folder = path.join(temp, 'broken');
    await mkdir(folder);
    await expect(loadStaticEmbedder(folder)).rejects.toThrow(/tokenizer\.json/);
    await writeFile(path.join(folder, 'tokenizer.json'), tinyTokenizerJson());
    await expect(loadStaticEmbedder(folder)).rejects.toThrow(/model\.safetensors/);
    await writeFile(path.join(folder, 'model.safetensors'), new Uint8Array([1, 2, 3]));
    await expect(loadStaticEmbedder(folder)).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/safetensors/) });
    await writeFile(path.join(folder, 'model.safetensors'), writeSafetensors({ embeddings: { dtype: 'F32', shape: [2, 2], data: [1, 2, 3, 4] } }));
    await expect(loadStaticEmbedder(folder)).rejects.toThrow(/2 rows for 12 tokens/);
  });

  it('names a Hugging Face cache snapshot after its repository', async () => {
    const folder = path.join(temp, 'hub/models--someone--tiny-model/snapshots/0123456789abcdef0123456789abcdef01234567');
    await mkdir(folder, { recursive: true });
    await cp(tinyFolder, folder, { recursive: true });
    expect((await loadStaticEmbedder(folder)).model).toBe('static:tiny-model');
  });
});

describe.skipIf(!haveFixtures)('static embedder against the Model2Vec reference outputs', () => {
  const longText = Array.from({ length: 1000 }, () => 'hello').join(' ');
  const reference = (file: string): number[] => (JSON.parse(readFileSync(path.join(fixtures, file), 'utf8')) as number[][])[0]!;

  it('reproduces embeddings_short.json and embeddings_long.json (float32 model)', async () => {
    const embedder = await loadStaticEmbedder(path.join(fixtures, 'test-model-float32'));
    expect(embedder.model).toBe('static:test-model-float32');
    const [short, long] = await embedder.embed(['hello world', longText]);
    expect(maxAbsDiff(short!, reference('embeddings_short.json'))).toBeLessThan(1e-6);
    expect(maxAbsDiff(long!, reference('embeddings_long.json'))).toBeLessThan(1e-6);
  });

  it('reproduces embeddings_vocab_quantized.json (Unigram tokenizer, mapping, float64 weights)', async () => {
    const embedder = await loadStaticEmbedder(path.join(fixtures, 'test-model-vocab-quantized'));
    expect(embedder.dimension).toBe(64);
    const [long] = await embedder.embed([longText]);
    expect(maxAbsDiff(long!, reference('embeddings_vocab_quantized.json'))).toBeLessThan(1e-6);
  });

  it('stays close to the float32 reference with the float16 and int8 tables', async () => {
    const want = reference('embeddings_short.json');
    for (const [folder, tolerance] of [['test-model-float16', 1e-3], ['test-model-int8', 1e-2]] as const) {
      const [vector] = await (await loadStaticEmbedder(path.join(fixtures, folder))).embed(['hello world']);
      expect(maxAbsDiff(vector!, want), folder).toBeLessThan(tolerance);
    }
  });

  it('tokenizes with the real potion-base-8M tokenizer like the reference', async () => {
    const { tokenizer } = await loadStaticEmbedder(path.join(fixtures, 'test-model-float32'));
    expect(tokenizer.tokenize('Hello, World! naïve café')).toEqual(['hello', ',', 'world', '!', 'naive', 'cafe']);
    expect(tokenizer.tokenize('processWorkspaceChanges')).toEqual(['process', '##works', '##pace', '##chang', '##es']);
    expect(tokenizer.tokenize('中文')).toEqual(['中', '文']);
    expect(tokenizer.tokenize('ΣΊΣΥΦΟΣ').at(-1)).toBe('##σ'); // per-character lower-casing: no final ς
    expect(tokenizer.tokenize('x'.repeat(101))).toEqual(['[UNK]']); // max_input_chars_per_word
  });

  it('verifies files when a folder claims to be potion-base-8M', async () => {
    const temp = await mkdtemp(path.join(tmpdir(), 'cairn-potion-'));
    try {
      const folder = path.join(temp, 'potion-base-8M');
      await cp(path.join(fixtures, 'test-model-float32'), folder, { recursive: true });
      // The tokenizer is the real one; the tiny test table and config are not.
      await expect(loadStaticEmbedder(folder)).rejects.toThrow(/model\.safetensors does not match the published potion-base-8M/);
      const unverified = await loadStaticEmbedder(folder, { verify: false });
      expect(unverified.model).toBe('static:potion-base-8M');
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
  });
});
