import { describe, expect, it } from 'vitest';
import { assignHalves, cutPoints, neededDetails, splitAtCompactions } from '../../bench/src/fidelity.js';

const user = (text: string): string => JSON.stringify({ type: 'user', sessionId: 's1', message: { role: 'user', content: text } });
const assistant = (text: string): string => JSON.stringify({ type: 'assistant', sessionId: 's1', message: { role: 'assistant', content: [{ type: 'text', text }] } });

function session(turns: number): string[] {
  const lines: string[] = [];
  for (let i = 0; i < turns; i++) lines.push(i % 2 === 0 ? user(`look at src/file${i % 7}.ts:${i + 1}`) : assistant(`edited src/file${i % 7}.ts and ran \`npm test\``));
  return lines;
}

describe('fidelity method', () => {
  it('cuts a session without a compaction at fixed shares, just before a user line', () => {
    const lines = session(200);
    const cuts = cutPoints(lines);
    expect(cuts.map((c) => c.before.length)).toEqual([60, 100, 140]);
    for (const cut of cuts) {
      expect(cut.real).toBe(false);
      expect(cut.summary).toBe('');
      expect(JSON.parse(cut.after[0] as string).type).toBe('user');
      expect(cut.before.length + cut.after.length).toBe(lines.length);
    }
    expect(cutPoints(session(30))).toEqual([]);
    expect(cutPoints(session(60)).map((c) => c.before.length)).toEqual([30]);
  });

  it('keeps chosen cuts away from a real compaction and measures the real one with its summary', () => {
    const lines = session(400);
    lines.splice(198, 0, JSON.stringify({ type: 'system', subtype: 'compact_boundary', compactMetadata: { trigger: 'auto' } }), JSON.stringify({ type: 'user', isCompactSummary: true, message: { content: 'summary: src/file1.ts' } }));
    const real = splitAtCompactions(lines);
    expect(real).toHaveLength(1);
    expect(real[0]?.real).toBe(true);
    expect(real[0]?.summary).toBe('summary: src/file1.ts');
    expect(neededDetails(real[0]!).length).toBeGreaterThan(0);
    // 0.5 of the conversation lands next to the boundary: that cut is dropped.
    expect(cutPoints(lines).map((c) => c.before.length)).toEqual([120, 282]);
  });

  it('splits sessions into halves by hash within strata, independent of order', () => {
    const sessions = [...'abcdefgh'].map((id, i) => ({ id, real: i < 4 }));
    const a = assignHalves(sessions);
    const b = assignHalves([...sessions].reverse());
    expect([...a.entries()].sort()).toEqual([...b.entries()].sort());
    const realHalves = sessions.filter((s) => s.real).map((s) => a.get(s.id));
    expect(realHalves.filter((h) => h === 'tuning')).toHaveLength(2);
    expect([...a.values()].filter((h) => h === 'report')).toHaveLength(4);
  });
});
