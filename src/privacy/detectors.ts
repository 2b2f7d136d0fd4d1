/**
 * Where the secrets are in a text: provider keys and tokens with a recognisable shape, PEM private
 * keys, JWTs, auth headers, passwords in URLs, and values of secret-named assignments.
 *
 * Built for ingest speed. Each shape has an anchor — a character or short literal it must contain
 * (`sk-` → `-`, `AKIA` → `I`, `eyJ` → `J`, `://` → `:` …). The text is searched with one
 * `indexOf` pass per anchor (vectorised, far faster than a character loop in JS); at each hit a
 * probe compares a few neighbouring character codes and, only when they fit, runs that shape's
 * sticky regex at the computed start. Ordinary text costs the `indexOf` passes and nothing else.
 */
import { isPlaceholderValue, matchAssignment } from './assignment.js';
import { codeAt } from './chars.js';
import { findNetrcPasswords, findPrefixed } from './rules.js';

/** A secret found in the text: `[start, end)` is replaced by `[REDACTED:<kind>]`. */
export interface SecretSpan {
  start: number;
  end: number;
  kind: string;
  /** Lower wins when spans overlap (a JWT inside a bearer header is reported as `jwt`). */
  priority: number;
}

/** One shape of secret. */
interface Detector {
  kind: string;
  /** Sticky regex run at the probe's start: group 1 is kept (may be empty), group 2 is the secret. */
  pattern: RegExp;
  /** Further check on the secret; false means no match. */
  accept?: (secret: string) => boolean;
}

const hasDigit = (s: string): boolean => /\d/.test(s);
const hasDigitAndLetter = (s: string): boolean => /\d/.test(s) && /[A-Za-z]/.test(s);
const notPlaceholder = (s: string): boolean => !isPlaceholderValue(s);

/** HTTP Basic credentials decode to `user:password`; a word like `authentication` does not. */
function isBasicCredential(s: string): boolean {
  return Buffer.from(s, 'base64').toString('latin1').includes(':');
}

const PEM_END = '-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----';
/** A real line break, or an escaped one inside a JSON string (service-account files). */
const PEM_NEWLINE = String.raw`(?:\r?\n|\\r?\\n)`;

// Indices into DETECTORS; the order is the priority when spans overlap (specific shapes first).
const PRIVATE_KEY = 0;
const ANTHROPIC = 1;
const OPENAI = 2;
const STRIPE = 3;
const GITHUB = 4;
const GITLAB = 5;
const SLACK = 6;
const SLACK_WEBHOOK = 7;
const DISCORD_WEBHOOK = 8;
const AWS_ACCESS = 9;
const GOOGLE = 10;
const JWT = 11;
const NPM = 12;
const PYPI = 13;
const HUGGINGFACE = 14;
const TWILIO = 15;
const SENDGRID = 16;
const AZURE = 17;
const DIGITALOCEAN = 18;
const DISCORD = 19;
const TELEGRAM = 20;
const BEARER = 21;
const BASIC = 22;
const CURL_USER = 23;
const URL_PASSWORD = 24;
/** Priority of the prefixed provider tokens of rules.ts, after the shapes above. */
const PREFIXED_PRIORITY = 25;
/** Priority of secret-named assignments (assignment.ts), after every shape. */
const ASSIGNMENT_PRIORITY = 26;

const DETECTORS: readonly Detector[] = [
  {
    kind: 'private-key',
    // The whole block; an unclosed block takes the base64 and header lines that follow it.
    pattern: new RegExp(
      String.raw`()(-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?${PEM_END}|(?:${PEM_NEWLINE}(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]+: [^\n]*))*))`,
      'y',
    ),
  },
  { kind: 'anthropic-key', pattern: /(?<!(?<!\\)[\w-])()(sk-ant-[\w-]{20,})/y, accept: hasDigit },
  {
    kind: 'openai-key',
    pattern: /(?<!(?<!\\)[\w-])()(sk-(?!ant-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,})/y,
    accept: hasDigitAndLetter,
  },
  { kind: 'stripe-key', pattern: /(?<!(?<!\\)[\w-])()((?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,})/y },
  { kind: 'github-token', pattern: /(?<!(?<!\\)[\w-])()(gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})/y },
  { kind: 'gitlab-token', pattern: /(?<!(?<!\\)[\w-])()(gl(?:pat|dt|rt|ptt|cbt|ft|soat)-[A-Za-z0-9_-]{20,})/y },
  { kind: 'slack-token', pattern: /(?<!(?<!\\)[\w-])()(xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})/y, accept: hasDigit },
  { kind: 'slack-webhook', pattern: /(:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/)([A-Za-z0-9_/-]{20,})/y },
  {
    kind: 'discord-webhook',
    pattern: /(:\/\/(?:(?:ptb|canary)\.)?discord(?:app)?\.com\/api\/webhooks\/\d+\/)([A-Za-z0-9_-]{30,})/y,
  },
  { kind: 'aws-access-key', pattern: /(?<!(?<!\\)[A-Za-z0-9])()((?:AKIA|ASIA|ABIA)[A-Z0-9]{16})(?![A-Za-z0-9])/y },
  { kind: 'google-api-key', pattern: /(?<!(?<!\\)[\w-])()(AIza[0-9A-Za-z_-]{35})(?![\w-])/y },
  { kind: 'jwt', pattern: /(?<!(?<!\\)[\w-])()(eyJ[A-Za-z0-9_-]{6,}\.eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]*)/y },
  { kind: 'npm-token', pattern: /(?<!(?<!\\)[\w-])()(npm_[A-Za-z0-9]{36})(?![\w-])/y },
  { kind: 'pypi-token', pattern: /(?<!(?<!\\)[\w-])()(pypi-AgE[A-Za-z0-9_-]{50,})/y },
  { kind: 'huggingface-token', pattern: /(?<!(?<!\\)[\w-])()(hf_[A-Za-z0-9]{30,})(?![\w-])/y },
  { kind: 'twilio-key', pattern: /(?<!(?<!\\)[\w-])()(SK[0-9a-f]{32})(?![\w-])/y },
  { kind: 'sendgrid-key', pattern: /(?<!(?<!\\)[\w-])()(SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64})/y },
  { kind: 'azure-key', pattern: /(?<!(?<!\\)[\w~.-])()([A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34})(?![\w~.-])/y },
  { kind: 'digitalocean-token', pattern: /(?<!(?<!\\)[\w-])()(do[opr]_v1_[a-f0-9]{64})(?![\w-])/y },
  {
    kind: 'discord-token',
    pattern: /(?<!(?<!\\)[\w-])()([MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40})(?![\w-])/y,
    accept: hasDigit,
  },
  // The probe starts at the first digit, so only digits before it matter (`bot123…:AA…` in API URLs).
  { kind: 'telegram-bot-token', pattern: /(?<![\d:])()(\d{8,10}:AA[A-Za-z0-9_-]{33})(?![\w-])/y },
  {
    kind: 'bearer-token',
    pattern: /(bearer[ \t]+)([A-Za-z0-9._~+/-]{12,}=*)/iy,
    accept: (s) => hasDigit(s) || s.length >= 24,
  },
  { kind: 'basic-auth', pattern: /(basic[ \t]+)([A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])/iy, accept: isBasicCredential },
  // `date -u +%Y-%m-%dT%H:%M:%S` is a format, not `user:password`.
  { kind: 'basic-auth', pattern: /(?<=^|\s)((?:-u|--user)[ \t]+['"]?(?![+%])[^\s:'"@%]+:)([^\s'"]+)/y, accept: notPlaceholder },
  { kind: 'url-password', pattern: /(:\/\/[^\s:/?#@'"<>]*:)([^\s/?#@'"<>]+)(?=@)/y, accept: notPlaceholder },
];

/** What identifies these shapes in the ruleset's fingerprint (ruleset.ts). */
export const DETECTOR_RULES: readonly string[] = DETECTORS.map((d) => `${d.kind} ${d.pattern.source} ${d.pattern.flags}`);

/**
 * The anchors {@link probeDash}, {@link probeUnderscore} and {@link probeDot} can act on, found by
 * the regex engine rather than one probe call per character (each match is the anchor alone):
 * a `-` after `k` `t` `p` `i` (`sk-`, `glpat-`, `xapp-`, `pypi-`), two after an `x` (`xoxb-`), at
 * the start or after a space before `u` or `-` (`-u`, `--user`), or before another `-` (PEM);
 * an `_` after `k` `c` `p` `o` `u` `s` `r` `b` `m` `f`; a `.` after `SG`, or between token
 * characters with another `.` 7 characters on (a Discord token's middle part). Each pattern starts
 * with its anchor, so the engine can search for that character first.
 */
const DASH = /-(?:(?<=[ktpi]-)|(?<=(?:^|[ \t\n\0])-)(?=[u-])|(?<=x[\s\S]-)|(?=-))/g;
const UNDERSCORE = /_(?<=[kcpousrbmf]_)/g;
const DOT = /\.(?:(?<=SG\.)|(?<=[A-Za-z0-9_-]\.)(?=[A-Za-z0-9_-][\s\S]{5}\.))/g;

/** Every secret in `text`, in no particular order; spans may overlap. */
export function findSecrets(text: string): SecretSpan[] {
  const spans: SecretSpan[] = [];
  const at = (start: number, detector: number): void => {
    if (start >= 0) tryDetector(text, start, detector, spans);
  };

  for (let i = text.indexOf(':'); i !== -1; i = text.indexOf(':', i + 1)) probeColon(text, i, at, spans);
  for (let i = text.indexOf('='); i !== -1; i = text.indexOf('=', i + 1)) {
    addAssignment(text, i, spans);
    probeAuthScheme(text, i, at);
  }
  // `-`, `_` and `.` are everywhere in code and paths: a native scan hands the probes only the
  // ones they could act on (a superset: each probe still decides).
  for (DASH.lastIndex = 0; DASH.test(text); ) probeDash(text, DASH.lastIndex - 1, at);
  for (UNDERSCORE.lastIndex = 0; UNDERSCORE.test(text); ) probeUnderscore(text, UNDERSCORE.lastIndex - 1, at);
  for (DOT.lastIndex = 0; DOT.test(text); ) probeDot(text, DOT.lastIndex - 1, at);
  for (let i = text.indexOf('I'); i !== -1; i = text.indexOf('I', i + 1)) {
    const prev = prevCode(text, i);
    if (prev === 65 /* A */) {
      if (codeAt(text, i + 1) === 122 /* z */) at(i - 1, GOOGLE); // AIza
    } else if ((prev === 75 || prev === 83 || prev === 66) /* K S B */ && codeAt(text, i - 2) === 65 && codeAt(text, i + 1) === 65) {
      at(i - 2, AWS_ACCESS); // AKIA, ASIA, ABIA
    }
  }
  for (let i = text.indexOf('J'); i !== -1; i = text.indexOf('J', i + 1)) {
    if (codeAt(text, i - 1) === 121 /* y */ && codeAt(text, i - 2) === 101 /* e */) at(i - 2, JWT); // eyJ
  }
  for (let i = text.indexOf('K'); i !== -1; i = text.indexOf('K', i + 1)) {
    if (codeAt(text, i - 1) === 83 /* S */) at(i - 1, TWILIO); // SK + 32 hex
  }
  for (let i = text.indexOf('~'); i !== -1; i = text.indexOf('~', i + 1)) {
    if (codeAt(text, i - 1) === 81 /* Q */) at(i - 5, AZURE); // …8Q~…
  }
  for (const hit of findPrefixed(text)) {
    if (!text.slice(hit.start, hit.end).includes('[REDACTED:')) spans.push({ ...hit, priority: PREFIXED_PRIORITY });
  }
  for (const hit of findNetrcPasswords(text)) spans.push({ ...hit, priority: ASSIGNMENT_PRIORITY });
  return spans;
}

function tryDetector(text: string, start: number, index: number, spans: SecretSpan[]): void {
  const detector = DETECTORS[index] as Detector;
  const { pattern } = detector;
  pattern.lastIndex = start;
  const match = pattern.exec(text);
  if (match === null) return;
  const kept = match[1] as string;
  const secret = match[2] as string;
  // Never match across an earlier marker: sanitizing twice must equal sanitizing once.
  if (match[0].includes('[REDACTED:') || (detector.accept !== undefined && !detector.accept(secret))) return;
  const secretStart = start + kept.length;
  spans.push({ start: secretStart, end: secretStart + secret.length, kind: detector.kind, priority: index });
}

function addAssignment(text: string, op: number, spans: SecretSpan[]): void {
  const hit = matchAssignment(text, op);
  if (hit !== null) spans.push({ start: hit.valueStart, end: hit.valueEnd, kind: hit.kind, priority: ASSIGNMENT_PRIORITY });
}

function prevCode(text: string, i: number): number {
  return i > 0 ? codeAt(text, i - 1) : 0;
}

const isDigitCode = (c: number): boolean => c >= 48 && c <= 57;
const isTokenCode = (c: number): boolean =>
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45;

type At = (start: number, detector: number) => void;

/** URLs (`://`), Telegram bot tokens (`123456789:AA…`), `Authorization:` headers, assignments. */
function probeColon(text: string, i: number, at: At, spans: SecretSpan[]): void {
  const next = codeAt(text, i + 1);
  if (next === 47 /* / */) {
    if (codeAt(text, i + 2) === 47) probeUrl(text, i, at);
    return;
  }
  if (next === 65 /* A */ && codeAt(text, i + 2) === 65 && isDigitCode(prevCode(text, i))) {
    let start = i - 1;
    while (start > 0 && i - start < 10 && isDigitCode(codeAt(text, start - 1))) start--;
    at(start, TELEGRAM);
    return;
  }
  addAssignment(text, i, spans);
  probeAuthScheme(text, i, at);
}

/**
 * A header value after `:` or `=`: `Authorization: Bearer …`, `"X-Auth": "Basic …"`. Bearer and
 * basic credentials are looked for only there; the words alone are too common in prose.
 */
function probeAuthScheme(text: string, op: number, at: At): void {
  let v = op + 1;
  for (let c = codeAt(text, v); c === 32 || c === 9 || c === 34 || c === 39 || c === 96; c = codeAt(text, ++v));
  const first = codeAt(text, v) | 32;
  if (first === 98 /* b */) {
    const second = codeAt(text, v + 1) | 32;
    if (second === 101 /* e */) at(v, BEARER);
    else if (second === 97 /* a */) at(v, BASIC);
  }
}

/** At `://`: credentials in the authority (`user:pass@`), or a webhook URL whose path is the secret. */
function probeUrl(text: string, colon: number, at: At): void {
  const authority = colon + 3;
  const limit = Math.min(text.length, authority + 256);
  let sawColon = false;
  for (let i = authority; i < limit; i++) {
    const c = codeAt(text, i);
    if (c === 58) sawColon = true;
    else if (c === 64 /* @ */) {
      if (sawColon) at(colon, URL_PASSWORD);
      break;
    } else if (c <= 32 || c === 47 || c === 63 || c === 35 || c === 34 || c === 39) break; // space / ? # " '
  }
  const first = codeAt(text, authority);
  if (first === 104 /* h */ && text.startsWith('hooks.slack.com/', authority)) at(colon, SLACK_WEBHOOK);
  else if ((first === 100 || first === 112 || first === 99) /* d p c */ && /^(?:(?:ptb|canary)\.)?discord(?:app)?\.com\//.test(text.slice(authority, authority + 24))) {
    at(colon, DISCORD_WEBHOOK);
  }
}

/** `sk-`, `glpat-`, `xoxb-`, `xapp-`, `pypi-`, `-----BEGIN`, `-u user:pass`. */
function probeDash(text: string, i: number, at: At): void {
  const prev = prevCode(text, i);
  const next = codeAt(text, i + 1);
  switch (prev) {
    case 107: // k
      if (codeAt(text, i - 2) === 115 /* s */) {
        at(i - 2, ANTHROPIC);
        at(i - 2, OPENAI);
      }
      return;
    case 116: // t   (glpat, gldt, glrt, glptt, glcbt, glft, glsoat)
      for (let k = 4; k <= 7; k++) {
        if (codeAt(text, i - k) === 103 /* g */ && codeAt(text, i - k + 1) === 108 /* l */) at(i - k, GITLAB);
      }
      return;
    case 112: // p   (xapp)
      if (codeAt(text, i - 4) === 120 /* x */) at(i - 4, SLACK);
      return;
    case 105: // i   (pypi)
      if (codeAt(text, i - 4) === 112 /* p */) at(i - 4, PYPI);
      return;
    case 32:
    case 9:
    case 10:
    case 0: // an argument: -u user:pass, --user user:pass
      if (next === 117 /* u */ || next === 45) at(i, CURL_USER);
      break;
  }
  if (codeAt(text, i - 2) === 120 /* x */ && codeAt(text, i - 4) === 120) at(i - 4, SLACK); // xox?-
  else if (next === 45 && text.startsWith('----BEGIN ', i + 1)) at(i, PRIVATE_KEY);
}

/** `sk_live_`, `rk_test_`, `whsec_`, `ghp_`, `github_pat_`, `npm_`, `hf_`, `dop_v1_`. */
function probeUnderscore(text: string, i: number, at: At): void {
  const prev = prevCode(text, i);
  switch (prev) {
    case 107: // k   (sk_live_, rk_test_)
      at(i - 2, STRIPE);
      return;
    case 99: // c   (whsec_)
      if (codeAt(text, i - 5) === 119 /* w */) at(i - 5, STRIPE);
      return;
    case 112: // p
    case 111: // o
    case 117: // u
    case 115: // s
    case 114: // r
      if (codeAt(text, i - 2) === 104 /* h */ && codeAt(text, i - 3) === 103 /* g */) at(i - 3, GITHUB);
      else if (codeAt(text, i - 2) === 111 /* o */ && codeAt(text, i - 3) === 100 /* d */) at(i - 3, DIGITALOCEAN);
      return;
    case 98: // b   (github_pat_)
      if (codeAt(text, i - 6) === 103 /* g */) at(i - 6, GITHUB);
      return;
    case 109: // m   (npm_)
      if (codeAt(text, i - 3) === 110 /* n */) at(i - 3, NPM);
      return;
    case 102: // f   (hf_)
      if (codeAt(text, i - 2) === 104 /* h */) at(i - 2, HUGGINGFACE);
      return;
  }
}

/** SendGrid (`SG.…`) and Discord bot tokens (`<base64 id>.<6>.<hmac>`). */
function probeDot(text: string, i: number, at: At): void {
  const prev = prevCode(text, i);
  if (prev === 71 /* G */ && codeAt(text, i - 2) === 83 /* S */) {
    at(i - 2, SENDGRID);
  } else if (codeAt(text, i + 7) === 46 && i >= 24 && isTokenCode(prev) && isTokenCode(codeAt(text, i + 1))) {
    for (let k = 24; k <= 28; k++) {
      const c = codeAt(text, i - k);
      if (c === 77 || c === 78 || c === 79) at(i - k, DISCORD); // M N O
    }
  }
}
