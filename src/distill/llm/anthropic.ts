/** The Anthropic Messages API (`POST /v1/messages`). */
import { postJson } from './http.js';
import { LlmError, type HttpOptions, type LlmProvider, type LlmRequest, type LlmResponse } from './types.js';

export interface AnthropicOptions extends HttpOptions {
  apiKey: string;
  /** @default 'claude-haiku-4-5' */
  model?: string;
  /** @default 'https://api.anthropic.com' */
  baseUrl?: string;
}

export function createAnthropicProvider(options: AnthropicOptions): LlmProvider {
  const model = options.model ?? 'claude-haiku-4-5';
  const url = `${(options.baseUrl ?? 'https://api.anthropic.com').replace(/\/+$/, '')}/v1/messages`;
  return {
    name: 'anthropic',
    model,
    async complete(request: LlmRequest): Promise<LlmResponse> {
      const answer = await postJson(
        url,
        { 'x-api-key': options.apiKey, 'anthropic-version': '2023-06-01' },
        { model, max_tokens: request.maxTokens, temperature: 0, system: request.system, messages: [{ role: 'user', content: request.prompt }] },
        options,
      );
      const body = answer as { content?: Array<{ type?: string; text?: string }>; usage?: { input_tokens?: number; output_tokens?: number } };
      if (!Array.isArray(body.content)) throw new LlmError('malformed', 'the Messages API answer has no content');
      const text = body.content.filter((b) => b.type === 'text' && typeof b.text === 'string').map((b) => b.text).join('');
      return { text, inputTokens: Number(body.usage?.input_tokens) || 0, outputTokens: Number(body.usage?.output_tokens) || 0 };
    },
  };
}
