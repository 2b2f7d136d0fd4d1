import { describe, expect, it } from 'vitest';
import { LineText, sessionPoolTokens, sizedBudget } from '../../src/context/session-context.js';
import type { Detail } from '../../src/context/details.js';
import type { Memory } from '../../src/types.js';

const rule = { share: 0.85, max: 16_000 };

function detail(line: string, memory: Partial<Memory> | null = null): Detail {
  return { key: line, kind: 'path', line, features: {} as Detail['features'], lastSeq: null, memory: memory as Memory | null, factId: memory ? null : `f-${line}` };
}

describe('post-compact budget sized to the session', () => {
  it('a long session gets share × its pool, up to the top', () => {
    expect(sizedBudget(5000, 10_000, rule)).toBe(8500);
    expect(sizedBudget(5000, 18_000, rule)).toBe(15_300);
    expect(sizedBudget(5000, 100_000, rule)).toBe(16_000);
  });

  it('a short session keeps the fixed budget', () => {
    expect(sizedBudget(5000, 0, rule)).toBe(5000);
    expect(sizedBudget(5000, 3000, rule)).toBe(5000);
    expect(sizedBudget(5000, 5882, rule)).toBe(5000);
  });

  it('a bad or missing signal or rule falls back to the fixed budget', () => {
    for (const pool of [Number.NaN, -1, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) expect(sizedBudget(5000, pool, rule)).toBe(5000);
    expect(sizedBudget(5000, 50_000, undefined)).toBe(5000);
    for (const bad of [{ share: Number.NaN, max: 16_000 }, { share: 0, max: 16_000 }, { share: -1, max: 16_000 }, { share: 0.85, max: Number.NaN }, { share: 0.85, max: Number.POSITIVE_INFINITY }, { share: 0.85, max: 4000 }]) {
      expect(sizedBudget(5000, 50_000, bad)).toBe(5000);
    }
  });

  it('the signal counts the session’s own lines, not other sessions’ memories', () => {
    const own = [detail('- `src/a.ts` — edited 2 turns ago'), detail('- `pytest -x` — exit 1'), detail('- a decision of this session', { session: 's1' })];
    const others = [detail('- a memory of another session, however many the store holds', { session: 's0' }), detail('- a project memory with no session', { session: null })];
    const ownTokens = own.reduce((n, d) => n + Math.ceil((d.line.length + 1) / 4), 0);
    expect(sessionPoolTokens([...own, ...others], 's1')).toBe(ownTokens);
    expect(sessionPoolTokens([], 's1')).toBe(0);
  });
});

describe('LineText: the packer’s search over its chosen lines', () => {
  it('answers as String.includes over the whole text, across chunk ends and for needles with a line break', () => {
    const text = new LineText();
    let whole = '';
    const lines: string[] = [];
    for (let i = 0; i < 900; i++) lines.push(`- \`src/module_${i}/file_${i % 37}.ts\` — edited ${i} turns ago, \`call_${i}(\` ✓\n`);
    const needles = ['src/module_1/', 'call_899(', 'file_36.ts` — edited 899', 'ago, `call_4', 'ts\n- `src/module_5', '\n', 'zz', 'src/module_900/', '✓\n- `', 'edited 0 turns', ''];
    for (const line of lines) {
      text.append(line);
      whole += line;
      for (const needle of needles) expect(text.includes(needle), `${JSON.stringify(needle)} after ${whole.length} characters`).toBe(whole.includes(needle));
    }
    expect(whole.length).toBeGreaterThan(4 * 4096);
  });
});
