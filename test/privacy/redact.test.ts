import { describe, expect, it } from 'vitest';
import { redactSecrets, sanitize, stripPrivate } from '../../src/privacy/redact.js';

// Every secret below is made up; each has the real format of its kind.
const ANTHROPIC = `sk-ant-api03-${'Xq7vR2mN9pL4wT8zY1bC6dF3gH5jK0sA'.repeat(3)}_-AbCdEfAA`;
const OPENAI = 'sk-proj-4f9XkQ2mN8vR1tY6uI3oP7aS5dF0gH2jK4lZ9xC1vB3nM6qW';
const AWS_ACCESS = 'AKIAZ3MSJV4WWNKWW5FG';
const AWS_SECRET = '9drTJvcXLB89EXAMPLELB8923FB892xMFI2Ex1YTk';
const GITHUB = 'ghp_x1Y2z3A4b5C6d7E8f9G0h1I2j3K4l5M6n7O8';
const GITHUB_PAT = 'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123';
const GITLAB = 'glpat-Xy9zAb8cDe7fGh6iJk5L';
const SLACK = 'xoxb-2048576310-4096153620847-AbCdEfGhIjKlMnOpQrStUvWx';
const SLACK_HOOK_PATH = 'T01ABCDEF/B02GHIJKL/aBcDeFgHiJkLmNoPqRsTuVwX';
const STRIPE = 'sk_live_51HaBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789';
const GOOGLE = 'AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY';
const JWT =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';
const NPM = 'npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789';
const PYPI = 'pypi-AgEIcHlwaS5vcmcCJDEyMzQ1Njc4LTEyMzQtMTIzNC0xMjM0LTEyMzQ1Njc4OTBhYgACKlszLCJhYmNkIl0AAAYg';
const HUGGINGFACE = 'hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh';
const TWILIO = 'SK0123456789abcdef0123456789abcdef';
const SENDGRID = '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';
const AZURE_ACCOUNT_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';
const AZURE_CLIENT_SECRET = 'abc8Q~dEfGhIjKlMnOpQrStUvWxYz0123456789a';
const DIGITALOCEAN = `dop_v1_${'0123456789abcdef'.repeat(4)}`;
const DISCORD = 'MTA5ODc2NTQzMjEwOTg3NjU0.GaBcDe.abcdefghijklmnopqrstuvwxyz0123456789AB';
const DISCORD_HOOK_TOKEN = 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEfGhIjKlMnOpQrStUvWxYz01';
const TELEGRAM = '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw4';
const PEM_BODY = 'MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi\nZ1BjP5CE/Wm/Rr500PRK+Lh9x5eJPo5CAZ3/ANBE\n0sTK0ZsDGMak2m1g7r3YbNq4FG3jW6Tq';

interface Case {
  name: string;
  text: string;
  secret: string;
  kind: string;
  /** Text around the secret that must survive. */
  keeps: string[];
}

const CASES: Case[] = [
  {
    name: 'Anthropic key in a shell export',
    text: `export ANTHROPIC_API_KEY=${ANTHROPIC}\nclaude --version`,
    secret: ANTHROPIC,
    kind: 'anthropic-key',
    keeps: ['export ANTHROPIC_API_KEY=', 'claude --version'],
  },
  {
    name: 'OpenAI key in prose',
    text: `I set the key to ${OPENAI} and the 401 went away.`,
    secret: OPENAI,
    kind: 'openai-key',
    keeps: ['I set the key to ', ' and the 401 went away.'],
  },
  {
    name: 'AWS access key id in JSON',
    text: `{"AccessKeyId": "${AWS_ACCESS}", "Expiration": "2025-01-01T00:00:00Z"}`,
    secret: AWS_ACCESS,
    kind: 'aws-access-key',
    keeps: ['{"AccessKeyId": "', '", "Expiration": "2025-01-01T00:00:00Z"}'],
  },
  {
    name: 'AWS secret key in ~/.aws/credentials',
    text: `[default]\naws_secret_access_key = ${AWS_SECRET}\nregion = eu-west-1`,
    secret: AWS_SECRET,
    kind: 'aws-secret-key',
    keeps: ['[default]\naws_secret_access_key = ', '\nregion = eu-west-1'],
  },
  {
    name: 'GitHub token in a git remote URL',
    text: `git remote set-url origin https://${GITHUB}@github.com/acme/widgets.git`,
    secret: GITHUB,
    kind: 'github-token',
    keeps: ['git remote set-url origin https://', '@github.com/acme/widgets.git'],
  },
  {
    name: 'GitHub fine-grained token piped to gh',
    text: `echo ${GITHUB_PAT} | gh auth login --with-token`,
    secret: GITHUB_PAT,
    kind: 'github-token',
    keeps: ['echo ', ' | gh auth login --with-token'],
  },
  {
    name: 'GitLab token as the password of a clone URL',
    text: `git clone https://oauth2:${GITLAB}@gitlab.com/group/project.git`,
    secret: GITLAB,
    kind: 'gitlab-token',
    keeps: ['git clone https://oauth2:', '@gitlab.com/group/project.git'],
  },
  {
    name: 'Slack bot token in .env',
    text: `SLACK_BOT_TOKEN=${SLACK}\nSLACK_CHANNEL=#deploys`,
    secret: SLACK,
    kind: 'slack-token',
    keeps: ['SLACK_BOT_TOKEN=', '\nSLACK_CHANNEL=#deploys'],
  },
  {
    name: 'Slack webhook URL in curl',
    text: `curl -X POST https://hooks.slack.com/services/${SLACK_HOOK_PATH} -d '{"text":"done"}'`,
    secret: SLACK_HOOK_PATH,
    kind: 'slack-webhook',
    keeps: ['curl -X POST https://hooks.slack.com/services/', ` -d '{"text":"done"}'`],
  },
  {
    name: 'Stripe live key in Python',
    text: `import stripe\nstripe.api_key = "${STRIPE}"\nstripe.Charge.list()`,
    secret: STRIPE,
    kind: 'stripe-key',
    keeps: ['import stripe\nstripe.api_key = "', '"\nstripe.Charge.list()'],
  },
  {
    name: 'Google API key in a URL query',
    text: `fetch(\`https://maps.googleapis.com/maps/api/geocode/json?address=x&key=${GOOGLE}\`)`,
    secret: GOOGLE,
    kind: 'google-api-key',
    keeps: ['fetch(`https://maps.googleapis.com/maps/api/geocode/json?address=x&key=', '`)'],
  },
  {
    name: 'JWT in an Authorization header',
    text: `curl -H "Authorization: Bearer ${JWT}" https://api.example.com/me`,
    secret: JWT,
    kind: 'jwt',
    keeps: ['curl -H "Authorization: Bearer ', '" https://api.example.com/me'],
  },
  {
    name: 'npm token in .npmrc',
    text: `//registry.npmjs.org/:_authToken=${NPM}\nalways-auth=true`,
    secret: NPM,
    kind: 'npm-token',
    keeps: ['//registry.npmjs.org/:_authToken=', '\nalways-auth=true'],
  },
  {
    name: 'PyPI token in .pypirc',
    text: `[pypi]\n  username = __token__\n  password = ${PYPI}\n`,
    secret: PYPI,
    kind: 'pypi-token',
    keeps: ['[pypi]\n  username = __token__\n  password = ', '\n'],
  },
  {
    name: 'Hugging Face token on a command line',
    text: `huggingface-cli login --token ${HUGGINGFACE} --add-to-git-credential`,
    secret: HUGGINGFACE,
    kind: 'huggingface-token',
    keeps: ['huggingface-cli login --token ', ' --add-to-git-credential'],
  },
  {
    name: 'Twilio API key in YAML',
    text: `twilio:\n  key: ${TWILIO}\n  region: us1`,
    secret: TWILIO,
    kind: 'twilio-key',
    keeps: ['twilio:\n  key: ', '\n  region: us1'],
  },
  {
    name: 'SendGrid key in TypeScript',
    text: `sgMail.setApiKey('${SENDGRID}');`,
    secret: SENDGRID,
    kind: 'sendgrid-key',
    keeps: ["sgMail.setApiKey('", "');"],
  },
  {
    name: 'Azure storage account key in a connection string',
    text: `DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=${AZURE_ACCOUNT_KEY};EndpointSuffix=core.windows.net`,
    secret: AZURE_ACCOUNT_KEY,
    kind: 'azure-key',
    keeps: ['DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=', ';EndpointSuffix=core.windows.net'],
  },
  {
    name: 'Azure AD client secret',
    text: `az login --service-principal -u 7d1e -p ${AZURE_CLIENT_SECRET} --tenant acme`,
    secret: AZURE_CLIENT_SECRET,
    kind: 'azure-key',
    keeps: ['az login --service-principal -u 7d1e -p ', ' --tenant acme'],
  },
  {
    name: 'DigitalOcean token',
    text: `doctl auth init -t ${DIGITALOCEAN}`,
    secret: DIGITALOCEAN,
    kind: 'digitalocean-token',
    keeps: ['doctl auth init -t '],
  },
  {
    name: 'Discord bot token',
    text: `client.login("${DISCORD}");`,
    secret: DISCORD,
    kind: 'discord-token',
    keeps: ['client.login("', '");'],
  },
  {
    name: 'Discord webhook URL',
    text: `POST https://discord.com/api/webhooks/1234567890123456789/${DISCORD_HOOK_TOKEN} failed`,
    secret: DISCORD_HOOK_TOKEN,
    kind: 'discord-webhook',
    keeps: ['POST https://discord.com/api/webhooks/1234567890123456789/', ' failed'],
  },
  {
    name: 'Telegram bot token in an API URL',
    text: `GET https://api.telegram.org/bot${TELEGRAM}/getUpdates`,
    secret: TELEGRAM,
    kind: 'telegram-bot-token',
    keeps: ['GET https://api.telegram.org/bot', '/getUpdates'],
  },
  {
    name: 'RSA private key block',
    text: `The deploy key is:\n-----BEGIN RSA PRIVATE KEY-----\n${PEM_BODY}\n-----END RSA PRIVATE KEY-----\nAdd it to CI.`,
    secret: PEM_BODY,
    kind: 'private-key',
    keeps: ['The deploy key is:\n', '\nAdd it to CI.'],
  },
  {
    name: 'GCP service account private key (JSON-escaped PEM)',
    text: `{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n${PEM_BODY.replace(/\n/g, '\\n')}\\n-----END PRIVATE KEY-----\\n", "client_email": "ci@acme.iam.gserviceaccount.com"}`,
    secret: 'MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi',
    kind: 'private-key',
    keeps: ['{"type": "service_account", "private_key": "', '\\n", "client_email": "ci@acme.iam.gserviceaccount.com"}'],
  },
  {
    name: 'GCP service account private key id',
    text: `{"private_key_id": "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c", "project_id": "acme-prod"}`,
    secret: '0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c',
    kind: 'gcp-service-account',
    keeps: ['{"private_key_id": "', '", "project_id": "acme-prod"}'],
  },
  {
    name: 'password in a Postgres URL',
    text: `DATABASE_URL=postgres://app_user:Tr0ub4dor-3@db.internal:5432/app?sslmode=require`,
    secret: 'Tr0ub4dor-3',
    kind: 'url-password',
    keeps: ['DATABASE_URL=postgres://app_user:', '@db.internal:5432/app?sslmode=require'],
  },
  {
    name: 'password in a .env line with shell metacharacters',
    text: `DB_HOST=localhost\nDB_PASSWORD=Tr0ub4dor&3x!\nDB_PORT=5432`,
    secret: 'Tr0ub4dor&3x!',
    kind: 'env-assignment',
    keeps: ['DB_HOST=localhost\nDB_PASSWORD=', '\nDB_PORT=5432'],
  },
  {
    name: 'quoted secret token export',
    text: `export SECRET_TOKEN="q8Xr2vN5mK9pL3wT7zY1"`,
    secret: 'q8Xr2vN5mK9pL3wT7zY1',
    kind: 'env-assignment',
    keeps: ['export SECRET_TOKEN="', '"'],
  },
  {
    name: 'YAML password without digits',
    text: `database:\n  user: app\n  password: correcthorsebatterystaple\n  pool: 5`,
    secret: 'correcthorsebatterystaple',
    kind: 'env-assignment',
    keeps: ['database:\n  user: app\n  password: ', '\n  pool: 5'],
  },
  {
    name: 'YAML key ending in a digit',
    text: `backup:\n  secret2: Zq81mRt0pLx7\n`,
    secret: 'Zq81mRt0pLx7',
    kind: 'env-assignment',
    keeps: ['backup:\n  secret2: ', '\n'],
  },
  {
    name: 'JSON apiKey',
    text: `{"apiKey": "f3b2c1d0e9a8b7c6d5e4f3a2b1c0d9e8", "timeout": 30}`,
    secret: 'f3b2c1d0e9a8b7c6d5e4f3a2b1c0d9e8',
    kind: 'env-assignment',
    keeps: ['{"apiKey": "', '", "timeout": 30}'],
  },
  {
    name: 'opaque bearer token',
    text: `curl -H 'Authorization: Bearer 8f14e45fceea167a5a36dedd4bea2543' https://api.example.com`,
    secret: '8f14e45fceea167a5a36dedd4bea2543',
    kind: 'bearer-token',
    keeps: [`curl -H 'Authorization: Bearer `, `' https://api.example.com`],
  },
  {
    name: 'basic auth header',
    text: `Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==\nAccept: */*`,
    secret: 'dXNlcjpwYXNzd29yZDEyMw==',
    kind: 'basic-auth',
    keeps: ['Authorization: Basic ', '\nAccept: */*'],
  },
  {
    name: 'curl -u user:password',
    text: `curl -u admin:S3cretPass! https://jenkins.local/api/json`,
    secret: 'S3cretPass!',
    kind: 'basic-auth',
    keeps: ['curl -u admin:', ' https://jenkins.local/api/json'],
  },
  {
    name: 'password in a SQL Server connection string',
    text: `Server=db;Database=app;User Id=sa;Password=P@ssw0rd!2024;Encrypt=true`,
    secret: 'P@ssw0rd!2024',
    kind: 'env-assignment',
    keeps: ['Server=db;Database=app;User Id=sa;Password=', ';Encrypt=true'],
  },
  {
    name: 'access token in a URL query',
    text: `GET https://api.example.com/v1/data?access_token=4a7d1ed414474e4033ac29ccb8653d9b&format=json`,
    secret: '4a7d1ed414474e4033ac29ccb8653d9b',
    kind: 'env-assignment',
    keeps: ['GET https://api.example.com/v1/data?access_token=', '&format=json'],
  },
  {
    name: 'CLI flag',
    text: `mytool deploy --api-key=Zk29fPq81LmNx7Qa --region eu`,
    secret: 'Zk29fPq81LmNx7Qa',
    kind: 'env-assignment',
    keeps: ['mytool deploy --api-key=', ' --region eu'],
  },
];

describe('redactSecrets', () => {
  it('covers at least 20 kinds', () => {
    expect(new Set(CASES.map((c) => c.kind)).size).toBeGreaterThanOrEqual(20);
  });

  for (const c of CASES) {
    it(`redacts ${c.name}`, () => {
      const { text, found } = redactSecrets(c.text);
      expect(text).not.toContain(c.secret);
      expect(text).toContain(`[REDACTED:${c.kind}]`);
      for (const kept of c.keeps) expect(text).toContain(kept);
      expect(found[c.kind]).toBeGreaterThanOrEqual(1);
    });
  }

  it('redacts a whole OpenSSH private key block and counts every secret of a mixed text', () => {
    const text = [
      'Setup notes:',
      '-----BEGIN OPENSSH PRIVATE KEY-----',
      'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW',
      'QyNTUxOQAAACDk3J9f1cBq0iZP3xX0Vq6x4kZbqEo1LwqFf5t2QnH0wAAAAJgrQW5TK0Fu',
      '-----END OPENSSH PRIVATE KEY-----',
      `then run with OPENAI_API_KEY=${OPENAI} and GITHUB_TOKEN=${GITHUB}.`,
    ].join('\n');
    const { text: out, found } = redactSecrets(text);
    expect(out).toBe(
      'Setup notes:\n[REDACTED:private-key]\nthen run with OPENAI_API_KEY=[REDACTED:openai-key] and GITHUB_TOKEN=[REDACTED:github-token].',
    );
    expect(found).toEqual({ 'private-key': 1, 'openai-key': 1, 'github-token': 1 });
  });

  it('drops the body of an unclosed private key block but keeps the prose after it', () => {
    const { text } = redactSecrets(`key:\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oGM3Mz5YpQcHoAoGCCqGSM49\n\nThat was truncated.`);
    expect(text).toBe('key:\n[REDACTED:private-key]\n\nThat was truncated.');
  });

  it('leaves look-alikes byte for byte', () => {
    const lookAlikes = [
      'commit 3f786850e387550fdab836ed7e6dc881de23001b (HEAD -> main)',
      'git checkout a1b2c3d && git cherry-pick 3f78685e3875',
      'session id: 550e8400-e29b-41d4-a716-446655440000',
      '{"sessionId": "c0a8012e-7d3f-4b1a-9e2c-5f6d7e8f9a0b", "uuid": "0b5f1f0e-1c2d-4e3f-8a9b-0c1d2e3f4a5b"}',
      '<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==">',
      '"integrity": "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs7YrXyxjhqIIRHRZbDFRDTJ7EQ=="',
      'checksum = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"',
      'resolved "https://registry.yarnpkg.com/left-pad/-/left-pad-1.3.0.tgz#5b8a3a7765dfe001261dde915589e782f8c94d1e"',
      'CREATE TABLE users (id INTEGER PRIMARY KEY, password_hash TEXT NOT NULL, token_count INTEGER);',
      'interface User { password_hash: string; token?: string; tokenType: "Bearer"; }',
      'let token_count = 5;\nconst max_tokens = 4096;\nmax_tokens: 8192',
      'const apiKey = process.env.OPENAI_API_KEY;\nif (!process.env.API_KEY) throw new Error("missing");',
      'API_KEY=${API_KEY}\nexport GITHUB_TOKEN=$GH_TOKEN\nAuthorization: Bearer ${TOKEN}',
      'password = getpass.getpass()\nself.secret_key = settings.SECRET_KEY\nif (token === expected) return;',
      'fetch(url, { credentials: "include" });\nconst auth: boolean = true;',
      '"author": "Jane Doe <jane@example.com>", "tokenizer": "cl100k_base"',
      'Basic usage: call the API with Bearer authentication enabled.',
      'See https://user@example.com/docs and http://localhost:3000/api?page=2 or git@github.com:acme/widgets.git',
      'The task-list and risk-assessment-framework-document-v2 pages cover this.',
      'export type AuthResult = "AUTHORIZED" | "REDIRECT";\nclient_secret: z.ZodOptional<z.ZodString>;',
      'version 1.2.3 released on example.com; mail ops@example.com',
    ];
    for (const text of lookAlikes) {
      const result = redactSecrets(text);
      expect(result.text).toBe(text);
      expect(result.found).toEqual({});
    }
  });

  it('accepts placeholders either way but never mangles ${VAR}', () => {
    for (const text of ['API_KEY=your-key-here', 'TOKEN=<your-token>', 'PASSWORD=xxx', 'SECRET=***']) {
      expect(redactSecrets(text).text).not.toMatch(/\[REDACTED:[^\]]*\]\S/);
    }
    expect(redactSecrets('DB_URL=postgres://app:${DB_PASSWORD}@db/app').text).toBe('DB_URL=postgres://app:${DB_PASSWORD}@db/app');
  });

  it('returns the same string instance when there is nothing to redact', () => {
    const text = 'function add(a: number, b: number) {\n  return a + b; // see src/math.ts:12\n}';
    expect(redactSecrets(text).text).toBe(text);
    expect(sanitize(text).text).toBe(text);
  });

  it('is idempotent', () => {
    for (const c of CASES) {
      const once = sanitize(c.text).text;
      const twice = sanitize(once);
      expect(twice.text).toBe(once);
      expect(twice.found).toEqual({});
    }
  });
});

describe('stripPrivate', () => {
  it('removes spans, case-insensitive and across lines', () => {
    expect(stripPrivate('keep <private>my salary is 100k</private> this')).toBe('keep  this');
    expect(stripPrivate('a <PRIVATE>\nline one\nline two\n</Private>b')).toBe('a b');
    expect(stripPrivate('x<private>1</private>y<private>2</private>z')).toBe('xyz');
  });

  it('drops everything after an unclosed tag', () => {
    expect(stripPrivate('visible <private>hidden\nstill hidden')).toBe('visible ');
  });

  it('counts nested spans and leaves a stray closing tag', () => {
    expect(stripPrivate('a<private>b<private>c</private>d</private>e')).toBe('ae');
    expect(stripPrivate('a</private>b')).toBe('a</private>b');
  });

  it('returns the same instance without a tag', () => {
    const text = 'const keys: Array<PrivateKey> = []; // <privacy> is not a tag';
    expect(stripPrivate(text)).toBe(text);
  });
});

describe('sanitize', () => {
  it('strips private spans before redacting', () => {
    const { text, found } = sanitize(`<private>${OPENAI}</private>token=${GITHUB}`);
    expect(text).toBe('token=[REDACTED:github-token]');
    expect(found).toEqual({ 'github-token': 1 });
  });
});
