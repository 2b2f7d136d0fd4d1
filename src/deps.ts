import type { CorePaths } from './context/core.js';
import type { RankerRegistry } from './context/rankers.js';
import type { Clock, Embedder, IdSource, Logger, Store } from './types.js';

/** What the operations need, wired once by createCairn(). */
export interface Deps {
  store: Store;
  embedder: Embedder | null;
  clock: Clock;
  ids: IdSource;
  logger: Logger;
  /** Project identity writes default to and recall prefers (null outside any project). */
  project: string | null;
  /** Folder file references are resolved against (the project root). */
  workspaceRoot: string | null;
  /** The agent session writes belong to, when known. */
  session: string | null;
  /** Recorded in the event log: `cli`, `mcp`, `hook`, a token name … */
  actor: string;
  /** Core memory files (project and user). */
  core: CorePaths;
  rankers: RankerRegistry;
}

/** Embed texts, or return nulls when no embedder is configured. Never inside a DB transaction. */
export async function embedAll(deps: Deps, texts: string[]): Promise<Array<Float32Array | null>> {
  if (!deps.embedder || texts.length === 0) return texts.map(() => null);
  return deps.embedder.embed(texts);
}
