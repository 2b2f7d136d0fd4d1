/**
 * The optional LLM distiller: providers, the budget, and the run. Configured at the entry point
 * (the CLI reads flags and environment once) and never used unless asked for.
 */
import { invalid } from '../../errors.js';
import { createAnthropicProvider } from './anthropic.js';
import { DEFAULT_BUDGET, type LlmBudget } from './budget.js';
import { createClaudeCliProvider } from './claude-cli.js';
import { createOpenAiProvider } from './openai.js';
import type { LlmProvider } from './types.js';

export const LLM_PROVIDERS = ['anthropic', 'openai', 'claude-cli'] as const;
export type LlmProviderName = (typeof LLM_PROVIDERS)[number];

export interface LlmConfig {
  provider: LlmProviderName;
  model?: string;
  /** API base URL (anthropic, openai) . */
  url?: string;
  apiKey?: string;
  /** The `claude` executable (claude-cli). */
  command?: string;
  timeoutMs?: number;
  budget: LlmBudget;
}

function positive(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw invalid(`${name} must be a positive integer (got "${value}")`, name);
  return n;
}

/**
 * The LLM settings from flags, else the environment: CAIRN_LLM_PROVIDER, CAIRN_LLM_MODEL,
 * CAIRN_LLM_URL, CAIRN_LLM_API_KEY (else ANTHROPIC_API_KEY / OPENAI_API_KEY), CAIRN_LLM_COMMAND,
 * CAIRN_LLM_TIMEOUT_MS, CAIRN_LLM_DAILY_TOKENS, CAIRN_LLM_SESSION_TOKENS.
 */
export function llmConfig(env: Record<string, string | undefined>, flags: Partial<Record<'provider' | 'model' | 'url' | 'dailyTokens' | 'sessionTokens', string>> = {}): LlmConfig {
  const provider = (flags.provider ?? env.CAIRN_LLM_PROVIDER ?? (env.ANTHROPIC_API_KEY ? 'anthropic' : 'claude-cli')) as LlmProviderName;
  if (!LLM_PROVIDERS.includes(provider)) throw invalid(`LLM provider must be one of ${LLM_PROVIDERS.join(', ')} (got "${provider}")`, 'provider');
  const url = flags.url ?? env.CAIRN_LLM_URL;
  const apiKey = env.CAIRN_LLM_API_KEY ?? (provider === 'anthropic' ? env.ANTHROPIC_API_KEY : provider === 'openai' ? env.OPENAI_API_KEY : undefined);
  const model = flags.model ?? env.CAIRN_LLM_MODEL;
  if (provider === 'anthropic' && !apiKey) throw invalid('the anthropic provider needs CAIRN_LLM_API_KEY or ANTHROPIC_API_KEY', 'provider');
  if (provider === 'openai' && !url) throw invalid('the openai provider needs --llm-url or CAIRN_LLM_URL (e.g. http://127.0.0.1:11434/v1 for Ollama)', 'url');
  if (provider === 'openai' && !model) throw invalid('the openai provider needs --llm-model or CAIRN_LLM_MODEL', 'model');
  const timeoutMs = positive(env.CAIRN_LLM_TIMEOUT_MS, 'CAIRN_LLM_TIMEOUT_MS');
  return {
    provider,
    ...(model ? { model } : {}),
    ...(url ? { url } : {}),
    ...(apiKey ? { apiKey } : {}),
    ...(env.CAIRN_LLM_COMMAND ? { command: env.CAIRN_LLM_COMMAND } : {}),
    ...(timeoutMs ? { timeoutMs } : {}),
    budget: {
      dailyTokens: positive(flags.dailyTokens ?? env.CAIRN_LLM_DAILY_TOKENS, 'daily-tokens') ?? DEFAULT_BUDGET.dailyTokens,
      sessionTokens: positive(flags.sessionTokens ?? env.CAIRN_LLM_SESSION_TOKENS, 'session-tokens') ?? DEFAULT_BUDGET.sessionTokens,
    },
  };
}

/** The provider a config names; `env` is the environment the `claude` CLI runs in. */
export function createLlmProvider(config: LlmConfig, env?: NodeJS.ProcessEnv): LlmProvider {
  const timeout = config.timeoutMs !== undefined ? { timeoutMs: config.timeoutMs } : {};
  switch (config.provider) {
    case 'anthropic':
      return createAnthropicProvider({ apiKey: config.apiKey ?? '', ...(config.model ? { model: config.model } : {}), ...(config.url ? { baseUrl: config.url } : {}), ...timeout });
    case 'openai':
      return createOpenAiProvider({ baseUrl: config.url ?? '', model: config.model ?? '', ...(config.apiKey ? { apiKey: config.apiKey } : {}), ...timeout });
    case 'claude-cli':
      return createClaudeCliProvider({ ...(config.command ? { command: config.command } : {}), ...(config.model ? { model: config.model } : {}), ...(env ? { env } : {}), ...timeout });
  }
}

export { distillWithLlm, llmCursorKey } from './distill.js';
export type { LlmDistillOptions, LlmDistillSummary } from './distill.js';
export { DEFAULT_BUDGET, readSpend, overBudget, recordSpend } from './budget.js';
export type { LlmBudget, Spend } from './budget.js';
export { createAnthropicProvider } from './anthropic.js';
export { createOpenAiProvider } from './openai.js';
export { createClaudeCliProvider } from './claude-cli.js';
export { LlmError } from './types.js';
export type { LlmProvider, LlmRequest, LlmResponse } from './types.js';
