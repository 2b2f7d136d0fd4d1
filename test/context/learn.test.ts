/**
 * Learning from use (src/context/learn.ts) and its replay (bench/src/fidelity-model.ts): bounded
 * per-kind adjustments shrunk toward the global rates, and a replay in session order that never
 * lets a session teach its own score.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig, openCairn } from '../../src/config.js';
import { replayLearning, type ReplayCut } from '../../bench/src/fidelity-model.js';
import { GLOBAL_USE_RATES, LEARN_DEFAULTS, learnedCount, learnedDelta, learnedDetails, learnKey, markLearned, type LearnOutcome } from '../../src/context/learn.js';
import type { Detail } from '../../src/context/details.js';
import { adjusted, DEFAULT_VALUE_MODEL, FEATURES, type Feature } from '../../src/context/value-model.js';
import { TranscriptWriter } from '../hooks/transcript.js';

const counts = (injected: number, used: number, left = 0, missed = 0) => ({ injected, used, left, missed });
const compact = (kinds: LearnOutcome['kinds']): LearnOutcome => ({ reason: 'compact', kinds });
/** The same compaction measured `n` times (`minOutcomes` counts compactions). */
const times = (n: number, kinds: LearnOutcome['kinds']): LearnOutcome[] => Array.from({ length: n }, () => compact(kinds));
const logit = (p: number): number => Math.log(p / (1 - p));

describe('learnedDelta', () => {
  it('learns nothing from nothing, nothing for memory kinds, and nothing from windows that were not compactions', () => {
    expect(learnedDelta([])).toEqual({});
    expect(learnedDelta(times(3, { rule: counts(10, 10), fact: counts(5, 0), call: counts(9, 9) }))).toEqual({});
    const startup = { reason: 'startup', kinds: { path: counts(50, 50) } };
    expect(learnedDelta([startup, startup, startup])).toEqual({});
    expect(learnedDelta([startup, compact({ path: counts(50, 50) })])).toEqual({});
  });

  it('abstains until the project has minOutcomes measured compactions', () => {
    expect(LEARN_DEFAULTS.minOutcomes).toBe(2);
    expect(learnedDelta(times(1, { path: counts(50, 50) }))).toEqual({});
    expect(learnedDelta(times(2, { path: counts(25, 25) }))['kind:path']).toBeGreaterThan(0);
    expect(learnedDelta(times(2, { path: counts(25, 25) }), { minOutcomes: 3 })).toEqual({});
  });

  it('moves a kind by its use rate shrunk toward the global rate: log-odds difference, bounded', () => {
    // Paths used 20 of 20 times (global 0.259), commands 0 of 20 (global 0.329); 30 pseudo-candidates.
    const rate = (20 + 30 * 0.259) / (20 + 30);
    const open = learnedDelta(times(2, { path: counts(10, 10), command: counts(10, 0) }), { cap: 10 });
    expect(open['kind:path']).toBeCloseTo(logit(rate) - logit(0.259), 2);
    expect(open['kind:command']).toBeCloseTo(logit((30 * 0.329) / 50) - logit(0.329), 2);
    expect(open['kind:command']!).toBeLessThan(0);
    // The default cap holds both.
    const capped = learnedDelta(times(2, { path: counts(10, 10), command: counts(10, 0) }));
    expect(capped).toEqual({ 'kind:path': LEARN_DEFAULTS.cap, 'kind:command': -LEARN_DEFAULTS.cap });
    // A little evidence moves it a little; more moves it more.
    const weak = learnedDelta(times(2, { path: counts(1, 1) }))['kind:path']!;
    expect(weak).toBeGreaterThan(0);
    expect(weak).toBeLessThan(learnedDelta(times(2, { path: counts(5, 5) }))['kind:path']!);
    // At the global rate: no change.
    const at = Math.round(500 * (GLOBAL_USE_RATES.symbol ?? 0));
    expect(Math.abs(learnedDelta(times(2, { symbol: counts(500, at) }))['kind:symbol']!)).toBeLessThan(0.01);
  });

  it('reads the use of what was injected only: left-out and missed candidates do not move a kind', () => {
    const a = learnedDelta(times(2, { path: counts(10, 2, 0, 0) }));
    const b = learnedDelta(times(2, { path: counts(10, 2, 80, 60) }));
    expect(b).toEqual(a);
    // A kind never injected has no use rate to learn from.
    expect(learnedDelta(times(2, { command: counts(0, 0, 40, 40) }))).toEqual({});
  });
});

function detail(key: string, kind: 'path' | 'command', line: string): Detail {
  const features = Object.fromEntries(FEATURES.map((f) => [f, 0])) as Record<Feature, number>;
  features[`kind:${kind}`] = 1;
  return { key, kind, line, features, lastSeq: 1, memory: null, factId: key, learn: /`([^`]+)`/.exec(line)?.[1] as string };
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

describe('what earlier sessions needed (usedBefore)', () => {
  it('keys details by a hash of the text, learns only from compactions of other sessions, and marks the candidates that match', () => {
    expect(learnKey('npm run build')).toMatch(/^[0-9a-f]{16}$/);
    expect(learnKey('npm run build')).not.toBe(learnKey('npm run test'));
    const outcomes = [
      { session: 'a', reason: 'compact', learned: [learnKey('npm run build')] },
      { session: 'a', reason: 'startup', learned: [learnKey('src/other.ts')] },
      { session: 'b', reason: 'compact', learned: [learnKey('src/app.ts')] },
      { session: 'c', reason: 'compact' },
    ];
    expect(learnedDetails(outcomes, 'b')).toEqual({ lists: [[learnKey('npm run build')]] });
    expect(learnedCount(learnedDetails(outcomes, null))).toBe(2);
    const details = [detail('p', 'path', '- `src/app.ts`'), detail('c', 'command', '- ran `npm run build`'), detail('c2', 'command', '- ran `npm run build`')];
    expect(markLearned(details, learnedDetails(outcomes, 'b'))).toBe(2);
    expect(details.map((d) => d.features.usedBefore)).toEqual([0, 1, 1]);
    expect(markLearned(details, { lists: [] })).toBe(0);
  });

  it('in the replay, a later session packs first what an earlier one needed after its compaction', () => {
    const cuts = [cut('a', '2026-01-01', 10, ['npm run build']), cut('b', '2026-01-02', 10, ['npm run build'])];
    // A budget for one of the two lines: the shipped model packs the shorter path line.
    const budget = 20;
    const [first, second] = replayLearning(cuts, DEFAULT_VALUE_MODEL, budget, 'project');
    expect(first).toMatchObject({ prior: 0, learned: 0, learnedFrom: 0 });
    expect(second).toMatchObject({ prior: 0, learned: 1, learnedFrom: 1 });
    // Without what earlier sessions needed (kind weights only: nothing moves before two compactions).
    expect(replayLearning(cuts, DEFAULT_VALUE_MODEL, budget, 'project', {}, false)[1]).toMatchObject({ prior: 0, learned: 0 });
  });
});

describe('learning in the context builder (on by default)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('packs a resumed session by the shipped model plus what this project’s compactions taught; learnFromUse false packs by the shipped model', async () => {
    const work = mkdtempSync(join(tmpdir(), 'cairn-learn-'));
    dirs.push(work);
    const cwd = join(work, 'repo');
    mkdirSync(cwd);
    const session = '7b2e1d3f-4c5a-4b6c-9d7e-1f2a3b4c5d6e';
    const writer = new TranscriptWriter(session, cwd).user('The cache drops entries: fix src/cache/lru.ts');
    for (let i = 0; i < 12; i++) {
      writer.tool('Read', { file_path: `${cwd}/src/cache/part${i}.ts` }, `export function evict${i}(key: string): void {}`);
      writer.tool('Bash', { command: `npx vitest run test/cache${i}.test.ts` }, `FAIL test/cache${i}.test.ts`, true);
    }
    writeFileSync(join(work, `${session}.jsonl`), writer.text());
    const { cairn } = await openCairn(loadConfig({ home: join(work, 'home'), env: {} }), { cwd, actor: 'test', session });
    try {
      await cairn.ingest([join(work, `${session}.jsonl`)]);
      const ledger = cairn.deps.store.ledger!;
      // Two earlier compactions of this project: its commands were always used, its paths never.
      const outcome = { window: 1, project: cairn.deps.project, reason: 'compact', turnsAfter: 5, injected: 20, used: 10, needed: 10, missed: 0, missedFacts: [], kinds: { command: counts(10, 10), path: counts(10, 0) } };
      await ledger.recordOutcome({ ...outcome, session: 'earlier-1', measuredAt: 1 });
      await ledger.recordOutcome({ ...outcome, session: 'earlier-2', measuredAt: 2 });
      const delta = learnedDelta(await ledger.outcomes({ project: cairn.deps.project }));
      expect(delta).toEqual({ 'kind:command': LEARN_DEFAULTS.cap, 'kind:path': -LEARN_DEFAULTS.cap });
      const input = { favorSession: session, budget: 300 };
      const learned = await cairn.context(input);
      const shipped = await cairn.context({ ...input, learnFromUse: false });
      expect(learned.markdown).toBe((await cairn.context({ ...input, valueModel: adjusted(DEFAULT_VALUE_MODEL, delta) })).markdown);
      expect(shipped.markdown).toBe((await cairn.context({ ...input, valueModel: DEFAULT_VALUE_MODEL })).markdown);
      // Commands up, paths down: the learned context carries more command lines than the shipped one.
      const commandLines = (md: string) => md.split('\n').filter((l) => l.includes('npx vitest run')).length;
      expect(commandLines(learned.markdown)).toBeGreaterThan(commandLines(shipped.markdown));
    } finally {
      await cairn.close();
    }
  });
});
