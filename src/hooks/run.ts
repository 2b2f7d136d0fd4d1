import { appendFileSync, existsSync, fstatSync, mkdirSync, read, realpathSync, statSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { fileURLToPath } from 'node:url';
import type { Readable, Writable } from 'node:stream';
import { isPostgresStore, loadConfig, openCairn, type Config } from '../config.js';
import { sqliteGeneration } from '../context/cache.js';
import { compactTail } from './compact-tail.js';
import { additionalContextOf, findCompression, forgetGivenContext, injectionOutput, readGivenContext, SNAPSHOT_TAG, withoutRepeats, writeGivenContext, type GeminiCompression } from './gemini.js';
import { isHeadlessEntrypoint } from '../ingest/readers/shared.js';
import { awaitPart, claimRest, parsePartArgs, partsCapacity, splitParts, writeRest, type PartArgs } from './parts.js';
import { packagePath, packageVersion } from '../paths.js';
import type { Cairn } from '../cairn.js';
import { streamLogger } from '../runtime.js';
import type { Logger } from '../types.js';
import {
  DEFAULT_HOOK_SETTINGS,
  parseHookEvent,
  preCompact,
  prepareCompactContext,
  promptSubmit,
  refreshStartupContext,
  sessionStart,
  type CompactStart,
  type SessionStartCache,
  type HookEvent,
  type HookInput,
  type HookOutput,
  type HookSettings,
} from './events.js';

export interface HookIo {
  stdin: Readable & { isTTY?: boolean };
  stdout: Pick<Writable, 'write'>;
  /** Reads the hook's input instead of `stdin` (the CLI entry reads file descriptor 0 directly). */
  readInput?: () => Promise<string>;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Data home from `--home`, when given. */
  home?: string;
  /**
   * Leave the store open when the hook is done, for a process that exits right after. Closing the
   * last connection makes SQLite checkpoint the write-ahead log into the database and fsync it
   * (20–40 ms a hook here); left open, the log stays beside the database (every commit in it is
   * already written) and a later writer checkpoints it once it reaches 1,000 pages.
   * @default false
   */
  leaveOpen?: boolean;
  /**
   * Which part of the session-start context this command prints (`--parts N`, `--part K`): the
   * client caps each hook's text, so several commands print one part each (src/hooks/parts.ts).
   */
  parts?: PartArgs | null;
}

/** Largest hook input read from stdin; Claude Code's are a few KB. */
const MAX_INPUT_BYTES = 4 * 1024 * 1024;
const STDIN_TIMEOUT_MS = 2000;

async function readInput(stdin: HookIo['stdin']): Promise<string> {
  if (stdin.isTTY) return '';
  return new Promise((done) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (): void => {
      clearTimeout(timer);
      stdin.removeAllListeners('data');
      done(Buffer.concat(chunks).toString('utf8'));
    };
    const timer = setTimeout(finish, STDIN_TIMEOUT_MS);
    stdin.on('data', (chunk: Buffer | string) => {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += buf.length;
      if (size <= MAX_INPUT_BYTES) chunks.push(buf);
    });
    stdin.once('end', finish);
    stdin.once('error', finish);
  });
}

/**
 * Read file descriptor 0 to its end with plain `fs.read`, without `process.stdin`: creating that
 * stream loads the stream (and, for a pipe, net) modules, ~5 ms of a hook that runs on every
 * prompt. A terminal or a missing fd 0 reads as ''. Null when fd 0 is non-blocking (the read says
 * EAGAIN) or fails otherwise: then the caller reads `process.stdin` as before. Stops, like
 * {@link readInput}, after {@link STDIN_TIMEOUT_MS} or {@link MAX_INPUT_BYTES}.
 */
export function readFd0(fd = 0, first?: Promise<FirstRead>): Promise<string | null> {
  try {
    if (fstatSync(fd).isCharacterDevice()) return Promise.resolve('');
  } catch {
    return Promise.resolve('');
  }
  return new Promise((done) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (value: string | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      done(value);
    };
    // A read still pending at the timeout is left to the process's exit (the hook exits right after).
    const timer = setTimeout(() => finish(Buffer.concat(chunks).toString('utf8')), STDIN_TIMEOUT_MS);
    const take = (error: Error | null, n: number, buffer: Buffer): void => {
      if (error) return finish(chunks.length === 0 ? null : Buffer.concat(chunks).toString('utf8'));
      if (n === 0) return finish(Buffer.concat(chunks).toString('utf8'));
      size += n;
      if (size <= MAX_INPUT_BYTES) chunks.push(buffer.subarray(0, n));
      next();
    };
    const next = (): void => {
      const buffer = Buffer.allocUnsafe(64 * 1024);
      read(fd, buffer, 0, buffer.length, null, (error, n) => take(error, n, buffer));
    };
    if (first) first.then(({ error, n, buffer }) => take(error, n, buffer), (error: Error) => take(error, 0, Buffer.alloc(0)));
    else next();
  });
}

/**
 * The first read of file descriptor 0, started by bin/cairn-hook.cjs before it loads the hooks
 * bundle: the read waits on a thread of libuv's pool (started for it) while the bundle loads, not
 * after (two round trips through that pool, ~1–10 ms of every hook depending on the load).
 */
export interface FirstRead {
  error: Error | null;
  n: number;
  buffer: Buffer;
}

/** Write `bytes` to file descriptor 1 synchronously (no `process.stdout` stream); how many were written before it could not go on (a full non-blocking pipe). */
function writeFd1(bytes: Buffer): number {
  let at = 0;
  try {
    while (at < bytes.length) at += writeSync(1, bytes, at, bytes.length - at);
  } catch {
    // The rest goes through process.stdout.
  }
  return at;
}

function parseInput(raw: string): HookInput {
  if (raw.trim().length === 0) return {};
  const value: unknown = JSON.parse(raw);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('hook input is not a JSON object');
  return value as HookInput;
}

function fileLogger(dir: string): Logger {
  return streamLogger((line) => {
    try {
      mkdirSync(dir, { recursive: true });
      appendFileSync(join(dir, 'hooks.log'), line);
    } catch {
      // Logging must never break a hook.
    }
  }, 'info');
}

const BIN = packagePath('bin', 'cairn.js');
/** The hook entry (bin/cairn-hook.cjs: no ES module loader, the hooks code cache) for the detached refresh child. */
const HOOK_BIN = packagePath('bin', 'cairn-hook.cjs');

/** The hidden event of the detached child that ingests a transcript and then precomputes the startup context. */
export const REFRESH_EVENT = 'refresh-context';

/**
 * The hidden event of the PreCompact hook's detached child: it gathers the candidate pool of the
 * session's post-compact context while the client compacts (see prepareCompactContext).
 */
export const PREPARE_COMPACT_EVENT = 'prepare-compact';

/**
 * Start, detached, `cairn hook refresh-context`: it runs `cairn ingest PATH` (as the stop hooks
 * always did) and then builds the project's startup context for the next SessionStart
 * (src/context/cache.ts). The agent is never kept waiting.
 */
function ingestDetached(config: Config, cwd: string, transcript: string, env: NodeJS.ProcessEnv, headless: boolean): Promise<void> {
  return spawnDetached(config, REFRESH_EVENT, { cwd, transcript_path: transcript, headless }, env);
}

/** Start `cairn hook EVENT INPUT` detached from this process (its input as an argument, no stdio). */
async function spawnDetached(config: Config, event: string, input: Record<string, unknown>, env: NodeJS.ProcessEnv): Promise<void> {
  // Loaded here, not at the top: only the stop and pre-compact hooks spawn, and node:child_process costs every hook ~8 ms to load.
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [HOOK_BIN, event, JSON.stringify(input)], {
    detached: true,
    stdio: 'ignore',
    env: { ...env, CAIRN_HOME: config.home, CAIRN_HOOK_CHILD: '1' },
  });
  child.unref();
}

/** `cairn ingest PATH` in a child process, waited for (the caller is itself detached from the agent). */
async function ingestInChild(config: Config, transcript: string, env: NodeJS.ProcessEnv, headless: boolean): Promise<void> {
  const { spawnSync } = await import('node:child_process');
  spawnSync(process.execPath, [BIN, '--home', config.home, 'ingest', ...(headless ? ['--headless'] : []), transcript], { stdio: 'ignore', env: { ...env, CAIRN_HOOK_CHILD: '1' } });
}

/** The code that builds contexts, for the cache key: the package version and this module's and the build's file stamps. */
function codeIdentity(config: Config): string {
  const stamp = (path: string): string => {
    try {
      const s = statSync(path);
      return `${s.size}:${s.mtimeMs}`;
    } catch {
      return '-';
    }
  };
  let version = '?';
  try {
    version = packageVersion();
  } catch {
    // No package.json found: the stamps still tell builds apart.
  }
  return `${version}|${stamp(fileURLToPath(import.meta.url))}|${stamp(packagePath('dist'))}|${config.embedder ?? ''}`;
}

/**
 * The precomputed-context settings for a SQLite store, or undefined (another store, or
 * `CAIRN_CONTEXT_CACHE=0`): then session-start always builds its context fresh.
 */
export function startupCache(config: Config, env: NodeJS.ProcessEnv, onLookup?: (outcome: string) => void): SessionStartCache | undefined {
  if (env.CAIRN_CONTEXT_CACHE === '0' || isPostgresStore(config.store)) return undefined;
  const path = config.store.startsWith('sqlite:') ? config.store.slice('sqlite:'.length) : config.store;
  if (path === ':memory:' || path.length === 0) return undefined;
  const dbPath = resolve(path);
  return { home: config.home, generation: () => sqliteGeneration(dbPath), code: codeIdentity(config), ...(onLookup ? { onLookup } : {}) };
}

/**
 * The state key where ingest registers runs that wrote turns and have not distilled them yet
 * (src/history/resume.ts `RUNS_KEY`; repeated here so the hooks do not load the ingest modules,
 * test/hooks checks they agree).
 */
export const INGEST_RUNS_KEY = 'ingest:runs';

/**
 * Whether ingesting `path` now would do nothing: its ingest cursor matches the file's size and
 * mtime (what ingest itself checks first, src/ingest/runner.ts) and no earlier run is waiting to
 * be distilled. Then the hook skips loading the ingest and distill modules (~⅓ of a post-compact
 * session-start at 100K memories); anything else goes through ingest as before.
 */
export async function ingestWouldBeNoop(cairn: Cairn, path: string): Promise<boolean> {
  return (await ingestState(cairn, path))?.noop ?? false;
}

/**
 * What ingesting `path` now would read: nothing (`noop`, see {@link ingestWouldBeNoop}), or
 * `pendingBytes` — the file past its ingest cursor (all of it without one, or when it shrank).
 * Null when the store keeps no cursors or the file cannot be stat'ed.
 */
export async function ingestState(cairn: Cairn, path: string): Promise<{ noop: boolean; pendingBytes: number } | null> {
  const substrate = cairn.deps.store.substrate;
  if (!cairn.deps.store.capabilities.substrate || !substrate) return null;
  let file: string;
  let size: number;
  let mtimeMs: number;
  try {
    file = realpathSync(resolve(path));
    ({ size, mtimeMs } = statSync(file));
  } catch {
    return null;
  }
  const cursor = await substrate.getCursor(file);
  const pendingBytes = cursor === null || cursor.size > size ? size : size - cursor.size;
  if (cursor === null || cursor.size !== size || cursor.mtimeMs !== mtimeMs) return { noop: false, pendingBytes };
  const runs = await cairn.deps.store.getState(INGEST_RUNS_KEY);
  return { noop: runs === null || runs === '', pendingBytes };
}

/**
 * Up to this many new transcript bytes a hook ingests with TurboFan off, as the rest of the hook
 * runs; past it the optimizer is turned on first (a long loop over many megabytes runs slower
 * interpreted). Whole hooks at 100K memories, instructions with it on → off: the compaction
 * summary (two lines) ingested by session-start(compact) ×0.79–0.90, a 3.1 MB transcript ingested
 * whole by pre-compact ×0.90 (docs/BENCHMARKS.md `## hooks`).
 */
export const INGEST_OPTIMIZER_BYTES = 4 * 1024 * 1024;

/** Whether a hook turns TurboFan on before ingesting: more than {@link INGEST_OPTIMIZER_BYTES} to read, or not known how much. */
export function ingestNeedsOptimizer(state: { pendingBytes: number } | null): boolean {
  return state === null || state.pendingBytes > INGEST_OPTIMIZER_BYTES;
}

/**
 * Turn V8's optimizing compiler (TurboFan) off or on for the rest of this process. A hook process
 * lives ~0.1–0.3 s: what TurboFan compiles in that time (on another thread, from a core the agent
 * shares) rarely runs long enough to pay back. Measured at 100K memories, same build with and
 * without (12 interleaved runs, load 5.6 → 6.5): CPU per process prompt 206.5 → 180.1 ms, fresh
 * session-start 314.2 → 258.9, after /compact 352.9 → 288.4. Ingesting more than
 * {@link INGEST_OPTIMIZER_BYTES} of a transcript (a long loop over megabytes) turns it back on
 * first: interpreted, such a loop runs many times slower.
 */
export function hookOptimizer(on: boolean): void {
  try {
    setFlagsFromString(on ? '--turbofan' : '--no-turbofan');
  } catch {
    // A runtime without the flag: it keeps its own default.
  }
}

/**
 * Ingest the hook's transcript when it has anything new. Returns whether the store's memories may
 * have changed: the ingest distilled, merged, superseded or queued anything, or failed part way
 * (turns and session facts alone do not count).
 */
export async function ingestTranscript(cairn: Cairn, input: HookInput, logger: Logger, headless: boolean): Promise<boolean> {
  const path = input.transcript_path;
  if (typeof path !== 'string' || !existsSync(path)) return false;
  try {
    const state = await ingestState(cairn, path);
    if (state?.noop) return false;
    if (ingestNeedsOptimizer(state)) hookOptimizer(true);
    const summary = await cairn.ingest([path], { headless });
    logger.info('ingested', { path, turns: summary.turns, seconds: summary.seconds });
    const d = summary.distilled;
    return d !== undefined && (d.added + d.merged + d.superseded + d.continuations + d.queued > 0 || d.errors.length > 0);
  } catch (error) {
    // Context still comes back from what is already stored.
    logger.error('ingest failed', { path, error: error instanceof Error ? error.message : String(error) });
    return true;
  }
}

/**
 * The first part's command: its session-start text cut into parts (src/hooks/parts.ts), the later
 * ones left for the other commands (none: they print nothing), the first one printed. Parts past
 * `parts.parts` (the text was over their room even after packing again) are left out.
 */
function firstPart(output: HookOutput, parts: PartArgs, home: string, session: string): HookOutput {
  const text = additionalContextOf(output);
  const cut = text === null ? [] : splitParts(text);
  writeRest(home, session, cut.slice(1, parts.parts));
  if (output.kind !== 'json' || cut.length <= 1) return output;
  return { kind: 'json', value: { ...output.value, hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: cut[0] } } };
}

/** What bin/cairn-hook.cjs did with V8's code cache for this process (hit, miss, rejected, off), for the hook log. */
function codeCacheOutcome(): { codeCache?: string } {
  const outcome = (globalThis as { __cairnHookCodeCache?: unknown }).__cairnHookCodeCache;
  return typeof outcome === 'string' ? { codeCache: outcome } : {};
}

/**
 * Run one Claude Code hook as a short process. Whatever happens, the agent is not blocked:
 * errors are logged to `<home>/logs/hooks.log` and the hook exits 0 with nothing injected.
 */
export async function runHook(eventName: string, io: HookIo, settings: HookSettings = DEFAULT_HOOK_SETTINGS): Promise<number> {
  let logger: Logger = fileLogger(join(io.home ?? io.env.CAIRN_HOME ?? join(io.env.HOME ?? '.', '.cairn'), 'logs'));
  let cairn: Cairn | null = null;
  const started = Date.now();
  /** The first part's command, until it has left the rest: on a failure it leaves none, so the others stop waiting. */
  let owesRest: { home: string; session: string } | null = null;
  try {
    const refresh = eventName === REFRESH_EVENT;
    const prepareCompact = eventName === PREPARE_COMPACT_EVENT;
    const event: HookEvent | null = refresh || prepareCompact ? null : parseHookEvent(eventName);
    if (!event && !refresh && !prepareCompact) throw new Error(`unknown hook event "${eventName}"`);
    const raw = await (io.readInput ? io.readInput() : readInput(io.stdin));
    // Gemini CLI's BeforeModel runs before every model call: without a compression summary in the request there is nothing to do.
    if (event === 'before-model' && !raw.includes(SNAPSHOT_TAG)) return 0;
    let input = parseInput(raw);
    const config = loadConfig({ home: io.home, env: io.env });
    logger = fileLogger(config.logDir);
    // The session's own cwd names the project even when the folder is gone (ingest resolves the
    // transcript's cwd the same way), so context and ingested memories agree.
    const cwd = typeof input.cwd === 'string' && input.cwd.length > 0 ? input.cwd : io.cwd;
    const session = typeof input.session_id === 'string' ? input.session_id : null;
    // `claude -p` / the Agent SDK run hooks too; Claude Code says how it was started in its env.
    const headless = isHeadlessEntrypoint(io.env.CLAUDE_CODE_ENTRYPOINT);
    const parts = event === 'session-start' ? (io.parts ?? null) : null;
    if (parts && parts.part > 1) {
      // A later part: only what the first part's command left for it (no store, no ingest).
      const text = session ? await awaitPart(config.home, session, parts.part, started) : null;
      if (text !== null) {
        // In order, mostly: the client joins the parts as their commands finish.
        await new Promise((done) => setTimeout(done, 30 * (parts.part - 1)));
        io.stdout.write(`${JSON.stringify({ hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: text } })}\n`);
      }
      logger.info('hook', { event, session, source: input.source, part: `${parts.part}/${parts.parts}`, output: text === null ? 'none' : 'json', ms: Date.now() - started });
      return 0;
    }
    if (parts) settings = { ...settings, maxChars: partsCapacity(parts.parts) };
    if (parts && session) {
      owesRest = { home: config.home, session };
      claimRest(config.home, session);
    }

    if (refresh) {
      // The detached child of a stop hook: ingest (in its own process, as `cairn ingest`), then
      // precompute — that at low priority, as the background fill: the agent's own work comes first.
      if (typeof input.transcript_path === 'string' && existsSync(input.transcript_path)) await ingestInChild(config, input.transcript_path, io.env, input.headless === true);
      try {
        (await import('node:os')).setPriority(10);
      } catch {
        // Not permitted here: run at normal priority.
      }
      const cache = startupCache(config, io.env);
      if (cache) {
        cairn = (await openCairn(config, { cwd, actor: 'hook', session: null, logger })).cairn;
        const written = await refreshStartupContext(cairn, settings, cache);
        logger.info('hook', { event: REFRESH_EVENT, cwd, cached: written, ms: Date.now() - started });
      }
      return 0;
    }
    if (prepareCompact) {
      // The detached child of a pre-compact hook: the post-compact context's pool, while the client compacts.
      const cache = startupCache(config, io.env);
      if (cache && session) {
        cairn = (await openCairn(config, { cwd, actor: 'hook', session, logger })).cairn;
        const written = await prepareCompactContext(cairn, settings, cache, session);
        logger.info('hook', { event: PREPARE_COMPACT_EVENT, session, cached: written, ms: Date.now() - started });
      }
      return 0;
    }
    if (event === null) return 0;
    if (event === 'stop' || event === 'session-end' || event === 'subagent-stop') {
      if (event === 'session-end' && session) forgetGivenContext(config.home, session);
      if (typeof input.transcript_path === 'string' && existsSync(input.transcript_path)) {
        if (io.env.CAIRN_HOOK_INLINE === '1') {
          cairn = (await openCairn(config, { cwd, actor: 'hook', session, logger })).cairn;
          await ingestTranscript(cairn, input, logger, headless);
          const cache = startupCache(config, io.env);
          if (cache) await refreshStartupContext(cairn, settings, cache);
        } else await ingestDetached(config, cwd, input.transcript_path, io.env, headless);
      }
      return 0;
    }

    let compression: GeminiCompression | null = null;
    if (event === 'before-model') {
      compression = findCompression(input);
      if (!compression || !session) return 0;
      const given = readGivenContext(config.home, session, compression.hash);
      if (given !== undefined) {
        // The window after this snapshot keeps the text given at its first call.
        if (given !== null) io.stdout.write(`${JSON.stringify(injectionOutput(compression, given).value)}\n`);
        logger.info('hook', { event, session, output: given === null ? 'none' : 'json', given: 'cached', ms: Date.now() - started });
        return 0;
      }
      // The first call after Gemini compressed: what SessionStart(compact) gives Claude Code and Codex.
      input = { ...input, source: 'compact' };
    }
    cairn = (await openCairn(config, { cwd, actor: 'hook', session, logger })).cairn;
    let output: HookOutput;
    let cacheOutcome: string | undefined;
    /** The transcript whose new lines this hook read without ingesting them: ingested after the output, as the stop hooks do. */
    let deferredIngest: string | null = null;
    /** Why SessionStart(compact) did not leave the transcript's ingest to a detached child (src/hooks/compact-tail.ts), for the hook log. */
    let ingestFirst: string | null = null;
    /** SessionStart(compact) found nothing ingest would store past the cursor: left to the next ingest. */
    let ingestNext = false;
    switch (event) {
      case 'before-model':
      case 'session-start': {
        const cache = startupCache(config, io.env, (outcome) => (cacheOutcome = outcome));
        // After /compact: the store as it was before this hook's ingest (of the compaction summary), for the pool prepared at PreCompact.
        const before = input.source === 'compact' && cache ? cache.generation() : null;
        // After /compact, when ingest would store nothing from what the transcript holds past its
        // cursor (PreCompact ingested the rest) but the compaction's own turns: built with them,
        // ingested after, detached. Else ingested first (when anything is new), the reason in the hook log.
        const tail = input.source === 'compact' && session && typeof input.transcript_path === 'string' && io.env.CAIRN_COMPACT_DEFER !== '0' ? await compactTail(cairn, input.transcript_path, session) : null;
        if (typeof tail === 'string') ingestFirst = tail;
        else if (tail) {
          // With no turn among the new lines (Claude Code 2.1.197 writes the compaction only after
          // this hook), ingest would store nothing now: the next Stop / SessionEnd ingest reads them
          // with what the client writes next, and no child is spawned (~12% of this hook's instructions).
          if (tail.turns.length > 0) deferredIngest = input.transcript_path as string;
          else ingestNext = true;
          output = await sessionStart(cairn, input, settings, cache, { generation: before, pendingTurns: tail.turns });
          break;
        }
        const wroteMemories = await ingestTranscript(cairn, input, logger, headless);
        const compactStart: CompactStart | undefined = input.source === 'compact' ? (wroteMemories ? { generation: null, reason: 'ingest wrote memories' } : { generation: before }) : undefined;
        output = await sessionStart(cairn, input, settings, cache, compactStart);
        break;
      }
      case 'pre-compact':
        await ingestTranscript(cairn, input, logger, headless);
        output = await preCompact(cairn, input, settings);
        break;
      case 'prompt':
        output = await promptSubmit(cairn, input, settings);
        break;
    }
    if (compression && session) {
      const built = additionalContextOf(output);
      const context = built === null ? null : withoutRepeats(built, compression);
      writeGivenContext(config.home, session, compression.hash, context);
      output = context === null ? { kind: 'none' } : injectionOutput(compression, context);
    }
    if (parts && session) {
      output = firstPart(output, parts, config.home, session);
      owesRest = null;
    }
    if (output.kind === 'json') io.stdout.write(`${JSON.stringify(output.value)}\n`);
    else if (output.kind === 'text') io.stdout.write(output.value);
    if (deferredIngest !== null) {
      if (io.env.CAIRN_HOOK_INLINE === '1') {
        await ingestTranscript(cairn, input, logger, headless);
        const cache = startupCache(config, io.env);
        if (cache) await refreshStartupContext(cairn, settings, cache);
      } else await ingestDetached(config, cwd, deferredIngest, io.env, headless);
    }
    // While the client compacts, a detached child gathers what the SessionStart after it needs.
    const compactCache = event === 'pre-compact' && session && io.env.CAIRN_HOOK_CHILD !== '1' ? startupCache(config, io.env) : undefined;
    if (compactCache && session) {
      if (io.env.CAIRN_HOOK_INLINE === '1') await prepareCompactContext(cairn, settings, compactCache, session);
      else await spawnDetached(config, PREPARE_COMPACT_EVENT, { cwd, session_id: session }, io.env);
    }
    logger.info('hook', { event, session, source: input.source, output: output.kind, ...(cacheOutcome ? { cache: cacheOutcome } : {}), ...(deferredIngest !== null ? { ingest: 'deferred' } : ingestNext ? { ingest: 'next' } : ingestFirst !== null ? { tail: ingestFirst } : {}), ...codeCacheOutcome(), ms: Date.now() - started });
    // The path this hook took, for bin/cairn-hook.cjs's code cache (it holds the code of each path it has seen).
    (globalThis as { __cairnHookPath?: string }).__cairnHookPath = `${String(input.source ?? '')}/${cacheOutcome?.split(':')[0] ?? ''}/${output.kind}`;
    return 0;
  } catch (error) {
    logger.error('hook failed', { event: eventName, error: error instanceof Error ? error.message : String(error) });
    if (owesRest) {
      try {
        writeRest(owesRest.home, owesRest.session, []);
      } catch {
        // The others wait out their time and print nothing.
      }
    }
    return 0;
  } finally {
    if (!io.leaveOpen) await cairn?.close().catch(() => {});
  }
}

/**
 * Entry for `node bin/cairn-hook.cjs EVENT` and `node bin/cairn.js hook EVENT` (through the hooks bundle, without the rest of the CLI, for speed). Once the
 * output is flushed the process exits at once, with the store left open (see {@link HookIo.leaveOpen}):
 * a normal exit would close it, and pay SQLite's checkpoint on close, on every prompt.
 */
export async function hookMain(argv: string[], exit: (code: number) => void = (code) => process.exit(code), options: { optimizerSet?: boolean; firstRead?: Promise<FirstRead> } = {}): Promise<number> {
  // The detached refresh child runs ingest and a whole precompute: it keeps the optimizer.
  // bin/cairn-hook.cjs has set it already (`optimizerSet`), without loading node:v8 (see there).
  if (argv[0] !== REFRESH_EVENT && options.optimizerSet !== true) hookOptimizer(false);
  // fd 0 and fd 1 directly; process.stdin/stdout (streams) only when that cannot be done.
  let streamed = false;
  const stdout = {
    write(text: string): boolean {
      const bytes = Buffer.from(text, 'utf8');
      const written = streamed ? 0 : writeFd1(bytes);
      if (written === bytes.length) return true;
      // The reader may have left (EPIPE): that must not throw out of the hook.
      if (!streamed) process.stdout.on('error', () => {});
      streamed = true;
      return process.stdout.write(bytes.subarray(written));
    },
  } as Pick<Writable, 'write'>;
  const code = await runHook(argv[0] ?? '', {
    // A getter: process.stdin is created only if fd 0 cannot be read directly.
    get stdin() {
      return process.stdin;
    },
    stdout,
    // The detached children get their input as an argument (their stdin is /dev/null).
    readInput: (argv[0] === REFRESH_EVENT || argv[0] === PREPARE_COMPACT_EVENT) && argv[1] !== undefined ? async () => argv[1] as string : async () => (await readFd0(0, options.firstRead)) ?? readInput(process.stdin),
    env: process.env,
    cwd: process.cwd(),
    leaveOpen: true,
    parts: parsePartArgs(argv.slice(1)),
  });
  if (streamed) await new Promise<void>((done) => process.stdout.write('', () => done()));
  exit(code);
  return code;
}
