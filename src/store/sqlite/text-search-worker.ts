/**
 * A worker thread that runs the SQLite store's full-text search on its own connection to the same
 * file (./text-search-offload.ts), so a hybrid recall's BM25 leg runs on one core while the query
 * embedding and the vector search run on the other. It answers `{ id, query, options }` with
 * `{ id, hits }` or `{ id, error: { code, message } }`; the results are those of
 * `SqliteStore.searchText` in the calling thread (the same code on the same committed data).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { isCairnError } from '../../errors.js';
import type { ScoredId, TextSearchOptions } from '../../types.js';
import { openSqliteStore } from './store.js';

/** What the worker is given. */
export interface TextSearchWorkerData {
  path: string;
}

/** One search. */
export interface TextSearchRequest {
  id: number;
  query: string;
  options: TextSearchOptions;
}

/** One answer. */
export type TextSearchReply = { id: number; hits: ScoredId[] } | { id: number; error: { code: string | null; message: string } };

const port = parentPort;
if (port) {
  const { path } = workerData as TextSearchWorkerData;
  // Full-text search never touches the vector index: nothing to persist or build from here.
  const opening = openSqliteStore(path, { vectorIndex: { persist: false, build: 'inline' } });
  port.on('message', (request: TextSearchRequest) => {
    opening
      .then((store) => store.searchText(request.query, request.options))
      .then(
        (hits) => port.postMessage({ id: request.id, hits } satisfies TextSearchReply),
        (error: unknown) =>
          port.postMessage({ id: request.id, error: { code: isCairnError(error) ? error.code : null, message: (error as Error).message } } satisfies TextSearchReply),
      );
  });
}
