import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModel, type FakeModel, type RecordedRequest } from './fake-model.js';
import { baseEnv, cairn, CODEX, occurrences, run, sandbox, SCORING_INTERNALS, skipReason, type Sandbox } from './harness.js';

// The real Codex CLI (from the npm registry, installed by .ci/run) runs `codex exec` against the
// fake model server (OpenAI Responses API, streaming), with cairn wired in by `cairn install codex`
// into a config.toml that already holds the user's model provider.

const reason = skipReason('Codex CLI', CODEX);
if (reason) console.warn(`[e2e] Codex tests skipped: ${reason}`);

const M1 = 'The release checklist lives in docs/RELEASING.md: run make verify before tagging (ALPHA-7731).';
const M2 = 'Deploy with scripts/ship.sh --prod from the repository root (BRAVO-5512).';

interface ResponsesBody {
  instructions?: string;
  input?: Array<{ type?: string; role?: string; content?: unknown; output?: unknown; name?: string }>;
  tools?: Array<{ type: string; name?: string; description?: string; tools?: Array<{ name: string; description?: string }> }>;
}
const bodyOf = (r: RecordedRequest): ResponsesBody => (r.body ?? {}) as ResponsesBody;
const readable = (r: RecordedRequest): string => JSON.stringify({ instructions: bodyOf(r).instructions, input: bodyOf(r).input });
const cairnNamespace = (r: RecordedRequest) => (bodyOf(r).tools ?? []).find((t) => t.name === 'mcp__cairn');
const toolOutputs = (r: RecordedRequest): string[] =>
  (bodyOf(r).input ?? []).filter((i) => i.type === 'function_call_output').map((i) => (typeof i.output === 'string' ? i.output : JSON.stringify(i.output)));

describe.skipIf(reason !== null)('Codex CLI (real client) with cairn', () => {
  let fake: FakeModel;
  let box: Sandbox;
  beforeAll(async () => {
    fake = await startFakeModel();
    box = sandbox('cairn-e2e-codex-');
  });
  afterAll(async () => {
    await fake.close();
    box.cleanup();
  });

  let requests: RecordedRequest[] = [];
  it('cairn install codex: lists cairn’s tools, starts with the project’s context, gets recall’s text back', { timeout: 120_000 }, async () => {
    const codexHome = join(box.home, '.codex');
    mkdirSync(codexHome, { recursive: true });
    // The user's own config: cairn must keep it (and its comment) while adding itself.
    const config = `# my provider\nmodel = "gpt-5"\nmodel_provider = "fake"\n\n[model_providers.fake]\nname = "fake"\nbase_url = "${fake.url}/v1"\nwire_api = "responses"\nenv_key = "FAKE_MODEL_KEY"\n`;
    writeFileSync(join(codexHome, 'config.toml'), config);
    cairn(box, ['remember', M1]);
    cairn(box, ['install', 'codex']);
    expect(readFileSync(join(codexHome, 'config.toml'), 'utf8')).toContain('# my provider');

    let stored = false;
    fake.setScript((request) => {
      if (toolOutputs(request).length > 0 || !cairnNamespace(request)) return { text: 'done' };
      if (!stored) {
        cairn(box, ['remember', M2]);
        stored = true;
      }
      return { tool: 'recall', namespace: 'mcp__cairn', input: { query: 'deploy ship script prod' } };
    });
    // Codex runs hooks only once trusted (in its /hooks screen); this automated run vouches for them.
    const result = await run(
      CODEX!,
      // Wait for MCP servers at startup (Codex's grace period is short; CI machines are busy).
      ['exec', '--skip-git-repo-check', '--dangerously-bypass-hook-trust', '-c', 'mcp_optional_startup_grace_ms=30000', 'What does the release checklist say? Then find how to deploy.'],
      { cwd: box.project, env: baseEnv(box, { CODEX_HOME: codexHome, FAKE_MODEL_KEY: 'fake' }), timeoutMs: 90_000 },
    );
    expect(result.code, result.stderr.slice(-2000)).toBe(0);

    requests = fake.modelRequests().filter((r) => r.api === 'openai');
    expect(requests.length).toBeGreaterThanOrEqual(2);
    const first = requests[0]!;
    expect(cairnNamespace(first)?.tools?.map((t) => t.name)).toEqual(expect.arrayContaining(['recall', 'remember', 'context']));
    expect(readable(first), 'the project’s context at session start').toContain('ALPHA-7731');
    expect(toolOutputs(requests[requests.length - 1]!).join('\n')).toContain(M2);
  });

  // Issue #16 item 2: cairn's tools described as memory, what the model reads, no repeats.
  it('the model is told cairn’s tools are memory: the namespace has a description (issue #16 item 2)', () => {
    // With no server instructions Codex shows "Tools in the mcp__cairn namespace.".
    expect(cairnNamespace(requests[0]!)?.description ?? '').toMatch(/memor/i);
  });

  it('recall’s result carries no scoring internals (issue #16 item 2)', () => {
    const outputs = requests.flatMap(toolOutputs).join('\n');
    expect(outputs).toContain(M2);
    for (const key of SCORING_INTERNALS) expect(outputs, `no scoring internals (${key})`).not.toContain(key);
  });

  it('no memory is repeated within a request: session start and the prompt hook (issue #16 item 2)', () => {
    expect(requests.length).toBeGreaterThan(0);
    for (const request of requests) {
      for (const marker of ['ALPHA-7731', 'BRAVO-5512']) expect(occurrences(readable(request), marker), `${marker} at most once in one request`).toBeLessThanOrEqual(1);
    }
  });

  // Codex spills a hook's context over its handler's additionalContextLimit (default 2,500 tokens)
  // to a file and gives the model a preview: `cairn install codex` sets the limit on SessionStart.
  it('a session-start context over Codex’s default 2,500 tokens reaches the model whole', { timeout: 120_000 }, async () => {
    const bigBox = sandbox('cairn-e2e-codex-big-');
    try {
      const codexHome = join(bigBox.home, '.codex');
      mkdirSync(codexHome, { recursive: true });
      writeFileSync(join(codexHome, 'config.toml'), `model = "gpt-5"\nmodel_provider = "fake"\n\n[model_providers.fake]\nname = "fake"\nbase_url = "${fake.url}/v1"\nwire_api = "responses"\nenv_key = "FAKE_MODEL_KEY"\n`);
      const facts = Array.from(
        { length: 90 },
        (_, i) => `Module m${i} keeps its retry budget in src/m${i}/retry.ts:${40 + i} as RETRY_${i}_MAX; never raise it above ${i + 3} (CX-${String(i).padStart(3, '0')}).`,
      );
      for (const fact of facts) cairn(bigBox, ['remember', fact]);
      cairn(bigBox, ['install', 'codex']);
      fake.requests.length = 0;
      fake.setScript(() => ({ text: 'done' }));
      const result = await run(CODEX!, ['exec', '--skip-git-repo-check', '--dangerously-bypass-hook-trust', 'hello'], {
        cwd: bigBox.project,
        env: baseEnv(bigBox, { CODEX_HOME: codexHome, FAKE_MODEL_KEY: 'fake' }),
        timeoutMs: 90_000,
      });
      expect(result.code, result.stderr.slice(-2000)).toBe(0);
      const first = fake.modelRequests().find((r) => r.api === 'openai');
      expect(first, 'a request').toBeDefined();
      const text = readable(first!);
      expect(text, 'no spilled preview').not.toMatch(/truncated output|original token count/i);
      const delivered = new Set(text.match(/CX-\d{3}/g) ?? []);
      const chars = facts.filter((f) => delivered.has(/CX-\d{3}/.exec(f)![0])).reduce((n, f) => n + f.length, 0);
      // 2,500 tokens of these lines are well under 8,000 characters.
      expect(chars, 'characters of memories that reached the model').toBeGreaterThan(8_000);
    } finally {
      bigBox.cleanup();
    }
  });

  // Codex compacts on its own past model_auto_compact_token_limit (here at the start of a resumed
  // turn) and then runs SessionStart with source "compact". cairn answers it from the store: its
  // rollout is not a Claude Code transcript, so the hook ingests what is new first (no deferral).
  // The compaction in the middle of a turn, with PreCompact, is test/e2e/codex-compact.test.ts.
  it('after an automatic compaction, SessionStart(compact) puts cairn’s post-compact context in the next request', { timeout: 240_000 }, async () => {
    const compactBox = sandbox('cairn-e2e-codex-compact-');
    try {
      const codexHome = join(compactBox.home, '.codex');
      mkdirSync(codexHome, { recursive: true });
      writeFileSync(join(codexHome, 'config.toml'), `model = "gpt-5"\nmodel_provider = "fake"\nmodel_auto_compact_token_limit = 5\n\n[model_providers.fake]\nname = "fake"\nbase_url = "${fake.url}/v1"\nwire_api = "responses"\nenv_key = "FAKE_MODEL_KEY"\n`);
      cairn(compactBox, ['remember', M1]);
      cairn(compactBox, ['install', 'codex']);
      fake.requests.length = 0;
      fake.setScript(() => ({ text: 'Noted.' }));
      const env = baseEnv(compactBox, { CODEX_HOME: codexHome, FAKE_MODEL_KEY: 'fake' });
      const exec = (args: string[]) => run(CODEX!, ['exec', '--skip-git-repo-check', '--dangerously-bypass-hook-trust', ...args], { cwd: compactBox.project, env, timeoutMs: 90_000 });
      const first = await exec(['Remember we are preparing the release.']);
      expect(first.code, first.stderr.slice(-2000)).toBe(0);
      const resumed = await exec(['resume', '--last', 'Which branch do we tag from?']);
      expect(resumed.code, resumed.stderr.slice(-2000)).toBe(0);
      const all = fake.modelRequests().filter((r) => r.api === 'openai');
      const compaction = all.findIndex((r) => r.raw.includes('CONTEXT CHECKPOINT'));
      expect(compaction, 'Codex sent a compaction request').toBeGreaterThanOrEqual(0);
      const next = all[compaction + 1];
      expect(next, 'a request after the compaction').toBeDefined();
      expect(readable(next!)).toContain('the conversation was just compacted');
      expect(readable(next!)).toContain('ALPHA-7731');
      const starts = readFileSync(join(compactBox.cairnHome, 'logs', 'hooks.log'), 'utf8').split('\n').filter((l) => l.includes('"event":"session-start"') && l.includes('"source":"compact"'));
      expect(starts.length, 'SessionStart(compact) ran').toBeGreaterThanOrEqual(1);
      expect(starts[0]).toContain('"output":"json"');
      expect(starts[0]).not.toContain('"ingest":"deferred"');
    } finally {
      compactBox.cleanup();
    }
  });
});
