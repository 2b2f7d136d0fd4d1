import { describe, expect, it } from 'vitest';
import { gateReason } from '../../src/distill/gate.js';
import { assignScope } from '../../src/distill/scope.js';
import { jaccard, lshPairs, minhash, minhashSimilarity, opposite, shingles, textSimilarity } from '../../src/distill/similarity.js';
import type { Kind } from '../../src/types.js';

const gate = (text: string, kind: Kind = 'fact'): string | null => gateReason({ text, kind });

describe('quality gate', () => {
  it('passes specific findings and rules', () => {
    expect(gate('`parseConfig(path: string): Config` — src/config.ts:12')).toBeNull();
    expect(gate('The watcher races with the resolver in src/ws/resolver.rs:214')).toBeNull();
    expect(gate('Tests run with `pnpm vitest run` (passed).', 'procedure')).toBeNull();
    expect(gate("Don't produce code, design the solution first", 'correction')).toBeNull();
    expect(gate('Always answer in short sentences', 'preference')).toBeNull();
  });

  it('turns away vague, short, long, filler and transient text', () => {
    expect(gate('It works now.')).toBe('too-short');
    expect(gate('The code is much cleaner than before and easier to read.')).toBe('not-specific');
    expect(gate('Let me check the tests in src/a.test.ts')).toBe('filler');
    expect(gate('Great, looks good to me')).toBe('filler');
    expect(gate("I'm working on src/a.ts right now")).toBe('filler');
    expect(gate(`x`.repeat(1300))).toBe('too-long');
    expect(gate(`Task: ${'y '.repeat(900)}`, 'continuation')).toBeNull();
  });

  it('never lets injected or cairn context through', () => {
    expect(gate('<system-reminder>Use `pnpm` for installs</system-reminder>', 'preference')).toBe('injected');
    expect(gate('# cairn memory — app\n- `parse()` lives in src/a.ts:3')).toBe('injected');
    expect(gate('This session is being continued from a previous conversation. src/a.ts:3 has `parse()`')).toBe('injected');
  });

  it('keeps a correction that names nothing exact but says enough', () => {
    expect(gate('It is not phase 1, a bunch of phases are completed already', 'correction')).toBeNull();
    expect(gate('Great, but there is existing logic for scanning history', 'correction')).toBeNull();
  });
});

describe('scope assignment', () => {
  const scope = (text: string, kind: Kind, project: string | null = 'p') => assignScope({ text, kind, scope: null, extractor: 'preference' }, project);

  it('puts general style in user scope and project facts in project scope', () => {
    expect(scope('Always answer tersely, without emoji', 'preference')).toBe('user');
    expect(scope("Don't produce code, design the solution first", 'correction')).toBe('user');
    expect(scope('Use the sqlite fixture from tests/conftest.py', 'correction')).toBe('project');
    expect(scope("It's not phase 1, the phases are done", 'correction')).toBe('project');
    expect(scope('`parse()` lives in src/a.ts:3', 'fact')).toBe('project');
    expect(scope('Task: ship it', 'continuation')).toBe('session');
  });

  it('drops a project fact without a project, keeps rules as the user’s', () => {
    expect(scope('`parse()` lives in src/a.ts:3', 'fact', null)).toBeNull();
    expect(scope('Never force-push to main', 'preference', null)).toBe('user');
    expect(assignScope({ text: 'x', kind: 'fact', scope: 'project', extractor: 'llm' }, null)).toBeNull();
  });
});

describe('similarity', () => {
  it('scores shingle overlap and finds similar pairs with MinHash LSH', () => {
    const a = 'Tests run with `npm test` in the app folder (passed).';
    const b = 'Tests run with `npm test` in the app folder (they passed).';
    const c = 'The dev server listens on port 4000 for the admin panel.';
    expect(textSimilarity(a, b)).toBeGreaterThan(0.6);
    expect(textSimilarity(a, c)).toBeLessThan(0.1);
    const sigs = [a, b, c].map((t) => minhash(shingles(t)));
    expect(Math.abs(minhashSimilarity(sigs[0]!, sigs[1]!) - jaccard(shingles(a), shingles(b)))).toBeLessThan(0.2);
    expect(lshPairs(sigs)).toEqual([[0, 1]]);
  });

  it('tells opposite rules apart', () => {
    expect(opposite('Always mock the database in unit tests', 'Never mock the database in unit tests')).toBe(true);
    expect(opposite('Use pnpm', 'Use pnpm for installs')).toBe(false);
    expect(opposite('Не используй моки', 'Используй моки')).toBe(true);
  });
});
