import { describe, expect, it } from 'vitest';
import type { CutFigures } from '../../bench/src/fidelity-run.js';
import { cutRows } from '../../bench/src/suites/fidelity.js';

/** A cut with the given shares per budget (value model = composite, newest first = recency). */
function cut(name: string, byBudget: Record<string, [number, number]>, real = false, atSummary?: [number, number]): CutFigures {
  return {
    cut: name,
    sessionId: name,
    half: 'tuning',
    real,
    trigger: real ? 'auto' : null,
    needed: 10,
    summaryTokens: real ? 100 : null,
    summaryRealTokens: real ? 100 : null,
    cairnRealTokens: real ? 95 : null,
    summary: real ? 0.2 : null,
    hookContext: 0.5,
    hookContextTokens: 100,
    summaryPlusHook: real ? 0.6 : null,
    hookWithEcho: null,
    summaryPlusHookWithEcho: null,
    atSummary: atSummary ? { cairn: { composite: atSummary[0], recency: atSummary[1], random: 0 }, recency: 0, summaryPlusCairn: 0 } : null,
    byBudget: Object.fromEntries(Object.entries(byBudget).map(([b, [model, newest]]) => [b, { cairn: { composite: model, recency: newest, random: 0 }, recency: 0 }])),
    missedByCairn: [],
    notCandidates: [],
    notCandidatesCount: 0,
    product: null,
    misses: [],
  };
}

describe('fidelity rows: newest first against the value model, cut by cut', () => {
  it('counts the cuts where newest first is ahead, behind and level, per budget and at the summary’s token count', () => {
    const cuts = [
      cut('a', { 1000: [0.4, 0.5], 2000: [0.7, 0.7] }, true, [0.8, 0.9]),
      cut('b', { 1000: [0.6, 0.5], 2000: [0.7, 0.8] }, true, [0.9, 0.9]),
      cut('c', { 1000: [0.3, 0.6], 2000: [0.9, 0.8] }),
    ];
    const rows = new Map(cutRows('tuning', cuts, { judged: false }).map((m) => [m.name, m]));
    const at1K = rows.get('tuning: cuts where ranker recency is ahead of the value model @1K');
    expect(at1K?.value).toBe(2);
    expect(at1K?.note).toBe('behind on 1, level on 0 of 3 cuts');
    const at2K = rows.get('tuning: cuts where ranker recency is ahead of the value model @2K');
    expect(at2K?.value).toBe(1);
    expect(at2K?.note).toBe('behind on 1, level on 1 of 3 cuts');
    // A budget no cut was measured at counts nothing.
    expect(rows.get('tuning: cuts where ranker recency is ahead of the value model @4K')?.note).toBe('behind on 0, level on 0 of 0 cuts');
    const atSummary = rows.get("tuning: real compactions where ranker recency is ahead of the value model at the summary's token count");
    expect(atSummary?.value).toBe(1);
    expect(atSummary?.note).toBe('behind on 0, level on 1 of 2 cuts');
  });
});
