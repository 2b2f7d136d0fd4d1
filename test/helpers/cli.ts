import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll } from 'vitest';
import { main } from '../../src/cli/main.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  json<T = unknown>(): T;
}

/** Run the real CLI in-process against a temp home; `stdin` is fed as the input stream. */
export async function runCli(args: string[], options: { home: string; cwd?: string; stdin?: string; env?: NodeJS.ProcessEnv }): Promise<CliRun> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const code = await main(['--home', options.home, ...args], {
    stdout,
    stderr,
    stdin: Readable.from([options.stdin ?? '']),
    // BM25 unless a test names an embedder: the default (all-MiniLM-L6-v2, when its files are in
    // the checkout) would make results depend on whether the model was fetched; and no detached
    // fill processes outliving a test (test/embed/default-embedder.test.ts covers both).
    env: { CAIRN_EMBEDDER: 'none', CAIRN_BACKGROUND_FILL: '0', ...options.env },
    cwd: options.cwd ?? options.home,
  });
  return {
    code,
    stdout: out,
    stderr: err,
    json<T>(): T {
      return JSON.parse(out) as T;
    },
  };
}

export function tempDir(prefix = 'cairn-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * A temp-directory maker for one test file: `const dir = tempDirs();` then `dir('cairn-x-')`;
 * every directory it made is removed after the file's tests (vitest's afterAll).
 */
export function tempDirs(): (prefix?: string) => string {
  const made: string[] = [];
  afterAll(() => {
    for (const d of made) rmSync(d, { recursive: true, force: true });
  });
  return (prefix) => {
    const d = tempDir(prefix);
    made.push(d);
    return d;
  };
}
