/**
 * Static (Model2Vec-format) embedder: tokenize, look up one row per token, mean-pool, normalise.
 * Microseconds per text, no runtime dependency. Reproduces the reference `model2vec` Python
 * implementation: character pre-truncation to `maxTokens × median token length`, unknown tokens
 * dropped (WordPiece / WordLevel), tokens truncated to `maxTokens`, optional vocabulary
 * quantisation (`mapping` token → row, per-token `weights`).
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { CairnError } from '../errors.js';
import type { Embedder } from '../types.js';
import { parseSafetensors, tensorToFloat32, tensorToFloat64, tensorToInt32 } from './safetensors.js';
import { parseTokenizer, type Tokenizer } from './tokenizer/index.js';

/** The parts of a static model, however they were obtained (a folder, a distillation). */
export interface StaticModel {
  tokenizer: Tokenizer;
  /** Row-major [rows × dimension] table. */
  embeddings: Float32Array;
  dimension: number;
  /** Vocabulary quantisation: token id → embedding row. */
  mapping?: Int32Array;
  /** Per-token scale applied before pooling (indexed by token id). */
  weights?: Float64Array;
  /**
   * Precision of the pooling sum. The reference sums float tables in float32 (row by row) and
   * integer tables or weighted rows in float64; matching it keeps outputs within ~1e-7.
   * @default 'float64' when `weights` is set, else 'float32'
   */
  accumulate?: 'float32' | 'float64';
}

export interface StaticEmbedderOptions {
  /**
   * Model name in the id (`static:<name>`).
   * @default the model name config.json declares, else the Hugging Face cache repository name,
   * else the folder's name
   */
  name?: string;
  /**
   * Tokens kept per text (the text is also cut to `maxTokens × median token length` characters
   * first, as the reference does).
   * @default 512
   */
  maxTokens?: number;
  /**
   * Check the files of a folder that claims to be a known model (potion-base-8M) — by its name,
   * its folder name or its README — against their published sha256 before use. Hashing
   * potion-base-8M's 30 MB table costs ~60 ms a load: a caller that verified the folder once may
   * pass false afterwards.
   * @default true
   */
  verify?: boolean;
}

/** A static embedder also embeds synchronously (it does no I/O after loading). */
export interface StaticEmbedder extends Embedder {
  embedSync(texts: string[]): Float32Array[];
  readonly tokenizer: Tokenizer;
}

/** Published files of the models we recognise, checked before a folder claiming to be one is used. */
export const KNOWN_STATIC_MODELS: Record<string, Record<string, { sha256: string; size: number }>> = {
  'potion-base-8M': {
    'model.safetensors': { sha256: 'f65d0f325faadc1e121c319e2faa41170d3fa07d8c89abd48ca5358d9a223de2', size: 30_236_760 },
    'tokenizer.json': { sha256: 'e67e803f624fb4d67dea1c730d06e1067e1b14d830e2c2202569e3ef0f70bb50', size: 683_666 },
    'config.json': { sha256: '2a6ac0e9aaa356a68a5688070db78fc3a464fefe85d2f06a1905ce3718687553', size: 202 },
  },
};

/** Python's `int(np.median(...))` over token lengths in code points. */
function medianTokenLength(tokens: readonly string[]): number {
  const lengths = Int32Array.from(tokens, (token) => {
    let count = 0;
    for (let i = 0; i < token.length; i++) {
      const code = token.charCodeAt(i);
      if (code < 0xdc00 || code > 0xdfff) count++;
    }
    return count;
  }).sort();
  if (lengths.length === 0) return 1;
  const mid = lengths.length >> 1;
  const median = lengths.length % 2 === 1 ? lengths[mid]! : (lengths[mid - 1]! + lengths[mid]!) / 2;
  return Math.trunc(median);
}

/** The first `count` code points of `text`. */
function truncateCodePoints(text: string, count: number): string {
  if (text.length <= count) return text;
  let seen = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xdc00 && code <= 0xdfff) continue;
    if (seen === count) return text.slice(0, i);
    seen++;
  }
  return text;
}

function failed(message: string, cause?: unknown): CairnError {
  return new CairnError('INVALID_INPUT', message, cause === undefined ? {} : { cause });
}

/** Build a static embedder from model parts already in memory. */
export function createStaticEmbedder(model: StaticModel, options: { name: string; maxTokens?: number }): StaticEmbedder {
  const { tokenizer, embeddings, dimension, mapping, weights } = model;
  const maxTokens = options.maxTokens ?? 512;
  const rows = embeddings.length / dimension;
  const vocabSize = tokenizer.tokens.length;
  if (!Number.isInteger(rows) || dimension < 1) throw failed(`embedding table of ${embeddings.length} values is not a multiple of dimension ${dimension}`);
  if (mapping) {
    for (const row of mapping) if (row < 0 || row >= rows) throw failed(`token mapping points at row ${row} of a ${rows}-row table`);
  } else if (rows < vocabSize) {
    throw failed(`embedding table has ${rows} rows for ${vocabSize} tokens`);
  }
  const maxChars = maxTokens * medianTokenLength(tokenizer.tokens);
  const unk = tokenizer.unkTokenId;
  // The reference rounds the running sum to float32 after every row for float tables.
  const round32 = (model.accumulate ?? (weights ? 'float64' : 'float32')) === 'float32';
  const sum = new Float64Array(dimension);

  function accumulate(ids: number[]): number {
    sum.fill(0);
    let used = 0;
    for (let i = 0; i < ids.length && used < maxTokens; i++) {
      const id = ids[i]!;
      if (id === unk) continue;
      used++;
      const row = mapping ? (mapping[id] ?? id) : id;
      if (row >= rows) continue;
      const offset = row * dimension;
      if (weights) {
        const scale = weights[id] ?? 1;
        for (let d = 0; d < dimension; d++) sum[d] = sum[d]! + embeddings[offset + d]! * scale;
      } else if (round32) {
        for (let d = 0; d < dimension; d++) sum[d] = Math.fround(sum[d]! + embeddings[offset + d]!);
      } else {
        for (let d = 0; d < dimension; d++) sum[d] = sum[d]! + embeddings[offset + d]!;
      }
    }
    return used;
  }

  function embedOne(text: string): Float32Array {
    const used = accumulate(tokenizer.encode(truncateCodePoints(text, maxChars)));
    const out = new Float32Array(dimension);
    if (used === 0) return out;
    // Mean (in the reference's precision), then L2 normalisation.
    let norm = 0;
    for (let d = 0; d < dimension; d++) {
      const mean = round32 ? Math.fround(sum[d]! / used) : sum[d]! / used;
      sum[d] = mean;
      norm += mean * mean;
    }
    if (norm === 0) return out;
    const scale = Math.sqrt(norm);
    for (let d = 0; d < dimension; d++) out[d] = sum[d]! / scale;
    return out;
  }

  const embedSync = (texts: string[]): Float32Array[] => texts.map(embedOne);
  return {
    model: `static:${options.name}`,
    dimension,
    tokenizer,
    embedSync,
    embed: async (texts) => embedSync(texts),
  };
}

async function readOptional(file: string): Promise<Buffer | null> {
  try {
    return await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

function parseJson(bytes: Buffer, file: string): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch (cause) {
    throw failed(`${file} is not valid JSON`, cause);
  }
}

/** sentence-transformers layout: the StaticEmbedding module may live in a subfolder. */
async function moduleFolder(folder: string): Promise<string> {
  if ((await readOptional(path.join(folder, 'model.safetensors'))) !== null) return folder;
  const modules = await readOptional(path.join(folder, 'modules.json'));
  if (modules) {
    const list = parseJson(modules, path.join(folder, 'modules.json'));
    if (Array.isArray(list)) {
      for (const entry of list as Array<Record<string, unknown>>) {
        if (typeof entry['type'] === 'string' && entry['type'].endsWith('StaticEmbedding') && typeof entry['path'] === 'string') {
          return path.resolve(folder, entry['path']);
        }
      }
    }
  }
  return folder;
}

/** Names a folder goes by: config.json's model name, the HF cache repository, the folder name. */
function folderNames(folder: string, config: Record<string, unknown>): string[] {
  const names: string[] = [];
  for (const key of ['model_name', 'name']) {
    const value = config[key];
    if (typeof value === 'string' && value.trim()) names.push(value.trim().split('/').pop()!);
  }
  // ~/.cache/huggingface/hub/models--org--name/snapshots/<revision>
  const parts = folder.split(path.sep);
  const snapshots = parts.lastIndexOf('snapshots');
  if (snapshots > 0 && parts[snapshots - 1]?.startsWith('models--')) names.push(parts[snapshots - 1]!.split('--').pop()!);
  names.push(path.basename(folder));
  return names;
}

/** The model name a README's front matter declares (`model_name: …`), if any. */
function readmeName(readme: string | null): string | null {
  const declared = readme && /^---\r?\n[\s\S]*?^model_name:\s*["']?([^"'\r\n]+?)["']?\s*$/m.exec(readme);
  return declared?.[1] ? declared[1].split('/').pop()! : null;
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function verifyKnownModel(claims: string[], folder: string, files: Record<string, Buffer | null>): void {
  const lower = new Set(claims.map((name) => name.toLowerCase()));
  const known = Object.entries(KNOWN_STATIC_MODELS).find(([known]) => lower.has(known.toLowerCase()));
  if (!known) return;
  const [knownName, expected] = known;
  for (const [file, { sha256: want, size }] of Object.entries(expected)) {
    const bytes = files[file];
    const where = path.join(folder, file);
    if (!bytes) throw failed(`${where} is missing; a ${knownName} folder needs it`);
    const got = bytes.byteLength === size ? sha256(bytes) : `(size ${bytes.byteLength}, expected ${size})`;
    if (got !== want) {
      throw failed(`${where} does not match the published ${knownName} file (sha256 ${got.slice(0, 16)}…, expected ${want.slice(0, 16)}…); re-download it`);
    }
  }
}

/**
 * Load a Model2Vec model folder (`tokenizer.json`, `model.safetensors` with an `embeddings`
 * tensor in float32 / float16 / int8, optional `mapping` and `weights`, optional `config.json`).
 * Vectors are always unit length (the Embedder contract), whatever `config.json`'s `normalize`
 * says; a text without any known token embeds to the zero vector, as in the reference.
 *
 * @example
 * const embedder = await loadStaticEmbedder('/models/potion-base-8M');
 * const [vector] = await embedder.embed(['sqlite busy timeout']);
 */
export async function loadStaticEmbedder(folder: string, options: StaticEmbedderOptions = {}): Promise<StaticEmbedder> {
  const root = path.resolve(folder);
  const info = await stat(root).catch((cause: unknown) => {
    throw new CairnError('NOT_FOUND', `static model folder ${root} not found`, { cause });
  });
  if (!info.isDirectory()) throw failed(`static model path ${root} is not a folder`);
  const dir = await moduleFolder(root);
  const [tokenizerBytes, modelBytes, configBytes, readmeBytes] = await Promise.all([
    readOptional(path.join(dir, 'tokenizer.json')).then((b) => b ?? readOptional(path.join(root, 'tokenizer.json'))),
    readOptional(path.join(dir, 'model.safetensors')),
    readOptional(path.join(root, 'config.json')),
    readOptional(path.join(root, 'README.md')),
  ]);
  if (!tokenizerBytes) throw failed(`${root} has no tokenizer.json`);
  if (!modelBytes) throw failed(`${root} has no model.safetensors`);
  const config = configBytes ? parseJson(configBytes, path.join(root, 'config.json')) : {};
  const configObject = config !== null && typeof config === 'object' ? (config as Record<string, unknown>) : {};
  const names = folderNames(root, configObject);
  const name = options.name ?? names[0]!;
  if (options.verify !== false) {
    const claims = [name, ...names, readmeName(readmeBytes?.toString('utf8') ?? null) ?? ''];
    verifyKnownModel(claims, root, { 'model.safetensors': modelBytes, 'tokenizer.json': tokenizerBytes, 'config.json': configBytes });
  }

  const tokenizer = parseTokenizer(parseJson(tokenizerBytes, path.join(dir, 'tokenizer.json')));
  const file = parseSafetensors(modelBytes, path.join(dir, 'model.safetensors'));
  const tensorName = ['embeddings', '0', 'embedding.weight'].find((candidate) => file.tensors.has(candidate));
  if (!tensorName) throw failed(`${path.join(dir, 'model.safetensors')} has no "embeddings" tensor`);
  const shape = file.tensors.get(tensorName)!.shape;
  if (shape.length !== 2) throw failed(`the ${tensorName} tensor must be 2-D, got [${shape.join(', ')}]`);
  const dtype = file.tensors.get(tensorName)!.dtype;
  const model: StaticModel = {
    tokenizer,
    embeddings: tensorToFloat32(file, tensorName),
    dimension: shape[1]!,
    accumulate: dtype.startsWith('F') || dtype === 'BF16' ? 'float32' : 'float64',
  };
  if (file.tensors.has('mapping')) model.mapping = tensorToInt32(file, 'mapping');
  if (file.tensors.has('weights')) {
    model.weights = tensorToFloat64(file, 'weights');
    model.accumulate = 'float64';
  }
  const built: { name: string; maxTokens?: number } = { name };
  if (options.maxTokens !== undefined) built.maxTokens = options.maxTokens;
  return createStaticEmbedder(model, built);
}
