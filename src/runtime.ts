import { monotonicFactory } from 'ulid';
import type { Clock, IdSource, Logger } from './types.js';

/** Wall-clock time. */
export const systemClock: Clock = { now: () => Date.now() };

/** Monotonic ULIDs: sortable by creation time, unique within a process even in the same millisecond. */
export function ulidSource(): IdSource {
  const next = monotonicFactory();
  return { next: (at?: number) => next(at) };
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
