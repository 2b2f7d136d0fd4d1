/**
 * Pretrained sentence encoders run with ONNX Runtime (`onnxruntime-node`) and tokenized by
 * Hugging Face's maintained `@huggingface/tokenizers`, from a local folder only: nothing is ever
 * downloaded here. The model loads on first use (an idle MCP server pays nothing), after every file
 * is checked against its recorded size and sha256. A missing, truncated or altered file makes the
 * embedder *unavailable* with a one-line reason naming the file and the fix; callers then recall
 * with BM25 and `status` / `doctor` say so.
 */
import { nodeCrypto } from '../runtime.js';
import { createReadStream } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CairnError } from '../errors.js';
import type { Embedder, EmbedderAvailability, SignedEmbedding, TokenStates } from '../types.js';
import { KNOWN_ONNX_MODELS, type OnnxModelManifest } from './onnx-models.js';
import { normalizeInPlace } from './vector.js';
import { checkOnnxModelSizes, fixFor, onnxModelFolder } from './onnx-files.js';
import { encodeSignature } from './token-signature.js';

export { FETCH_COMMAND, PACKAGE_ROOT, checkOnnxModelSizes, onnxModelFolder } from './onnx-files.js';

/** Options for {@link createOnnxEmbedder}. */
export interface OnnxEmbedderOptions {
  /**
   * Texts per model call (sorted by length first, so padding stays small). The quantized models
   * scale activations over the whole batch, so a text's vector then depends on its batch
   * companions (cosine down to 0.972 with itself alone for all-MiniLM-L6-v2, 0.990 for bge-small,
   * batch 16); one text a call keeps every vector reproducible and costs about the same CPU
   * (MiniLM, 160 LoCoMo turns, 1 thread: 9.6 ms a turn alone, 9.4 ms at batch 16).
   * @default 1
   */
  batchSize?: number;
  /**
   * ONNX Runtime intra-op threads. Idle threads sleep rather than spin, so two threads cost about
   * the CPU of one (MiniLM: 11.3 vs 11.8 ms a memory) while splitting the wall time.
   * @default min(2, number of CPUs)
   */
  threads?: number;
  /** Injected for tests: the runtime and the tokenizer library (imported on first use by default). */
  runtime?: () => Promise<OnnxRuntime>;
}

/** The slice of onnxruntime-node and @huggingface/tokenizers cairn uses. */
export interface OnnxRuntime {
  createSession(modelPath: string, threads: number): Promise<OnnxSession>;
  createTokenizer(tokenizerJson: object): { encode(text: string): { ids: number[]; tokens?: string[] } };
}

/** One inference session: int64 inputs by name, a float32 `[batch, tokens, dims]` output. */
export interface OnnxSession {
  inputNames: readonly string[];
  run(inputs: Record<string, { data: BigInt64Array; dims: number[] }>): Promise<{ data: Float32Array; dims: readonly number[] }>;
  release?(): Promise<void>;
}

async function sha256File(file: string): Promise<string> {
  const hash = nodeCrypto().createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Check a model folder against its manifest: every file present, of the recorded size and, with
 * `verify`, of the recorded sha256. Returns null when all is well, else one line naming the first
 * bad file and the fix.
 */
export async function checkOnnxModel(folder: string, manifest: OnnxModelManifest, options: { verify?: boolean } = {}): Promise<string | null> {
  const sizes = checkOnnxModelSizes(folder, manifest);
  if (sizes || !options.verify) return sizes;
  for (const file of manifest.files) {
    const full = path.join(folder, file.name);
    if ((await sha256File(full)) !== file.sha256) return `model file ${full} does not match its sha256 ${file.sha256.slice(0, 12)}…; ${fixFor(folder, manifest)}`;
  }
  return null;
}

async function defaultRuntime(): Promise<OnnxRuntime> {
  let ort: typeof import('onnxruntime-node');
  let tokenizers: typeof import('@huggingface/tokenizers');
  try {
    [ort, tokenizers] = await Promise.all([import('onnxruntime-node'), import('@huggingface/tokenizers')]);
  } catch (cause) {
    throw new CairnError('MISSING_DEPENDENCY', `the ONNX embedder needs onnxruntime-node and @huggingface/tokenizers (cairn's dependencies): reinstall cairn (${(cause as Error).message})`, { cause });
  }
  return {
    async createSession(modelPath, threads) {
      const session = await ort.InferenceSession.create(modelPath, {
        intraOpNumThreads: threads,
        interOpNumThreads: 1,
        graphOptimizationLevel: 'all',
        // Idle pool threads sleep instead of spinning: spinning doubled the CPU time per text on a
        // shared 2-core machine (MiniLM query 10.2 → 6.4 ms CPU at 1 thread) for no wall-time gain.
        extra: { session: { intra_op: { allow_spinning: process.env.CAIRN_ORT_SPIN === '1' ? '1' : '0' } } },
      });
      return {
        inputNames: session.inputNames,
        async run(inputs) {
          const feeds: Record<string, InstanceType<typeof ort.Tensor>> = {};
          for (const [name, { data, dims }] of Object.entries(inputs)) feeds[name] = new ort.Tensor('int64', data, dims);
          const results = await session.run(feeds);
          const output = results[session.outputNames[0]!]!;
          return { data: output.data as Float32Array, dims: output.dims };
        },
        release: () => session.release(),
      };
    },
    createTokenizer(tokenizerJson) {
      const tokenizer = new tokenizers.Tokenizer(tokenizerJson, {});
      return { encode: (text) => tokenizer.encode(text, { add_special_tokens: true }) };
    },
  };
}

interface Loaded {
  session: OnnxSession;
  tokenizer: { encode(text: string): { ids: number[]; tokens?: string[] } };
}

/** An ONNX embedder, with the state of its model. */
export interface OnnxEmbedder extends Embedder {
  /** Whether the model has been loaded yet (it loads on the first `embed`). */
  readonly loaded: boolean;
}

/**
 * An embedder over a known model's folder (see `KNOWN_ONNX_MODELS`). Nothing is read until the
 * first `embed` (or `availability`): the id (`onnx:<name>`) and dimension come from the manifest.
 * When the files are bad, `embed` throws `EMBEDDER_UNAVAILABLE` with the reason, every time, and
 * never loads a half-checked model.
 *
 * @example
 * const embedder = createOnnxEmbedder(onnxModelFolder('bge-small-en-v1.5-q'), BGE_SMALL_EN_V15_Q);
 * const [vector] = await embedder.embed(['prefers short paragraphs']);
 */
export function createOnnxEmbedder(folder: string, manifest: OnnxModelManifest, options: OnnxEmbedderOptions = {}): OnnxEmbedder {
  const batchSize = options.batchSize ?? 1;
  const threads = options.threads ?? Math.max(1, Math.min(2, os.availableParallelism?.() ?? os.cpus().length));
  let loading: Promise<Loaded> | null = null;
  let loaded: Loaded | null = null;

  async function load(): Promise<Loaded> {
    const problem = await checkOnnxModel(folder, manifest, { verify: true });
    if (problem) throw new CairnError('EMBEDDER_UNAVAILABLE', problem);
    const runtime = await (options.runtime ?? defaultRuntime)();
    try {
      const tokenizer = runtime.createTokenizer(JSON.parse(await (await import('node:fs/promises')).readFile(path.join(folder, 'tokenizer.json'), 'utf8')) as object);
      const session = await runtime.createSession(path.join(folder, 'model.onnx'), threads);
      return { session, tokenizer };
    } catch (cause) {
      throw new CairnError('EMBEDDER_UNAVAILABLE', `model ${folder} failed to load: ${(cause as Error).message.split('\n')[0]}`, { cause });
    }
  }

  function ready(): Promise<Loaded> {
    loading ??= load().then((l) => (loaded = l));
    return loading;
  }

  /** A text's token ids, cut to the model's limit keeping [CLS] … and the closing [SEP]. */
  function cut(ids: number[]): number[] {
    return ids.length <= manifest.maxTokens ? ids : [...ids.slice(0, manifest.maxTokens - 1), ids[ids.length - 1]!];
  }

  /** One model run over `rows` of token ids, padded to the longest: the `[rows, width, hidden]` states. */
  async function infer(model: Loaded, rows: readonly number[][]): Promise<{ data: Float32Array; dims: readonly number[]; width: number }> {
    const width = Math.max(...rows.map((row) => row.length));
    const ids = new BigInt64Array(rows.length * width);
    const mask = new BigInt64Array(rows.length * width);
    rows.forEach((row, i) => {
      row.forEach((id, j) => {
        ids[i * width + j] = BigInt(id);
        mask[i * width + j] = 1n;
      });
    });
    const dims = [rows.length, width];
    const inputs: Record<string, { data: BigInt64Array; dims: number[] }> = { input_ids: { data: ids, dims }, attention_mask: { data: mask, dims } };
    if (model.session.inputNames.includes('token_type_ids')) inputs.token_type_ids = { data: new BigInt64Array(rows.length * width), dims };
    try {
      const output = await model.session.run(inputs);
      return { data: output.data, dims: output.dims, width };
    } catch (cause) {
      throw new CairnError('EMBEDDER_FAILED', `onnx:${manifest.name}: inference failed: ${(cause as Error).message.split('\n')[0]}`, { cause });
    }
  }

  /** Word pieces of `text` without the model's markers (uncut). */
  function pieceCount(model: Loaded, text: string): number {
    return text.length === 0 ? 0 : Math.max(0, model.tokenizer.encode(text).ids.length - 2);
  }
  /** Pieces of each prefix (e5's `query: `), counted once: the states kept start after them. */
  const prefixPieces = new Map<string, number>();
  function prefixCount(model: Loaded, prefix: string): number {
    let n = prefixPieces.get(prefix);
    if (n === undefined) prefixPieces.set(prefix, (n = pieceCount(model, prefix.trim())));
    return n;
  }

  /**
   * One model run: each text's vector and, for the texts given `pieces`, the states of those word
   * pieces (`[first, end)`, counted without [CLS]).
   */
  async function runBatch(
    model: Loaded,
    texts: string[],
    pieces?: ReadonlyArray<readonly [number, number]>,
    given?: ReadonlyArray<{ ids: number[]; tokens?: string[] }>,
  ): Promise<Array<{ vector: Float32Array; states?: Float32Array[]; tokens?: string[] }>> {
    const encodings = given ?? texts.map((text) => model.tokenizer.encode(text));
    const encoded = encodings.map((e) => cut(e.ids));
    const output = await infer(model, encoded);
    const { width } = output;
    const hidden = output.dims[output.dims.length - 1]!;
    if (hidden !== manifest.dimension) throw new CairnError('EMBEDDER_FAILED', `onnx:${manifest.name}: the model gives ${hidden} dimensions, its manifest says ${manifest.dimension}`);
    return encoded.map((row, i) => {
      const vector = new Float32Array(hidden);
      const base = i * width * hidden;
      if (manifest.pooling === 'cls') vector.set(output.data.subarray(base, base + hidden));
      else {
        for (let t = 0; t < row.length; t++) for (let d = 0; d < hidden; d++) vector[d]! += output.data[base + t * hidden + d]!;
      }
      const range = pieces?.[i];
      if (!range) return { vector: normalizeInPlace(vector) };
      // Pieces sit at rows 1 … length − 2 ([CLS] first, the closing [SEP] last).
      const states: Float32Array[] = [];
      const end = Math.min(1 + range[1], row.length - 1);
      for (let t = 1 + range[0]; t < end; t++) states.push(output.data.slice(base + t * hidden, base + (t + 1) * hidden));
      return { vector: normalizeInPlace(vector), states, tokens: (encodings[i]!.tokens ?? []).slice(1 + range[0], end) };
    });
  }

  /** The query states of recent query embeddings (recall's rerank asks for them right after). */
  const queryStates = new Map<string, TokenStates>();
  const QUERY_STATES_KEPT = 8;
  function rememberQuery(query: string, tokens: string[], states: Float32Array[]): void {
    queryStates.delete(query);
    queryStates.set(query, { tokens, states: states.map((s) => normalizeInPlace(s)) });
    if (queryStates.size > QUERY_STATES_KEPT) queryStates.delete(queryStates.keys().next().value!);
  }

  return {
    model: `onnx:${manifest.name}`,
    dimension: manifest.dimension,
    get loaded() {
      return loaded !== null;
    },
    async embed(input, embedOptions) {
      if (input.length === 0) return [];
      const model = await ready();
      const prefix = manifest.prefixes?.[embedOptions?.purpose ?? 'document'] ?? '';
      const texts = prefix ? input.map((text) => prefix + text) : input;
      // Similar lengths share a batch, so little compute goes to padding.
      const order = texts.map((_, i) => i).sort((a, b) => texts[a]!.length - texts[b]!.length);
      const out = new Array<Float32Array>(texts.length);
      // A query's own pieces (after any query prefix) are kept for the rerank: one run gives both.
      const query = embedOptions?.purpose === 'query' && batchSize === 1;
      const skip = query ? prefixCount(model, prefix) : 0;
      for (let start = 0; start < order.length; start += batchSize) {
        const slice = order.slice(start, start + batchSize);
        const runs = await runBatch(model, slice.map((i) => texts[i]!), query ? [[skip, manifest.maxTokens]] : undefined);
        slice.forEach((i, k) => {
          const run = runs[k]!;
          out[i] = run.vector;
          if (run.states) rememberQuery(input[i]!, run.tokens ?? [], run.states);
        });
      }
      return out;
    },
    async embedSigned(input, signed) {
      if (input.length === 0) return [];
      const model = await ready();
      const prefix = manifest.prefixes?.document ?? '';
      const skip = prefixCount(model, prefix);
      const out: SignedEmbedding[] = [];
      // One text a run, as `embed` does, so the vector is the one `embed` gives.
      for (const [i, text] of input.entries()) {
        const own = signed[i] ?? text;
        const encoding = model.tokenizer.encode(prefix + text);
        // Without a prefix or context the signed text is the text run: its pieces are the run's
        // (the same encoding, uncut), so it is tokenized once.
        const count = own === text && prefix === '' ? (own.length === 0 ? 0 : Math.max(0, encoding.ids.length - 2)) : pieceCount(model, own);
        const [run] = await runBatch(model, [prefix + text], [[skip, skip + count]], [encoding]);
        out.push({ vector: run!.vector, signature: encodeSignature(run!.states!, manifest.dimension) });
      }
      return out;
    },
    async tokenStates(input) {
      if (input.length === 0) return [];
      const model = await ready();
      const out: TokenStates[] = [];
      // One text a run, as `embed` does: the int8 graph scales activations over the whole batch.
      for (const text of input) {
        const kept = queryStates.get(text);
        if (kept) {
          out.push(kept);
          continue;
        }
        const encoded = model.tokenizer.encode(text);
        const ids = cut(encoded.ids);
        const output = await infer(model, [ids]);
        const hidden = output.dims[output.dims.length - 1]!;
        // [CLS] and the closing [SEP] carry no word of their own.
        const states: Float32Array[] = [];
        for (let t = 1; t < ids.length - 1; t++) states.push(normalizeInPlace(output.data.slice(t * hidden, (t + 1) * hidden)));
        out.push({ tokens: (encoded.tokens ?? []).slice(1, ids.length - 1), states });
      }
      return out;
    },
    async availability(check = {}): Promise<EmbedderAvailability> {
      if (loaded) return { ok: true };
      const problem = await checkOnnxModel(folder, manifest, check);
      return problem ? { ok: false, reason: problem } : { ok: true };
    },
    async close() {
      const model = loaded;
      loaded = null;
      loading = null;
      await model?.session.release?.();
    },
  };
}

/** `onnx:<name>` for a known model; the folder comes from {@link onnxModelFolder}. */
export function loadOnnxEmbedder(name: string, options: OnnxEmbedderOptions & { home?: string; folder?: string } = {}): OnnxEmbedder {
  const manifest = KNOWN_ONNX_MODELS[name];
  if (!manifest) {
    throw new CairnError('INVALID_INPUT', `unknown ONNX model "${name}"; known: ${Object.keys(KNOWN_ONNX_MODELS).join(', ')}`, { field: 'embedder' });
  }
  return createOnnxEmbedder(options.folder ?? onnxModelFolder(name, options.home), manifest, options);
}
