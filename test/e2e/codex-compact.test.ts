import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModel, type FakeModel, type RecordedRequest } from './fake-model.js';
import { baseEnv, cairn, CODEX, run, sandbox, skipReason, type Sandbox } from './harness.js';

// Issue #15 item 8: a Codex compaction gets cairn's post-compact context. The real Codex CLI
// compacts on its own when the model reports a context over `model_auto_compact_token_limit`; the
// fake model server reports one after a shell command, answers Codex's compaction request with a
// short summary, and the test reads what the model is sent after the compaction.

const reason = skipReason('Codex CLI', CODEX);
if (reason) console.warn(`[e2e] Codex compaction tests skipped: ${reason}`);

const SIGNATURE = 'export function backoffDelay(attempt: number, baseMs = 250): number {';
const SOURCE = ['// retry policy', ...Array.from({ length: 38 }, (_, i) => `// line ${i + 2}`), SIGNATURE, '  return Math.min(baseMs * 2 ** attempt, 8_000);', '}', ''].join('\n');
const COMMAND = 'sed -n 38,42p src/net/retry.ts';
const COMPACTION_PROMPT = 'CONTEXT CHECKPOINT COMPACTION';

const inputOf = (r: RecordedRequest): unknown[] => ((r.body ?? {}) as { input?: unknown[] }).input ?? [];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));
}

describe.skipIf(reason !== null)('Codex CLI (real client) compacting with cairn', () => {
  let fake: FakeModel;
  let box: Sandbox;
  beforeAll(async () => {
    fake = await startFakeModel();
    box = sandbox('cairn-e2e-codex-compact-');
  });
  afterAll(async () => {
    await fake.close();
    box.cleanup();
  });

  it('after Codex compacts, the next request carries what the session established before it', { timeout: 150_000 }, async () => {
    const codexHome = join(box.home, '.codex');
    mkdirSync(codexHome, { recursive: true });
    mkdirSync(join(box.project, 'src', 'net'), { recursive: true });
    writeFileSync(join(box.project, 'src', 'net', 'retry.ts'), SOURCE);
    const config = `model = "gpt-5"\nmodel_provider = "fake"\nmodel_auto_compact_token_limit = 2000\n\n[model_providers.fake]\nname = "fake"\nbase_url = "${fake.url}/v1"\nwire_api = "responses"\nenv_key = "FAKE_MODEL_KEY"\n`;
    writeFileSync(join(codexHome, 'config.toml'), config);
    cairn(box, ['install', 'codex']);
    const hooks = JSON.parse(readFileSync(join(codexHome, 'hooks.json'), 'utf8')) as { hooks: Record<string, Array<{ hooks: Array<{ command: string }> }>> };
    expect(hooks.hooks.PreCompact?.[0]?.hooks[0]?.command, 'cairn install codex registers PreCompact').toMatch(/cairn-hook\.cjs pre-compact$/);

    let ranCommand = false;
    fake.setScript((request) => {
      if (request.raw.includes(COMPACTION_PROMPT)) return { text: 'Summary: the user asked about the retry policy; the agent printed part of the file.' };
      if (!ranCommand) {
        ranCommand = true;
        // A context this large is over the limit: Codex compacts before it samples again.
        return { tool: 'exec_command', input: { cmd: COMMAND }, inputTokens: 500_000 };
      }
      return { text: 'done' };
    });
    const result = await run(
      CODEX!,
      ['exec', '--skip-git-repo-check', '--dangerously-bypass-hook-trust', '--dangerously-bypass-approvals-and-sandbox', '-c', 'mcp_optional_startup_grace_ms=30000', 'How long does the retry back-off wait?'],
      { cwd: box.project, env: baseEnv(box, { CODEX_HOME: codexHome, FAKE_MODEL_KEY: 'fake' }), timeoutMs: 120_000 },
    );
    expect(result.code, result.stderr.slice(-2000)).toBe(0);

    const rollout = files(join(codexHome, 'sessions')).find((f) => f.endsWith('.jsonl'));
    expect(rollout, 'Codex wrote a rollout').toBeDefined();
    const lines = readFileSync(rollout!, 'utf8').split('\n').filter((l) => l.length > 0);
    expect(lines.some((l) => (JSON.parse(l) as { type?: string }).type === 'compacted'), 'Codex compacted').toBe(true);
    const commandOutput = lines.find((l) => l.includes('"function_call_output"') && l.includes('backoffDelay'));
    expect(commandOutput, 'the command ran and printed the signature before the compaction').toBeDefined();

    const requests = fake.modelRequests().filter((r) => r.api === 'openai');
    const compaction = requests.findIndex((r) => r.raw.includes(COMPACTION_PROMPT));
    expect(compaction, 'Codex sent its compaction request').toBeGreaterThan(0);
    const after = requests.slice(compaction + 1);
    expect(after.length, 'Codex sampled again after compacting').toBeGreaterThan(0);
    const next = JSON.stringify(inputOf(after[0]!));
    // The compacted history no longer holds the command's output; cairn gives its details back.
    expect(next).not.toContain('function_call_output');
    expect(next).toContain('cairn: the conversation was just compacted');
    expect(next).toContain('src/net/retry.ts');
    expect(next).toContain('backoffDelay(attempt: number, baseMs = 250)');
    // Calls share a line per file and reason (no bare identifier lines): the command printed `Math.min(`.
    expect(next).toContain('- calls seen in output: `Math.min(`');

    const log = readFileSync(join(box.cairnHome, 'logs', 'hooks.log'), 'utf8').split('\n').filter((l) => l.includes('"message":"hook"')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const pre = log.find((e) => e.event === 'pre-compact');
    // Codex does not put PreCompact's output into its compaction request: cairn prints nothing there.
    expect(pre?.output).toBe('none');
    const start = log.find((e) => e.event === 'session-start' && e.source === 'compact');
    expect(start?.output).toBe('json');
    // The pool PreCompact's child prepared (inline in this environment) served the start.
    expect(start?.cache).toBe('hit');
  });
});
