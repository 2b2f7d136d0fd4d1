import { PassThrough, Readable } from 'node:stream';
import { runHook } from '../../src/hooks/run.js';

/**
 * Run one hook in this process, as Claude Code or Codex would run it (its input as JSON on stdin),
 * with the detached children run inline (`CAIRN_HOOK_INLINE=1`): its exit code and what it printed.
 */
export async function hookInProcess(event: string, input: unknown, home: string, cwd: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string }> {
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const code = await runHook(event, { stdin: Readable.from([typeof input === 'string' ? input : JSON.stringify(input)]), stdout, env: { CAIRN_HOOK_INLINE: '1', ...env }, cwd, home });
  return { code, out };
}
