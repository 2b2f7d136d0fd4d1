/**
 * The store's write boundary (SPEC §7): {@link redactingStore} wraps a store so every method that
 * writes text (write-methods.ts) sanitizes its arguments with `sanitizeDeep` (guard.ts) first.
 * The redaction code is loaded on the first write, not with this module: a hook that only reads
 * never evaluates the redaction rules (docs/BENCHMARKS.md, hooks notes). Every write method is
 * async, so the first one waits for the load and later ones sanitize synchronously, as before.
 */
import type { Store, SubstrateStore } from '../types.js';
import { STORE_METHODS, SUBSTRATE_METHODS, type Treatment } from './write-methods.js';

type Sanitizer = <T>(value: T) => T;

let sanitizer: Sanitizer | null = null;
let loading: Promise<Sanitizer> | null = null;

/** guard.ts's `sanitizeDeep`, loaded once. */
function loadSanitizer(): Promise<Sanitizer> {
  return (loading ??= import('./guard.js').then((guard) => (sanitizer = guard.sanitizeDeep)));
}

const GUARDED = Symbol('cairn.redacting');

function wrap<T extends object>(target: T, table: Record<string, Treatment>, nested: (property: PropertyKey, value: unknown) => unknown): T {
  return new Proxy(target, {
    get(object, property) {
      if (property === GUARDED) return true;
      const value: unknown = Reflect.get(object, property, object);
      if (typeof value !== 'function') return nested(property, value);
      const fn = value as (...args: unknown[]) => unknown;
      if (typeof property === 'string' && table[property] === 'write') {
        return (...args: unknown[]) => {
          const clean = sanitizer;
          if (clean !== null) return fn.apply(object, args.map((arg) => clean(arg)));
          return loadSanitizer().then((loaded) => fn.apply(object, args.map((arg) => loaded(arg))));
        };
      }
      return fn.bind(object);
    },
  });
}

/** `store` with every text it is given sanitized first. Wrapping twice is a no-op. */
export function redactingStore<S extends Store>(store: S): S {
  if ((store as unknown as Record<symbol, unknown>)[GUARDED] === true) return store;
  const substrates = new WeakMap<SubstrateStore, SubstrateStore>();
  return wrap(store, STORE_METHODS, (property, value) => {
    if (property !== 'substrate' || value === undefined || value === null) return value;
    const substrate = value as SubstrateStore;
    let guarded = substrates.get(substrate);
    if (guarded === undefined) substrates.set(substrate, (guarded = wrap(substrate, SUBSTRATE_METHODS, (_p, v) => v)));
    return guarded;
  });
}
