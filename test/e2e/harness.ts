import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * Shared pieces of the end-to-end tests with the real clients: where the clients are, a throwaway
 * HOME per run (the real ~/.claude and ~/.codex are never touched), cairn's CLI, and a client run
 * whose environment holds only what the test gives it.
 */

/** The cairn under test: this checkout, or another built one (`CAIRN_E2E_ROOT`, to check old code). */
export const ROOT = resolve(process.env.CAIRN_E2E_ROOT ?? join(import.meta.dirname, '..', '..'));
export const CAIRN_BIN = join(ROOT, 'bin', 'cairn.js');

/** Where .ci/run installs the clients from the npm registry (`npm install --prefix DIR …`). */
export const CLIENTS_DIR = resolve(process.env.CAIRN_E2E_CLIENTS ?? join(homedir(), '.cache', 'cairn-e2e'));

function client(name: string): string | null {
  const bin = join(CLIENTS_DIR, 'node_modules', '.bin', name);
  return existsSync(bin) ? bin : null;
}
export const CLAUDE = client('claude');
export const CODEX = client('codex');

/** Why a client's tests are skipped, printed so a skip is never silent. */
export function skipReason(name: string, bin: string | null): string | null {
  if (!existsSync(join(ROOT, 'dist', 'cli', 'main.js'))) return `cairn is not built in ${ROOT} (npm run build)`;
  if (bin === null) return `${name} is not installed in ${CLIENTS_DIR} (.ci/run installs it: npm install --prefix ${CLIENTS_DIR} @anthropic-ai/claude-code @openai/codex)`;
  return null;
}

export interface Sandbox {
  dir: string;
  home: string;
  cairnHome: string;
  project: string;
  /** A folder put first on PATH (e.g. for a `cairn` bin as `npm install -g` would make). */
  bin: string;
  cleanup(): void;
}

/** A temp HOME with a git project in it. */
export function sandbox(prefix: string): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const home = join(dir, 'home');
  const project = join(dir, 'project');
  const bin = join(dir, 'bin');
  // CAIRN_HOME names the store folder explicitly, so it must exist (cairn refuses a missing one).
  const cairnHome = join(home, '.cairn');
  for (const d of [home, cairnHome, project, bin]) mkdirSync(d, { recursive: true });
  execFileSync('git', ['init', '-q', project]);
  return { dir, home, cairnHome, project, bin, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Put this checkout's `cairn` bin on the sandbox PATH, as `npm install -g cairn-memory` would. */
export function linkCairnBin(box: Sandbox): void {
  symlinkSync(CAIRN_BIN, join(box.bin, 'cairn'));
}

/** PATH without any node_modules/.bin (npm and npx put this checkout's own `cairn` there). */
function systemPath(): string[] {
  return (process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin').split(':').filter((dir) => dir.length > 0 && !dir.includes('node_modules'));
}

/** The environment a client runs with: nothing of the developer's own, no network but the fake model. */
export function baseEnv(box: Sandbox, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: [box.bin, ...systemPath()].join(':'),
    HOME: box.home,
    CAIRN_HOME: box.cairnHome,
    // Stop/SessionEnd hooks ingest in-process instead of leaving a detached child behind.
    CAIRN_HOOK_INLINE: '1',
    LANG: 'C.UTF-8',
    ...extra,
  };
}

/** Run cairn's CLI (the built bin) in the sandbox. */
export function cairn(box: Sandbox, args: string[], env: Record<string, string> = {}): string {
  return execFileSync(process.execPath, [CAIRN_BIN, ...args], { cwd: box.project, env: baseEnv(box, env), encoding: 'utf8' });
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run a client to completion without blocking the event loop (the fake model answers in-process). */
export function run(bin: string, args: string[], options: { cwd: string; env: Record<string, string>; timeoutMs?: number }): Promise<RunResult> {
  return new Promise((done, fail) => {
    const child = spawn(bin, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

/** How often `needle` occurs in `haystack`. */
export function occurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) count++;
  return count;
}

/** Keys of recall's scoring internals that the model must never be handed. */
export const SCORING_INTERNALS = ['"bm25"', '"bm25Rank"', '"rrf"', '"recency"', '"recentlyRecalledPenalty"', '"scopeFactor"', '"tagBoost"', '"halfLifeDays"'];
