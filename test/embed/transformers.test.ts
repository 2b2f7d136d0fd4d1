import { createRequire } from 'node:module';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadStaticEmbedder } from '../../src/embed/static.js';
import { loadTransformersEmbedder, type FeatureExtractor, type TransformersModule } from '../../src/embed/transformers.js';
import { TINY_DIMENSION, TINY_VOCAB, tinyTable, tinyTokenizerJson } from './tiny-model.js';
import { gatherEmbeddingModel } from './tiny-onnx.js';

/** Where @huggingface/transformers is: CAIRN_TEST_TRANSFORMERS (a package folder) or the project's own install. */
function transformersEntry(): string | null {
  const override = process.env['CAIRN_TEST_TRANSFORMERS'];
  try {
    return override ? createRequire(path.join(override, 'package.json')).resolve('@huggingface/transformers') : createRequire(import.meta.url).resolve('@huggingface/transformers');
  } catch {
    return null;
  }
}
const entry = transformersEntry();
if (!entry) console.warn('[skip] @huggingface/transformers is not installed (it is optional); skipping the end-to-end transformers.js test. Set CAIRN_TEST_TRANSFORMERS to an installed package folder to run it.');

let temp: string;
let folder: string;
beforeAll(async () => {
  temp = await mkdtemp(path.join(tmpdir(), 'cairn-transformers-'));
  folder = path.join(temp, 'tiny-bert');
  await mkdir(path.join(folder, 'onnx'), { recursive: true });
  await writeFile(path.join(folder, 'onnx/model.onnx'), gatherEmbeddingModel(tinyTable(), TINY_VOCAB.length, TINY_DIMENSION));
  await writeFile(path.join(folder, 'tokenizer.json'), tinyTokenizerJson());
  await writeFile(path.join(folder, 'tokenizer_config.json'), JSON.stringify({ tokenizer_class: 'BertTokenizer', do_lower_case: true, unk_token: '[UNK]', pad_token: '[PAD]' }));
  await writeFile(path.join(folder, 'config.json'), JSON.stringify({ model_type: 'bert', hidden_size: TINY_DIMENSION, architectures: ['BertModel'] }));
});
afterAll(async () => {
  await rm(temp, { recursive: true, force: true });
});

/** A stand-in module: each text becomes [length, 1, 0]. */
function fakeModule(calls: string[][]): TransformersModule {
  const extractor = (async (texts: string[]) => {
    calls.push(texts);
    return { dims: [texts.length, 3], data: texts.flatMap((t) => [t.length, 1, 0]) };
  }) as FeatureExtractor;
  return {
    env: { allowRemoteModels: true, allowLocalModels: false, localModelPath: '/models/' },
    pipeline: vi.fn(async () => extractor),
  };
}

describe('transformers.js embedder', () => {
  it('loads the folder with remote models off, probes the dimension and batches', async () => {
    const calls: string[][] = [];
    const module = fakeModule(calls);
    const embedder = await loadTransformersEmbedder(folder, { load: async () => module, batchSize: 2 });
    expect(module.env).toEqual({ allowRemoteModels: false, allowLocalModels: true, localModelPath: `${temp}${path.sep}` });
    expect(module.pipeline).toHaveBeenCalledWith('feature-extraction', 'tiny-bert', { local_files_only: true, dtype: 'fp32' });
    expect(embedder.model).toBe('transformers:tiny-bert');
    expect(embedder.dimension).toBe(3);
    const vectors = await embedder.embed(['a', 'bb', 'ccc']);
    expect(calls.slice(1)).toEqual([['a', 'bb'], ['ccc']]);
    expect(vectors[1]![0]).toBeCloseTo(2 / Math.sqrt(5), 6);
  });

  it('says how to install the optional package when it is missing', async () => {
    vi.resetModules();
    vi.doMock('@huggingface/transformers', () => {
      throw new Error("Cannot find package '@huggingface/transformers'");
    });
    try {
      const { loadTransformersEmbedder: load } = await import('../../src/embed/transformers.js');
      await expect(load(folder)).rejects.toMatchObject({
        code: 'MISSING_DEPENDENCY',
        message: expect.stringContaining('ONNXRUNTIME_NODE_INSTALL=skip npm install @huggingface/transformers'),
      });
    } finally {
      vi.doUnmock('@huggingface/transformers');
      vi.resetModules();
    }
  });

  it('reports a missing folder and a model that fails to load', async () => {
    await expect(loadTransformersEmbedder(path.join(temp, 'nope'), { load: async () => fakeModule([]) })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const broken: TransformersModule = { ...fakeModule([]), pipeline: async () => Promise.reject(new Error('onnx/model.onnx not found')) };
    await expect(loadTransformersEmbedder(folder, { load: async () => broken })).rejects.toMatchObject({
      code: 'EMBEDDER_FAILED',
      message: expect.stringMatching(/failed to load: onnx\/model\.onnx not found/),
    });
  });

  it.skipIf(!entry)('runs a real ONNX model offline and agrees with the static embedder on the same table', async () => {
    const load = async () => (await import(pathToFileURL(entry!).href)) as TransformersModule;
    const embedder = await loadTransformersEmbedder(folder, { load });
    const reference = await loadStaticEmbedder(path.resolve(import.meta.dirname, '../fixtures/embed/tiny-wordpiece'));
    const texts = ['hello world', 'cat dog !', 'worlds'];
    const [got, want] = [await embedder.embed(texts), await reference.embed(texts)];
    got.forEach((vector, i) => vector.forEach((value, d) => expect(value).toBeCloseTo(want[i]![d]!, 5)));
    await embedder.close?.();
  });
});
