/**
 * Explicit interleaving of two writers on one database, without sleeps: writer A's store stops
 * before its `step`-th state call (read or write), writer B runs a whole operation meanwhile,
 * then A goes on. Trying every step puts B's operation at every point inside A's.
 */
import type { Store } from '../../src/types.js';

const STATE_CALLS: ReadonlySet<PropertyKey> = new Set(['getState', 'setState', 'updateState']);

/** `store` that pauses before its `step`-th state call (1-based) until `resume()`. */
export function pausingStore(store: Store, step: number): { store: Store; paused: Promise<'paused'>; resume(): void } {
  let calls = 0;
  let reached!: (value: 'paused') => void;
  let resume!: () => void;
  const paused = new Promise<'paused'>((done) => (reached = done));
  const resumed = new Promise<void>((done) => (resume = done));
  const proxy = new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const method = (value as (...args: unknown[]) => unknown).bind(target);
      if (!STATE_CALLS.has(property)) return method;
      return async (...args: unknown[]) => {
        calls += 1;
        if (calls === step) {
          reached('paused');
          await resumed;
        }
        return method(...args);
      };
    },
  });
  return { store: proxy, paused, resume };
}

export interface Interleaving {
  /** Two stores on one fresh database (two connections, as two processes would have). */
  open(): Promise<[Store, Store]>;
  /** Writer A's operation, on its pausing store. */
  a(store: Store): Promise<unknown>;
  /** Writer B's operation, run whole while A is paused. */
  b(store: Store): Promise<unknown>;
  /** What must hold once both are done; `step` says where B ran. */
  check(a: Store, b: Store, step: number): Promise<void>;
}

/**
 * For step = 1, 2, …, on a fresh database each time: run `a` pausing before its `step`-th state
 * call, `b` whole meanwhile, then `check`. Stops once `a` finishes without reaching the step;
 * returns how many steps were interleaved.
 */
export async function everyInterleaving(run: Interleaving, maxSteps = 50): Promise<number> {
  for (let step = 1; step <= maxSteps; step++) {
    const [storeA, storeB] = await run.open();
    try {
      const pausing = pausingStore(storeA, step);
      const runA = run.a(pausing.store);
      const first = await Promise.race([pausing.paused, runA.then(() => 'finished' as const)]);
      if (first === 'finished') return step - 1;
      await run.b(storeB);
      pausing.resume();
      await runA;
      await run.check(storeA, storeB, step);
    } finally {
      await storeA.close();
      await storeB.close();
    }
  }
  throw new Error(`writer A made more than ${maxSteps} state calls`);
}
