/**
 * The ingest worker thread (started by pool.ts): reads one transcript file per request and
 * computes every turn's full-text index terms, so the thread that writes to the store only
 * writes. Its turns and facts come sanitized as sealing makes them (seal.ts: a seal would not survive the
 * message); it announces its ruleset when ready. Messages carry plain data (structured clone).
 */
import { parentPort } from 'node:worker_threads';
import { readWithTerms, type ReadRequest, type WorkerMessage } from './pool.js';
import { SEAL_RULESET } from './seal.js';
import { warmUpReaders } from './warmup.js';

const port = parentPort;
if (port !== null) {
  port.on('message', (request: ReadRequest) => {
    let message: WorkerMessage;
    try {
      message = { type: 'result', id: request.id, result: readWithTerms(request, true) };
    } catch (error) {
      // readTranscript does not throw for bad input; this is a bug, reported for that one file.
      message = { type: 'error', id: request.id, error: error instanceof Error ? error.message : String(error) };
    }
    port.postMessage(message);
  });
  // Before the first file: the hot code sees its rare branches once (warmup.ts).
  warmUpReaders();
  port.postMessage({ type: 'ready', ruleset: SEAL_RULESET } satisfies WorkerMessage);
}
