import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTranscript } from '../../src/ingest/index.js';
import { CLAUDE_SESSION as S, byRole, claudeDir, claudeMain } from './helpers.js';

const id = (key: string): string => `${S}:${key}`;

describe('Claude Code reader', () => {
  const result = readTranscript(claudeMain, null, { now: 1 });
  const { batch, stats } = result;
  const main = batch.turns.filter((t) => t.sessionId === S);
  const turn = (key: string) => {
    const found = batch.turns.find((t) => t.id === id(key));
    if (!found) throw new Error(`no turn ${key}`);
    return found;
  };

  it('detects the format and takes the real cwd from the lines, not the lossy folder name', () => {
    expect(result.format).toBe('claude-code');
    const session = batch.sessions.find((s) => s.id === S);
    expect(session?.cwd).toBe('/home/dev/my_app');
    expect(session?.branch).toBe('fix/tokenizer');
    expect(session?.agent).toBe('claude-code');
  });

  it('merges assistant blocks split over lines by message.id, one turn per message text', () => {
    expect(turn('u-a2').text).toBe("I'll look at the tokenizer first.");
    // msg_H arrives as two text lines: one merged turn under the first line's uuid
    expect(turn('u-h1').text).toBe("You're absolutely right, I'll drop the backslash handling.\n\nDone: backslashes are no longer special.");
    expect(batch.turns.some((t) => t.id === id('u-h2'))).toBe(false);
    // the thinking-only line u-a1 produces nothing
    expect(batch.turns.some((t) => t.id === id('u-a1'))).toBe(false);
    // msg_A..H, msg_Z in the main session; msg_S1, msg_T1 in the sidechains
    expect(stats.assistantMessages).toBe(11);
  });

  it('counts usage once per message.id + requestId, taking the growth of output tokens', () => {
    const session = batch.sessions.find((s) => s.id === S);
    // sums over msg_A..msg_H of the (max) usage each message reported
    expect(session).toMatchObject({ inputTokens: 168, outputTokens: 218, cacheReadTokens: 27_100, cacheCreationTokens: 6_100 });
  });

  it('matches tool calls to their results by tool_use_id, with the error flag', () => {
    const read = turn('u-a3');
    expect(read).toMatchObject({ role: 'tool_call', toolName: 'Read', toolUseId: 'toolu_1', text: 'Read: /home/dev/my_app/src/tokenizer.ts' });
    expect(JSON.parse(read.toolInput ?? '')).toEqual({ file_path: '/home/dev/my_app/src/tokenizer.ts' });
    expect(turn('u-r1')).toMatchObject({ role: 'tool_result', toolName: 'Read', toolUseId: 'toolu_1', isError: false });
    expect(turn('u-r2')).toMatchObject({ role: 'tool_result', toolName: 'Bash', toolUseId: 'toolu_2', isError: true });
    expect(turn('u-b2').text).toBe('Bash: npm test -- parser');
  });

  it('redacts secrets and drops <system-reminder> content and <private> spans before anything is stored', () => {
    expect(turn('u-r1').text).toContain('OPENAI_API_KEY=[REDACTED:openai-key]');
    expect(turn('u-r1').text).not.toContain('sk-proj');
    expect(turn('u-r1').text).not.toContain('malicious');
    expect(turn('u-r1').toolInput).toBe(turn('u-r1').text);
    expect(turn('u-1').text).toBe('Fix the flaky test in parser.test.ts: the tokenizer drops trailing underscores.');
    expect(JSON.stringify(batch)).not.toContain('hunter2');
    expect(JSON.stringify(batch)).not.toContain('cairn memory');
    expect(stats.redactions).toEqual({ 'openai-key': 1 });
  });

  it('never treats isMeta lines or reminder-only messages as user words', () => {
    expect(batch.turns.some((t) => t.id === id('u-0') || t.id === id('u-m1'))).toBe(false);
    expect(stats.metaDropped).toBe(2);
  });

  it('keeps slash commands as flagged user turns and drops empty command output', () => {
    expect(turn('u-c1')).toMatchObject({ role: 'user', text: '/clear', flags: ['slash-command'] });
    expect(batch.turns.some((t) => t.id === id('u-c2'))).toBe(false);
  });

  it('flags interrupts and tool rejections, and keeps the feedback given with a rejection', () => {
    expect(turn('u-i1')).toMatchObject({ role: 'user', flags: ['interrupt'] });
    expect(turn('u-r3')).toMatchObject({ role: 'tool_result', toolName: 'Edit', isError: true, flags: ['rejection'] });
    expect(turn('u-r3:1')).toMatchObject({ role: 'user', text: "don't touch the regex, add a failing test first", flags: ['rejection-feedback'] });
  });

  it('turns a queued prompt the agent took mid-turn into a user turn, and a dequeued one into nothing extra', () => {
    // enqueue (line 20) … remove: the words exist only in the queue line
    expect(turn('20')).toMatchObject({ role: 'user', text: 'actually, use it.each for the cases', flags: ['queued'] });
    // enqueue … dequeue: delivered as the ordinary user line u-q2, not twice
    expect(main.filter((t) => t.text === 'also run lint')).toHaveLength(1);
    expect(turn('u-q2').flags).toEqual([]);
  });

  it('builds a compaction from the compact_boundary line and the isCompactSummary line', () => {
    expect(batch.compactions).toHaveLength(1);
    const [compaction] = batch.compactions;
    expect(compaction).toMatchObject({ id: id('u-cb'), sessionId: S, trigger: 'manual', preTokens: 12_345, seq: turn('u-cb').seq, sourceLine: 27 });
    expect(compaction?.summary).toContain('drops underscores');
    expect(turn('u-cb')).toMatchObject({ role: 'system', flags: ['compact-boundary'], text: 'Conversation compacted (manual, 12345 tokens)' });
    expect(turn('u-cs')).toMatchObject({ role: 'summary', flags: ['compact-summary'] });
  });

  it('titles the session from the legacy summary line whose leaf is in the file, ignoring foreign ones', () => {
    expect(batch.sessions.find((s) => s.id === S)?.title).toBe('Fix the flaky tokenizer test');
  });

  it('puts inline isSidechain lines into sessions of their own, one per chain, linked to the parent', () => {
    const side = batch.sessions.filter((s) => s.parentId === S).map((s) => s.id).sort();
    expect(side).toEqual([`${S}/side-s-1`, `${S}/side-t-1`]);
    const sideTurns = batch.turns.filter((t) => t.sessionId === `${S}/side-t-1`);
    expect(sideTurns.map((t) => [t.role, t.text, t.flags])).toEqual([
      ['user', 'List the test files', ['sidechain']],
      ['assistant', 'test/parser.test.ts and test/lexer.test.ts', ['sidechain']],
    ]);
  });

  it('counts bad lines with their line numbers and unknown line types, and goes on', () => {
    expect(stats.badLines).toEqual([
      { line: 34, reason: 'invalid or truncated JSON' },
      { line: 35, reason: 'not JSON' },
    ]);
    expect(stats.unknownTypes).toEqual({ 'brand-new-line-type': 1 });
    expect(stats.lines).toBe(43);
    expect(turn('u-z1')).toMatchObject({ role: 'assistant', flags: ['api-error'] });
  });

  it('numbers turns in file order and keys them by uuid (stable across runs)', () => {
    expect(main.map((t) => t.seq)).toEqual(main.map((_, i) => i));
    expect(byRole(main)).toEqual({ user: 8, assistant: 8, tool_call: 3, tool_result: 3, system: 1, summary: 1 });
    const again = readTranscript(claudeMain, null, { now: 1 });
    expect(again.batch.turns.map((t) => t.id)).toEqual(batch.turns.map((t) => t.id));
  });

  it('finds the corrections: rejection, its feedback, interrupt, queued and typed pushback, conceded statement', () => {
    expect(batch.corrections.map((c) => [c.kind, c.correctionTurnId.slice(S.length + 1), c.premiseTurnId?.slice(S.length + 1)])).toEqual([
      ['rejection', 'u-r3', 'u-c-1'],
      ['pushback', 'u-r3:1', 'u-c-1'],
      ['interrupt', 'u-i1', 'u-c-1'],
      ['pushback', '20', 'u-d1'],
      ['pushback', 'u-p1', 'u-f1'],
      ['pushback', 'u-n1', 'u-g1'],
    ]);
    expect(batch.corrections.filter((c) => c.kind === 'pushback').every((c) => c.lang === 'en')).toBe(true);
  });

  it('reads subagent files in the nested layout (<session>/subagents/agent-*.jsonl)', () => {
    const nested = readTranscript(join(claudeDir, S, 'subagents/agent-a1b2c3d.jsonl'), null);
    expect(nested.batch.sessions).toMatchObject([{ id: `${S}/agent-a1b2c3d`, parentId: S, cwd: '/home/dev/my_app', inputTokens: 220, outputTokens: 50 }]);
    expect(nested.batch.turns.map((t) => t.role)).toEqual(['user', 'tool_call', 'tool_result', 'assistant']);
    expect(nested.batch.turns[1]?.text).toBe('Grep: tokenize\\(');
    expect(nested.batch.turns.every((t) => t.flags.includes('sidechain'))).toBe(true);
  });

  it('reads subagent files in the flat layout (agent-*.jsonl without agentId)', () => {
    const flat = readTranscript(join(claudeDir, 'agent-9f8e7d6c.jsonl'), null);
    expect(flat.batch.sessions).toMatchObject([{ id: `${S}/agent-9f8e7d6c`, parentId: S }]);
    expect(flat.batch.turns).toHaveLength(2);
  });
});
