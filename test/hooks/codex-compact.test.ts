/**
 * Codex compacts too (issue #15 item 8): its PreCompact hook ingests and prepares the post-compact
 * pool but prints nothing (Codex's compaction request does not take hook output), and the
 * SessionStart(compact) after the rollout's `compacted` line gives back what was read before it.
 * The real client is driven in test/e2e/codex-compact.test.ts.
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDirs } from '../helpers/cli.js';
import { hookInProcess } from './in-process.js';

const dir = tempDirs();

const hook = hookInProcess;

const SESSION = '019a0000-2222-7333-8444-555566667777';
const SIGNATURE = 'export function backoffDelay(attempt: number, baseMs = 250): number {';
let clock = Date.parse('2026-02-01T09:00:00.000Z');
const line = (type: string, payload: unknown): string => JSON.stringify({ timestamp: new Date((clock += 1000)).toISOString(), type, payload });

describe('Codex: PreCompact and SessionStart(compact)', () => {
  it('prints no guidance at PreCompact, and gives the signature back with path:line after the compaction', async () => {
    const home = dir('cairn-codex-home-');
    const repo = dir('cairn-codex-repo-');
    mkdirSync(join(repo, '.git'));
    writeFileSync(join(repo, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    const rollout = join(dir('cairn-codex-sessions-'), `rollout-2026-02-01T09-00-00-${SESSION}.jsonl`);
    const output = `Chunk ID: ab12\nWall time: 0.0 seconds\nProcess exited with code 0\nOriginal token count: 40\nOutput:\n// line 38\n// line 39\n${SIGNATURE}\n  return Math.min(baseMs * 2 ** attempt, 8_000);\n}\n`;
    writeFileSync(
      rollout,
      [
        line('session_meta', { id: SESSION, timestamp: '2026-02-01T09:00:00.000Z', cwd: repo, originator: 'codex_exec', cli_version: '0.171.0', source: 'exec', model_provider: 'fake' }),
        line('response_item', { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'How long does the retry back-off wait?' }] }),
        line('response_item', { type: 'function_call', name: 'exec_command', arguments: JSON.stringify({ cmd: "sed -n '38,42p' src/net/retry.ts" }), call_id: 'call_1' }),
        line('response_item', { type: 'function_call_output', call_id: 'call_1', output }),
      ].join('\n') + '\n',
    );
    const base = { session_id: SESSION, transcript_path: rollout, cwd: repo, model: 'gpt-5', turn_id: 'turn-1' };

    const pre = await hook('pre-compact', { ...base, hook_event_name: 'PreCompact', trigger: 'auto' }, home, repo);
    expect(pre.code).toBe(0);
    expect(pre.out).toBe('');

    appendFileSync(rollout, `${line('compacted', { message: 'Summary: the user asked about the retry policy.', replacement_history: [] })}\n`);
    const after = await hook('session-start', { ...base, hook_event_name: 'SessionStart', source: 'compact' }, home, repo);
    expect(after.code).toBe(0);
    const context = (JSON.parse(after.out) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext;
    expect(context).toContain('cairn: the conversation was just compacted');
    expect(context).toContain('src/net/retry.ts:40');
    expect(context).toContain(SIGNATURE);
    // What PreCompact printed nothing of is not treated as carried by the summary.
    expect(context).not.toContain('listed in the /compact output above');
  });
});
