/**
 * Remote embedders: Ollama (`POST /api/embed`) and any OpenAI-compatible `POST /v1/embeddings`.
 * Batched, with a per-request timeout, bounded retries with exponential backoff on 429 / 5xx and
 * dropped connections, a dimension fixed by the first response (or configured), and unit-length
 * output. Every failure is a `EMBEDDER_FAILED` CairnError naming the endpoint.
 */
import { CairnError, invalid } from '../errors.js';
import type { Embedder } from '../types.js';
import { normalizeInPlace } from './vector.js';

export interface RemoteEmbedderOptions {
  /** Model name as the server knows it, e.g. `nomic-embed-text`. */
  model: string;
  /**
   * Base URL. Ollama: the server root; OpenAI-compatible: the API root including `/v1`.
   * @default 'http://127.0.0.1:11434' (Ollama), 'https://api.openai.com/v1' (OpenAI)
   */
  url?: string;
  /** Sent as `Authorization: Bearer <apiKey>` when set. */
  apiKey?: string;
  /**
   * Expected vector length. When unset, the first response fixes it (and `dimension` reads 0
   * until then); any later response of another length is an error.
   */
  dimension?: number;
  /**
   * Texts per request.
   * @default 64
   */
  batchSize?: number;
  /**
   * Per-request timeout in milliseconds.
   * @default 30000
   */
  timeoutMs?: number;
  /**
   * Retries after the first attempt, on 429, 5xx and dropped connections (never on timeouts).
   * @default 3
   */
  retries?: number;
  /**
   * First backoff delay in milliseconds, doubled on every retry; a `Retry-After` header is
   * honoured up to `maxBackoffMs`.
   * @default 500
   */
  backoffMs?: number;
  /** @default 10000 */
  maxBackoffMs?: number;
  /** Injected for tests; the global `fetch` by default. */
  fetch?: typeof fetch;
}

interface Provider {
  name: 'ollama' | 'openai';
  endpoint(base: string): string;
  body(model: string, texts: string[]): unknown;
  /** The vectors in input order, or a reason the response is unusable. */
  vectors(json: unknown, count: number): number[][] | string;
}

const ollama: Provider = {
  name: 'ollama',
  endpoint: (base) => `${base}/api/embed`,
  body: (model, texts) => ({ model, input: texts }),
  vectors(json, count) {
    const embeddings = (json as { embeddings?: unknown } | null)?.embeddings;
    if (!Array.isArray(embeddings)) return 'the response has no "embeddings" array';
    if (embeddings.length !== count) return `the response has ${embeddings.length} embeddings for ${count} inputs`;
    return embeddings as number[][];
  },
};

const openai: Provider = {
  name: 'openai',
  endpoint: (base) => `${base}/embeddings`,
  body: (model, texts) => ({ model, input: texts, encoding_format: 'float' }),
  vectors(json, count) {
    const data = (json as { data?: unknown } | null)?.data;
    if (!Array.isArray(data)) return 'the response has no "data" array';
    if (data.length !== count) return `the response has ${data.length} embeddings for ${count} inputs`;
    const out = new Array<number[]>(count);
    for (const [position, item] of (data as Array<{ embedding?: unknown; index?: unknown }>).entries()) {
      const index = typeof item?.index === 'number' ? item.index : position;
      if (!Number.isInteger(index) || index < 0 || index >= count || out[index]) return `the response has a bad or repeated index ${String(item?.index)}`;
      out[index] = item.embedding as number[];
    }
    return out;
  },
};

const RETRY_STATUS = (status: number): boolean => status === 429 || (status >= 500 && status <= 599);
/** Connection errors worth another try; a refused connection or unknown host is not. */
const TERMINAL_NETWORK = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ERR_INVALID_URL', 'UND_ERR_INVALID_ARG']);

function networkCode(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } })?.cause;
  return typeof cause?.code === 'string' ? cause.code : '';
}

function retryAfterMs(header: string | null): number | null {
  if (!header) return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function createRemoteEmbedder(provider: Provider, options: RemoteEmbedderOptions, defaultUrl: string): Embedder {
  if (!options.model) throw invalid(`${provider.name} embedder needs a model name`, 'model');
  const base = (options.url ?? defaultUrl).replace(/\/+$/, '');
  let endpoint: string;
  try {
    endpoint = new URL(provider.endpoint(base)).toString();
  } catch {
    throw invalid(`${provider.name} embedder URL ${base} is not a valid URL`, 'url');
  }
  const batchSize = options.batchSize ?? 64;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const retries = options.retries ?? 3;
  const backoffMs = options.backoffMs ?? 500;
  const maxBackoffMs = options.maxBackoffMs ?? 10_000;
  const doFetch = options.fetch ?? fetch;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw invalid('batchSize must be a positive integer', 'batchSize');
  let dimension = options.dimension ?? 0;
  const label = `${provider.name} embedder (${options.model} at ${endpoint})`;
  const fail = (message: string, cause?: unknown) =>
    new CairnError('EMBEDDER_FAILED', `${label}: ${message}`, cause === undefined ? {} : { cause });

  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (options.apiKey) headers['authorization'] = `Bearer ${options.apiKey}`;

  /** One request, retried; resolves to the parsed JSON body. */
  async function post(texts: string[]): Promise<unknown> {
    const body = JSON.stringify(provider.body(options.model, texts));
    for (let attempt = 0; ; attempt++) {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), timeoutMs);
      let retryReason: string;
      let wait = Math.min(maxBackoffMs, backoffMs * 2 ** attempt);
      try {
        const response = await doFetch(endpoint, { method: 'POST', headers, body, signal: controller.signal });
        const text = await response.text();
        if (response.ok) {
          try {
            return JSON.parse(text);
          } catch (cause) {
            throw fail(`the response is not valid JSON: ${text.slice(0, 120)}`, cause);
          }
        }
        const detail = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}${text ? `: ${text.slice(0, 200)}` : ''}`;
        if (!RETRY_STATUS(response.status)) throw fail(detail);
        retryReason = detail;
        wait = Math.min(maxBackoffMs, retryAfterMs(response.headers.get('retry-after')) ?? wait);
      } catch (error) {
        if (error instanceof CairnError) throw error;
        if (controller.signal.aborted) throw fail(`no response within ${timeoutMs} ms`, error);
        const code = networkCode(error);
        const detail = `request failed: ${code || (error as Error).message}`;
        if (TERMINAL_NETWORK.has(code)) throw fail(detail, error);
        retryReason = detail;
      } finally {
        clearTimeout(timer);
      }
      if (attempt >= retries) throw fail(`${retryReason} (gave up after ${attempt + 1} attempts)`);
      await sleep(wait);
    }
  }

  function toVector(values: unknown, position: number): Float32Array {
    if (!Array.isArray(values) || values.length === 0 || !values.every((x) => typeof x === 'number' && Number.isFinite(x))) {
      throw fail(`embedding ${position} is not a non-empty array of finite numbers`);
    }
    if (dimension === 0) dimension = values.length;
    else if (values.length !== dimension) {
      throw fail(`returned a ${values.length}-dimensional vector, expected ${dimension} (did the model change?)`);
    }
    return normalizeInPlace(Float32Array.from(values as number[]));
  }

  async function embed(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += batchSize) {
      const batch = texts.slice(start, start + batchSize);
      const vectors = provider.vectors(await post(batch), batch.length);
      if (typeof vectors === 'string') throw fail(vectors);
      vectors.forEach((values, i) => out.push(toVector(values, start + i)));
    }
    return out;
  }

  return {
    model: `${provider.name}:${options.model}`,
    get dimension() {
      return dimension;
    },
    embed,
  };
}

/**
 * An Ollama embedder (`POST <url>/api/embed`). Model id `ollama:<model>`.
 *
 * @example
 * const embedder = createOllamaEmbedder({ model: 'nomic-embed-text', url: 'http://127.0.0.1:11434' });
 */
export function createOllamaEmbedder(options: RemoteEmbedderOptions): Embedder {
  return createRemoteEmbedder(ollama, options, 'http://127.0.0.1:11434');
}

/**
 * An embedder for any OpenAI-compatible `POST <url>/embeddings` (OpenAI, LM Studio, vLLM,
 * llama.cpp server, LocalAI …). Model id `openai:<model>`.
 *
 * @example
 * const embedder = createOpenAIEmbedder({ model: 'text-embedding-3-small', apiKey: key });
 */
export function createOpenAIEmbedder(options: RemoteEmbedderOptions): Embedder {
  return createRemoteEmbedder(openai, options, 'https://api.openai.com/v1');
}
