/** The fidelity method on Codex rollouts (issue #15 item 8; bench/src/fidelity-codex.ts). */
import { describe, expect, it } from 'vitest';
import { codexCommands, codexNeeded, codexRecency, codexSession, codexSplits, codexText } from '../../bench/src/fidelity-codex.js';

const item = (payload: unknown): string => JSON.stringify({ timestamp: '2026-05-11T08:27:17.493Z', type: 'response_item', payload });
const meta = JSON.stringify({ timestamp: '2026-05-11T08:27:17.000Z', type: 'session_meta', payload: { id: 'sess-c1', cwd: '/repo' } });
const user = (text: string): string => item({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
const assistant = (text: string): string => item({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] });
const call = (cmd: string, id: string): string => item({ type: 'function_call', name: 'exec_command', arguments: JSON.stringify({ cmd, workdir: '/repo' }), call_id: id });
const output = (text: string, id: string): string => item({ type: 'function_call_output', call_id: id, output: `Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 0\nOutput:\n${text}` });

function rollout(steps: number): string[] {
  const lines = [meta, user('<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>'), user('# AGENTS.md instructions for /repo\nuse pnpm')];
  for (let i = 0; i < steps; i++) {
    if (i % 4 === 0) lines.push(user(`check src/mod${i % 5}.ts:${i + 1}`));
    else if (i % 4 === 1) lines.push(call(`sed -n '1,40p' src/mod${i % 5}.ts`, `c${i}`));
    else if (i % 4 === 2) lines.push(output(`export function handler${i % 5}(req: Request): Response {`, `c${i - 1}`));
    else lines.push(assistant(`\`handler${i % 5}(req)\` in src/mod${i % 5}.ts looks right; ran \`pnpm test -- mod${i % 5}\``));
  }
  return lines;
}

describe('fidelity on Codex rollouts', () => {
  it('reads the session, the words, the tool inputs and outputs, and leaves Codex’s injected messages out', () => {
    const lines = rollout(8);
    expect(codexSession(lines)).toEqual({ id: 'sess-c1', cwd: '/repo' });
    expect(codexSession([user('hi')])).toBeNull();
    const withOutputs = codexText(lines, true);
    expect(withOutputs).toContain('check src/mod0.ts:1');
    expect(withOutputs).toContain("sed -n '1,40p' src/mod1.ts");
    expect(withOutputs).toContain('export function handler2(req: Request): Response {');
    expect(withOutputs).not.toContain('environment_context');
    expect(withOutputs).not.toContain('AGENTS.md');
    expect(codexText(lines, false)).not.toContain('export function handler2');
    expect(codexCommands(lines)).toEqual(["sed -n '1,40p' src/mod1.ts", "sed -n '1,40p' src/mod0.ts"]);
  });

  it('splits at a compacted line with its summary, from the message or the replacement history', () => {
    const lines = rollout(40);
    lines.splice(20, 0, JSON.stringify({ type: 'compacted', payload: { message: 'Summary: src/mod1.ts was checked.' } }));
    lines.splice(35, 0, JSON.stringify({ type: 'compacted', payload: { message: '', replacement_history: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'check src/mod0.ts:1' }] }, { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Another language model started … src/mod2.ts' }] }] } }));
    const real = codexSplits(lines).filter((s) => s.real);
    expect(real.map((s) => s.before.length)).toEqual([20, 35]);
    expect(real[0]?.summary).toBe('Summary: src/mod1.ts was checked.');
    expect(real[1]?.summary).toBe('Another language model started … src/mod2.ts');
    expect(real[0]?.after.length).toBe(14);
  });

  it('cuts a long rollout without a compaction just before the user’s words, and finds what was used again', () => {
    const lines = rollout(240);
    const cuts = codexSplits(lines);
    expect(cuts.length).toBe(3);
    for (const cut of cuts) {
      expect(cut.real).toBe(false);
      expect(JSON.parse(cut.after[0] as string).payload.role).toBe('user');
      expect(cut.before.length + cut.after.length).toBe(lines.length);
      const needed = codexNeeded(cut);
      expect(needed).toEqual(expect.arrayContaining(['src/mod0.ts']));
      expect(codexRecency(cut, 50).length).toBeLessThanOrEqual(200);
    }
    expect(codexSplits(rollout(20))).toEqual([]);
  });
});
