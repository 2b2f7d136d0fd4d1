/**
 * Provider tokens that begin with a fixed literal (`shpat_`, `hvs.`, `PMAK-`, `dapi` …): one
 * table, scanned by literal. The shapes follow the providers' documented token formats as
 * collected in gitleaks' rule set (github.com/gitleaks/gitleaks, config/gitleaks.toml, MIT);
 * patterns are re-expressed for JavaScript, not copied, and only rules with a literal prefix are
 * taken (gitleaks' keyword-plus-generic rules are covered by the secret-named assignments of
 * assignment.ts and the high-entropy check).
 *
 * Cost: one pass over the text's character codes for all prefixes together (a lookup table on
 * the first two characters, at word starts only), then a sticky regex only where a prefix occurs.
 * It replaced one `indexOf` pass per prefix, which cost ~70 passes over every stored string.
 */
import { isPlaceholderValue } from './assignment.js';
import { codeAt } from './chars.js';

export interface PrefixRule {
  kind: string;
  /** The literal every token of this kind starts with (case-sensitive). */
  prefix: string;
  /** Sticky regex run at the prefix: the whole match is the secret. */
  pattern: RegExp;
  /** Further check on the match; false means no match. */
  accept?: (secret: string) => boolean;
  /** May follow a word character (`…atlasv1.`, `<32 hex>-us1`, `acme.webhook.office.com/…`). */
  glued?: boolean;
  /** Characters before the prefix that belong to the token: the regex runs that far back. */
  back?: number;
}

const hasDigit = (s: string): boolean => /\d/.test(s);
const mixed = (s: string): boolean => /\d/.test(s) && /[a-z]/.test(s) && /[A-Z]/.test(s);

/** Sticky, and not glued to a word before it (the caller checks the character before the prefix). */
const rule = (kind: string, prefix: string, body: string, accept?: (secret: string) => boolean, extra: Pick<PrefixRule, 'glued' | 'back'> = {}): PrefixRule => ({
  kind,
  prefix,
  pattern: new RegExp(`${body}(?![A-Za-z0-9_])`, 'y'),
  ...(accept ? { accept } : {}),
  ...extra,
});

export const PREFIX_RULES: readonly PrefixRule[] = [
  rule('mailgun-key', 'key-', String.raw`key-[0-9a-f]{32}`, hasDigit),
  rule('mailgun-key', 'pubkey-', String.raw`pubkey-[0-9a-f]{32}`, hasDigit),
  rule('shopify-token', 'shpat_', String.raw`shpat_[a-fA-F0-9]{32}`),
  rule('shopify-token', 'shpca_', String.raw`shpca_[a-fA-F0-9]{32}`),
  rule('shopify-token', 'shppa_', String.raw`shppa_[a-fA-F0-9]{32}`),
  rule('shopify-token', 'shpss_', String.raw`shpss_[a-fA-F0-9]{32}`),
  rule('vault-token', 'hvs.', String.raw`hvs\.[\w-]{24,}`, hasDigit),
  rule('vault-token', 'hvb.', String.raw`hvb\.[\w-]{24,}`, hasDigit),
  rule('vault-token', 'hvr.', String.raw`hvr\.[\w-]{24,}`, hasDigit),
  rule('postman-key', 'PMAK-', String.raw`PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}`),
  rule('age-secret-key', 'AGE-SECRET-KEY-1', String.raw`AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}`),
  rule('databricks-token', 'dapi', String.raw`dapi[a-f0-9]{32}(?:-\d)?`, hasDigit),
  rule('linear-key', 'lin_api_', String.raw`lin_api_[A-Za-z0-9]{40}`),
  rule('linear-key', 'lin_oauth_', String.raw`lin_oauth_[a-f0-9]{64}`),
  rule('braintree-token', 'access_token$', String.raw`access_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}`),
  rule('atlassian-token', 'ATATT3', String.raw`ATATT3[A-Za-z0-9_=-]{150,250}`),
  rule('doppler-token', 'dp.', String.raw`dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}`),
  rule('pulumi-token', 'pul-', String.raw`pul-[a-f0-9]{40}`),
  rule('grafana-token', 'glc_', String.raw`glc_[A-Za-z0-9+/]{32,400}={0,2}`),
  rule('grafana-token', 'glsa_', String.raw`glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}`),
  rule('newrelic-key', 'NRAK-', String.raw`NRAK-[A-Z0-9]{27}`),
  rule('newrelic-key', 'NRII-', String.raw`NRII-[A-Za-z0-9_-]{32}`),
  rule('newrelic-key', 'NRJS-', String.raw`NRJS-[a-f0-9]{19}`),
  rule('sentry-token', 'sntrys_', String.raw`sntrys_eyJ[A-Za-z0-9+/=_]{60,}`),
  rule('sentry-token', 'sntryu_', String.raw`sntryu_[a-f0-9]{64}`),
  rule('supabase-token', 'sbp_', String.raw`sbp_[a-f0-9]{40}`),
  rule('cloudflare-origin-ca-key', 'v1.0-', String.raw`v1\.0-[a-f0-9]{24}-[a-f0-9]{146}`),
  rule('heroku-key', 'HRKU-', String.raw`HRKU-[A-Za-z0-9_-]{58,60}`),
  rule('flyio-token', 'fo1_', String.raw`fo1_[\w-]{43}`),
  rule('flyio-token', 'fm2_', String.raw`fm2_[A-Za-z0-9+/]{100,}={0,3}`),
  rule('dynatrace-token', 'dt0c01.', String.raw`dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}`),
  rule('square-token', 'sq0atp-', String.raw`sq0atp-[\w-]{22}`),
  rule('square-token', 'sq0csp-', String.raw`sq0csp-[\w-]{43}`),
  rule('square-token', 'EAAA', String.raw`EAAA[\w-]{60}`, mixed),
  rule('shippo-token', 'shippo_', String.raw`shippo_(?:live|test)_[a-fA-F0-9]{40}`),
  rule('planetscale-token', 'pscale_', String.raw`pscale_(?:tkn|pw|oauth)_[\w=.-]{32,64}`),
  rule('readme-key', 'rdme_', String.raw`rdme_[a-z0-9]{70}`),
  rule('prefect-key', 'pnu_', String.raw`pnu_[A-Za-z0-9]{36}`),
  rule('frameio-token', 'fio-u-', String.raw`fio-u-[\w=-]{64}`),
  rule('easypost-key', 'EZAK', String.raw`EZ[AT]K[A-Za-z0-9]{54}`),
  rule('easypost-key', 'EZTK', String.raw`EZTK[A-Za-z0-9]{54}`),
  rule('duffel-token', 'duffel_', String.raw`duffel_(?:test|live)_[\w=-]{43}`),
  rule('typeform-token', 'tfp_', String.raw`tfp_[A-Za-z0-9_.=-]{59}`),
  rule('scalingo-token', 'tk-us-', String.raw`tk-us-[\w-]{48}`),
  rule('flutterwave-key', 'FLWSECK', String.raw`FLWSECK(?:_TEST)?-[a-h0-9]{32}-X`),
  rule('alibaba-access-key', 'LTAI', String.raw`LTAI[A-Za-z0-9]{20}`, hasDigit),
  rule('groq-key', 'gsk_', String.raw`gsk_[A-Za-z0-9]{52}`),
  rule('replicate-token', 'r8_', String.raw`r8_[A-Za-z0-9]{37}`, hasDigit),
  rule('perplexity-key', 'pplx-', String.raw`pplx-[A-Za-z0-9]{48}`),
  rule('xai-key', 'xai-', String.raw`xai-[A-Za-z0-9]{80}`),
  rule('1password-token', 'ops_eyJ', String.raw`ops_eyJ[A-Za-z0-9+/=_-]{100,}`),
  rule('google-oauth-secret', 'GOCSPX-', String.raw`GOCSPX-[\w-]{28}`),
  rule('notion-token', 'ntn_', String.raw`ntn_\d{11}[A-Za-z0-9]{35}`),
  rule('mapbox-token', 'sk.eyJ', String.raw`sk\.eyJ[\w-]+\.[\w-]{20,}`),
  rule('terraform-token', '.atlasv1.', String.raw`\.atlasv1\.[\w=-]{60,70}`, undefined, { glued: true }),
  rule('clojars-token', 'CLOJARS_', String.raw`CLOJARS_[a-z0-9]{60}`),
  rule('rubygems-key', 'rubygems_', String.raw`rubygems_[a-f0-9]{48}`),
  rule('docker-token', 'dckr_pat_', String.raw`dckr_pat_[\w-]{27,}`),
  rule('docker-token', 'dckr_oat_', String.raw`dckr_oat_[\w-]{32,}`),
  rule('tailscale-key', 'tskey-', String.raw`tskey-[a-z]+-[A-Za-z0-9]{6,}-[A-Za-z0-9]{16,}`),
  rule('brevo-key', 'xkeysib-', String.raw`xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}`),
  rule('huggingface-token', 'api_org_', String.raw`api_org_[A-Za-z]{34}`),
  rule('sourcegraph-token', 'sgp_', String.raw`sgp_(?:local_)?[a-f0-9]{40}`),
  rule('harness-token', 'pat.', String.raw`pat\.[\w-]{22}\.[0-9a-f]{24}\.[0-9A-Za-z]{20}`),
  rule('airtable-token', 'pat', String.raw`pat[A-Za-z0-9]{14}\.[a-f0-9]{64}`),
  rule('nuget-key', 'oy2', String.raw`oy2[a-z0-9]{43}`, hasDigit),
  rule('openai-key', 'sess-', String.raw`sess-[A-Za-z0-9]{40}`, mixed),
  rule('1password-secret-key', 'A3-', String.raw`A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}`, hasDigit),
  rule('adobe-client-secret', 'p8e-', String.raw`p8e-[A-Za-z0-9]{32}`, hasDigit),
  rule('artifactory-token', 'AKCp', String.raw`AKCp[A-Za-z0-9]{69}`, hasDigit),
  rule('artifactory-token', 'cmVmd', String.raw`cmVmd[A-Za-z0-9]{59}`, hasDigit),
  rule('clickhouse-key', '4b1d', String.raw`4b1d[A-Za-z0-9]{38}`, mixed),
  rule('facebook-token', 'EAAM', String.raw`EAAM[A-Za-z0-9]{100,}`, hasDigit),
  rule('facebook-token', 'EAAC', String.raw`EAAC[A-Za-z0-9]{100,}`, hasDigit),
  rule('flyio-token', 'fm1a_', String.raw`fm1a_[A-Za-z0-9+/]{100,}={0,3}`),
  rule('flyio-token', 'fm1r_', String.raw`fm1r_[A-Za-z0-9+/]{100,}={0,3}`),
  rule('gitlab-token', 'glffct-', String.raw`glffct-[\w-]{20}`),
  rule('gitlab-token', 'glimt-', String.raw`glimt-[\w-]{25}`),
  rule('gitlab-token', 'glagent-', String.raw`glagent-[\w-]{50}`),
  rule('gitlab-token', 'gloas-', String.raw`gloas-[\w-]{64}`),
  rule('gitlab-token', 'GR1348941', String.raw`GR1348941[\w-]{20}`),
  rule('gitlab-token', '_gitlab_session=', String.raw`_gitlab_session=[0-9a-z]{32}`),
  rule('grafana-token', 'eyJrIjoi', String.raw`eyJrIjoi[A-Za-z0-9]{70,400}={0,3}`),
  rule('infracost-token', 'ico-', String.raw`ico-[A-Za-z0-9]{32}`, hasDigit),
  rule('intra42-secret', 's-s4t2', String.raw`s-s4t2(?:ud|af)-[a-f0-9]{64}`),
  rule('octopus-key', 'API-', String.raw`API-[A-Z0-9]{26}`, hasDigit),
  rule('openshift-token', 'sha256~', String.raw`sha256~[\w-]{43}`),
  rule('settlemint-token', 'sm_aat_', String.raw`sm_aat_[A-Za-z0-9]{16}`, hasDigit),
  rule('settlemint-token', 'sm_pat_', String.raw`sm_pat_[A-Za-z0-9]{16}`, hasDigit),
  rule('settlemint-token', 'sm_sat_', String.raw`sm_sat_[A-Za-z0-9]{16}`, hasDigit),
  rule('yandex-key', 'AQVN', String.raw`AQVN[\w-]{35,38}`, hasDigit),
  rule('defined-networking-token', 'dnkey-', String.raw`dnkey-[\w=-]{26}-[\w=-]{52}`),
  rule('dropbox-token', 'sl.', String.raw`sl\.[\w=-]{135,}`, mixed),
  // Mailchimp keys end in their data centre: `<32 hex>-us6` (detect-secrets' MailchimpDetector).
  rule('mailchimp-key', '-us', String.raw`[0-9a-f]{32}-us\d{1,2}`, hasDigit, { glued: true, back: 32 }),
  rule('teams-webhook', 'webhook.office.com/webhookb2/', String.raw`webhook\.office\.com/webhookb2/[\w@/-]{40,}`, undefined, { glued: true }),
];

/** Rules by the first two characters of their prefix (all ASCII, all ≥ 3 characters long). */
const BY_PAIR = new Map<number, PrefixRule[]>();
/** First two characters of some prefix (1), of some prefix that may follow a word character (2): most positions cost one look-up. */
const PAIR = new Uint8Array(128 * 128);
for (const r of PREFIX_RULES) {
  const key = (r.prefix.charCodeAt(0) << 7) | r.prefix.charCodeAt(1);
  BY_PAIR.set(key, [...(BY_PAIR.get(key) ?? []), r]);
  PAIR[key] = (PAIR[key] as number) | (r.glued === true ? 3 : 1);
}

/** Word characters: a prefix glued to one (`monkey-…`, `tapi…`) starts no token. */
function isWordCode(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

export interface PrefixHit {
  start: number;
  end: number;
  kind: string;
}

/** `.netrc` / `_netrc`: `password` after `machine host` or `login user` (on one line or the next). */
const NETRC_BEFORE = /(?:^|\s)(?:machine|login|account|default)(?:[ \t]+\S+)?\s+$/;
/** A `.netrc` password and its value (exported for the proofs of test/privacy/inert.test.ts). */
export const NETRC_PASSWORD = /password[ \t]+([^\s]+)/y;

export function findNetrcPasswords(text: string): PrefixHit[] {
  const hits: PrefixHit[] = [];
  for (let i = text.indexOf('password'); i !== -1; i = text.indexOf('password', i + 8)) {
    const before = codeAt(text, i - 1);
    if (i > 0 && before !== 32 && before !== 9 && before !== 10 && before !== 13) continue;
    NETRC_PASSWORD.lastIndex = i;
    const m = NETRC_PASSWORD.exec(text);
    if (m === null || !NETRC_BEFORE.test(text.slice(Math.max(0, i - 200), i))) continue;
    const value = m[1] as string;
    if (value.startsWith('[REDACTED:') || isPlaceholderValue(value) || (value.length < 6 && !/\d/.test(value))) continue;
    hits.push({ start: i + m[0].length - value.length, end: i + m[0].length, kind: 'netrc-password' });
  }
  return hits;
}

/** `s` as a literal inside a regular expression. */
const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * Where a prefix that must start a word may begin: `\b` then any such prefix (all of them start
 * with a word character). The regex engine finds these positions in native code, so a text costs
 * no loop over its characters in JavaScript — that loop ran slowly until the JIT had warmed up,
 * which each ingest worker paid for again.
 */
const WORD_START_PREFIX = new RegExp(
  String.raw`\b(?:${[...new Set(PREFIX_RULES.filter((r) => r.glued !== true).map((r) => r.prefix))]
    .sort((a, b) => b.length - a.length)
    .map(escapeRegExp)
    .join('|')})`,
  'g',
);
/** Prefixes that may follow a word character: found with `indexOf`. */
const GLUED_PREFIXES: readonly string[] = [...new Set(PREFIX_RULES.filter((r) => r.glued === true).map((r) => r.prefix))];

for (const r of PREFIX_RULES) {
  // The candidate search below relies on it: a prefix that must start a word starts with a word character.
  if (r.glued !== true && !isWordCode(r.prefix.charCodeAt(0))) throw new Error(`prefix rule ${r.kind}: ${r.prefix} must start with a word character or be glued`);
}

/**
 * Positions at which some prefix begins, ascending (a superset of those {@link prefixAt} can act
 * on): word starts found by {@link WORD_START_PREFIX}, the character after an escape's letter
 * (`\nAGE-…`: the `n` does not glue), and every occurrence of a glued prefix.
 */
function prefixCandidates(text: string): number[] {
  const at: number[] = [];
  WORD_START_PREFIX.lastIndex = 0;
  for (let m = WORD_START_PREFIX.exec(text); m !== null; m = WORD_START_PREFIX.exec(text)) {
    at.push(m.index);
    WORD_START_PREFIX.lastIndex = m.index + 1;
  }
  let sorted = true;
  for (let i = text.indexOf('\\'); i !== -1; i = text.indexOf('\\', i + 1)) {
    at.push(i + 2);
    sorted = false;
  }
  for (const prefix of GLUED_PREFIXES) {
    for (let i = text.indexOf(prefix); i !== -1; i = text.indexOf(prefix, i + 1)) {
      at.push(i);
      sorted = false;
    }
  }
  return sorted ? at : at.sort((a, b) => a - b);
}

/**
 * The prefixed token starting at `i` (its hit), or null. The same test at every position of the
 * text gives the hits of a full scan; {@link findPrefixed} runs it at the candidates only.
 */
function prefixAt(text: string, i: number): PrefixHit | null {
  const c = codeAt(text, i);
  const d = codeAt(text, i + 1);
  if ((c | d) >= 128) return null;
  const key = (c << 7) | d;
  const pair = PAIR[key] as number;
  if (pair === 0) return null;
  // `\nAGE-SECRET-KEY-1…` in JSON: the `n` of an escape does not glue.
  const glued = i > 0 && isWordCode(codeAt(text, i - 1)) && (i < 2 || codeAt(text, i - 2) !== 92);
  if (glued && pair !== 3) return null;
  for (const r of BY_PAIR.get(key) as PrefixRule[]) {
    if ((glued && r.glued !== true) || !text.startsWith(r.prefix, i)) continue;
    const from = i - (r.back ?? 0);
    if (from < 0 || (r.back !== undefined && from > 0 && isWordCode(codeAt(text, from - 1)) && (from < 2 || codeAt(text, from - 2) !== 92))) continue;
    r.pattern.lastIndex = from;
    const m = r.pattern.exec(text);
    if (m === null || (r.accept && !r.accept(m[0]))) continue;
    let start = from;
    // A Terraform Cloud token is `<14 chars>.atlasv1.<rest>`: take the id part too.
    if (r.prefix === '.atlasv1.') {
      while (start > 0 && i - start < 14 && isWordCode(codeAt(text, start - 1))) start--;
    }
    return { start, end: from + m[0].length, kind: r.kind };
  }
  return null;
}

/** Every prefixed token in `text`, left to right; a token's characters start no other. */
export function findPrefixed(text: string): PrefixHit[] {
  const hits: PrefixHit[] = [];
  const n = text.length - 2;
  let next = 0;
  for (const i of prefixCandidates(text)) {
    if (i < next || i >= n) continue;
    const hit = prefixAt(text, i);
    if (hit === null) continue;
    hits.push(hit);
    next = hit.end;
  }
  return hits;
}
