import type { Config } from '../config.js';
import { CairnError } from '../errors.js';
import type { Embedder } from '../types.js';

/** Build the configured embedder; the embed module is loaded only when one is configured. */
export async function createEmbedderFromSpec(spec: string, config: Config): Promise<Embedder> {
  const module = (await import('../embed/index.js').catch((error: unknown) => {
    throw new CairnError('MISSING_DEPENDENCY', `embedder "${spec}" is configured but the embed module failed to load: ${(error as Error).message}`, { cause: error });
  })) as { createEmbedder(spec: string, options: { home: string }): Promise<Embedder> };
  return module.createEmbedder(spec, { home: config.home });
}
