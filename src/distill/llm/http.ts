/** JSON over HTTP for the API providers: a timeout per attempt, bounded retries on 429 / 5xx. */
import { LlmError, type HttpOptions } from './types.js';

const RETRYABLE = new Set([408, 409, 425, 429, 500, 502, 503, 504, 529]);
const MAX_RETRY_AFTER_MS = 30_000;

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

function retryAfter(header: string | null, fallback: number): number {
  if (header === null) return fallback;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, seconds * 1000));
  const at = Date.parse(header);
  return Number.isNaN(at) ? fallback : Math.min(MAX_RETRY_AFTER_MS, Math.max(0, at - Date.now()));
}

/** POST `body` as JSON and return the parsed JSON answer; throws {@link LlmError}. */
export async function postJson(url: string, headers: Record<string, string>, body: unknown, options: HttpOptions = {}): Promise<unknown> {
  const doFetch = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const maxRetries = options.maxRetries ?? 2;
  let delay = options.retryDelayMs ?? 1000;
  for (let attempt = 0; ; attempt++) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    let response: Response;
    try {
      response = await doFetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), signal: controller.signal });
    } catch (error) {
      clearTimeout(timer);
      const timedOut = controller.signal.aborted;
      if (attempt < maxRetries && !timedOut) {
        await sleep(delay);
        delay *= 2;
        continue;
      }
      throw new LlmError(timedOut ? 'timeout' : 'http', timedOut ? `no answer from ${url} within ${timeoutMs} ms` : `cannot reach ${url}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      clearTimeout(timer);
      throw new LlmError(controller.signal.aborted ? 'timeout' : 'http', `reading the answer from ${url} failed`, { cause: error });
    }
    clearTimeout(timer);
    if (response.ok) {
      try {
        return JSON.parse(text) as unknown;
      } catch (error) {
        throw new LlmError('malformed', `${url} answered with something that is not JSON: ${text.slice(0, 120)}`, { cause: error });
      }
    }
    if (RETRYABLE.has(response.status) && attempt < maxRetries) {
      await sleep(retryAfter(response.headers.get('retry-after'), delay));
      delay *= 2;
      continue;
    }
    throw new LlmError(response.status === 429 ? 'rate-limited' : 'http', `${url} answered HTTP ${response.status}: ${text.slice(0, 200)}`);
  }
}
