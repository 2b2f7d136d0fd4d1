/**
 * transformers.js (`@huggingface/transformers`, ONNX Runtime) with a local model folder only:
 * remote models are switched off before anything loads, so nothing is ever downloaded. The
 * package is optional and heavy (~470 MB with onnxruntime-node and sharp), so it is imported
 * lazily; install it with `ONNXRUNTIME_NODE_INSTALL=skip npm install @huggingface/transformers`.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { CairnError } from '../errors.js';
import type { Embedder } from '../types.js';
import { normalizeInPlace } from './vector.js';

/** The slice of the transformers.js API cairn uses. */
export interface TransformersModule {
  env: { allowRemoteModels: boolean; allowLocalModels: boolean; localModelPath: string };
  pipeline(
    task: 'feature-extraction',
    model: string,
    options: Record<string, unknown>,
  ): Promise<FeatureExtractor>;
}

export interface FeatureExtractor {
  (texts: string[], options: { pooling: 'mean' | 'cls' | 'none'; normalize: boolean }): Promise<{ dims: number[]; data: ArrayLike<number> }>;
  dispose?(): Promise<void>;
}

export interface TransformersEmbedderOptions {
  /**
   * Model name in the id (`transformers:<name>`).
   * @default the folder's name
   */
  name?: string;
  /**
   * Pooling of the token vectors.
   * @default 'mean'
   */
  pooling?: 'mean' | 'cls';
  /**
   * Weights variant to load (`onnx/model.onnx` for fp32, `onnx/model_quantized.onnx` for q8 …).
   * @default 'fp32'
   */
  dtype?: string;
  /**
   * Texts per model call.
   * @default 16
   */
  batchSize?: number;
  /** Injected for tests; imports `@huggingface/transformers` by default. */
  load?: () => Promise<TransformersModule>;
}

const INSTALL = 'ONNXRUNTIME_NODE_INSTALL=skip npm install @huggingface/transformers';

async function importTransformers(): Promise<TransformersModule> {
  try {
    // A variable specifier keeps TypeScript from requiring the optional package at build time.
    const specifier = '@huggingface/transformers';
    return (await import(specifier)) as TransformersModule;
  } catch (cause) {
    throw new CairnError('MISSING_DEPENDENCY', `the transformers embedder needs @huggingface/transformers: run ${INSTALL}`, { cause });
  }
}

/**
 * Load a sentence-embedding model from a local transformers.js folder (`config.json`,
 * `tokenizer.json`, `onnx/model.onnx`). Model id `transformers:<folder name>`; the dimension is
 * read from one probe embedding at load.
 *
 * @example
 * const embedder = await loadTransformersEmbedder('/models/all-MiniLM-L6-v2');
 */
export async function loadTransformersEmbedder(folder: string, options: TransformersEmbedderOptions = {}): Promise<Embedder> {
  const root = path.resolve(folder);
  const info = await stat(root).catch((cause: unknown) => {
    throw new CairnError('NOT_FOUND', `transformers model folder ${root} not found`, { cause });
  });
  if (!info.isDirectory()) throw new CairnError('INVALID_INPUT', `transformers model path ${root} is not a folder`);
  const module = await (options.load ?? importTransformers)();
  // The library's settings are global: local files only, from the folder's parent.
  module.env.allowRemoteModels = false;
  module.env.allowLocalModels = true;
  module.env.localModelPath = `${path.dirname(root)}${path.sep}`;
  const pooling = options.pooling ?? 'mean';
  const batchSize = options.batchSize ?? 16;
  const name = options.name ?? path.basename(root);
  const fail = (what: string, cause: unknown) =>
    new CairnError('EMBEDDER_FAILED', `transformers embedder (${root}): ${what}: ${(cause as Error).message}`, { cause });

  let extractor: FeatureExtractor;
  try {
    extractor = await module.pipeline('feature-extraction', path.basename(root), { local_files_only: true, dtype: options.dtype ?? 'fp32' });
  } catch (cause) {
    throw fail('the model failed to load', cause);
  }

  async function run(texts: string[]): Promise<Float32Array[]> {
    let output: { dims: number[]; data: ArrayLike<number> };
    try {
      output = await extractor(texts, { pooling, normalize: true });
    } catch (cause) {
      throw fail('embedding failed', cause);
    }
    const width = output.dims[output.dims.length - 1] ?? 0;
    return texts.map((_, i) => normalizeInPlace(Float32Array.from(Array.prototype.slice.call(output.data, i * width, (i + 1) * width) as number[])));
  }

  const [probe] = await run(['dimension probe']);
  const dimension = probe!.length;

  return {
    model: `transformers:${name}`,
    dimension,
    async embed(texts) {
      const out: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += batchSize) out.push(...(await run(texts.slice(start, start + batchSize))));
      return out;
    },
    close: async () => extractor.dispose?.(),
  };
}
