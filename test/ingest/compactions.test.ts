import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readConversation, readTranscript, splitConversation } from '../../src/ingest/index.js';
import { claudeMain, tempDir } from './helpers.js';

const dir = tempDir('cairn-compact-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const write = (name: string, lines: unknown[]): string => {
  const path = join(dir, name);
  writeFileSync(path, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  return path;
};
const ts = (s: number): string => new Date(Date.UTC(2026, 0, 2, 10, 0, s)).toISOString();

const CODEX = [
  { timestamp: ts(0), type: 'session_meta', payload: { id: 'codex-s1', cwd: '/home/dev/app', timestamp: ts(0) } },
  { timestamp: ts(1), type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'fix the flaky test in test/cart.test.ts' }] } },
  { timestamp: ts(2), type: 'response_item', payload: { type: 'function_call', name: 'shell', arguments: JSON.stringify({ command: ['bash', '-lc', 'npx vitest run test/cart.test.ts'] }), call_id: 'c1' } },
  { timestamp: ts(3), type: 'response_item', payload: { type: 'function_call_output', call_id: 'c1', output: 'Exit code: 1\nFAIL test/cart.test.ts > applies coupon\nAssertionError: expected 90 to be 80' } },
  { timestamp: ts(4), type: 'compacted', payload: { message: '', replacement_history: [
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'fix the flaky test in test/cart.test.ts' }] },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Summary: the coupon test fails (expected 90 to be 80) in test/cart.test.ts.' }] },
  ] } },
  { timestamp: ts(4), type: 'event_msg', payload: { type: 'context_compacted' } },
  { timestamp: ts(5), type: 'response_item', payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Looking at src/cart.ts:42 again.' }] } },
];

const GEMINI = [
  { sessionId: 'gem-s1', projectHash: 'abc', startTime: ts(0), lastUpdated: ts(0) },
  { id: 'm1', timestamp: ts(1), type: 'user', content: [{ text: 'why does src/api.ts throw?' }] },
  { id: 'm2', timestamp: ts(2), type: 'gemini', content: [{ text: 'It reads a missing env var in src/api.ts:12.' }] },
  { $set: { messages: [
    { id: 'm9', timestamp: ts(3), type: 'user', content: [{ text: '<state_snapshot>\n<overall_goal>fix src/api.ts</overall_goal>\n</state_snapshot>' }] },
    { id: 'm10', timestamp: ts(3), type: 'gemini', content: [{ text: 'Got it. Thanks for the additional context!' }] },
  ] } },
  { id: 'm11', timestamp: ts(4), type: 'user', content: [{ text: 'go on with src/api.ts' }] },
];

describe('compactions of every agent that compacts', () => {
  it('Codex: a compacted line is a boundary, its summary (from replacement_history when message is empty) and a compaction', () => {
    const result = readTranscript(write('rollout-codex.jsonl', CODEX), null, { format: 'codex' });
    expect(result.batch.compactions).toHaveLength(1);
    const [compaction] = result.batch.compactions;
    expect(compaction?.summary).toBe('Summary: the coupon test fails (expected 90 to be 80) in test/cart.test.ts.');
    const boundary = result.batch.turns.find((t) => t.id === compaction?.id);
    expect(boundary?.flags).toEqual(['compact-boundary']);
    expect(result.batch.turns.filter((t) => t.role === 'summary').map((t) => t.flags)).toEqual([['compact-summary']]);
  });

  it('Gemini CLI: a <state_snapshot> message (its own line or a $set of the compressed history) is a compaction', () => {
    const result = readTranscript(write('session-gem.jsonl', GEMINI), null, { format: 'gemini-jsonl' });
    expect(result.batch.compactions).toHaveLength(1);
    expect(result.batch.compactions[0]?.summary).toContain('<overall_goal>fix src/api.ts</overall_goal>');
    expect(result.batch.turns.some((t) => t.role === 'user' && t.text.includes('state_snapshot'))).toBe(false);
    const doc = join(dir, 'session-doc.json');
    writeFileSync(doc, JSON.stringify({ sessionId: 'gem-doc', messages: [GEMINI[1], (GEMINI[3] as { $set: { messages: unknown[] } }).$set.messages[0], GEMINI[4]] }));
    expect(readTranscript(doc, null, { format: 'gemini-json' }).batch.compactions).toHaveLength(1);
  });

  it('readConversation splits any agent at its compactions, with full texts', () => {
    for (const [name, lines, format] of [
      ['rollout-codex2.jsonl', CODEX, 'codex'],
      ['session-gem2.jsonl', GEMINI, 'gemini-jsonl'],
    ] as const) {
      const conversation = readConversation(write(name, lines as unknown[]), { format });
      const splits = splitConversation(conversation);
      expect(splits, name).toHaveLength(1);
      const [split] = splits;
      expect(split?.compaction.summary, name).not.toBeNull();
      expect(split?.before.length, name).toBeGreaterThan(0);
      expect(split?.after.map((t) => t.text).join('\n'), name).toMatch(/src\/(cart|api)\.ts/);
      expect(split?.after.some((t) => t.flags.includes('compact-summary')), name).toBe(false);
    }
    const claude = splitConversation(readConversation(claudeMain));
    expect(claude.length).toBeGreaterThan(0);
    expect(claude[0]?.compaction.summary).not.toBeNull();
    expect(claude[0]?.before.length).toBeGreaterThan(0);
    // Full text: a tool output longer than the stored bound is whole here.
    const long = `Exit code: 1\n${'x'.repeat(5_000)}\nError: at src/deep.ts:99`;
    const lines = [...CODEX.slice(0, 3), { timestamp: ts(3), type: 'response_item', payload: { type: 'function_call_output', call_id: 'c1', output: long } }, ...CODEX.slice(4)];
    const conversation = readConversation(write('rollout-long.jsonl', lines), { format: 'codex' });
    expect(conversation.agent).toBe('codex');
    expect(conversation.turns.find((t) => t.role === 'tool_result')?.text).toBe(long);
  });
});
