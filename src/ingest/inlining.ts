/**
 * V8's inlining budget while transcripts are read.
 *
 * Why: ingest's hot functions (the tokenizer, the secret scanners, the fact scanners) are large,
 * and TurboFan inlines their callees up to a cumulative 920 bytes of bytecode by default. A
 * graph that large takes 0.1–0.4 s to optimize, and every reader thread (and the writing thread)
 * optimizes its own copy, again after each deopt: over ../shared's 21 MB of transcripts the
 * compiler threads used about a third of the run's CPU (docs/RELIABILITY.md, ingest section).
 * With the budget at {@link INGEST_INLINING_BUDGET} one cold read of those files costs about a
 * quarter less CPU and a warm one the same. Small functions (V8's
 * `--max-inlined-bytecode-size-small`) are still inlined.
 *
 * V8 flags belong to the process, not the thread: the budget is lowered while at least one
 * ingest run is going on and put back to V8's default when the last one ends. A budget the user
 * set on the command line (`node --max-inlined-bytecode-size-cumulative=N`) is left alone.
 * It changes when code is optimized and how, never what it computes.
 */
import { setFlagsFromString } from 'node:v8';

/** Bytes of bytecode TurboFan may inline into one function while ingest runs. */
export const INGEST_INLINING_BUDGET = 200;
/** V8's own default (Node 18–22). */
const V8_DEFAULT_BUDGET = 920;
const FLAG = 'max-inlined-bytecode-size-cumulative';

let runs = 0;

/** Whether the process was started with its own budget (then it is never changed here). */
function userSetBudget(execArgv: readonly string[]): boolean {
  return execArgv.some((arg) => arg.replace(/_/g, '-').startsWith(`--${FLAG}`));
}

function setBudget(bytes: number): void {
  try {
    setFlagsFromString(`--${FLAG}=${bytes}`);
  } catch {
    // A runtime without the flag keeps its own default.
  }
}

/**
 * Lower V8's inlining budget for an ingest run; call the returned function when the run ends
 * (idempotent). Nested or concurrent runs share the lowered budget until the last one ends.
 * `set` applies a budget (tests pass a recorder; by default `v8.setFlagsFromString`).
 * @example
 * const restore = limitInliningForIngest();
 * try { await readEverything(); } finally { restore(); }
 */
export function limitInliningForIngest(execArgv: readonly string[] = process.execArgv, set: (bytes: number) => void = setBudget): () => void {
  if (userSetBudget(execArgv)) return () => {};
  if (runs++ === 0) set(INGEST_INLINING_BUDGET);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    if (--runs === 0) set(V8_DEFAULT_BUDGET);
  };
}
