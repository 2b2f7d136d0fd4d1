/**
 * A store for read tokens: every change is FORBIDDEN, except the bookkeeping a read does on its
 * own (access counters, retrieval state), which is skipped.
 */
import { CairnError } from '../errors.js';
import type { Store, SubstrateStore } from '../types.js';

const WRITES: ReadonlySet<PropertyKey> = new Set([
  'writeMemory',
  'patchMemory',
  'appendEvents',
  'createSnapshot',
  'putVectors',
  'putSignatures',
  'clearVectors',
  'updateState',
  'queueReview',
  'resolveReview',
  'vacuum',
  'writeSubstrate',
]);
/** Side effects of reading: recall counts accesses, surfaces keep small state. Skipped, not refused. */
const SKIPPED: ReadonlySet<PropertyKey> = new Set(['touch', 'setState']);

function guard<T extends object>(target: T): T {
  return new Proxy(target, {
    get(object, property) {
      if (WRITES.has(property)) {
        return async () => {
          throw new CairnError('FORBIDDEN', 'this token is read-only; a write token is needed to change memories');
        };
      }
      if (SKIPPED.has(property)) return async () => {};
      // A model switch writes vectors: not through a read token.
      if (property === 'vectorStaging') return undefined;
      if (property === 'substrate') {
        const substrate = Reflect.get(object, property, object) as SubstrateStore | undefined;
        return substrate ? guard(substrate) : undefined;
      }
      const value: unknown = Reflect.get(object, property, object);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(object) : value;
    },
  });
}

/** `store` with every write refused (FORBIDDEN) and read-side bookkeeping skipped. */
export function readOnlyStore(store: Store): Store {
  return guard(store);
}
