import { createRequire } from 'node:module';
import type { Clock, IdSource, Logger } from './types.js';

const requireModule = createRequire(import.meta.url);
let crypto: typeof import('node:crypto') | null = null;

/**
 * `node:crypto`, loaded on the first call. Importing it costs a process ~4 ms at start (OpenSSL's
 * bindings and a dozen internal modules); the hooks run as a fresh process on every prompt and
 * session start and most never hash or draw an id, so modules on their path take it from here.
 */
export function nodeCrypto(): typeof import('node:crypto') {
  crypto ??= requireModule('node:crypto') as typeof import('node:crypto');
  return crypto;
}

/** sha256 of `data`, hex (node:crypto loaded on first use, see {@link nodeCrypto}). */
export function sha256Hex(data: string | Uint8Array): string {
  return nodeCrypto().createHash('sha256').update(data).digest('hex');
}

/** Whether process `pid` is alive on this machine (signal 0; EPERM: it exists but belongs to someone else). */
export function processAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Wall-clock time. */
export const systemClock: Clock = { now: () => Date.now() };

/** Monotonic ULIDs: sortable by creation time, unique within a process even in the same millisecond. */
export function ulidSource(): IdSource {
  // Made on the first id: `ulid` loads node:crypto, which most hooks never need (see nodeCrypto).
  let next: ((at?: number) => string) | null = null;
  return { next: (at?: number) => (next ??= (requireModule('ulid') as typeof import('ulid')).monotonicFactory())(at) };
}

/** A logger that drops everything (the library default: library code never writes to stdout). */
export const silentLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};

/** A logger writing one JSON line per entry to a stream (stderr or a log file), at or above `level`. */
export function streamLogger(
  write: (line: string) => void,
  level: 'debug' | 'info' | 'warn' | 'error' = 'warn',
): Logger {
  const order = { debug: 0, info: 1, warn: 2, error: 3 } as const;
  const at =
    (name: keyof typeof order) =>
    (message: string, data?: Record<string, unknown>): void => {
      if (order[name] < order[level]) return;
      write(`${JSON.stringify({ t: new Date().toISOString(), level: name, message, ...data })}\n`);
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
