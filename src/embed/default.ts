/**
 * Which embedder cairn uses when the configuration names none: the recommended pretrained model
 * (`onnx:all-minilm-l6-v2-q`) when its files are in place — `npm install` puts them there — else
 * BM25 alone, with a one-line reason. Only file sizes are checked here (a few `stat` calls, cheap
 * enough for every hook); the sha256 is checked by `cairn doctor` and before the model loads.
 */
import { checkOnnxModelSizes, onnxModelFolder } from './onnx-files.js';
import { ALL_MINILM_L6_V2_Q, DEFAULT_EMBEDDER_SPEC } from './onnx-models.js';

/** The default embedder, or why there is none. */
export type DefaultEmbedder = { spec: string; folder: string } | { spec: null; reason: string };

/**
 * Resolve the default embedder from the files on disk.
 *
 * @param home cairn's home: `<home>/models/<name>` wins over the package's copy.
 * @param packageModels the package's `models` folder (injected by tests).
 */
export function resolveDefaultEmbedder(home: string, packageModels?: string): DefaultEmbedder {
  const folder = onnxModelFolder(ALL_MINILM_L6_V2_Q.name, home, packageModels);
  const problem = checkOnnxModelSizes(folder, ALL_MINILM_L6_V2_Q);
  if (problem) return { spec: null, reason: `the default embedder ${DEFAULT_EMBEDDER_SPEC} is not installed: ${problem}` };
  return { spec: DEFAULT_EMBEDDER_SPEC, folder };
}
