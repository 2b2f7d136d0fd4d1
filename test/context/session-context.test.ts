import { describe, expect, it } from 'vitest';
import { activityOf, addCallFacts, callDetails, factDetails, mergePathVariants, underRoot } from '../../src/context/details.js';
import { packDetails } from '../../src/context/session-context.js';
import { estimateTokens } from '../../src/tokens.js';
import { DEFAULT_VALUE_MODEL, FEATURES, fitValueModel, learnStep, valueOf, type Example, type Feature } from '../../src/context/value-model.js';
import type { SessionFact, TurnRecord } from '../../src/types.js';

let seq = 0;
function turn(role: TurnRecord['role'], text: string, extra: Partial<TurnRecord> = {}): TurnRecord {
  seq++;
  return { id: `s:${seq}`, sessionId: 's', seq, role, text, toolName: null, toolInput: null, toolUseId: null, isError: false, flags: [], at: null, sourceUuid: null, sourceLine: seq, ...extra };
}
function fact(kind: SessionFact['kind'], text: string, at: number, extra: Partial<SessionFact> = {}): SessionFact {
  const source = { turnId: `s:${at}`, seq: at, role: 'tool_call' as const, toolName: 'Bash', at: null, note: null };
  return { id: `f${kind}${text}`.slice(0, 12), sessionId: 's', kind, text, path: null, line: null, note: null, occurrences: 1, first: source, last: source, byUser: false, ...extra };
}

function session(): TurnRecord[] {
  seq = 0;
  return [
    turn('user', 'fix the flaky watcher test in src/watch.ts'),
    turn('tool_call', 'Read', { toolName: 'Read', toolInput: JSON.stringify({ file_path: '/repo/src/watch.ts' }) }),
    turn('tool_result', '1→export function acquireLock(path: string): Lock {', { toolName: 'Read' }),
    turn('tool_call', 'Edit', { toolName: 'Edit', toolInput: JSON.stringify({ file_path: '/repo/src/watch.ts', new_string: 'this.store.saveSession(id); acquireLock(p);' }) }),
    turn('assistant', 'I will call `watcher.flush(` next.'),
  ];
}

describe('post-compact details', () => {
  it('reads what the session edited, read and called, and the task in progress', () => {
    const activity = activityOf(session());
    expect([...activity.edited.keys()]).toEqual(['/repo/src/watch.ts']);
    expect([...activity.read.keys()]).toEqual(['/repo/src/watch.ts']);
    // `this.` says nothing: the call is `store.saveSession(`.
    expect(activity.calls.get('store.saveSession')?.inEdit).toBe(true);
    expect(activity.calls.has('watcher.flush')).toBe(true);
    expect(activity.task).toContain('flaky watcher');
  });

  it('writes one line per detail with why it matters, and merges a relative path into its absolute spelling', () => {
    const activity = activityOf(session());
    const facts = [
      fact('path', '/repo/src/watch.ts', 4, { path: '/repo/src/watch.ts', occurrences: 3, last: { turnId: 's:4', seq: 4, role: 'tool_call', toolName: 'Edit', at: null, note: null } }),
      fact('path', 'src/watch.ts', 1, { path: 'src/watch.ts', byUser: true }),
      fact('command', 'npm test -- watch', 4, { note: 'exit 1: 1 failed' }),
      fact('symbol', 'acquireLock', 3, { path: '/repo/src/watch.ts', line: 1, note: 'export function acquireLock(path: string): Lock {' }),
    ];
    const details = mergePathVariants([...factDetails(facts, activity), ...callDetails(activity, new Set(['acquireLock']))]);
    const lines = details.map((d) => d.line);
    expect(lines.filter((l) => l.includes('src/watch.ts`'))).toHaveLength(1);
    const path = details.find((d) => d.line.startsWith('- `/repo/src/watch.ts`'));
    expect(path?.features.byUser).toBe(1); // taken over from the relative spelling
    expect(path?.line).toMatch(/edited .*3×/);
    expect(lines).toContain('- ran `npm test -- watch` — exit 1: 1 failed');
    expect(details.find((d) => d.kind === 'command')?.features.failing).toBe(1);
    // A signature that holds the name says it once.
    expect(lines.find((l) => l.includes('acquireLock('))).toBe('- `export function acquireLock(path: string): Lock {` at /repo/src/watch.ts:1');
    // A symbol fact already names the call: no second line for it; no bare `calls:` list anywhere.
    expect(lines.filter((l) => l.includes('acquireLock('))).toHaveLength(1);
    expect(lines.some((l) => l.startsWith('- calls:'))).toBe(false);
  });

  it('leaves out what the compaction summary in the context window already holds verbatim, and says where a call was seen', () => {
    const activity = activityOf(session());
    const read = { turnId: 's:3', seq: 3, role: 'tool_result' as const, toolName: 'Read', at: null, note: null };
    const facts = [
      fact('path', 'src/summarized.ts', 4, { path: 'src/summarized.ts' }),
      fact('path', 'src/only-here.ts', 4, { path: 'src/only-here.ts' }),
      fact('call', 'Enum.group_by', 3, { path: '/repo/lib/view.ex', line: 301, first: read, last: read }),
    ];
    addCallFacts(activity, facts);
    const details = [...factDetails(facts.filter((f) => f.kind !== 'call'), activity, '/repo'), ...callDetails(activity, new Set())];
    expect(details.map((d) => d.line)).toContain('- `Enum.group_by(` — called at view.ex:301');
    const pack = packDetails(details, { budget: 2000, ranker: 'composite', seed: 1, endSeq: 5, inContext: 'We changed src/summarized.ts to debounce.' });
    expect(pack.text).toContain('src/only-here.ts');
    expect(pack.text).not.toContain('src/summarized.ts');
    expect(pack.omitted.find((o) => o.detail === 'compaction summary')).toBeDefined();
  });

  it('points symbol lines at paths relative to the project folder, POSIX and Windows', () => {
    expect(underRoot('/repo/src/a.ts', '/repo')).toBe('src/a.ts');
    expect(underRoot('C:\\repo\\src\\a.ts', 'C:\\repo')).toBe('src\\a.ts');
    expect(underRoot('/elsewhere/a.ts', '/repo')).toBe('/elsewhere/a.ts');
    expect(underRoot('/repository/a.ts', '/repo')).toBe('/repository/a.ts');
    expect(underRoot('/repo/a.ts', null)).toBe('/repo/a.ts');
  });

  it('packs within the budget, skips a line another chosen line carries, and the ranker decides what fits', () => {
    const activity = activityOf(session());
    const facts: SessionFact[] = [];
    for (let i = 0; i < 60; i++) facts.push(fact('path', `src/mod${i}/file${i}.ts`, i, { path: `src/mod${i}/file${i}.ts` }));
    facts.push(fact('path', 'src/mod1/file1.ts:42', 59, { path: 'src/mod1/file1.ts', line: 42 }));
    const details = factDetails(facts, activity);
    const pack = packDetails(details, { budget: 200, ranker: 'composite', seed: 1, endSeq: 60 });
    expect(pack.tokens).toBeLessThanOrEqual(200);
    expect(pack.tokens).toBe(estimateTokens(pack.text));
    expect(pack.omitted.filter((o) => o.reason === 'budget').length).toBeGreaterThan(20);
    const recency = packDetails(details, { budget: 200, ranker: 'recency', seed: 1, endSeq: 60 });
    const random = packDetails(details, { budget: 200, ranker: 'random', seed: 1, endSeq: 60 });
    expect(recency.text).not.toBe(random.text);
    expect(recency.text).toContain('file59.ts');
    // At a large budget, `src/mod1/file1.ts` is carried by its newer path:line line (recency packs that first).
    const all = packDetails(details, { budget: 20_000, ranker: 'recency', seed: 1, endSeq: 60 });
    expect(all.text).toContain('src/mod1/file1.ts:42');
    expect(all.omitted.find((o) => o.id === facts[1]?.id)?.reason).toBe('near-duplicate');
    expect(all.text).toContain('## Files');
  });
});

describe('value model', () => {
  const row = (on: Feature[]): Record<Feature, number> => Object.fromEntries(FEATURES.map((f) => [f, on.includes(f) ? 1 : 0])) as Record<Feature, number>;

  it('fits a feature that predicts use to a positive weight, and one that does not to a negative weight', () => {
    const examples: Example[] = [];
    for (let i = 0; i < 200; i++) {
      examples.push({ features: row(['read']), label: i % 10 < 8 ? 1 : 0 });
      examples.push({ features: row(['kind:url']), label: i % 10 < 1 ? 1 : 0 });
    }
    const model = fitValueModel(examples, { iterations: 400, l2: 0 });
    expect(model.read).toBeGreaterThan(0.5);
    expect(model['kind:url']).toBeLessThan(-0.5);
    expect(valueOf(model, row(['read']))).toBeCloseTo(0.8, 1);
  });

  it('learns from use: a step toward what was used raises its value and lowers what was not', () => {
    const used = row(['kind:call']);
    const unused = row(['kind:url']);
    const delta = learnStep(DEFAULT_VALUE_MODEL, {}, [{ features: used, label: 1 }, { features: unused, label: 0 }], 0.5);
    expect(delta['kind:call']).toBeGreaterThan(0);
    expect(delta['kind:url']).toBeLessThan(0);
  });
});
