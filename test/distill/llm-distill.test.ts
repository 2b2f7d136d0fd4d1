/**
 * The LLM distiller's logic with scripted providers: observer → gate/scope/ladder, the judge's
 * ADD / UPDATE / DELETE / NOOP, the reflector, the token budget — and failures (timeouts, 429s,
 * malformed answers) that must leave every memory as it was.
 */
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readSpend } from '../../src/distill/llm/budget.js';
import { distillWithLlm, llmCursorKey } from '../../src/distill/llm/distill.js';
import { LlmError, type LlmProvider, type LlmRequest } from '../../src/distill/llm/types.js';
import type { Memory } from '../../src/types.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { TranscriptWriter } from '../hooks/transcript.js';
import { T0, Turns, sessionRecord, testCairn } from './helpers.js';

type Script = (req: LlmRequest, n: number) => string | Error;

function scripted(script: Script): LlmProvider & { requests: LlmRequest[] } {
  const requests: LlmRequest[] = [];
  return {
    name: 'fake',
    model: 'scripted',
    requests,
    async complete(req) {
      requests.push(req);
      const answer = script(req, requests.length);
      if (answer instanceof Error) throw answer;
      return { text: answer, inputTokens: Math.ceil(req.prompt.length / 4), outputTokens: Math.ceil(answer.length / 4) };
    },
  };
}

const facts = (...items: Array<{ text: string; kind: string; scope: string }>): string => `Here you go:\n\`\`\`json\n${JSON.stringify({ facts: items })}\n\`\`\``;
const isJudge = (req: LlmRequest): boolean => req.prompt.startsWith('New memory:');
const session = (): Turns =>
  new Turns(sessionRecord('s1'), T0).user('Speed up the sync loop in src/sync.ts.').assistant('The loop re-reads the whole file each pass; I will keep an offset instead.');

async function memoriesOf(t: Awaited<ReturnType<typeof testCairn>>): Promise<Memory[]> {
  return (await t.cairn.list({ allProjects: true, limit: 1000, order: 'created-asc' })).filter((m) => m.kind !== 'continuation');
}

describe('LLM distiller', () => {
  it('stores observed facts through the gate, scope and ladder, with provenance; drops facts without a usable scope', async () => {
    const t = await testCairn();
    await t.write(session());
    const provider = scripted(() =>
      facts(
        { text: '`syncLoop()` in src/sync.ts must keep a byte offset instead of re-reading the whole file', kind: 'fact', scope: 'project' },
        { text: 'The user prefers terse answers without emoji', kind: 'preference', scope: 'user' },
        { text: 'Let me check', kind: 'fact', scope: 'project' },
        { text: 'Something vague', kind: 'fact', scope: 'galaxy' },
      ),
    );
    const summary = await distillWithLlm(t.cairn.deps, { provider });
    expect(summary).toMatchObject({ calls: 1, sessions: 1, observed: 3, invalid: 1, added: 2, rejected: 1, failures: [], stopped: null });
    const stored = await memoriesOf(t);
    expect(stored.map((m) => [m.kind, m.scope, m.project])).toEqual([
      ['fact', 'project', 'github.com/acme/app'],
      ['preference', 'user', null],
    ]);
    expect(stored[0]).toMatchObject({ source: 'distill', session: 's1', meta: { extractor: 'llm' }, provenance: { sessionId: 's1', turnId: 's1:u1' } });
    expect(stored[0]?.tags).toContain('llm');
    // The observer saw the session, not injected text; the cursor moved; a second run calls nothing.
    expect(provider.requests[0]?.prompt).toContain('[user] Speed up the sync loop');
    expect(await t.cairn.deps.store.getState(llmCursorKey('s1'))).toBe('1');
    expect((await distillWithLlm(t.cairn.deps, { provider })).calls).toBe(0);
  });

  it('asks the judge about close memories and applies ADD, UPDATE (revision), DELETE (forget) and NOOP', async () => {
    for (const [answer, expectation] of [
      ['{"action":"ADD"}', 'added'],
      ['{"action":"UPDATE","id":"ID","text":"The sync loop in src/sync.ts keeps a byte offset per file (stored in state.json)"}', 'updated'],
      ['{"action":"DELETE","id":"ID"}', 'deleted'],
      ['{"action":"NOOP"}', 'noop'],
    ] as const) {
      const t = await testCairn();
      const old = await t.cairn.remember({ text: 'The sync loop in src/sync.ts re-reads the whole file on each pass', kind: 'fact' });
      await t.write(session());
      const provider = scripted((req) => (isJudge(req) ? answer.replace('ID', old.memory.id) : facts({ text: 'The sync loop in src/sync.ts keeps a byte offset per file', kind: 'fact', scope: 'project' })));
      const summary = await distillWithLlm(t.cairn.deps, { provider });
      expect(provider.requests.filter(isJudge)).toHaveLength(1);
      expect(provider.requests.find(isJudge)?.prompt).toContain(`[${old.memory.id}]`);
      expect(summary[expectation]).toBe(1);
      const texts = (await memoriesOf(t)).map((m) => m.text);
      if (expectation === 'added') expect(texts).toHaveLength(2);
      if (expectation === 'updated') {
        expect(texts).toEqual(['The sync loop in src/sync.ts keeps a byte offset per file (stored in state.json)']);
        expect((await t.cairn.deps.store.versions(old.memory.id)).map((v) => v.text)[0]).toBe(old.memory.text);
      }
      if (expectation === 'deleted') {
        expect(texts).toEqual(['The sync loop in src/sync.ts keeps a byte offset per file']);
        await t.cairn.restore(old.memory.id);
      }
      if (expectation === 'noop') expect(texts).toEqual([old.memory.text]);
    }
  });

  it('merges a near-duplicate without asking the judge', async () => {
    const t = await testCairn();
    await t.cairn.remember({ text: 'The sync loop in src/sync.ts keeps a byte offset per file', kind: 'fact' });
    await t.write(session());
    const provider = scripted((req) => (isJudge(req) ? '{"action":"NOOP"}' : facts({ text: 'The sync loop in src/sync.ts keeps a byte offset per file.', kind: 'fact', scope: 'project' })));
    expect(await distillWithLlm(t.cairn.deps, { provider })).toMatchObject({ merged: 1, calls: 1 });
  });

  it('changes nothing on a timeout, a 429 or a malformed answer, and reads the turns again next time', async () => {
    for (const failure of [new LlmError('timeout', 'no answer'), new LlmError('rate-limited', '429'), 'I could not find anything, sorry.', '{"facts": "none"}']) {
      const t = await testCairn();
      const kept = await t.cairn.remember({ text: 'The sync loop in src/sync.ts re-reads the whole file', kind: 'fact' });
      await t.write(session());
      const events = (await t.cairn.deps.store.listEvents({ limit: 100 })).length;
      const summary = await distillWithLlm(t.cairn.deps, { provider: scripted(() => failure) });
      expect(summary.failures).toHaveLength(1);
      expect(summary.added + summary.updated + summary.deleted).toBe(0);
      expect((await memoriesOf(t)).map((m) => m.id)).toEqual([kept.memory.id]);
      expect((await t.cairn.deps.store.listEvents({ limit: 100 })).length).toBe(events);
      expect(await t.cairn.deps.store.getState(llmCursorKey('s1'))).toBeNull();
      const retry = await distillWithLlm(t.cairn.deps, { provider: scripted(() => facts({ text: '`syncLoop()` keeps a byte offset in src/sync.ts', kind: 'fact', scope: 'project' })) });
      expect(retry.added).toBe(1);
    }
  });

  it('falls back to the heuristic ladder when the judge fails, and stops calling a failing provider', async () => {
    const t = await testCairn();
    await t.cairn.remember({ text: 'The sync loop in src/sync.ts re-reads the whole file on each pass', kind: 'fact' });
    await t.write(session());
    await t.write(new Turns(sessionRecord('s2'), T0).user('Another task in src/other.ts please.'));
    const provider = scripted((req) =>
      isJudge(req)
        ? new LlmError('timeout', 'judge timed out')
        : facts({ text: 'The sync loop in src/sync.ts keeps a byte offset per file', kind: 'fact', scope: 'project' }, { text: '`other()` in src/other.ts is pure', kind: 'fact', scope: 'project' }),
    );
    const summary = await distillWithLlm(t.cairn.deps, { provider });
    expect(summary.fallback).toBeGreaterThanOrEqual(1);
    expect(summary.stopped).toMatch(/fake failed \(timeout\)/);
    expect(summary.added).toBe(2);
    // After the failure no further call was made (session s2 waits for the next run).
    expect(provider.requests).toHaveLength(2);
    expect(await t.cairn.deps.store.getState(llmCursorKey('s2'))).toBeNull();
  });

  it('refuses calls past the daily and the session budget, and records the spend', async () => {
    const t = await testCairn();
    await t.write(session());
    const provider = scripted(() => facts({ text: '`syncLoop()` keeps a byte offset in src/sync.ts', kind: 'fact', scope: 'project' }));
    const tiny = await distillWithLlm(t.cairn.deps, { provider, budget: { dailyTokens: 100, sessionTokens: 100_000 } });
    expect(provider.requests).toHaveLength(0);
    expect(tiny.stopped).toMatch(/daily LLM budget reached/);
    const perSession = await distillWithLlm(t.cairn.deps, { provider, budget: { dailyTokens: 100_000, sessionTokens: 100 } });
    expect(perSession.failures[0]?.message).toMatch(/session LLM budget reached for s1/);
    expect(perSession.stopped).toBeNull();
    const ok = await distillWithLlm(t.cairn.deps, { provider });
    expect(ok.calls).toBe(1);
    const spend = await readSpend(t.cairn.deps, 'day', t.clock.now());
    expect(spend).toEqual({ inputTokens: ok.inputTokens, outputTokens: ok.outputTokens, calls: 1 });
    expect(await readSpend(t.cairn.deps, 'session', t.clock.now(), 's1')).toEqual(spend);
  });

  it('consolidates overlapping LLM memories past the threshold (the others forgotten, restorable)', async () => {
    const t = await testCairn();
    await t.write(session());
    const provider = scripted((req) =>
      req.system.includes('consolidate')
        ? '{"text": "`syncLoop()` in src/sync.ts keeps a byte offset per file, saved in state.json, and skips unchanged files", "kind": "fact"}'
        : isJudge(req)
          ? '{"action":"ADD"}'
          : facts(
              { text: '`syncLoop()` in src/sync.ts keeps a byte offset per file', kind: 'fact', scope: 'project' },
              { text: '`syncLoop()` in src/sync.ts saves the byte offset per file in state.json', kind: 'fact', scope: 'project' },
              { text: '`syncLoop()` in src/sync.ts skips unchanged files using the byte offset per file', kind: 'fact', scope: 'project' },
            ),
    );
    const summary = await distillWithLlm(t.cairn.deps, { provider, reflectThresholdTokens: 10 });
    expect(summary.consolidated).toBe(1);
    const left = await memoriesOf(t);
    expect(left.map((m) => m.text)).toEqual(['`syncLoop()` in src/sync.ts keeps a byte offset per file, saved in state.json, and skips unchanged files']);
    const forgotten = await t.cairn.list({ allProjects: true, onlyDeleted: true, limit: 10 });
    expect(forgotten).toHaveLength(2);
  });
});

describe('cairn distill --llm against local fakes', () => {
  const dirs: string[] = [];
  let server: Server | null = null;
  afterAll(async () => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((done) => server?.close(() => done()));
    }
  });

  it('runs end to end with the Anthropic API on 127.0.0.1, shows the spend in status, and is off without --llm', async () => {
    const home = tempDir('cairn-llm-home-');
    const cwd = tempDir('cairn-llm-repo-');
    const transcripts = tempDir('cairn-llm-claude-');
    dirs.push(home, cwd, transcripts);
    mkdirSync(join(cwd, '.git'));
    writeFileSync(join(cwd, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(join(transcripts, 's.jsonl'), new TranscriptWriter('sess-llm', cwd).user('Speed up the sync loop in src/sync.ts.').assistant('It re-reads the file; keeping an offset now.').text());
    let calls = 0;
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        calls++;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ content: [{ type: 'text', text: facts({ text: '`syncLoop()` in src/sync.ts keeps a byte offset per file', kind: 'fact', scope: 'project' }) }], usage: { input_tokens: 400, output_tokens: 60 } }));
      });
    });
    await new Promise<void>((done) => server?.listen(0, '127.0.0.1', done));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const env = { CAIRN_LLM_API_KEY: 'sk-test' };
    await runCli(['ingest', transcripts], { home, cwd, env });
    expect(calls).toBe(0);
    const run = await runCli(['distill', '--llm', '--llm-provider', 'anthropic', '--llm-url', url, '--json'], { home, cwd, env });
    expect(run.code).toBe(0);
    expect(run.json<{ llm: { calls: number; added: number } }>().llm).toMatchObject({ calls: 1, added: 1 });
    const status = await runCli(['status'], { home, cwd, env });
    expect(status.stdout).toMatch(/LLM distiller today: 460 tokens in 1 calls/);
    const missingKey = await runCli(['distill', '--llm', '--llm-provider', 'anthropic'], { home, cwd });
    expect(missingKey.code).toBe(1);
    expect(missingKey.stderr).toMatch(/needs CAIRN_LLM_API_KEY or ANTHROPIC_API_KEY/);
  });

  it('runs with a fake `claude` on PATH; a hanging claude times out and changes nothing', async () => {
    const home = tempDir('cairn-llm-cli-home-');
    const cwd = tempDir('cairn-llm-cli-repo-');
    const transcripts = tempDir('cairn-llm-cli-claude-');
    const bin = tempDir('cairn-llm-cli-bin-');
    dirs.push(home, cwd, transcripts, bin);
    mkdirSync(join(cwd, '.git'));
    writeFileSync(join(cwd, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    const answer = JSON.stringify({ facts: [{ text: 'Never call `flush()` in src/sync.ts before the offset is saved', kind: 'fact', scope: 'project' }] });
    writeFileSync(
      join(bin, 'claude'),
      [
        '#!/usr/bin/env node',
        "process.stdin.resume(); process.stdin.on('end', () => {",
        "  if (process.env.FAKE_CLAUDE_MODE === 'sleep') return setTimeout(() => {}, 60000);",
        `  process.stdout.write(JSON.stringify({ type: 'result', is_error: false, result: ${JSON.stringify(answer)}, usage: { input_tokens: 100, output_tokens: 20 } }));`,
        '});',
      ].join('\n'),
    );
    chmodSync(join(bin, 'claude'), 0o755);
    writeFileSync(join(transcripts, 's.jsonl'), new TranscriptWriter('sess-cli', cwd).user('Fix the sync flush order in src/sync.ts.').assistant('Flush happens before the offset is saved.').text());
    const path = `${bin}${delimiter}${process.env.PATH ?? ''}`;
    await runCli(['ingest', transcripts], { home, cwd, env: { PATH: path } });
    const before = (await runCli(['list', '--json'], { home, cwd })).stdout;
    const hung = await runCli(['distill', '--llm', '--llm-provider', 'claude-cli'], { home, cwd, env: { PATH: path, FAKE_CLAUDE_MODE: 'sleep', CAIRN_LLM_TIMEOUT_MS: '300' } });
    expect(hung.code).toBe(0);
    expect(hung.stdout).toMatch(/stopped early: claude-cli failed \(timeout\)/);
    expect((await runCli(['list', '--json'], { home, cwd })).stdout).toBe(before);
    const ok = await runCli(['distill', '--llm', '--llm-provider', 'claude-cli', '--json'], { home, cwd, env: { PATH: path } });
    expect(ok.json<{ llm: { calls: number; added: number } }>().llm).toMatchObject({ calls: 1, added: 1 });
    const recall = await runCli(['recall', 'flush offset', '--json'], { home, cwd });
    expect(recall.stdout).toContain('Never call `flush()`');
  });
});
