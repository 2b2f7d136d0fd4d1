/**
 * A small seeded PRNG (sfc32, seeded through splitmix32) and the draws the corpus generator
 * needs. Deterministic across machines and Node versions: only 32-bit integer arithmetic.
 */

function splitmix32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/** A seeded random source with the draws used by the generators. */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
  /** Uniform integer in [min, max]. */
  range(min: number, max: number): number;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** An independent stream derived from this one (so adding draws here does not shift it). */
  fork(salt: number): Rng;
}

/** sfc32 seeded from `seed` (any integer). */
export function createRng(seed: number): Rng {
  const init = splitmix32(seed);
  let a = init();
  let b = init();
  let c = init();
  let d = init();
  const u32 = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) >>> 0;
    return t;
  };
  for (let i = 0; i < 12; i++) u32();
  const next = (): number => u32() / 4_294_967_296;
  const rng: Rng = {
    next,
    int: (n) => Math.floor(next() * n),
    range: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick<T>(items: readonly T[]): T {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[Math.floor(next() * items.length)] as T;
    },
    fork: (salt) => createRng((u32() ^ Math.imul(salt, 0x9e3779b1)) >>> 0),
  };
  return rng;
}

/** Draws from a fixed discrete distribution in O(log n). */
export class Weighted<T> {
  private readonly values: T[];
  private readonly cumulative: number[];

  constructor(entries: ReadonlyArray<readonly [T, number]>) {
    this.values = entries.map(([value]) => value);
    let total = 0;
    this.cumulative = entries.map(([, weight]) => (total += weight));
  }

  draw(rng: Rng): T {
    const total = this.cumulative[this.cumulative.length - 1] ?? 0;
    const x = rng.next() * total;
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.cumulative[mid] as number) > x) hi = mid;
      else lo = mid + 1;
    }
    return this.values[lo] as T;
  }
}

/** Zipf-like weights (1 / rank^s) for `items`, most frequent first. */
export function zipf<T>(items: readonly T[], s = 1): Weighted<T> {
  return new Weighted(items.map((item, i) => [item, 1 / Math.pow(i + 1, s)] as const));
}
