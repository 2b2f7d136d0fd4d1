/**
 * Bulk embedding on every core: a pool of worker threads, each with its own ONNX Runtime session
 * at one intra-op thread. One process with two intra-op threads keeps only ~1.6 cores busy on
 * MiniLM's small per-text runs, and two sessions in one JS thread run one after the other; two
 * workers run two texts at once. Each worker runs `createOnnxEmbedder` itself, one text per model
 * call, so a vector is bit-for-bit the one the in-thread embedder gives (tested).
 *
 * For `cairn reindex` (and any bulk fill in the foreground); recall and background fills use the
 * plain embedder. Workers start on the first `embed` and end with `close`. When the worker script
 * is absent (running from TypeScript sources) or a worker cannot start, the pool embeds in this
 * thread instead: slower, same vectors.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { CairnError, type CairnErrorCode } from '../errors.js';
import type { EmbedderAvailability, EmbedOptions } from '../types.js';
import { checkOnnxModel, createOnnxEmbedder, type OnnxEmbedder } from './onnx.js';
import type { OnnxModelManifest } from './onnx-models.js';
import type { OnnxWorkerData, OnnxWorkerReply, OnnxWorkerRequest } from './onnx-worker.js';

export interface OnnxPoolOptions {
  /**
   * Worker threads, each with its own session.
   * @default 2
   */
  workers?: number;
  /**
   * Texts per message to a worker: small enough to keep both busy to the end of a batch.
   * @default 8
   */
  chunk?: number;
  /** The worker script (tests point it at a bundle of onnx-worker.ts). @default onnx-worker.js beside this module */
  workerUrl?: URL;
}

interface Slot {
  worker: Worker;
  pending: Map<number, { resolve(reply: { vectors: Float32Array[]; signatures?: Uint8Array[] }): void; reject(error: Error): void }>;
}

/**
 * An embedder over `folder` that spreads each `embed` call over worker threads.
 *
 * @example
 * const embedder = createOnnxWorkerPool(onnxModelFolder('all-minilm-l6-v2-q'), ALL_MINILM_L6_V2_Q);
 * await reindex(store, embedder); await embedder.close();
 */
export function createOnnxWorkerPool(folder: string, manifest: OnnxModelManifest, options: OnnxPoolOptions = {}): OnnxEmbedder & { readonly workers: number } {
  const size = Math.max(1, options.workers ?? 2);
  const chunk = Math.max(1, options.chunk ?? 8);
  const url = options.workerUrl ?? new URL('./onnx-worker.js', import.meta.url);
  let slots: Slot[] | null = null;
  let fallback: OnnxEmbedder | null = null;
  let nextId = 0;

  function start(): Slot[] {
    if (slots) return slots;
    slots = [];
    if (url.protocol === 'file:' && !existsSync(fileURLToPath(url))) return slots;
    for (let i = 0; i < size; i++) {
      let worker: Worker;
      try {
        // Not the parent's --input-type (a `node -e` parent): the worker is a module file.
        const execArgv = process.execArgv.filter((arg) => !arg.startsWith('--input-type'));
        worker = new Worker(url, { workerData: { folder, manifest, threads: 1 } satisfies OnnxWorkerData, execArgv });
      } catch {
        break;
      }
      const slot: Slot = { worker, pending: new Map() };
      worker.on('message', (reply: OnnxWorkerReply) => {
        const waiting = slot.pending.get(reply.id);
        if (!waiting) return;
        slot.pending.delete(reply.id);
        if ('vectors' in reply) waiting.resolve(reply);
        else waiting.reject(new CairnError((reply.error.code as CairnErrorCode | null) ?? 'EMBEDDER_FAILED', reply.error.message));
      });
      const fail = (error: Error) => {
        for (const waiting of slot.pending.values()) waiting.reject(new CairnError('EMBEDDER_FAILED', `onnx:${manifest.name}: an embedding worker stopped: ${error.message}`, { cause: error }));
        slot.pending.clear();
        slots = (slots ?? []).filter((s) => s !== slot);
      };
      worker.on('error', fail);
      worker.on('exit', (code) => fail(new Error(`exit code ${code}`)));
      slots.push(slot);
    }
    return slots;
  }

  function ask(slot: Slot, texts: string[], embedOptions?: EmbedOptions, signed?: string[]): Promise<{ vectors: Float32Array[]; signatures?: Uint8Array[] }> {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      slot.pending.set(id, { resolve, reject });
      slot.worker.postMessage({ id, texts, ...(embedOptions?.purpose ? { purpose: embedOptions.purpose } : {}), ...(signed ? { signed } : {}) } satisfies OnnxWorkerRequest);
    });
  }

  /** Every text's reply, chunk by chunk over the workers (each takes the next chunk when done). */
  async function spread(workers: Slot[], texts: string[], embedOptions?: EmbedOptions, signed?: readonly string[]): Promise<Array<{ vector: Float32Array; signature?: Uint8Array }>> {
    const out = new Array<{ vector: Float32Array; signature?: Uint8Array }>(texts.length);
    let next = 0;
    await Promise.all(
      workers.map(async (slot) => {
        while (next < texts.length) {
          const start = next;
          next += chunk;
          const reply = await ask(slot, texts.slice(start, start + chunk), embedOptions, signed ? signed.slice(start, start + chunk) : undefined);
          reply.vectors.forEach((vector, k) => (out[start + k] = { vector, ...(reply.signatures ? { signature: reply.signatures[k]! } : {}) }));
        }
      }),
    );
    return out;
  }

  return {
    model: `onnx:${manifest.name}`,
    dimension: manifest.dimension,
    workers: size,
    get loaded() {
      return (slots?.length ?? 0) > 0 || (fallback?.loaded ?? false);
    },
    async embed(texts, embedOptions) {
      if (texts.length === 0) return [];
      const workers = start();
      if (workers.length === 0) {
        fallback ??= createOnnxEmbedder(folder, manifest);
        return fallback.embed(texts, embedOptions);
      }
      return (await spread(workers, texts, embedOptions)).map((r) => r.vector);
    },
    async embedSigned(texts, signed) {
      if (texts.length === 0) return [];
      const workers = start();
      if (workers.length === 0) {
        fallback ??= createOnnxEmbedder(folder, manifest);
        return fallback.embedSigned!(texts, signed);
      }
      return (await spread(workers, texts, undefined, signed)).map((r) => ({ vector: r.vector, signature: r.signature! }));
    },
    async availability(check = {}): Promise<EmbedderAvailability> {
      const problem = await checkOnnxModel(folder, manifest, check);
      return problem ? { ok: false, reason: problem } : { ok: true };
    },
    async close() {
      const current = slots ?? [];
      slots = null;
      await Promise.all(current.map((slot) => slot.worker.terminate()));
      await fallback?.close?.();
      fallback = null;
    },
  };
}
