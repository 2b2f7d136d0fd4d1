/**
 * A worker thread of the ONNX embedding pool (onnx-pool.ts): its own ONNX Runtime session, run by
 * the very code the in-thread embedder runs (`createOnnxEmbedder`), so its vectors are the same.
 * It answers `{ id, texts, purpose }` with `{ id, vectors }` (buffers transferred) or
 * `{ id, error: { code, message } }`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { isCairnError } from '../errors.js';
import type { EmbedOptions } from '../types.js';
import { createOnnxEmbedder } from './onnx.js';
import type { OnnxModelManifest } from './onnx-models.js';

/** What the pool gives each worker. */
export interface OnnxWorkerData {
  folder: string;
  manifest: OnnxModelManifest;
  threads: number;
}

/** One request to a worker. */
export interface OnnxWorkerRequest {
  id: number;
  texts: string[];
  purpose?: EmbedOptions['purpose'];
  /** Asks for token signatures: the signed part of each text (`embedSigned`). */
  signed?: string[];
}

/** One answer. */
export type OnnxWorkerReply = { id: number; vectors: Float32Array[]; signatures?: Uint8Array[] } | { id: number; error: { code: string | null; message: string } };

const port = parentPort;
if (port) {
  const { folder, manifest, threads } = workerData as OnnxWorkerData;
  const embedder = createOnnxEmbedder(folder, manifest, { threads });
  port.on('message', (request: OnnxWorkerRequest) => {
    if (request.signed) {
      embedder.embedSigned!(request.texts, request.signed).then(
        (runs) => {
          const vectors = runs.map((r) => r.vector);
          const signatures = runs.map((r) => r.signature);
          port.postMessage({ id: request.id, vectors, signatures } satisfies OnnxWorkerReply, [...vectors.map((v) => v.buffer as ArrayBuffer), ...signatures.map((s) => s.buffer as ArrayBuffer)]);
        },
        (error: unknown) => port.postMessage({ id: request.id, error: { code: isCairnError(error) ? error.code : null, message: (error as Error).message } } satisfies OnnxWorkerReply),
      );
      return;
    }
    embedder.embed(request.texts, request.purpose ? { purpose: request.purpose } : undefined).then(
      (vectors) => port.postMessage({ id: request.id, vectors } satisfies OnnxWorkerReply, vectors.map((v) => v.buffer as ArrayBuffer)),
      (error: unknown) => port.postMessage({ id: request.id, error: { code: isCairnError(error) ? error.code : null, message: (error as Error).message } } satisfies OnnxWorkerReply),
    );
  });
}
