/**
 * V8's tiering while transcripts are read: a lower inlining budget, and baseline code from the
 * first call.
 *
 * Why the inlining budget: ingest's hot functions (the tokenizer, the secret scanners, the fact
 * scanners) are large, and TurboFan inlines their callees up to a cumulative 920 bytes of bytecode
 * by default. A graph that large takes 0.1–0.4 s to optimize, and every reader thread (and the
 * writing thread) optimizes its own copy, again after each deopt: over ../shared's 21 MB of
 * transcripts the compiler threads used about a third of the run's CPU (docs/RELIABILITY.md,
 * ingest section). With the budget at {@link INGEST_INLINING_BUDGET} one cold read of those files
 * costs about a quarter less CPU and a warm one the same. Small functions (V8's
 * `--max-inlined-bytecode-size-small`) are still inlined.
 *
 * Why baseline code first (`--always-sparkplug`): a reader worker reads its share of the files
 * once, so much of its time is spent before TurboFan has optimized the scanners, in V8's
 * interpreter — by default a function gets Sparkplug's baseline code (compiled in microseconds,
 * faster than interpreting) only after it has run a while. Compiled at once, the character loops
 * of the tokenizer and the scanners run as baseline code until they are optimized
 * (docs/BENCHMARKS.md, ingest notes).
 *
 * V8 flags belong to the process, not the thread: they are set while at least one ingest run is
 * going on and put back to V8's defaults when the last one ends. A flag the user set on the command
 * line (`node --max-inlined-bytecode-size-cumulative=N`, `node --no-always-sparkplug`) is left
 * alone. They change when code is compiled and how, never what it computes.
 */
import { setFlagsFromString } from 'node:v8';

/** Bytes of bytecode TurboFan may inline into one function while ingest runs. */
export const INGEST_INLINING_BUDGET = 200;

/** A V8 flag set while ingest runs: its name, the setting for ingest and V8's own default (Node 18–22). */
interface IngestFlag {
  name: string;
  ingest: string;
  standard: string;
}

/** The flags {@link tuneJitForIngest} sets, in order. */
export const INGEST_FLAGS: readonly IngestFlag[] = [
  {
    name: 'max-inlined-bytecode-size-cumulative',
    ingest: `--max-inlined-bytecode-size-cumulative=${INGEST_INLINING_BUDGET}`,
    standard: '--max-inlined-bytecode-size-cumulative=920',
  },
  { name: 'always-sparkplug', ingest: '--always-sparkplug', standard: '--no-always-sparkplug' },
];

let runs = 0;

/** Whether the process was started with its own setting of `flag` (`--name…` or `--no-name`, `_` or `-`). */
function userSet(flag: IngestFlag, execArgv: readonly string[]): boolean {
  return execArgv.some((arg) => {
    const normal = arg.replace(/_/g, '-');
    return normal.startsWith(`--${flag.name}`) || normal.startsWith(`--no-${flag.name}`);
  });
}

function setFlag(flag: string): void {
  try {
    setFlagsFromString(flag);
  } catch {
    // A runtime without the flag keeps its own default.
  }
}

/**
 * Set V8's flags for an ingest run ({@link INGEST_FLAGS}); call the returned function when the
 * run ends (idempotent). Nested or concurrent runs share the setting until the last one ends.
 * `set` applies one flag (tests pass a recorder; by default `v8.setFlagsFromString`).
 * @example
 * const restore = tuneJitForIngest();
 * try { await readEverything(); } finally { restore(); }
 */
export function tuneJitForIngest(execArgv: readonly string[] = process.execArgv, set: (flag: string) => void = setFlag): () => void {
  const flags = INGEST_FLAGS.filter((flag) => !userSet(flag, execArgv));
  if (runs++ === 0) for (const flag of flags) set(flag.ingest);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    if (--runs === 0) for (const flag of flags) set(flag.standard);
  };
}
