/**
 * Headless runs (`claude -p`, `codex exec`) leave no continuation notes (#16 item 5): before,
 * every `claude -p` run stored "Task: … Latest update: … Session: <uuid>", and after three runs
 * the same recall returned three of them. Headless is read from what the run carries: Claude Code
 * 2.1+ writes `entrypoint` (`sdk-cli` for `-p`) on every transcript line, Codex writes
 * `originator: codex_exec` / `source: exec` in `session_meta`, and the hooks see
 * `CLAUDE_CODE_ENTRYPOINT` in their environment (Claude Code 2.0 sets it but does not write it
 * to the transcript).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createCairn } from '../../src/cairn.js';
import { runHook } from '../../src/hooks/run.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { tempDirs } from '../helpers/cli.js';
import { TranscriptWriter } from '../hooks/transcript.js';

/** Every directory made here is removed after this file's tests. */
const dir = tempDirs();

/** One `claude -p "…"` run: a question, a file read, the answer; `entrypoint` as that version writes it. */
function headlessRun(folder: string, session: string, cwd: string, entrypoint: string | null): string {
  const t = new TranscriptWriter(session, cwd)
    .user('which port does the dev server listen on?')
    .tool('Read', { file_path: `${cwd}/vite.config.ts` }, 'export default { server: { port: 5173 } }')
    .assistant('The dev server listens on port 5173 (`server.port` in vite.config.ts).');
  const lines = entrypoint === null ? t.lines : t.lines.map((line) => JSON.stringify({ ...JSON.parse(line), entrypoint }));
  const path = join(folder, `${session}.jsonl`);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

async function stopHook(home: string, cwd: string, session: string, transcript: string, env: Record<string, string> = {}): Promise<number> {
  const input = { session_id: session, transcript_path: transcript, cwd, hook_event_name: 'Stop' };
  return runHook('stop', { stdin: Readable.from([JSON.stringify(input)]), stdout: new PassThrough(), env: { CAIRN_HOOK_INLINE: '1', ...env }, cwd, home });
}

async function memoriesIn(home: string): Promise<{ continuations: string[]; recalled: number }> {
  const cairn = createCairn({ store: await openSqliteStore(join(home, 'cairn.db')), actor: 'test' });
  try {
    const all = await cairn.list({ allProjects: true, limit: 1000 });
    const { hits } = await cairn.recall({ query: 'dev server port', allProjects: true, k: 20, touch: false, checkFiles: false });
    return { continuations: all.filter((m) => m.kind === 'continuation').map((m) => m.text), recalled: hits.length };
  } finally {
    await cairn.close();
  }
}

describe('headless runs leave no continuation notes', () => {
  const sessions = ['11111111-1111-4111-8111-111111111111', '22222222-2222-4222-8222-222222222222', '33333333-3333-4333-8333-333333333333'];

  it('claude -p (2.1: entrypoint "sdk-cli" in the transcript): three runs, no note, recall does not grow', async () => {
    const home = dir('cairn-headless-');
    const cwd = dir('cairn-headless-proj-');
    const folder = join(home, 'transcripts');
    mkdirSync(folder, { recursive: true });
    const recalled: number[] = [];
    for (const session of sessions) {
      expect(await stopHook(home, cwd, session, headlessRun(folder, session, cwd, 'sdk-cli'))).toBe(0);
      const state = await memoriesIn(home);
      expect(state.continuations).toEqual([]);
      recalled.push(state.recalled);
    }
    expect(recalled[2]).toBe(recalled[0]);
  });

  it('claude -p (2.0: no entrypoint in the transcript) is known from CLAUDE_CODE_ENTRYPOINT in the hook', async () => {
    const home = dir('cairn-headless-env-');
    const cwd = dir('cairn-headless-env-proj-');
    const folder = join(home, 'transcripts');
    mkdirSync(folder, { recursive: true });
    for (const session of sessions) await stopHook(home, cwd, session, headlessRun(folder, session, cwd, null), { CLAUDE_CODE_ENTRYPOINT: 'sdk-cli' });
    expect((await memoriesIn(home)).continuations).toEqual([]);
  });

  it('interactive sessions still get one note each (entrypoint "cli", or none written)', async () => {
    const home = dir('cairn-interactive-');
    const cwd = dir('cairn-interactive-proj-');
    const folder = join(home, 'transcripts');
    mkdirSync(folder, { recursive: true });
    await stopHook(home, cwd, sessions[0] as string, headlessRun(folder, sessions[0] as string, cwd, 'cli'));
    await stopHook(home, cwd, sessions[1] as string, headlessRun(folder, sessions[1] as string, cwd, null), { CLAUDE_CODE_ENTRYPOINT: 'cli' });
    const { continuations } = await memoriesIn(home);
    expect(continuations).toHaveLength(2);
    expect(continuations[0]).toMatch(/^Task: which port does the dev server listen on\?/);
  });

  it('codex exec (session_meta originator "codex_exec") leaves no note; an interactive rollout does', async () => {
    const home = dir('cairn-codex-exec-');
    const cwd = dir('cairn-codex-exec-proj-');
    const rollout = (id: string, originator: string, source: string): string => {
      const lines = [
        { timestamp: '2026-02-01T09:00:00.000Z', type: 'session_meta', payload: { id, timestamp: '2026-02-01T09:00:00.000Z', cwd, originator, cli_version: '0.169.0', source } },
        { timestamp: '2026-02-01T09:00:01.000Z', type: 'event_msg', payload: { type: 'user_message', message: 'which port does the dev server listen on?' } },
        { timestamp: '2026-02-01T09:00:05.000Z', type: 'event_msg', payload: { type: 'agent_message', message: 'The dev server listens on port 5173 (`server.port` in vite.config.ts).' } },
      ];
      const path = join(home, `rollout-2026-02-01T09-00-00-${id}.jsonl`);
      writeFileSync(path, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
      return path;
    };
    const cairn = createCairn({ store: await openSqliteStore(join(home, 'cairn.db')), actor: 'test' });
    try {
      await cairn.ingest([rollout('019a0000-1111-7222-8333-000000000001', 'codex_exec', 'exec'), rollout('019a0000-1111-7222-8333-000000000002', 'codex_cli_rs', 'cli')]);
      const notes = (await cairn.list({ allProjects: true, limit: 100 })).filter((m) => m.kind === 'continuation');
      expect(notes.map((m) => m.session)).toEqual(['019a0000-1111-7222-8333-000000000002']);
    } finally {
      await cairn.close();
    }
  });
});
