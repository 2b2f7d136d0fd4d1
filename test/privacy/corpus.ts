/**
 * The secret corpus: one planted secret per supported format, each in a realistic context, and
 * look-alikes that must survive byte for byte. Shared by the ruleset test and the end-to-end
 * privacy test (every format through every entry point). Every secret is made up, with the real
 * shape of its kind; values come from a fixed-seed generator so they are stable across runs.
 */

let seed = 0x2f6b1d;
/** Deterministic pseudo-random characters from `charset` (xorshift). */
function gen(charset: string, n: number): string {
  let out = '';
  for (let i = 0; i < n; i++) {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    out += charset[(seed >>> 0) % charset.length];
  }
  return out;
}
const HEX = '0123456789abcdef';
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const LOWER_ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';
const UPPER_ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const B64URL = `${ALNUM}_-`;
/** Alphanumerics that always hold a digit, a lower- and an upper-case letter. */
const mixed = (n: number): string => `a7Q${gen(ALNUM, n - 3)}`;

export interface PlantedSecret {
  kind: string;
  /** The secret itself: no substring of it longer than 8 characters may be stored. */
  secret: string;
  /** The secret in the kind of text it turns up in. */
  text: string;
}

const s = (kind: string, secret: string, text: (x: string) => string = (x) => `the key is ${x} for prod`): PlantedSecret => ({ kind, secret, text: text(secret) });

export const PLANTED: readonly PlantedSecret[] = [
  s('anthropic-key', `sk-ant-api03-${gen(B64URL, 80)}AA`, (x) => `export ANTHROPIC_API_KEY=${x}`),
  s('openai-key', `sk-proj-${mixed(48)}`, (x) => `I set the key to ${x} and the 401 went away.`),
  s('aws-access-key', `AKIA${gen(UPPER_ALNUM, 16)}`, (x) => `{"AccessKeyId": "${x}"}`),
  s('aws-secret-key', gen(ALNUM, 40), (x) => `[default]\naws_secret_access_key = ${x}\nregion = eu-west-1`),
  s('github-token', `ghp_${mixed(36)}`, (x) => `git remote set-url origin https://${x}@github.com/acme/w.git`),
  s('gitlab-token', `glpat-${mixed(20)}`),
  s('slack-token', `xoxb-2048576310-4096153620847-${gen(ALNUM, 24)}`),
  s('slack-webhook', `T01ABCDEF/B02GHIJKL/${gen(ALNUM, 24)}`, (x) => `curl -X POST https://hooks.slack.com/services/${x}`),
  s('discord-webhook', gen(B64URL, 68), (x) => `https://discord.com/api/webhooks/123456789012345678/${x}`),
  s('stripe-key', `sk_live_${mixed(40)}`),
  s('google-api-key', `AIza${gen(B64URL, 35)}`, (x) => `GOOGLE maps key ${x} here`),
  s('jwt', `eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.${gen(B64URL, 43)}`),
  s('npm-token', `npm_${mixed(36)}`),
  s('pypi-token', `pypi-AgEIcHlwaS5vcmcCJ${gen(B64URL, 60)}`),
  s('huggingface-token', `hf_${mixed(34)}`),
  s('twilio-key', `SK${gen(HEX, 32)}`),
  s('sendgrid-key', `SG.${gen(B64URL, 22)}.${gen(B64URL, 43)}`),
  s('azure-key', `abc8Q~${gen(ALNUM, 34)}`),
  s('digitalocean-token', `dop_v1_${gen(HEX, 64)}`),
  s('discord-token', `MTA5ODc2NTQzMjEwOTg3NjU0.GaBcDe.${gen(ALNUM, 38)}`),
  s('telegram-bot-token', `123456789:AA${gen(B64URL, 33)}`, (x) => `GET https://api.telegram.org/bot${x}/getUpdates`),
  s('private-key', `MIIEpAIBAAKCAQEA${gen(ALNUM, 48)}`, (x) => `key:\n-----BEGIN RSA PRIVATE KEY-----\n${x}\n${gen(ALNUM, 64)}\n-----END RSA PRIVATE KEY-----\nok`),
  s('bearer-token', gen(HEX, 40), (x) => `curl -H 'Authorization: Bearer ${x}' https://api.example.com`),
  s('basic-auth', 'dXNlcjpwYXNzd29yZDEyMw==', (x) => `Authorization: Basic ${x}\nAccept: */*`),
  s('url-password', 'Tr0ub4dor-3xQ', (x) => `DATABASE_URL=postgres://app_user:${x}@db.internal:5432/app`),
  s('env-assignment', 'Tr0ub4dor&3x!', (x) => `DB_HOST=localhost\nDB_PASSWORD=${x}\nDB_PORT=5432`),
  s('gcp-service-account', gen(HEX, 40), (x) => `{"private_key_id": "${x}", "project_id": "acme-prod"}`),
  // Formats the ruleset of rules.ts adds (issue #17's nine first).
  s('mailgun-key', `key-${gen(HEX, 32)}`, (x) => `MAILGUN_DOMAIN=mg.acme.io and the mailgun key ${x}`),
  s('shopify-token', `shpat_${gen(HEX, 32)}`),
  s('vault-token', `hvs.${mixed(90)}`, (x) => `export VAULT_ADDR=https://vault:8200\nvault login ${x}`),
  s('postman-key', `PMAK-${gen(HEX, 24)}-${gen(HEX, 34)}`),
  s('age-secret-key', `AGE-SECRET-KEY-1${gen('QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L', 58)}`, (x) => `# created: 2024\n# public key: age1abc\n${x}`),
  s('databricks-token', `dapi${gen(HEX, 32)}`),
  s('linear-key', `lin_api_${mixed(40)}`),
  s('braintree-token', `access_token$production$${gen(LOWER_ALNUM, 16)}$${gen(HEX, 32)}`),
  s('netrc-password', 'c4cd94da15ea0544802c', (x) => `machine api.heroku.com\n  login me@example.com\n  password ${x}\n`),
  s('atlassian-token', `ATATT3xFfGF0${gen(B64URL, 180)}`),
  s('doppler-token', `dp.pt.${gen(ALNUM, 43)}`),
  s('pulumi-token', `pul-${gen(HEX, 40)}`),
  s('grafana-token', `glsa_${gen(ALNUM, 32)}_${gen(HEX, 8)}`),
  s('newrelic-key', `NRAK-${gen(UPPER_ALNUM, 27)}`),
  s('sentry-token', `sntryu_${gen(HEX, 64)}`),
  s('supabase-token', `sbp_${gen(HEX, 40)}`),
  s('heroku-key', `HRKU-AA${gen(B64URL, 58)}`),
  s('flyio-token', `fo1_${gen(B64URL, 43)}`),
  s('dynatrace-token', `dt0c01.${gen(UPPER_ALNUM, 24)}.${gen(ALNUM, 64)}`),
  s('square-token', `sq0atp-${gen(B64URL, 22)}`),
  s('shippo-token', `shippo_live_${gen(HEX, 40)}`),
  s('planetscale-token', `pscale_tkn_${gen(B64URL, 43)}`),
  s('prefect-key', `pnu_${mixed(36)}`),
  s('easypost-key', `EZAK${gen(ALNUM, 54)}`),
  s('duffel-token', `duffel_live_${gen(B64URL, 43)}`),
  s('typeform-token', `tfp_${gen(LOWER_ALNUM, 59)}`),
  s('alibaba-access-key', `LTAI${mixed(20)}`),
  s('groq-key', `gsk_${mixed(52)}`),
  s('replicate-token', `r8_${mixed(37)}`),
  s('perplexity-key', `pplx-${mixed(48)}`),
  s('xai-key', `xai-${mixed(80)}`),
  s('google-oauth-secret', `GOCSPX-${gen(B64URL, 28)}`),
  s('notion-token', `ntn_${gen('0123456789', 11)}${gen(ALNUM, 35)}`),
  s('rubygems-key', `rubygems_${gen(HEX, 48)}`),
  s('docker-token', `dckr_pat_${gen(B64URL, 27)}`),
  s('tailscale-key', `tskey-auth-k${gen(ALNUM, 10)}CNTRL-${gen(ALNUM, 30)}`),
  s('brevo-key', `xkeysib-${gen(HEX, 64)}-${gen(ALNUM, 16)}`),
  s('sourcegraph-token', `sgp_${gen(HEX, 40)}`),
  s('airtable-token', `pat${gen(ALNUM, 14)}.${gen(HEX, 64)}`),
  s('clojars-token', `CLOJARS_${gen(LOWER_ALNUM, 60)}`),
  // Further prefixed formats from gitleaks' rule set and detect-secrets' plugins.
  s('1password-secret-key', `A3-7${gen(UPPER_ALNUM, 5)}-${gen(UPPER_ALNUM, 11)}-${gen(UPPER_ALNUM, 5)}-${gen(UPPER_ALNUM, 5)}-${gen(UPPER_ALNUM, 5)}`, (x) => `Secret Key: ${x}`),
  s('adobe-client-secret', `p8e-${mixed(32)}`),
  s('artifactory-token', `AKCp${mixed(69)}`, (x) => `curl -H "X-JFrog-Art-Api: ${x}" https://acme.jfrog.io`),
  s('clickhouse-key', `4b1d${mixed(38)}`),
  s('facebook-token', `EAAC${mixed(120)}`),
  s('infracost-token', `ico-${mixed(32)}`),
  s('intra42-secret', `s-s4t2ud-${gen(HEX, 64)}`),
  s('octopus-key', `API-${gen(UPPER_ALNUM, 24)}7Z`),
  s('openshift-token', `sha256~${gen(B64URL, 43)}`, (x) => `oc login --token=${x} --server=https://api.c1:6443`),
  s('settlemint-token', `sm_pat_${mixed(16)}`),
  s('yandex-key', `AQVN${mixed(36)}`),
  s('defined-networking-token', `dnkey-${gen(LOWER_ALNUM, 26)}-${gen(LOWER_ALNUM, 52)}`),
  s('dropbox-token', `sl.${mixed(140)}`),
  s('mailchimp-key', `${gen(HEX, 31)}7-us6`, (x) => `mailchimp.setConfig({ apiKey: '${x}', server: 'us6' })`),
  s('teams-webhook', `webhook.office.com/webhookb2/${gen(HEX, 8)}-${gen(HEX, 4)}-${gen(HEX, 4)}-${gen(HEX, 4)}-${gen(HEX, 12)}@${gen(HEX, 8)}/IncomingWebhook/${gen(HEX, 32)}/${gen(HEX, 8)}`, (x) => `POST https://acme.${x}`),
  s('high-entropy', mixed(40), (x) => `{"deployHook": "${x}", "region": "eu"}`),
];

/** Kinds recognised by their context (a key name, a header, a URL), not by the value alone. */
export const CONTEXTUAL: ReadonlySet<string> = new Set(['private-key', 'aws-secret-key', 'slack-webhook', 'discord-webhook', 'bearer-token', 'basic-auth', 'url-password', 'env-assignment', 'gcp-service-account', 'netrc-password', 'high-entropy']);

/** A tag carrying the secret: the bare token where it names itself, else `token=…`. */
export function secretTag(p: PlantedSecret): string {
  return CONTEXTUAL.has(p.kind) ? `token=${p.secret}` : p.secret;
}

/** Text that looks like a secret and is not one: must come back byte for byte. */
export const LOOK_ALIKES: readonly string[] = [
  'commit 3f786850e387550fdab836ed7e6dc881de23001b (HEAD -> main)',
  'session id: 550e8400-e29b-41d4-a716-446655440000',
  '{"sessionId": "c0a8012e-7d3f-4b1a-9e2c-5f6d7e8f9a0b", "uuid": "0b5f1f0e-1c2d-4e3f-8a9b-0c1d2e3f4a5b"}',
  '{"id": "msg_01XFDUDYJgAACzvnptvVoYEL", "requestId": "req_011CVabcDEF123ghiJKL456", "tool_use_id": "toolu_01A09q90qw90lq917835lq9"}',
  '"integrity": "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs7YrXyxjhqIIRHRZbDFRDTJ7EQ=="',
  'checksum = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"',
  'const apiKey = process.env.OPENAI_API_KEY;\nself.secret_key = settings.SECRET_KEY',
  'password = getpass.getpass()\nif (token === expected) return;',
  'the monkey-patched function and the turkey-dinner recipe',
  'the hotkey-0123456789abcdef0123456789abcdef binding',
  'rapidapi-client and dapi is the Databricks prefix; shpat_ is Shopify',
  'pattern.test(value) and path.join(dir, file)',
  'the login page: enter your password and press enter',
  '"component": "HandleSubmitButtonClick", "file_path": "/work/src/App.tsx"',
  '"model": "claude-3-5-sonnet-20241022", "version": "v2.1.0-rc3"',
  'resolved "https://registry.yarnpkg.com/left-pad/-/left-pad-1.3.0.tgz#5b8a3a7765dfe001261dde915589e782f8c94d1e"',
  'cairn recall "parse config" --limit 5 && npm run build',
  '{"cwd": "/work/wt-hardening/src/store/sqlite", "gitBranch": "feature/add-cjk-bigrams-2"}',
  // Look-alikes of the prefixes added with the gitleaks / detect-secrets comparison.
  'commit 4b1d3e5f9a0c7b2d1e8f6a4c3b2d1e0f9a8b7c6d merged',
  'see API-REFERENCE-GUIDE for the octopus deploy steps; the API-V2 endpoint',
  'the favicon ico-font and the sl.no column, s-s4t2 is not a key',
  'image digest sha256~ is not valid; use sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  'd41d8cd98f00b204e9800998ecf8427e-user and d41d8cd98f00b204e9800998ecf8427e-us-east-1',
  'EAACCESS_DENIED and EAAC is a Facebook prefix',
  'STAMP="$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)" && git log -1',
  'the dnkey- prefix, sm_pat_ and AQVN are prefixes; A3-B is a cell',
];
