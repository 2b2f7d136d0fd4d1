import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';

/** The built CLI (`npm run build`): what a user's shell runs. */
export const BUILT_BIN = join(resolve(import.meta.dirname, '../..'), 'bin/cairn.js');

export interface BuiltCliExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/**
 * `cairn --home HOME ...args` as a child process of the built CLI, killed with SIGKILL after
 * `killAfterMs` when it is given (the crash tests' kill -9); resolves with how it ended.
 */
export function spawnBuiltCli(home: string, args: string[], options: { killAfterMs?: number | null; env?: NodeJS.ProcessEnv } = {}): Promise<BuiltCliExit> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BUILT_BIN, '--home', home, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...options.env } });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const killAfterMs = options.killAfterMs ?? null;
    const timer = killAfterMs === null ? null : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('error', fail);
    child.on('exit', (code, signal) => {
      if (timer) clearTimeout(timer);
      done({ code, signal, stderr });
    });
  });
}
