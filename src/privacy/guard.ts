/**
 * The one redaction pass at the store's write boundary (SPEC §7): every string a write carries —
 * memory text, tags, meta (keys and values), file paths, provenance, event data (forget reasons),
 * snapshot labels, review items, session titles, turns and their tool input — goes through
 * {@link sanitize} before it reaches the store. `createCairn` wraps its store with
 * `redactingStore` (boundary.ts, which loads this module on the first write), so every surface
 * (CLI, MCP, HTTP, hooks, import, ingest, distil, the memory-tool backend) writes through it.
 *
 * Bypassing it is a compile error: {@link STORE_METHODS} and {@link SUBSTRATE_METHODS} must name
 * every method of `Store` and `SubstrateStore` and say whether it writes text.
 *
 * A record already sanitized by this ruleset is passed through unscanned when it carries a seal
 * ({@link sealSanitized}): a module-private `WeakSet` of object identities, so no text, field or
 * marker in the data can forge one, and sealed records are frozen so nothing changes after the
 * scan. Ingest seals the turns and facts its readers sanitized; everything else is scanned here.
 */
import { isPlaceholderValue, secretNameKind } from './assignment.js';
import { cannotHoldSecret } from './inert.js';
import { sanitize } from './redact.js';

export { STORE_METHODS, SUBSTRATE_METHODS } from './write-methods.js';

/**
 * `value` with every string in it sanitized (object keys too), or the same value when nothing
 * changed. Typed arrays, buffers and other class instances are left alone.
 */
export function sanitizeDeep<T>(value: T): T {
  if (typeof value === 'string') return sanitizeText(value) as T;
  if (value !== null && typeof value === 'object' && SEALED.has(value)) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const clean = sanitizeDeep(item);
      if (clean !== item) (out ??= value.slice())[i] = clean;
    }
    return (out ?? value) as T;
  }
  if (value !== null && typeof value === 'object') {
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return value;
    let out: Record<string, unknown> | null = null;
    for (const [key, item] of Object.entries(value)) {
      if (key === 'actor') continue; // who acted (`token:alice`): cairn's own label, never user text
      const info = keyInfo(key);
      const cleanKey = info.clean;
      const clean = typeof item === 'string' ? valueUnder(info, item) : sanitizeDeep(item);
      if (clean !== item || cleanKey !== key) {
        out ??= { ...(value as Record<string, unknown>) };
        if (cleanKey !== key) delete out[key];
        out[cleanKey] = clean;
      }
    }
    return (out ?? value) as T;
  }
  return value;
}

/**
 * A string value under a key: under a secret-naming key (`{"apiKey": "…"}` in imported meta) the
 * whole value is the secret, as in an assignment; otherwise the value is sanitized as text.
 * Exactly what {@link sanitizeDeep} and {@link sealSanitized} make of a record's string field, so
 * a caller may clean one field first (to derive something from it) and name it clean when sealing.
 */
export function sanitizeField(key: string, value: string): string {
  return secretValue(key, value);
}

function secretValue(key: string, value: string): string {
  return valueUnder(keyInfo(key), value);
}

/**
 * A string value under a key whose {@link KeyInfo} is `info` (see {@link secretValue}). The last
 * short value seen under the key is remembered with its result: the facts of one turn carry the
 * same session id, turn id, role and tool name one after another, and a comparison with the same
 * string costs less than the memo's look-up. A pure function of `info` and `value`, so what is
 * remembered changes no result.
 */
function valueUnder(info: KeyInfo, value: string): string {
  if (value === info.lastValue) return info.lastClean;
  const named = info.kind;
  const kind = named !== null && value.length >= 4 && !isPlaceholderValue(value) && !/\s/.test(value) ? named : null;
  const clean = kind === null ? sanitizeText(value) : `[REDACTED:${kind}]`;
  if (value.length <= MEMO_MAX_LENGTH) {
    info.lastValue = value;
    info.lastClean = clean;
  }
  return clean;
}

/** Strings up to this length are remembered with their sanitized form (ids, names, paths recur record after record). */
const MEMO_MAX_LENGTH = 256;
const MEMO_ENTRIES = 20_000;
const sanitizedMemo = new Map<string, string>();

/**
 * `sanitize(text).text`, remembered for short strings: the same session id, tool name or path in
 * every record of a batch is scanned once. A pure function of the text, so the memo cannot be
 * steered by input; it is cleared when full. Strings of a shape no rule can redact (unique ids:
 * inert.ts) are neither scanned nor remembered.
 */
function sanitizeText(text: string): string {
  if (text.length > MEMO_MAX_LENGTH) return sanitize(text).text;
  if (cannotHoldSecret(text)) return text;
  let clean = sanitizedMemo.get(text);
  if (clean === undefined) {
    clean = sanitize(text).text;
    if (sanitizedMemo.size >= MEMO_ENTRIES) sanitizedMemo.clear();
    sanitizedMemo.set(text, clean);
  }
  return clean;
}

/** What an object key is to the boundary: its sanitized form and the secret kind it names, if any. */
interface KeyInfo {
  clean: string;
  /** {@link secretNameKind} of the key. */
  kind: string | null;
  /** The last value of at most {@link MEMO_MAX_LENGTH} characters under the key (see {@link valueUnder}), and what it became. */
  lastValue: string | null;
  lastClean: string;
}

const keyInfos = new Map<string, KeyInfo>();

/** {@link KeyInfo} of an object key, remembered (field names repeat in every record: one look-up a field). */
function keyInfo(key: string): KeyInfo {
  let info = keyInfos.get(key);
  if (info === undefined) {
    info = { clean: sanitizeText(key), kind: secretNameKind(key, false), lastValue: null, lastClean: '' };
    if (keyInfos.size >= MEMO_ENTRIES) keyInfos.clear();
    keyInfos.set(key, info);
  }
  return info;
}

/** Records sanitized whole by this ruleset (see {@link sealSanitized}). */
const SEALED = new WeakSet<object>();

/**
 * Sanitize `record` in place as the write boundary would — every string field, nested arrays
 * and objects, keys — except the fields named in `clean`, which the caller has just produced
 * with {@link sanitize} of this same ruleset (or derived from such text only, like index terms);
 * then freeze it and seal it, so the boundary passes it through without scanning it again.
 * `record` must be a plain object; the fields named in `clean` must hold strings or null.
 */
export function sealSanitized<T extends object>(record: T, clean: ReadonlySet<string>): Readonly<T> {
  sanitizeInPlace(record, clean, true);
  SEALED.add(Object.freeze(record));
  return record;
}

/**
 * Sanitize `record` in place exactly as {@link sealSanitized} does, without freezing or sealing
 * it: for a record that leaves this thread by structured clone right away (which keeps neither),
 * to be adopted by a thread of the same ruleset ({@link adoptSealed}). In a reader worker the
 * frozen map and the `WeakSet` entry of every turn and fact were about a third of its sealing time.
 */
export function sanitizeFields<T extends object>(record: T, clean: ReadonlySet<string>): T {
  return sanitizeInPlace(record, clean, false);
}

/** The fields of `record` sanitized in place (see {@link sealSanitized}); with `freeze`, arrays in them are frozen too. */
function sanitizeInPlace<T extends object>(record: T, clean: ReadonlySet<string>, freeze: boolean): T {
  const fields = record as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    const item = fields[key];
    if (key === 'actor' || (clean.has(key) && (typeof item === 'string' || item === null || item === undefined))) continue;
    const info = keyInfo(key);
    const cleanKey = info.clean;
    const cleanItem = typeof item === 'string' ? valueUnder(info, item) : typeof item === 'object' && item !== null ? sanitizeDeep(item) : item;
    if (freeze && Array.isArray(cleanItem)) Object.freeze(cleanItem);
    // Written only when it changed: a store into every field of every record cost more than the scan.
    if (cleanKey !== key) {
      delete fields[key];
      fields[cleanKey] = cleanItem;
    } else if (cleanItem !== item) {
      fields[key] = cleanItem;
    }
  }
  return record;
}

/**
 * Seal a record that {@link sealSanitized} sealed in another thread (a seal does not survive
 * structured clone). Only for a thread whose `RULESET_ID` (ruleset.ts) equals this one's and
 * whose code sealed every record it sends: the ingest pool uses it for its own reader workers.
 */
export function adoptSealed<T extends object>(record: T): Readonly<T> {
  const fields = record as Record<string, unknown>;
  // `for…in` over a plain record (its own keys: a structured clone's prototype is Object's) makes
  // no array of its keys; the main thread adopts every turn and fact of a run.
  for (const key in fields) {
    const item = fields[key];
    if (Array.isArray(item)) Object.freeze(item);
  }
  SEALED.add(Object.freeze(record));
  return record;
}

/** Whether `value` carries a seal (tests). */
export function isSealed(value: unknown): boolean {
  return value !== null && typeof value === 'object' && SEALED.has(value);
}
