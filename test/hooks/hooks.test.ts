import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { estimateTokens } from '../../src/tokens.js';
import { hookInProcess } from './in-process.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { runCli, tempDirs } from '../helpers/cli.js';
import { TranscriptWriter } from './transcript.js';

/** Every directory made here is removed after this file's tests. */
const dir = tempDirs();

const hook = (event: string, input: unknown, home: string, cwd: string): Promise<{ code: number; out: string }> => hookInProcess(event, input, home, cwd);

const SIGNATURE = 'process_workspace_changes(path: Path, db: Database, *, force: bool = False) -> list[ChangeResult]';

describe('Claude Code hooks, end to end', () => {
  it('after /compact, session-start gives back the exact signature, path:line, invariant and correction', async () => {
    const home = dir('cairn-hook-home-');
    const repo = dir('cairn-hook-repo-');
    mkdirSync(join(repo, '.git'));
    writeFileSync(join(repo, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    mkdirSync(join(repo, 'src', 'workspace'), { recursive: true });
    writeFileSync(join(repo, 'src', 'workspace', 'resolver.py'), `${'# header\n'.repeat(213)}def ${SIGNATURE}:\n    acquire_lock()\n`);
    const transcript = join(dir('cairn-hook-claude-'), 'sess-1.jsonl');
    const t = new TranscriptWriter('sess-1', repo);
    const base = { session_id: 'sess-1', transcript_path: transcript, cwd: repo };
    const write = () => writeFileSync(transcript, t.text());

    t.user('The watcher tests are flaky. Find where workspace changes are processed and fix the race.');
    write();
    const start = await hook('session-start', { ...base, hook_event_name: 'SessionStart', source: 'startup' }, home, repo);
    expect(start.code).toBe(0);

    t.tool('Grep', { pattern: 'def process_workspace_changes', path: 'src' }, `src/workspace/resolver.py:214:def ${SIGNATURE}:`);
    t.assistant(
      `Found it: \`${SIGNATURE}\` is defined at src/workspace/resolver.py:214. ` +
        'Invariant: acquire_lock() must be called before touching workspace metadata, because the filesystem watcher races with the resolver.',
    );
    t.tool('Bash', { command: 'pytest tests/test_watcher.py -x -q', description: 'Run watcher tests' }, '5 passed in 0.42s');
    t.assistant('I will mock the database in test_watcher.py so the test no longer touches disk.');
    t.user("No, don't mock the database in the watcher tests — use the sqlite fixture from tests/conftest.py instead.");
    t.assistant('Understood: I will use the sqlite fixture from tests/conftest.py and keep the real database.');
    write();
    const prompt = await hook('prompt', { ...base, hook_event_name: 'UserPromptSubmit', prompt: 'where is process_workspace_changes defined?' }, home, repo);
    expect(prompt.code).toBe(0);

    // An automatic compaction: only the summary carries PreCompact's guidance into the next window.
    const pre = await hook('pre-compact', { ...base, hook_event_name: 'PreCompact', trigger: 'auto', custom_instructions: '' }, home, repo);
    expect(pre.code).toBe(0);
    expect(pre.out).toContain('process_workspace_changes');

    t.compact('The user asked to fix flaky watcher tests. We looked at the workspace resolver and discussed locking. Tests were run.');
    write();
    const after = await hook('session-start', { ...base, hook_event_name: 'SessionStart', source: 'compact' }, home, repo);
    expect(after.code).toBe(0);
    const output = JSON.parse(after.out) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    expect(output.hookSpecificOutput.hookEventName).toBe('SessionStart');
    const context = output.hookSpecificOutput.additionalContext;
    expect(context).toContain(SIGNATURE);
    expect(context).toContain('src/workspace/resolver.py:214');
    expect(context).toMatch(/acquire_lock\(\) must be called before touching workspace metadata/);
    expect(context).toMatch(/don't mock the database/i);
    expect(estimateTokens(context)).toBeLessThanOrEqual(2100);

    // Resuming in the same window gives none of those details again (memories and session facts).
    const resumed = await hook('session-start', { ...base, hook_event_name: 'SessionStart', source: 'resume' }, home, repo);
    expect(resumed.out).not.toContain('src/workspace/resolver.py:214');
    expect(resumed.out).not.toContain(SIGNATURE);
    const store = await openSqliteStore(join(home, 'cairn.db'));
    try {
      const compacted = (await store.ledger.injections('sess-1', { window: 1 }))[0];
      expect(compacted?.name).toBe('session-start');
      expect(compacted?.facts.length, 'session facts recorded in the ledger').toBeGreaterThan(0);
    } finally {
      await store.close();
    }

    // A later prompt about the function: the memory is already in this context window (the
    // post-compact context gave it), so the prompt hook does not give it again…
    const later = await hook('prompt', { ...base, prompt: 'remind me of the process_workspace_changes signature' }, home, repo);
    expect(later.out).not.toContain(SIGNATURE);
    // …while another session gets it, within the small budget.
    const other = await hook('prompt', { ...base, session_id: 'sess-2', prompt: 'remind me of the process_workspace_changes signature' }, home, repo);
    const injected = (JSON.parse(other.out) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext;
    expect(injected).toContain('process_workspace_changes');
    expect(estimateTokens(injected)).toBeLessThanOrEqual(300);

    // The injected context is never re-ingested as the user's words.
    appendFileSync(transcript, `${JSON.stringify({ type: 'user', sessionId: 'sess-1', cwd: repo, uuid: 'u-meta', timestamp: new Date().toISOString(), isMeta: true, message: { role: 'user', content: `<system-reminder>${context}</system-reminder>` } })}\n`);
    const stop = await hook('stop', { ...base, hook_event_name: 'Stop' }, home, repo);
    expect(stop.code).toBe(0);
    const history = await runCli(['history', 'compacted', '--role', 'user', '--json'], { home, cwd: repo });
    expect(history.json<unknown[]>()).toEqual([]);
  });

  it('injects nothing for an unrelated prompt, and nothing breaks on bad input', async () => {
    const home = dir('cairn-hook-home2-');
    const cwd = dir('cairn-hook-cwd2-');
    await runCli(['remember', 'the deploy script is scripts/deploy.sh and needs AWS_PROFILE=prod', '--kind', 'procedure'], { home, cwd });
    const unrelated = await hook('prompt', { session_id: 's', cwd, prompt: 'write a haiku about autumn leaves' }, home, cwd);
    expect(unrelated).toEqual({ code: 0, out: '' });
    const related = await hook('prompt', { session_id: 's', cwd, prompt: 'how do I run the deploy script?' }, home, cwd);
    expect(related.out).toContain('scripts/deploy.sh');
    for (const bad of ['not json', '[1,2]', '{"session_id": 5, "cwd": {"x":1}, "transcript_path": "/nonexistent"}', '']) {
      for (const event of ['session-start', 'prompt', 'pre-compact', 'stop', 'session-end', 'subagent-stop', 'bogus']) {
        const result = await hook(event, bad, home, cwd);
        expect(result.code, `${event} ${bad}`).toBe(0);
      }
    }
    const log = readFileSync(join(home, 'logs', 'hooks.log'), 'utf8');
    expect(log).toContain('hook failed');
    expect(log).toContain('unknown hook event');
  });

  it('never gives the same memory twice in one context window: session start, prompts, resume; again after /compact', async () => {
    const home = dir('cairn-hook-ledger-');
    const cwd = dir('cairn-hook-ledger-cwd-');
    await runCli(['remember', 'the deploy script is scripts/deploy.sh and needs AWS_PROFILE=prod (DEPLOY-42)', '--kind', 'procedure'], { home, cwd });
    const base = { session_id: 'led-1', cwd };
    const count = (out: string): number => out.split('DEPLOY-42').length - 1;
    const start = await hook('session-start', { ...base, source: 'startup' }, home, cwd);
    expect(count(start.out)).toBe(1);
    // The prompt hook would match it, but the window has it.
    expect((await hook('prompt', { ...base, prompt: 'how do I run the deploy script?' }, home, cwd)).out).toBe('');
    // Resuming continues the window: nothing again (core memory and all).
    expect((await hook('session-start', { ...base, source: 'resume' }, home, cwd)).out).toBe('');
    // PreCompact still lists it for the summary (guidance for the compaction, not the window)…
    expect(count((await hook('pre-compact', { ...base, trigger: 'auto' }, home, cwd)).out)).toBe(1);
    // …and the compaction opens a new window, which gets it once.
    expect(count((await hook('session-start', { ...base, source: 'compact' }, home, cwd)).out)).toBe(1);
    expect((await hook('prompt', { ...base, prompt: 'how do I run the deploy script?' }, home, cwd)).out).toBe('');
    // A manual /compact: Claude Code shows PreCompact's output in the new window, so the
    // post-compact context does not give the same memory again.
    expect(count((await hook('pre-compact', { ...base, trigger: 'manual' }, home, cwd)).out)).toBe(1);
    expect(count((await hook('session-start', { ...base, source: 'compact' }, home, cwd)).out)).toBe(0);
    // A hook without a session id has no window to consult: it answers as before.
    expect(count((await hook('prompt', { cwd, prompt: 'how do I run the deploy script?' }, home, cwd)).out)).toBe(1);

    // The ledger holds what each hook gave, by window; PreCompact's went to the summary.
    const store = await openSqliteStore(join(home, 'cairn.db'));
    try {
      const injections = await store.ledger.injections('led-1');
      expect(injections.map((i) => `${i.window}:${i.name}:${i.target}:${i.memories.length}`)).toEqual([
        '0:session-start:context:1',
        '0:pre-compact:summary:1',
        '1:session-start:context:1',
        '1:pre-compact:summary:1',
        '2:pre-compact:context:1',
      ]);
      expect((await store.ledger.windows('led-1')).map((w) => w.reason)).toEqual(['startup', 'compact', 'compact']);
    } finally {
      await store.close();
    }
  });

  it('runs as its own short process through bin/cairn.js', () => {
    const home = dir('cairn-hook-proc-');
    const bin = resolve(import.meta.dirname, '../../bin/cairn.js');
    const run = spawnSync(process.execPath, [bin, 'hook', 'session-start'], {
      input: JSON.stringify({ session_id: 'x', cwd: home, source: 'startup' }),
      env: { ...process.env, CAIRN_HOME: home },
      encoding: 'utf8',
    });
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('');
    // The process exits without closing the store (no checkpoint on close): what it wrote is in the
    // write-ahead log, and the next process reads it.
    expect(existsSync(join(home, 'cairn.db-wal'))).toBe(true);
    const again = spawnSync(process.execPath, [bin, 'hook', 'session-start'], {
      input: JSON.stringify({ session_id: 'x', cwd: home, source: 'clear' }),
      env: { ...process.env, CAIRN_HOME: home },
      encoding: 'utf8',
    });
    expect(again.status).toBe(0);
    const db = new Database(join(home, 'cairn.db'), { readonly: true });
    try {
      expect(db.prepare("SELECT reason FROM ledger_windows WHERE session_id = 'x' ORDER BY win").pluck().all()).toEqual(['startup', 'clear']);
    } finally {
      db.close();
    }
    const broken = spawnSync(process.execPath, [bin, 'hook', 'prompt'], { input: '{{{', env: { ...process.env, CAIRN_HOME: home }, encoding: 'utf8' });
    expect(broken.status).toBe(0);
    expect(broken.stdout).toBe('');
  });
});
