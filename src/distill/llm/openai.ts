/** Any OpenAI-compatible chat endpoint (`POST {baseUrl}/chat/completions`): OpenAI, Ollama, llama.cpp, vLLM … */
import { postJson } from './http.js';
import { LlmError, type HttpOptions, type LlmProvider, type LlmRequest, type LlmResponse } from './types.js';

export interface OpenAiOptions extends HttpOptions {
  /** e.g. `https://api.openai.com/v1`, `http://127.0.0.1:11434/v1` (Ollama), `http://127.0.0.1:8080/v1` (llama.cpp). */
  baseUrl: string;
  model: string;
  /** Sent as a bearer token when given (local servers need none). */
  apiKey?: string;
}

export function createOpenAiProvider(options: OpenAiOptions): LlmProvider {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  return {
    name: 'openai',
    model: options.model,
    async complete(request: LlmRequest): Promise<LlmResponse> {
      const answer = await postJson(
        url,
        options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
        {
          model: options.model,
          max_tokens: request.maxTokens,
          temperature: 0,
          messages: [
            { role: 'system', content: request.system },
            { role: 'user', content: request.prompt },
          ],
        },
        options,
      );
      const body = answer as { choices?: Array<{ message?: { content?: unknown } }>; usage?: { prompt_tokens?: number; completion_tokens?: number } };
      const content = body.choices?.[0]?.message?.content;
      if (typeof content !== 'string') throw new LlmError('malformed', 'the chat completion has no message content');
      const inputTokens = Number(body.usage?.prompt_tokens) || Math.ceil((request.system.length + request.prompt.length) / 4);
      const outputTokens = Number(body.usage?.completion_tokens) || Math.ceil(content.length / 4);
      return { text: content, inputTokens, outputTokens };
    },
  };
}
