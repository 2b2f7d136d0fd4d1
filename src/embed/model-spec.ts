/**
 * The embedder spec that rebuilds an embedder from the model id stored with a vector index, so
 * recall can keep searching the old index while a model switch builds the new one. Pure and tiny:
 * entry points import it without loading the embed module.
 */

/**
 * The spec for a stored model id, or null when that model cannot be rebuilt from its id alone
 * (remote models, transformers folders: their id does not say where they live).
 *
 * @example
 * specForModel('hash:v1:64'); // 'hash:64'
 * specForModel('onnx:all-minilm-l6-v2-q'); // 'onnx:all-minilm-l6-v2-q'
 */
export function specForModel(model: string): string | null {
  const hash = /^hash:v1:(\d+)$/.exec(model);
  if (hash) return `hash:${hash[1]}`;
  if (/^onnx:[a-z0-9][a-z0-9.-]*$/i.test(model)) return model;
  if (/^static:[A-Za-z0-9][A-Za-z0-9._-]*$/.test(model)) return model;
  if (model === 'use-lite:512') return 'use-lite';
  return null;
}
