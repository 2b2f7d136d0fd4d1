/**
 * The embedders: every export here is public API.
 */
import { invalid } from '../errors.js';
import type { Embedder } from '../types.js';
import { createHashEmbedder } from './hash.js';

export { createHashEmbedder, type HashEmbedderOptions } from './hash.js';

/** Options for {@link createEmbedder}. */
export interface CreateEmbedderOptions {
  /** cairn's home folder (where downloaded or distilled models live). */
  home?: string;
}

/**
 * Build an embedder from a spec string such as `hash` or `hash:128`.
 * More providers are being added (static, ollama, openai, use-lite, transformers).
 */
export async function createEmbedder(spec: string, _options: CreateEmbedderOptions = {}): Promise<Embedder> {
  const match = /^hash(?::(\d+))?$/.exec(spec.trim());
  if (match) return createHashEmbedder(match[1] ? { dimension: Number(match[1]) } : {});
  throw invalid(`unknown embedder spec "${spec}"`, 'embedder');
}
