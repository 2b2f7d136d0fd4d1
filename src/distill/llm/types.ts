/**
 * The LLM distiller's provider contract: one completion call in, text and token usage out.
 * Providers: the Anthropic Messages API, any OpenAI-compatible chat endpoint (OpenAI, Ollama,
 * llama.cpp, vLLM …), and the local `claude -p` CLI. Off by default; nothing here runs unless
 * the user asks for it (`cairn distill --llm`).
 */

export interface LlmRequest {
  system: string;
  prompt: string;
  /** Largest answer, in tokens. */
  maxTokens: number;
}

export interface LlmResponse {
  text: string;
  inputTokens: number;
  outputTokens: number;
}

export interface LlmProvider {
  /** `anthropic`, `openai`, `claude-cli`. */
  readonly name: string;
  readonly model: string;
  complete(request: LlmRequest): Promise<LlmResponse>;
}

export type LlmErrorKind = 'timeout' | 'rate-limited' | 'http' | 'malformed' | 'spawn' | 'budget';

/** A provider call that failed; the distiller logs it and leaves every memory as it was. */
export class LlmError extends Error {
  readonly kind: LlmErrorKind;
  constructor(kind: LlmErrorKind, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'LlmError';
    this.kind = kind;
  }
}

export interface HttpOptions {
  /** Milliseconds before a call is abandoned. @default 60000 */
  timeoutMs?: number;
  /** Retries after a 429 / 5xx / network error. @default 2 */
  maxRetries?: number;
  /** Base delay between retries (doubled each time; a Retry-After header wins, capped at 30 s). @default 1000 */
  retryDelayMs?: number;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
}
