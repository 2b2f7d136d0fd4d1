/**
 * The local `claude` CLI in print mode (`claude -p --output-format json`, the prompt on stdin).
 * The child runs with CAIRN_HOOK_CHILD=1 so cairn's own hooks in it do nothing (no recursion).
 */
import { spawn } from 'node:child_process';
import { LlmError, type LlmProvider, type LlmRequest, type LlmResponse } from './types.js';

export interface ClaudeCliOptions {
  /** @default 'claude' (found on PATH) */
  command?: string;
  /** Passed as `--model` when given. */
  model?: string;
  /** @default 120000 */
  timeoutMs?: number;
  /** Environment of the child. @default process.env */
  env?: NodeJS.ProcessEnv;
}

export function createClaudeCliProvider(options: ClaudeCliOptions = {}): LlmProvider {
  const command = options.command ?? 'claude';
  const timeoutMs = options.timeoutMs ?? 120_000;
  return {
    name: 'claude-cli',
    model: options.model ?? 'default',
    complete(request: LlmRequest): Promise<LlmResponse> {
      const args = ['-p', '--output-format', 'json', ...(options.model ? ['--model', options.model] : [])];
      return new Promise((resolve, reject) => {
        let child: ReturnType<typeof spawn>;
        try {
          child = spawn(command, args, { env: { ...(options.env ?? process.env), CAIRN_HOOK_CHILD: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
        } catch (error) {
          reject(new LlmError('spawn', `cannot start ${command}: ${error instanceof Error ? error.message : String(error)}`, { cause: error }));
          return;
        }
        let out = '';
        let err = '';
        let settled = false;
        const finish = (fn: () => void): void => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          fn();
        };
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          finish(() => reject(new LlmError('timeout', `${command} gave no answer within ${timeoutMs} ms`)));
        }, timeoutMs);
        child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
        child.on('error', (error) => finish(() => reject(new LlmError('spawn', `cannot run ${command}: ${error.message}`, { cause: error }))));
        child.on('close', (code) =>
          finish(() => {
            if (code !== 0) {
              reject(new LlmError(/rate.?limit|429/i.test(err + out) ? 'rate-limited' : 'http', `${command} exited with ${code}: ${(err || out).slice(0, 200)}`));
              return;
            }
            let parsed: { result?: unknown; is_error?: unknown; usage?: { input_tokens?: number; output_tokens?: number } };
            try {
              parsed = JSON.parse(out) as typeof parsed;
            } catch (error) {
              reject(new LlmError('malformed', `${command} printed something that is not JSON: ${out.slice(0, 120)}`, { cause: error }));
              return;
            }
            if (parsed.is_error === true || typeof parsed.result !== 'string') {
              reject(new LlmError('malformed', `${command} answered without a result: ${out.slice(0, 120)}`));
              return;
            }
            resolve({
              text: parsed.result,
              inputTokens: Number(parsed.usage?.input_tokens) || Math.ceil((request.system.length + request.prompt.length) / 4),
              outputTokens: Number(parsed.usage?.output_tokens) || Math.ceil(parsed.result.length / 4),
            });
          }),
        );
        child.stdin?.on('error', () => {});
        child.stdin?.end(`${request.system}\n\n${request.prompt}`);
      });
    },
  };
}
