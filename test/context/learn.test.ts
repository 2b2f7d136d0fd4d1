/**
 * Learning from use (src/context/learn.ts) and its replay (bench/src/fidelity-model.ts): bounded
 * per-kind adjustments shrunk toward the global rates, and a replay in session order that never
 * lets a session teach its own score.
 */
import { describe, expect, it } from 'vitest';
import { replayLearning, type ReplayCut } from '../../bench/src/fidelity-model.js';
import { GLOBAL_KIND_RATES, learnedDelta } from '../../src/context/learn.js';
import type { Detail } from '../../src/context/details.js';
import { DEFAULT_VALUE_MODEL, FEATURES, type Feature } from '../../src/context/value-model.js';

const counts = (injected: number, used: number, left: number, missed: number) => ({ injected, used, left, missed });

describe('learnedDelta', () => {
  it('learns nothing from nothing, and nothing for memory kinds (their left-out candidates are not counted)', () => {
    expect(learnedDelta([])).toEqual({});
    expect(learnedDelta([{ kinds: { rule: counts(10, 10, 0, 0), fact: counts(5, 0, 0, 0) } }])).toEqual({});
  });

  it('moves a kind toward what the project showed, shrunk toward the global rate and bounded', () => {
    // Paths always needed here (global 0.344): up; commands never: down.
    const strong = learnedDelta([{ kinds: { path: counts(40, 40, 60, 60), command: counts(30, 0, 70, 0) } }]);
    expect(strong['kind:path']).toBeGreaterThan(0);
    expect(strong['kind:command']).toBeLessThan(0);
    for (const v of Object.values(strong)) expect(Math.abs(v)).toBeLessThanOrEqual(0.5);
    // A little evidence moves it a little.
    const weak = learnedDelta([{ kinds: { path: counts(2, 2, 0, 0) } }]);
    expect(weak['kind:path']).toBeGreaterThan(0);
    expect(weak['kind:path']).toBeLessThan(strong['kind:path']!);
    // At the global rate: no change.
    const n = 1000;
    const at = Math.round(n * (GLOBAL_KIND_RATES.symbol ?? 0));
    expect(Math.abs(learnedDelta([{ kinds: { symbol: counts(n, at, 0, 0) } }])['kind:symbol']!)).toBeLessThan(0.01);
    expect(learnedDelta([{ kinds: { path: counts(40, 40, 60, 60) } }], { cap: 0.1 })['kind:path']).toBe(0.1);
  });
});

function detail(key: string, kind: 'path' | 'command', line: string): Detail {
  const features = Object.fromEntries(FEATURES.map((f) => [f, 0])) as Record<Feature, number>;
  features[`kind:${kind}`] = 1;
  return { key, kind, line, features, lastSeq: 1, memory: null, factId: key };
}

function cut(sessionId: string, startedAt: string, position: number, needed: string[]): ReplayCut {
  const details = [detail(`${sessionId}-p`, 'path', '- `src/app.ts`'), detail(`${sessionId}-c`, 'command', '- ran `npm run build`')];
  return { cut: `${sessionId}@${position}`, sessionId, half: 'tuning', startedAt, position, project: '/repo', candidates: { details, endSeq: 2, headerTokens: 0, needed } };
}

describe('the learning replay', () => {
  it('scores each session with what earlier sessions taught, never its own', () => {
    const cuts = [cut('b', '2026-01-02', 10, ['npm run build']), cut('a', '2026-01-01', 20, ['src/app.ts']), cut('a', '2026-01-01', 10, ['src/app.ts']), cut('c', '2026-01-03', 5, ['src/app.ts'])];
    const steps = replayLearning(cuts, DEFAULT_VALUE_MODEL, 8, 'project');
    expect(steps.map((s) => [s.cut, s.learnedFrom])).toEqual([
      ['a@10', 0],
      ['a@20', 0],
      ['b@10', 2],
      ['c@5', 3],
    ]);
    // The first session is scored with the shipped model alone.
    expect(steps[0]!.learned).toBe(steps[0]!.prior);
    // Another project learns nothing from these.
    const other = replayLearning([...cuts.slice(0, 3), { ...cuts[3]!, project: '/elsewhere' }], DEFAULT_VALUE_MODEL, 8, 'project');
    expect(other.at(-1)!.learnedFrom).toBe(0);
    expect(replayLearning(cuts, DEFAULT_VALUE_MODEL, 8, 'user').at(-1)!.learnedFrom).toBe(3);
  });
});
