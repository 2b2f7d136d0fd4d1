import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectFormat, readTranscript } from '../../src/ingest/index.js';
import { byRole, fixtures } from './helpers.js';

const codexDir = join(fixtures, 'codex/sessions/2026/02/01');
const codexFile = join(codexDir, readdirSync(codexDir)[0] ?? '');
const geminiDir = join(fixtures, 'gemini/tmp/9f86d081/chats');
const cursorFile = join(fixtures, 'cursor/projects/home-dev-web/agent-transcripts/3b241101-e2bb-4255-8caf-4136c566a962.jsonl');

describe('Codex CLI reader', () => {
  const { batch, stats, format } = readTranscript(codexFile, null);
  const SID = '019a0000-1111-7222-8333-444455556666';

  it('takes the session from session_meta (id, cwd, branch) and the latest cumulative token count', () => {
    expect(format).toBe('codex');
    expect(batch.sessions).toMatchObject([
      { id: SID, agent: 'codex', cwd: '/home/dev/svc', branch: 'main', inputTokens: 8_000, cacheReadTokens: 4_000, outputTokens: 450 },
    ]);
  });

  it('keeps one copy of words written both as response_item and event_msg, and drops injected context', () => {
    expect(batch.turns.map((t) => [t.role, t.text.split('\n')[0]?.slice(0, 50)])).toEqual([
      ['user', 'The health check returns 500; find out why.'],
      ['tool_call', 'shell: bash -lc curl -s localhost:8080/health'],
      ['tool_result', 'curl: (7) Failed to connect to localhost port 8080'],
      ['tool_call', 'apply_patch: *** Begin Patch'],
      ['tool_result', 'Success. Updated the following files:'],
      ['assistant', 'The handler propagates the DB ping error as a 500;'],
      ['user', '[turn aborted: interrupted]'],
      ['user', 'no, the DB is fine; the 500 comes from the missing'],
      ['assistant', 'Checking the Redis configuration.'],
      ['system', 'Conversation compacted'],
      ['summary', 'Summary: /health 500 is caused by a missing REDIS_'],
    ]);
    expect(stats.metaDropped).toBe(2);
  });

  it('matches calls to outputs by call_id and reads the exit code', () => {
    const [call, output, , patched] = batch.turns.slice(1);
    expect(call).toMatchObject({ toolName: 'shell', toolUseId: 'call_1' });
    expect(output).toMatchObject({ toolName: 'shell', toolUseId: 'call_1', isError: true });
    expect(patched).toMatchObject({ toolName: 'apply_patch', toolUseId: 'call_2', isError: false });
  });

  it('reads compactions, interrupts and pushback, and counts bad lines and unknown events', () => {
    expect(batch.compactions).toMatchObject([{ sessionId: SID, summary: 'Summary: /health 500 is caused by a missing REDIS_URL, not the DB ping.' }]);
    expect(batch.corrections.map((c) => [c.kind, c.lang])).toEqual([
      ['interrupt', null],
      ['pushback', 'en'],
    ]);
    expect(stats.badLines).toEqual([{ line: 24, reason: 'invalid or truncated JSON' }]);
    expect(stats.unknownTypes).toEqual({ 'event_msg/shiny_new_event': 1 });
  });
});

describe('Gemini CLI reader', () => {
  it('reads the JSON document layout: messages, tool calls with results, tokens, cancellations', () => {
    const result = readTranscript(join(geminiDir, 'session-2026-03-01T12-00-7c9e6679.json'), null);
    expect(result.format).toBe('gemini-json');
    const { batch, stats } = result;
    expect(batch.sessions).toMatchObject([
      { id: '7c9e6679-7425-40de-944b-e07fc1f90ae7', agent: 'gemini', inputTokens: 1_500, cacheReadTokens: 1_200, outputTokens: 80 },
    ]);
    expect(byRole(batch.turns)).toEqual({ user: 3, assistant: 2, tool_call: 2, tool_result: 2, system: 1 });
    const shell = batch.turns.find((t) => t.role === 'tool_result' && t.toolName === 'run_shell_command');
    expect(shell?.isError).toBe(true); // exit code 2 although status is "success"
    expect(batch.turns.find((t) => t.text === 'Request cancelled.')?.flags).toEqual(['interrupt']);
    expect(batch.corrections.map((c) => [c.kind, c.lang])).toEqual([
      ['interrupt', null],
      ['pushback', 'de'],
    ]);
    expect(stats.unknownTypes).toEqual({ 'message/mystery': 1 });
    // a rewritten document is read whole again; ids come from message ids, so nothing doubles
    const again = readTranscript(join(geminiDir, 'session-2026-03-01T12-00-7c9e6679.json'), result.batch.cursor);
    expect(again.batch.turns.map((t) => t.id)).toEqual(batch.turns.map((t) => t.id));
    expect(again.batch.sessions[0]?.inputTokens).toBe(1_500);
  });

  it('reads the older {history:[{role, parts}]} layout', () => {
    const { batch } = readTranscript(join(geminiDir, 'session-old-layout.json'), null);
    expect(batch.sessions[0]).toMatchObject({ id: 'session-old-layout', title: 'Retry policy explained' });
    expect(batch.turns.map((t) => [t.role, t.toolName])).toEqual([
      ['user', null],
      ['assistant', null],
      ['tool_call', 'read_file'],
      ['tool_result', 'read_file'],
      ['assistant', null],
    ]);
  });

  it('reads the JSONL layout (header line, messages, $set updates)', () => {
    const { batch, stats, format } = readTranscript(join(geminiDir, 'session-2026-04-01T08-00-gemjsonl.jsonl'), null);
    expect(format).toBe('gemini-jsonl');
    expect(batch.sessions).toMatchObject([{ id: 'gem-jsonl-0001', inputTokens: 900, cacheReadTokens: 800, outputTokens: 45 }]);
    expect(batch.turns.map((t) => t.role)).toEqual(['user', 'tool_call', 'tool_result', 'assistant']);
    expect(stats.badLines).toEqual([]);
  });
});

describe('Aider reader', () => {
  const path = join(fixtures, 'aider/repo/.aider.chat.history.md');
  const { batch, format, stats } = readTranscript(path, null);

  it('splits the history into sessions at "# aider chat started at", cwd = the repository', () => {
    expect(format).toBe('aider');
    expect(batch.sessions.map((s) => [s.title, s.cwd, new Date(s.startedAt ?? 0).getHours()])).toEqual([
      ['add a --verbose flag to cli.py', join(fixtures, 'aider/repo'), 10],
      ['what does load_config return?', join(fixtures, 'aider/repo'), 9],
    ]);
    expect(stats.assistantMessages).toBe(2);
  });

  it('tells the user (####), Aider (>) and the assistant apart, keeping code fences whole', () => {
    const first = batch.turns.filter((t) => t.sessionId === batch.sessions[0]?.id);
    expect(first.map((t) => [t.role, t.flags])).toEqual([
      ['system', ['tool-output']],
      ['user', []],
      ['assistant', []],
      ['system', ['tool-output']],
      ['user', []],
      ['user', ['slash-command']],
      ['system', ['tool-output']],
      ['user', []],
      ['system', ['tool-output']],
      ['user', ['interrupt']],
    ]);
    expect(first[2]?.text).toContain('>>>>>>> REPLACE\n```');
    expect(first[3]?.text).toContain('Costs do not reflect caching');
  });

  it('sums "Tokens: … sent, … received" lines per session, the last one included', () => {
    expect(batch.sessions.map((s) => [s.inputTokens, s.cacheCreationTokens, s.outputTokens])).toEqual([
      [1_300, 1_200, 120],
      [1_000, 0, 50],
    ]);
  });

  it('finds the pushback and the ^C that stopped the model', () => {
    expect(batch.corrections.map((c) => [c.kind, c.text])).toEqual([
      ['pushback', 'no, use -v as the short option too'],
      ['interrupt', '[interrupted by user: ^C]'],
    ]);
  });
});

describe('Cursor and generic JSONL readers', () => {
  it('reads Cursor agent transcripts, unwrapping <user_query>, with subagents linked to the parent', () => {
    const { batch, format } = readTranscript(cursorFile, null);
    expect(format).toBe('cursor');
    expect(batch.turns.map((t) => t.role)).toEqual(['user', 'assistant', 'tool_call', 'tool_result', 'assistant', 'user', 'assistant']);
    expect(batch.turns[0]?.text).toBe('rename fetchUser to loadUser everywhere');
    expect(batch.corrections.map((c) => c.text)).toEqual(['you missed the tests, they still call fetchUser']);
    const child = readTranscript(join(cursorFile.replace(/\.jsonl$/, ''), 'subagents/explore-1.jsonl'), null);
    expect(child.batch.sessions[0]).toMatchObject({ id: '3b241101-e2bb-4255-8caf-4136c566a962/subagent-explore-1', parentId: '3b241101-e2bb-4255-8caf-4136c566a962' });
  });

  it('reads the generic turn log {turn, role, content, ts}', () => {
    const { batch, stats, format } = readTranscript(join(fixtures, 'generic/agent-log.jsonl'), null);
    expect(format).toBe('generic');
    expect(batch.sessions).toMatchObject([{ id: 'deploy-42', agent: 'generic', cwd: '/home/dev/ops', startedAt: Date.parse('2026-05-01T10:00:00Z') }]);
    expect(batch.turns.map((t) => [t.role, t.text])).toEqual([
      ['user', 'Add a --dry-run flag to the deploy script'],
      ['assistant', "I'll add the flag to scripts/deploy.sh."],
      ['tool_call', 'edit: scripts/deploy.sh'],
      ['tool_result', 'ok'],
      ['user', 'actually, call it --plan like terraform'],
    ]);
    expect(batch.turns[3]?.at).toBe(1_777_629_604_000);
    expect(stats.unknownTypes).toEqual({ 'role/critic': 1 });
    expect(stats.badLines).toEqual([{ line: 7, reason: 'JSON array, not an object' }]);
    expect(batch.corrections).toHaveLength(1);
  });
});

describe('format detection', () => {
  it.each([
    ['/x/.claude/projects/-a/s.jsonl', '{"type":"summary","summary":"t","leafUuid":"u"}\n', 'claude-code'],
    ['/x/s.jsonl', '{"parentUuid":null,"type":"user","sessionId":"s","uuid":"u","message":{"role":"user","content":"hi"}}\n', 'claude-code'],
    ['/x/s.jsonl', '{"type":"queue-operation","operation":"enqueue","sessionId":"s","content":"x"}\n', 'claude-code'],
    ['/x/rollout-1.jsonl', '{"timestamp":"t","type":"session_meta","payload":{"id":"a"}}\n', 'codex'],
    ['/x/any.jsonl', '{"timestamp":"t","type":"event_msg","payload":{"type":"user_message"}}\n', 'codex'],
    ['/x/c.jsonl', '{"sessionId":"g","projectHash":"h","startTime":"t","kind":"main"}\n', 'gemini-jsonl'],
    ['/x/chats/session-1.json', '{\n  "sessionId": "g",\n  "messages": []\n}', 'gemini-json'],
    ['/x/log.jsonl', '{"turn":1,"role":"user","content":"hi"}\n', 'generic'],
    ['/x/t.jsonl', '{"role":"user","message":{"content":[{"type":"text","text":"hi"}]}}\n', 'cursor'],
    ['/repo/.aider.chat.history.md', '', 'aider'],
    ['/x/chat-history.md', '-*- mode: fundamental -*-\n\n# aider chat started at 2024-08-05 19:33:02\n', 'aider'],
    ['/x/.claude/projects/-a/s.jsonl', 'garbage that is not json\n', 'claude-code'],
    ['/x/s.jsonl', '\u0000\u0001 junk first line\n{"turn":1,"role":"user","content":"hi"}\n', 'generic'],
  ])('%s → %s', (path, head, format) => {
    expect(detectFormat(path, head)).toEqual({ format });
  });

  it.each([
    ['/x/README.md', '# Project'],
    ['/x/logs.json', '[{"sessionId":"s","messageId":0,"type":"user","message":"hi"}]'],
    ['/x/package.json', '{"name":"x"}'],
    ['/x/expected-metrics.jsonl', '{"recordId":"r","sessionId":"s","tokens":{}}\n'],
    ['/x/notes.txt', 'hello'],
    ['/x/empty.jsonl', ''],
  ])('%s is not a transcript', (path, head) => {
    expect(detectFormat(path, head).format).toBeNull();
  });
});
