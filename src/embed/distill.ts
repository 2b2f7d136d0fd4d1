/**
 * Distil a static (Model2Vec-format) embedder from a teacher, offline, by the Model2Vec method:
 * embed every vocabulary token with the teacher, reduce the table with PCA, weight each row by
 * SIF over a Zipf estimate of its token's frequency from its rank (`w = a / (a + p(rank))`,
 * `p ∝ 1 / (rank + 2)`, `a = 1e-4`, as `model2vec.distill` does), and write a folder
 * `loadStaticEmbedder` reads: `model.safetensors` (`embeddings`), `tokenizer.json`, `config.json`.
 * Sentence vectors are then the normalised mean of their tokens' rows.
 */
import { createHash } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CairnError } from '../errors.js';
import type { Embedder } from '../types.js';
import { pca } from './pca.js';
import { writeSafetensors } from './safetensors.js';
import { parseTokenizer } from './tokenizer/index.js';

/** How rows are weighted by their token's rank. */
export type DistillWeighting = 'zipf' | 'none';

export interface DistillOptions {
  /** The teacher: every token's text is embedded with it. */
  teacher: Embedder;
  /**
   * `tokenizer.json` content (WordPiece, Unigram or WordLevel) whose ids are the rows of the
   * table. Its vocabulary order is the rank used for weighting: most frequent first.
   */
  tokenizer: Record<string, unknown>;
  /**
   * Output dimension (PCA components); capped at the teacher's dimension.
   * @default 256
   */
  dims?: number;
  /**
   * Reduce the table with PCA. `false` keeps the teacher's own space and dimension (`dims` is
   * ignored): the model's sentence vectors are then comparable with the teacher's, so a query
   * embedded statically can search an index of the teacher's document vectors.
   * @default true
   */
  pca?: boolean;
  /**
   * Row weighting: `zipf` is Model2Vec's SIF weighting by rank; `none` keeps the PCA rows as they are.
   * @default 'zipf'
   */
  weighting?: DistillWeighting;
  /**
   * SIF coefficient `a` in `a / (a + p)`.
   * @default 1e-4
   */
  sifCoefficient?: number;
  /**
   * The text the teacher embeds for a token, or null to leave its row zero (special tokens).
   * @default the token without a leading `▁` / `Ġ` (word start) or `##` (continuation); null when nothing is left
   */
  tokenText?: (token: string, id: number) => string | null;
  /**
   * Tokens per teacher call.
   * @default 64
   */
  batchSize?: number;
  /** Called after each batch with the tokens embedded so far. */
  onProgress?: (done: number, total: number) => void;
  /**
   * The model's name (config.json `model_name`, and the embedder id `static:<name>`).
   * @default `<teacher>-static-<dims>` (the teacher's model id without a trailing `:<dimension>`)
   */
  name?: string;
}

/** A distilled model, ready to write or to use in memory. */
export interface DistilledModel {
  name: string;
  /** Row-major [tokens × dimension]. */
  embeddings: Float32Array;
  dimension: number;
  tokenizer: Record<string, unknown>;
  config: Record<string, unknown>;
  /** Share of the teacher's token-table variance the kept components explain. */
  explained: number;
  /** Tokens embedded (the others, such as special tokens, have zero rows). */
  embedded: number;
  teacher: { model: string; dimension: number };
}

/** The default text of a token: its surface form without word-start or continuation markers. */
export function defaultTokenText(token: string): string | null {
  const text = token.replace(/^(▁|Ġ|##)/u, '');
  return text.trim() === '' ? null : text;
}

/**
 * SIF weights over a Zipf estimate of token frequency by rank (Model2Vec's `post_process_embeddings`):
 * `p(r) = (1/(r+2)) / Σ 1/(i+2)`, `w(r) = a / (a + p(r))`.
 */
export function zipfSifWeights(count: number, coefficient = 1e-4): Float64Array {
  let total = 0;
  for (let r = 0; r < count; r++) total += 1 / (r + 2);
  const weights = new Float64Array(count);
  for (let r = 0; r < count; r++) {
    const p = 1 / (r + 2) / total;
    weights[r] = coefficient / (coefficient + p);
  }
  return weights;
}

/**
 * Distil a static model from `options.teacher`. Deterministic for a deterministic teacher.
 *
 * @example
 * const model = await distillStaticModel({ teacher, tokenizer: json, dims: 256 });
 * await writeStaticModel('models/my-static-256', model);
 */
export async function distillStaticModel(options: DistillOptions): Promise<DistilledModel> {
  const { teacher } = options;
  const tokenizer = parseTokenizer(options.tokenizer);
  // Rows are token ids; an id no token maps to (a duplicated piece) keeps a zero row.
  let rows = 0;
  for (const token of tokenizer.tokens) rows = Math.max(rows, (tokenizer.tokenToId(token) ?? -1) + 1);
  const textOf = options.tokenText ?? defaultTokenText;
  const batchSize = options.batchSize ?? 64;
  const teacherDim = teacher.dimension;
  const reduce = options.pca !== false;
  const dims = reduce ? Math.min(options.dims ?? 256, teacherDim) : teacherDim;
  if (!Number.isInteger(dims) || dims < 1) throw new CairnError('INVALID_INPUT', `dims must be a positive integer (got ${options.dims})`);

  const texts: Array<{ id: number; text: string }> = [];
  const skip = new Set<number>();
  for (let id = 0; id < rows; id++) {
    const token = tokenizer.idToToken(id);
    const text = token === undefined || tokenizer.tokenToId(token) !== id ? null : textOf(token, id);
    if (text === null || text === '') skip.add(id);
    else texts.push({ id, text });
  }
  if (texts.length <= dims) {
    throw new CairnError('INVALID_INPUT', `distillation needs more embeddable tokens (${texts.length}) than output dimensions (${dims})`);
  }

  const raw = new Float64Array(rows * teacherDim);
  options.onProgress?.(0, texts.length);
  for (let start = 0; start < texts.length; start += batchSize) {
    const batch = texts.slice(start, start + batchSize);
    const vectors = await teacher.embed(batch.map((t) => t.text));
    if (vectors.length !== batch.length) {
      throw new CairnError('EMBEDDER_FAILED', `the teacher returned ${vectors.length} vectors for ${batch.length} tokens`);
    }
    batch.forEach(({ id }, i) => {
      const vector = vectors[i]!;
      if (vector.length !== teacherDim) throw new CairnError('EMBEDDER_FAILED', `the teacher returned a ${vector.length}-dimensional vector, expected ${teacherDim}`);
      raw.set(vector, id * teacherDim);
    });
    options.onProgress?.(Math.min(texts.length, start + batchSize), texts.length);
  }

  const reduced = reduce ? pca(raw, rows, teacherDim, dims, skip) : { projected: raw, explained: 1 };
  const weighting = options.weighting ?? 'zipf';
  const coefficient = options.sifCoefficient ?? 1e-4;
  const weights = weighting === 'zipf' ? zipfSifWeights(rows, coefficient) : null;
  const table = new Float64Array(rows * dims);
  let largest = 0;
  for (let r = 0; r < rows; r++) {
    if (skip.has(r)) continue;
    const w = weights ? weights[r]! : 1;
    for (let d = 0; d < dims; d++) {
      const value = reduced.projected[r * dims + d]! * w;
      table[r * dims + d] = value;
      largest = Math.max(largest, Math.abs(value));
    }
  }
  // One scale for the whole table changes no sentence vector (mean, then unit length) and puts
  // the values where float16 is most precise.
  const scale = largest > 0 ? 1 / largest : 1;
  const embeddings = new Float32Array(rows * dims);
  for (let i = 0; i < table.length; i++) embeddings[i] = table[i]! * scale;

  const name = options.name ?? `${teacher.model.replace(/:\d+$/, '').replace(/[:/@\\]/g, '-')}-static-${reduce ? dims : `${dims}-teacher-space`}`;
  return {
    name,
    embeddings,
    dimension: dims,
    tokenizer: options.tokenizer,
    config: {
      model_type: 'model2vec',
      architectures: ['StaticModel'],
      model_name: name,
      tokenizer_name: teacher.model,
      apply_pca: reduce ? dims : null,
      apply_zipf: weighting === 'zipf',
      sif_coefficient: weighting === 'zipf' ? coefficient : null,
      hidden_dim: dims,
      seq_length: 1_000_000,
      normalize: true,
    },
    explained: reduced.explained,
    embedded: texts.length,
    teacher: { model: teacher.model, dimension: teacherDim },
  };
}

/** Options for {@link writeStaticModel}. */
export interface WriteStaticModelOptions {
  /**
   * Storage type of the table: F16 halves the size; sentence vectors move by ~1e-3 at most.
   * @default 'F16'
   */
  dtype?: 'F16' | 'F32';
  /** Extra `README.md` text (provenance, licence). */
  readme?: string;
}

/** What was written: each file's size and sha256. */
export interface WrittenModel {
  folder: string;
  files: Record<string, { bytes: number; sha256: string }>;
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Write `model` as a Model2Vec folder (written to a temporary sibling, then renamed into place).
 * The bytes depend only on the model: no timestamps.
 */
export async function writeStaticModel(folder: string, model: DistilledModel, options: WriteStaticModelOptions = {}): Promise<WrittenModel> {
  const target = path.resolve(folder);
  const rows = model.embeddings.length / model.dimension;
  const files: Record<string, Uint8Array> = {
    'model.safetensors': writeSafetensors({ embeddings: { dtype: options.dtype ?? 'F16', shape: [rows, model.dimension], data: model.embeddings } }),
    'tokenizer.json': new TextEncoder().encode(JSON.stringify(model.tokenizer)),
    'config.json': new TextEncoder().encode(`${JSON.stringify(model.config, null, 2)}\n`),
  };
  if (options.readme) files['README.md'] = new TextEncoder().encode(options.readme);
  const staging = `${target}.tmp-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  const written: WrittenModel = { folder: target, files: {} };
  for (const [name, bytes] of Object.entries(files)) {
    await writeFile(path.join(staging, name), bytes);
    written.files[name] = { bytes: bytes.byteLength, sha256: sha256(bytes) };
  }
  await rm(target, { recursive: true, force: true });
  await mkdir(path.dirname(target), { recursive: true });
  await rename(staging, target);
  return written;
}
