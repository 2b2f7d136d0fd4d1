/**
 * Secrets assigned to secret-named keys: `.env` lines (`API_KEY=…`, `export SECRET_TOKEN="…"`),
 * YAML / JSON / TOML config (`password: …`, `"apiKey": "…"`), CLI flags (`--token=…`),
 * connection strings (`…;Password=…;`), URL query parameters (`?access_token=…`) and
 * `Authorization:`-style headers. Only the value is redacted; the key stays readable.
 *
 * Matching is anchored on the `=` or `:` operator so the caller can find candidates with one
 * cheap character scan: the key is read backwards from the operator and the value forwards.
 */
import { codeAt } from './chars.js';

/** Where a secret value sits in the text and which kind it is. */
export interface AssignmentMatch {
  valueStart: number;
  valueEnd: number;
  kind: string;
}

const EQ = 61; // =
const COLON = 58; // :
const SLASH = 47; // /
const GT = 62; // >
const SPACE = 32;
const TAB = 9;
const LF = 10;
const CR = 13;
const DQUOTE = 34;
const SQUOTE = 39;
const BACKTICK = 96;
const BACKSLASH = 92;
const QUESTION = 63;
const AMPERSAND = 38;
const HASH = 35;

const MAX_NAME = 64;
const MAX_VALUE = 4096;

// Lookup tables are only indexed with codes < 128: an out-of-range or NaN index sends V8 down a
// slow generic path on every call.

/** Characters of a key name: `[A-Za-z0-9_.-]`. */
const NAME_CHAR = new Uint8Array(128);
for (let c = 48; c <= 57; c++) NAME_CHAR[c] = 1;
for (let c = 65; c <= 90; c++) NAME_CHAR[c] = 1;
for (let c = 97; c <= 122; c++) NAME_CHAR[c] = 1;
NAME_CHAR[95] = 1; // _
NAME_CHAR[46] = 1; // .
NAME_CHAR[45] = 1; // -

/** Characters that end an unquoted value besides whitespace. */
const VALUE_STOP = new Uint8Array(128);
for (const ch of ',;)]}"\'`') VALUE_STOP[ch.charCodeAt(0)] = 1;

/** `x op= y` compound and comparison operators are not assignments. */
const OPERATOR_BEFORE_EQ = new Uint8Array(128);
for (const ch of '!<>=+-*/%&|^?~') OPERATOR_BEFORE_EQ[ch.charCodeAt(0)] = 1;

/**
 * Letter pairs of which every secret-naming word has at least one (se*cr*et, t*ok*en, pa*ss*,
 * *pw*d, p*as*s*sw*ord, *cr*edential, *au*th, k*ey*). Checking them while reading a key backwards
 * rejects almost every key without building a string; the exact decision is {@link secretNameKind}.
 */
const HINT_PAIR = new Uint8Array(128 * 128);
for (const pair of ['cr', 'ok', 'ss', 'sw', 'pw', 'au', 'ey']) {
  for (const [a, b] of [pair, pair.toUpperCase(), pair[0] + (pair[1] as string).toUpperCase(), (pair[0] as string).toUpperCase() + pair[1]]) {
    HINT_PAIR[((a as string).charCodeAt(0) << 7) | (b as string).charCodeAt(0)] = 1;
  }
}

/** Second filter, on keys that passed the pairs (`message`, `default`, `description` do not pass). */
const SECRET_WORD = /secret|token|passw|pwd|pass(?![a-z])|credential|auth|key|^sig$/i;

/** A key part that names a secret on its own (`password`, `csrftoken`, `secret2`, `client_secret` → `secret`). */
const SECRET_PART =
  /^(?:[a-z0-9]*(?:secrets?|token|passwd|password|pwd|passphrase|credentials?|apikey|privatekey|accesskey|accountkey|secretkey)|pass|auth|oauth|authorization)\d*$/;

/** Two-part keys that name a secret: `api_key`, `private-key`, `accessKey` … */
const KEY_QUALIFIERS = new Set(['api', 'private', 'access', 'account', 'secret', 'signing', 'encryption', 'master', 'shared', 'client', 'app', 'license']);

/** A key whose last part is one of these describes a secret without holding one (`token_count`, `password_hash`). */
const DESCRIPTIVE_LAST_PART = new Set([
  'type', 'types', 'kind', 'url', 'urls', 'uri', 'endpoint', 'host', 'port', 'file', 'files', 'path', 'paths', 'dir',
  'name', 'names', 'length', 'len', 'size', 'limit', 'max', 'min', 'ttl', 'expiry', 'expires', 'expiration', 'in',
  'at', 'timeout', 'header', 'headers', 'field', 'fields', 'policy', 'method', 'methods', 'mode', 'enabled', 'enable',
  'disabled', 'required', 'hash', 'hashed', 'digest', 'format', 'prefix', 'suffix', 'count', 'counts', 'id', 'ids',
  'version', 'location', 'ref', 'store', 'provider', 'scope', 'scopes', 'label', 'description', 'placeholder',
  'pattern', 'regex', 'source', 'template', 'env', 'var', 'strategy', 'status', 'error', 'errors', 'message',
  'rotation', 'created', 'updated', 'schema', 'usage', 'used', 'budget', 'estimate', 'index', 'offset', 'flag',
  'algorithm', 'alg', 'cache', 'manager', 'helper', 'command', 'cmd', 'service', 'handler', 'middleware',
]);

/** Values that are placeholders, variable references, type names or keywords — not secrets. */
const PLACEHOLDER =
  /^(?:\$.*|%\w+%|\{\{.*\}\}|<[^>]*>|\[[^\]]*\]|x{3,}|\*{3,}|\.{3,}|•+|[-_]+|(?:your|my|insert|enter|put)[-_ ].*|.*[-_]here|placeholder|changeme|change[-_]?me|example|sample|dummy|test|none|null|nil|undefined|true|false|yes|no|on|off|string|str|number|int|integer|boolean|bool|any|unknown|object|bytes|buffer|required|optional|bearer|basic|digest|token|secret|secrets|password|passwd|pass|pwd|redacted|hidden|omit|include|same-origin|env|function|void)$/i;

/** Placeholders (`<your-token>`, `xxx`, `***`, `your-key-here`), variable references (`${VAR}`,
 * `$TOKEN`, `%VAR%`, `{{ var }}`), type names and keywords, and values already redacted. */
export function isPlaceholderValue(value: string): boolean {
  return value.startsWith('[REDACTED:') || PLACEHOLDER.test(value);
}

/** `config.password`, `process.env.API_KEY`, `self.token` — a reference, not a literal. */
const MEMBER_CHAIN = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/;
const AUTH_SCHEME = /^(?:Bearer|Basic|Token|Digest)\b/i;
const WORD_ONLY = /^[A-Za-z_]+$/;
const PASCAL_CASE = /^[A-Z][a-z]+(?:[A-Z][a-z]*)*$/;
const UPPER_SNAKE = /^[A-Z][A-Z0-9_]*$/;
const PATH_LIKE = /^(?:~|\.{1,2})?\/\S*$/;

function isSpace(c: number): boolean {
  return c === SPACE || c === TAB;
}

function splitName(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[_.-]+/)
    .filter((part) => part !== '');
}

/** The redaction kind a secret-named key implies, or null when the key does not name a secret. */
export function secretNameKind(name: string, inUrlQuery: boolean): string | null {
  const parts = splitName(name);
  const last = parts[parts.length - 1];
  if (last === undefined) return null;
  const joined = parts.join('_');
  if (joined === 'private_key_id') return 'gcp-service-account';
  if (inUrlQuery && joined === 'sig') return 'azure-key';
  if (DESCRIPTIVE_LAST_PART.has(last)) return null;

  let secret = false;
  for (let i = 0; i < parts.length && !secret; i++) {
    const part = parts[i] as string;
    if (SECRET_PART.test(part)) secret = true;
    else if (part === 'key' && i > 0 && KEY_QUALIFIERS.has(parts[i - 1] as string)) secret = true;
  }
  if (!secret) return null;
  return providerKind(parts, joined);
}

function providerKind(parts: string[], joined: string): string {
  const has = (part: string): boolean => parts.includes(part);
  if (joined.includes('aws') && joined.includes('secret')) return 'aws-secret-key';
  if (joined.includes('twilio')) return 'twilio-key';
  if (joined.includes('sendgrid')) return 'sendgrid-key';
  if (joined.includes('azure') || joined === 'account_key' || joined === 'shared_access_key') return 'azure-key';
  if (joined.includes('digitalocean')) return 'digitalocean-token';
  if (joined.includes('discord')) return 'discord-token';
  if (joined.includes('telegram')) return 'telegram-bot-token';
  if (joined.includes('slack')) return 'slack-token';
  if (has('npm') || joined === 'auth_token') return 'npm-token';
  if (has('pypi')) return 'pypi-token';
  if (has('hf') || joined.includes('huggingface')) return 'huggingface-token';
  if (has('github') || has('gh')) return 'github-token';
  if (has('gitlab')) return 'gitlab-token';
  if (has('stripe')) return 'stripe-key';
  if (has('openai')) return 'openai-key';
  if (has('anthropic')) return 'anthropic-key';
  return 'env-assignment';
}

/**
 * What a value assigned to a secret-named key is: a secret, not one (placeholder, reference,
 * code, message), or a bare word (`hunter`, `userInput`) — a secret in `.env` / YAML lines, a
 * variable in code.
 */
function classifyValue(value: string, quoted: boolean): 'secret' | 'not-secret' | 'bare-word' {
  if (value.length < 4 || value.length > MAX_VALUE) return 'not-secret';
  if (isPlaceholderValue(value) || AUTH_SCHEME.test(value)) return 'not-secret';
  if (value.includes('://') || PATH_LIKE.test(value)) return 'not-secret';
  if (/^\d+$/.test(value) && value.length < 6) return 'not-secret';
  if (quoted) {
    // UI strings and messages ("Enter your password") rather than secrets.
    return /\S\s+\S+\s+\S/.test(value) ? 'not-secret' : 'secret';
  }
  // `config.password` is a reference; `hunter.horse42` (a digit in it) is a password.
  if (/[()[\]{}<>]/.test(value) || (MEMBER_CHAIN.test(value) && !/\d/.test(value))) return 'not-secret';
  if (WORD_ONLY.test(value)) return PASCAL_CASE.test(value) ? 'not-secret' : 'bare-word';
  return 'secret';
}

/**
 * The secret value of the assignment whose operator (`=` or `:`) is at `op`, or null when there
 * is none (no secret-named key, a compound operator, a placeholder or reference value).
 */
export function matchAssignment(text: string, op: number): AssignmentMatch | null {
  const opChar = codeAt(text, op);
  const next = codeAt(text, op + 1);
  if (opChar === EQ) {
    const before = codeAt(text, op - 1);
    if (next === EQ || next === GT || (before < 128 && OPERATOR_BEFORE_EQ[before] === 1)) return null;
  } else if (next === COLON || next === SLASH) {
    return null;
  }

  // The key, read backwards: `NAME`, `"name"`, `name ` before the operator.
  let j = op - 1;
  while (j >= 0 && op - j < 4 && isSpace(text.charCodeAt(j))) j--;
  const keyQuote = codeAt(text, j);
  if (keyQuote === DQUOTE || keyQuote === SQUOTE) {
    j--;
    // JSON inside a JSON string: `\"password\": \"…\"`.
    while (j >= 0 && text.charCodeAt(j) === BACKSLASH) j--;
  }
  const nameEnd = j + 1;
  let hint = false;
  let after = 0;
  for (; j >= 0 && nameEnd - j <= MAX_NAME; j--) {
    // 0 <= j < op: in the text, so a plain read (a call to codeAt per character of every key cost
    // ~1% of an ingest: the ingest's inlining budget leaves it a call here).
    const c = text.charCodeAt(j);
    if (!(c < 128 && NAME_CHAR[c] === 1)) break;
    if (HINT_PAIR[(c << 7) | after] === 1) hint = true;
    after = c;
  }
  const nameStart = j + 1;
  const nameLength = nameEnd - nameStart;
  if (nameLength === 0 || nameLength > MAX_NAME) return null;
  // `sig` is the one secret-naming key without a hint pair (an Azure SAS signature in a URL query).
  if (!hint && !(nameLength === 3 && /^sig$/i.test(text.slice(nameStart, nameEnd)))) return highEntropyAssignment(text, op, nameStart, nameEnd);
  const name = text.slice(nameStart, nameEnd);
  if (!SECRET_WORD.test(name)) return highEntropyAssignment(text, op, nameStart, nameEnd);
  // `https://oauth2:<token>@host`: a URL's user, not a key (the URL detector takes the password).
  if (opChar === COLON && codeAt(text, nameStart - 1) === SLASH) return null;

  // The value, read forwards.
  let v = op + 1;
  while (v < text.length && isSpace(text.charCodeAt(v))) v++;
  let escapes = 0;
  while (codeAt(text, v + escapes) === BACKSLASH) escapes++;
  const quote = codeAt(text, v + escapes);
  let valueStart: number;
  let valueEnd: number;
  const quoted = quote === DQUOTE || quote === SQUOTE || quote === BACKTICK;
  if (quoted && escapes > 0) {
    // An escaped string inside a string (`\"s3cret\"`): it ends at the same escaped quote.
    valueStart = v + escapes + 1;
    valueEnd = text.indexOf(text.slice(v, v + escapes + 1), valueStart);
    if (valueEnd < 0 || valueEnd - valueStart > MAX_VALUE) return null;
  } else if (quoted) {
    valueStart = v + 1;
    valueEnd = closingQuote(text, valueStart, quote);
    if (valueEnd < 0) return null;
  } else {
    // A URL query value ends at the next parameter; elsewhere `&` may be part of a password.
    const before = codeAt(text, nameStart - 1);
    const inQuery = before === QUESTION || before === AMPERSAND;
    valueStart = v;
    valueEnd = v;
    while (valueEnd < text.length && valueEnd - valueStart <= MAX_VALUE) {
      const c = text.charCodeAt(valueEnd);
      if (c <= SPACE || (c < 128 && VALUE_STOP[c] === 1) || (inQuery && (c === AMPERSAND || c === HASH))) break;
      valueEnd++;
    }
    // A sentence ending right after the value: `… set API_KEY=abc123.`
    if (valueEnd > valueStart + 1 && codeAt(text, valueEnd - 1) === 46 /* . */) valueEnd--;
  }
  const verdict = classifyValue(text.slice(valueStart, valueEnd), quoted);
  if (verdict === 'not-secret') return null;
  if (verdict === 'bare-word' && !isConfigStyle(text, name, nameStart, opChar, valueEnd)) return null;
  // `type AuthToken = …` declares a type, it does not assign a value.
  if (opChar === EQ && /\b(?:type|interface)\s+$/.test(text.slice(Math.max(0, nameStart - 12), nameStart))) return null;

  const before = codeAt(text, nameStart - 1);
  const kind = secretNameKind(name, before === QUESTION || before === AMPERSAND);
  return kind === null ? null : { valueStart, valueEnd, kind };
}

/** Index of the quote closing a string that starts at `from`, on the same line; -1 when none. */
function closingQuote(text: string, from: number, quote: number): number {
  const limit = Math.min(text.length, from + MAX_VALUE);
  for (let i = from; i < limit; i++) {
    const c = codeAt(text, i);
    if (c === quote) return i;
    if (c === BACKSLASH) i++;
    else if (c === LF || c === CR) return -1;
  }
  return -1;
}

/** `.env` / shell (`NAME=value`, `--flag=value`), connection strings, or a YAML `key: value` line. */
function isConfigStyle(text: string, name: string, nameStart: number, opChar: number, valueEnd: number): boolean {
  if (opChar === EQ) {
    return UPPER_SNAKE.test(name) || name.startsWith('--') || codeAt(text, nameStart - 1) === 59; // ;
  }
  // YAML: the key starts the line (after indentation or a list dash) and the value ends it.
  let i = nameStart - 1;
  while (i >= 0 && (isSpace(codeAt(text, i)) || codeAt(text, i) === 45)) i--;
  const lineStart = i < 0 || codeAt(text, i) === LF || codeAt(text, i) === CR;
  let e = valueEnd;
  while (e < text.length && isSpace(codeAt(text, e))) e++;
  const lineEnd = e >= text.length || codeAt(text, e) === LF || codeAt(text, e) === CR || codeAt(text, e) === 35; // #
  return lineStart && lineEnd;
}

/**
 * Key parts under which a random-looking value is an identifier, a digest or data, not a secret
 * (`"uuid": "…"`, `integrity: "sha512-…"`, `"requestId": "req_01…"`).
 */
const NOT_SECRET_KEY_PART = new Set([
  'id', 'ids', 'uuid', 'guid', 'hash', 'sha', 'sha1', 'sha256', 'sha512', 'digest', 'integrity', 'checksum', 'etag',
  'commit', 'rev', 'revision', 'version', 'name', 'path', 'file', 'url', 'uri', 'href', 'src', 'data', 'content',
  'image', 'base64', 'body', 'text', 'model', 'type', 'kind', 'class', 'classname', 'style', 'title', 'label', 'slug',
  'cursor', 'ref', 'sessionid', 'session', 'request', 'message', 'parent', 'tool', 'node', 'key',
]);

const ENTROPY_MIN_LENGTH = 24;
/** Bits per character: random base62 of 24 characters is ≈ 4.2; words in camelCase stay ≤ 3.9. */
const ENTROPY_MIN_BITS = 4;

/** Shannon entropy of `s` in bits per character. */
export function shannonEntropy(s: string): number {
  const counts = new Map<number, number>();
  for (let i = 0; i < s.length; i++) counts.set(s.charCodeAt(i), (counts.get(s.charCodeAt(i)) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** A run of {@link isTokenChar} characters, as far as {@link highEntropyAssignment} reads one (always matches). */
const TOKEN_RUN = /[A-Za-z0-9_+/-]{0,513}/y;

function isTokenChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45 || c === 43 || c === 47;
}

/**
 * A high-entropy value assigned to any key (detect-secrets' high-entropy strings, gitleaks'
 * generic rule): ≥ 24 characters of one base64/base62 run with upper case, lower case and a digit,
 * and ≥ 4 bits of entropy per character. Keys that name identifiers, digests or data are skipped.
 */
function highEntropyAssignment(text: string, op: number, nameStart: number, nameEnd: number): AssignmentMatch | null {
  let v = op + 1;
  while (isSpace(codeAt(text, v))) v++;
  while (codeAt(text, v) === BACKSLASH) v++;
  const quote = codeAt(text, v);
  if (quote === DQUOTE || quote === SQUOTE || quote === BACKTICK) v++;
  // A run long enough (below) holds a token character at v + 21: most values end sooner, and one
  // look here rejects them without a call into the regex engine.
  if (!isTokenChar(codeAt(text, v + ENTROPY_MIN_LENGTH - 3))) return null;
  // Most values are short: the regex engine measures the run before any character is looked at here.
  TOKEN_RUN.lastIndex = v;
  TOKEN_RUN.test(text);
  if (TOKEN_RUN.lastIndex - v + 2 < ENTROPY_MIN_LENGTH) return null;
  let end = v;
  let upper = false;
  let lower = false;
  let digit = false;
  // Past the text's end codeAt gave no token character: the bound says the same without the call.
  while (end - v <= 512 && end < text.length && isTokenChar(text.charCodeAt(end))) {
    const c = text.charCodeAt(end);
    if (c >= 65 && c <= 90) upper = true;
    else if (c >= 97 && c <= 122) lower = true;
    else if (c >= 48 && c <= 57) digit = true;
    end++;
  }
  // Base64 padding ends a value; an `=` inside one is an assignment of its own (`KEY=…`).
  for (let pad = 0; pad < 2 && codeAt(text, end) === EQ; pad++) end++;
  if (end - v < ENTROPY_MIN_LENGTH || end - v > 512 || !(upper && lower && digit)) return null;
  // The value must end there: `abc…xyz.` in prose or a path continues.
  const after = codeAt(text, end);
  if (end < text.length && !(after <= SPACE || after === DQUOTE || after === SQUOTE || after === BACKTICK || after === BACKSLASH || after === 44 || after === 59 || after === 125 || after === 41)) return null;
  const value = text.slice(v, end);
  if (value.charCodeAt(0) === SLASH || value.includes('//') || /^sha\d+-/i.test(value)) return null;
  if (shannonEntropy(value) < ENTROPY_MIN_BITS) return null;
  const parts = splitName(text.slice(nameStart, nameEnd));
  if (parts.length === 0 || parts.some((p) => NOT_SECRET_KEY_PART.has(p) || DESCRIPTIVE_LAST_PART.has(p))) return null;
  return { valueStart: v, valueEnd: end, kind: 'high-entropy' };
}

/** What identifies the assignment rules in the ruleset's fingerprint (ruleset.ts). */
export const ASSIGNMENT_RULES: readonly string[] = [
  SECRET_WORD.source,
  SECRET_PART.source,
  PLACEHOLDER.source,
  MEMBER_CHAIN.source,
  AUTH_SCHEME.source,
  [...KEY_QUALIFIERS].join(','),
  [...DESCRIPTIVE_LAST_PART].join(','),
  [...NOT_SECRET_KEY_PART].join(','),
  `${MAX_NAME} ${MAX_VALUE} ${ENTROPY_MIN_LENGTH} ${ENTROPY_MIN_BITS}`,
];
