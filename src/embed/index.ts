/**
 * The embedders: every export here is public API. `createEmbedder(spec)` builds one from a spec
 * string (what the config file and `--embedder` carry); the factories below build them directly.
 */
import os from 'node:os';
import path from 'node:path';
import { invalid } from '../errors.js';
import type { Embedder } from '../types.js';
import { createHashEmbedder } from './hash.js';
import { createOllamaEmbedder, createOpenAIEmbedder, type RemoteEmbedderOptions } from './remote.js';
import { loadOnnxEmbedder, onnxModelFolder } from './onnx.js';
import { KNOWN_ONNX_MODELS } from './onnx-models.js';
import { createOnnxWorkerPool } from './onnx-pool.js';
import { loadStaticEmbedder } from './static.js';
import { loadTransformersEmbedder } from './transformers.js';
import { loadUseLiteEmbedder } from './use.js';

/** Feature hashing of code-aware terms: deterministic, instant, no meaning (tests, floor). */
export { createHashEmbedder, type HashEmbedderOptions } from './hash.js';
/** Static (Model2Vec-format) embedders: a tokenizer and an embedding table, microseconds a text. */
export {
  createStaticEmbedder,
  KNOWN_STATIC_MODELS,
  loadStaticEmbedder,
  type StaticEmbedder,
  type StaticEmbedderOptions,
  type StaticModel,
} from './static.js';
/** Hugging Face `tokenizer.json` (WordPiece, Unigram, WordLevel) as used by static embedders. */
export { parseTokenizer, type Tokenizer } from './tokenizer/index.js';
/** safetensors reading and writing (embedding tables, distilled models). */
export {
  parseSafetensors,
  tensorToFloat32,
  tensorToFloat64,
  tensorToInt32,
  writeSafetensors,
  type SafetensorsDtype,
  type SafetensorsFile,
  type TensorInfo,
  type TensorInput,
} from './safetensors.js';
/** Ollama and OpenAI-compatible HTTP embedders. */
export { createOllamaEmbedder, createOpenAIEmbedder, type RemoteEmbedderOptions } from './remote.js';
/** Distillation of a static model from a teacher (the Model2Vec method), and PCA. */
export {
  defaultTokenText,
  distillStaticModel,
  writeStaticModel,
  zipfSifWeights,
  type DistilledModel,
  type DistillOptions,
  type DistillWeighting,
  type WriteStaticModelOptions,
  type WrittenModel,
} from './distill.js';
export { pca, symmetricEigen, type PcaResult, type SymmetricEigen } from './pca.js';
/** Universal Sentence Encoder Lite, bundled with its weights (512 dimensions). */
export { loadUseLiteEmbedder, USE_LITE_MODEL, USE_LITE_RESERVED_TOKENS, useLiteTokenizerJson, type UseLiteOptions } from './use.js';
/** Pretrained ONNX sentence encoders (all-MiniLM-L6-v2, bge-small-en-v1.5, e5-small-v2), checksummed, loaded on first use. */
export {
  checkOnnxModel,
  createOnnxEmbedder,
  FETCH_COMMAND,
  loadOnnxEmbedder,
  onnxModelFolder,
  PACKAGE_ROOT,
  type OnnxEmbedder,
  type OnnxEmbedderOptions,
  type OnnxRuntime,
  type OnnxSession,
} from './onnx.js';
export { ALL_MINILM_L6_V2_Q, BGE_SMALL_EN_V15_Q, DEFAULT_EMBEDDER_SPEC, E5_SMALL_V2_Q, KNOWN_ONNX_MODELS, type OnnxModelFile, type OnnxModelManifest } from './onnx-models.js';
/** Bulk embedding in worker threads, one ONNX session each. */
export { createOnnxWorkerPool, type OnnxPoolOptions } from './onnx-pool.js';
/** The background vector fill and its one-filler-at-a-time lease. */
export { fillVectors, waitingForVectors, type FillOptions, type FillOutcome, type FillSummary } from './fill.js';
export { readFillLease, type FillLease } from './fill-lease.js';
/** The default embedder: all-MiniLM-L6-v2 when its files are installed. */
export { resolveDefaultEmbedder, type DefaultEmbedder } from './default.js';
/** transformers.js with a local model folder (optional dependency). */
export { loadTransformersEmbedder, type TransformersEmbedderOptions } from './transformers.js';
/** The embedding cache: in-process LRU plus an optional persistent layer. */
export { embeddingCacheKey, withCache, type EmbeddingCacheOptions, type EmbeddingCacheStore } from './cache.js';
/** Retrieval quality of an embedder on a BEIR-style set. */
export {
  evaluateRetrieval,
  rankingMetrics,
  type EvaluateRetrievalOptions,
  type Qrels,
  type RankingMetrics,
  type RetrievalEvaluation,
  type RetrievalItem,
} from './evaluate.js';
/** Vector helpers. */
export { cosine, dot, normalizeInPlace } from './vector.js';

/** A parsed embedder spec. */
export type EmbedderSpec =
  | { kind: 'hash'; dimension?: number }
  | { kind: 'static'; location: string }
  | { kind: 'ollama'; model: string; url?: string }
  | { kind: 'openai'; model: string; url?: string }
  | { kind: 'use-lite' }
  | { kind: 'transformers'; location: string }
  | { kind: 'onnx'; location: string };

/** Options for {@link createEmbedder}. */
export interface CreateEmbedderOptions {
  /**
   * cairn's home folder: a static or transformers model given by bare name (`static:potion-base-8M`)
   * is looked up in `<home>/models/<name>`.
   */
  home?: string;
  /**
   * Folder relative model paths are resolved against.
   * @default process.cwd()
   */
  cwd?: string;
  /** ONNX Runtime intra-op threads for `onnx:` specs (background fills use 1). @default min(2, CPUs) */
  threads?: number;
  /**
   * For bulk embedding (`cairn reindex`): `onnx:` specs run in this many worker threads, each with
   * its own session at one intra-op thread (onnx-pool.ts); 1 or absent embeds in this thread.
   */
  workers?: number;
  /** API key for `openai:` specs (sent as a Bearer token). */
  apiKey?: string;
  /** Timeouts, retries, batch size … for `ollama:` and `openai:` specs. */
  remote?: Omit<RemoteEmbedderOptions, 'model' | 'url' | 'apiKey'>;
}

const SPEC_FORMS =
  'onnx:<model>, hash[:<dimension>], static:<folder>, ollama:<model>[@<url>], openai:<model>[@<url>], use-lite, transformers:<folder>';

/**
 * Parse an embedder spec without loading anything.
 *
 * @example
 * parseEmbedderSpec('ollama:nomic-embed-text@http://127.0.0.1:11434');
 * // { kind: 'ollama', model: 'nomic-embed-text', url: 'http://127.0.0.1:11434' }
 */
export function parseEmbedderSpec(spec: string): EmbedderSpec {
  const trimmed = spec.trim();
  const colon = trimmed.indexOf(':');
  const kind = colon < 0 ? trimmed : trimmed.slice(0, colon);
  const rest = colon < 0 ? '' : trimmed.slice(colon + 1).trim();
  const unknown = () => invalid(`unknown embedder spec "${spec}"; expected one of: ${SPEC_FORMS}`, 'embedder');
  switch (kind) {
    case 'hash': {
      if (!rest) return { kind };
      const dimension = Number(rest);
      if (!Number.isInteger(dimension) || dimension < 1) throw invalid(`embedder spec "${spec}": the hash dimension must be a positive integer`, 'embedder');
      return { kind, dimension };
    }
    case 'use-lite':
      if (rest && rest !== '512') throw unknown();
      return { kind };
    case 'static':
    case 'transformers':
    case 'onnx':
      if (!rest) throw invalid(`embedder spec "${spec}" needs a model folder, e.g. ${kind}:/path/to/model`, 'embedder');
      return { kind, location: rest };
    case 'ollama':
    case 'openai': {
      const at = rest.indexOf('@');
      const model = (at < 0 ? rest : rest.slice(0, at)).trim();
      const url = at < 0 ? '' : rest.slice(at + 1).trim();
      if (!model) throw invalid(`embedder spec "${spec}" needs a model name, e.g. ${kind}:<model>@<url>`, 'embedder');
      return url ? { kind, model, url } : { kind, model };
    }
    default:
      throw unknown();
  }
}

/** A model folder from a spec: a path, `~/…`, or a bare name under `<home>/models`. */
function modelFolder(location: string, options: CreateEmbedderOptions): string {
  if (location === '~' || location.startsWith('~/')) return path.join(os.homedir(), location.slice(1));
  const isPath = path.isAbsolute(location) || location.startsWith('.') || /[/\\]/.test(location);
  if (!isPath && options.home) return path.join(options.home, 'models', location);
  return path.resolve(options.cwd ?? process.cwd(), location);
}

/**
 * Build an embedder from a spec string. Nothing is downloaded: local models load from disk, and
 * only `ollama:` / `openai:` specs talk to a server (the one named).
 *
 * Specs: `onnx:all-minilm-l6-v2-q` (the recommended one; also `onnx:bge-small-en-v1.5-q`, `onnx:e5-small-v2-q`; loaded on first use), `hash`, `hash:128`, `static:/path/to/model`, `static:potion-base-8M` (in
 * `<home>/models`), `ollama:nomic-embed-text@http://127.0.0.1:11434`,
 * `openai:text-embedding-3-small@https://host/v1`, `use-lite`, `transformers:/path/to/model`.
 * An unknown spec is an `INVALID_INPUT` error listing the valid forms.
 *
 * @example
 * const embedder = await createEmbedder('static:potion-base-8M', { home: '~/.cairn' });
 */
export async function createEmbedder(spec: string, options: CreateEmbedderOptions = {}): Promise<Embedder> {
  const parsed = parseEmbedderSpec(spec);
  switch (parsed.kind) {
    case 'hash':
      return createHashEmbedder(parsed.dimension === undefined ? {} : { dimension: parsed.dimension });
    case 'static':
      return loadStaticEmbedder(modelFolder(parsed.location, options));
    case 'transformers':
      return loadTransformersEmbedder(modelFolder(parsed.location, options));
    case 'use-lite':
      return loadUseLiteEmbedder();
    case 'onnx': {
      // A known model by name (looked up in <home>/models, then the package), or its folder.
      const isPath = path.isAbsolute(parsed.location) || /[/\\~]/.test(parsed.location) || parsed.location.startsWith('.');
      const threads = options.threads === undefined ? {} : { threads: options.threads };
      const folder = isPath ? modelFolder(parsed.location, options) : undefined;
      const name = folder ? path.basename(folder) : parsed.location;
      if (options.workers !== undefined && options.workers > 1) {
        const manifest = KNOWN_ONNX_MODELS[name];
        if (manifest) return createOnnxWorkerPool(folder ?? onnxModelFolder(name, options.home), manifest, { workers: options.workers });
      }
      if (!folder) return loadOnnxEmbedder(name, options.home ? { home: options.home, ...threads } : threads);
      return loadOnnxEmbedder(name, { folder, ...threads });
    }
    case 'ollama':
    case 'openai': {
      const remote: RemoteEmbedderOptions = { ...options.remote, model: parsed.model };
      if (parsed.url) remote.url = parsed.url;
      if (parsed.kind === 'ollama') return createOllamaEmbedder(remote);
      if (options.apiKey) remote.apiKey = options.apiKey;
      return createOpenAIEmbedder(remote);
    }
  }
}
