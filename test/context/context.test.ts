import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCairn, type Cairn } from '../../src/cairn.js';
import { estimateTokens } from '../../src/tokens.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';

describe('context builder', () => {
  let cairn: Cairn;
  let root: string;
  const t0 = Date.UTC(2026, 0, 1);

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'cairn-ctx-'));
    cairn = createCairn({
      store: await openSqliteStore(':memory:'),
      clock: { now: () => t0 },
      project: 'p',
      workspaceRoot: root,
      session: 's-now',
      core: { project: join(root, '.cairn', 'MEMORY.md'), user: join(root, 'user-MEMORY.md') },
    });
  });
  afterEach(async () => {
    await cairn.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('puts core memory first, then continuation, rules, facts — with ids, within budget', async () => {
    mkdirSync(join(root, '.cairn'));
    writeFileSync(join(root, '.cairn', 'MEMORY.md'), '# Project rules\n- never push to main\n');
    const fact = await cairn.remember({ text: 'def process_workspace_changes(path: Path, db: Database, *, force: bool = False) -> list[ChangeResult]', kind: 'fact' });
    const corr = await cairn.remember({ text: 'Do not mock the database in integration tests; use the docker fixture', kind: 'correction' });
    const cont = await cairn.remember({ text: 'Current task: fix the watcher race; next: add a regression test', kind: 'continuation', scope: 'session' });
    const result = await cairn.context({ budget: 500 });
    const md = result.markdown;
    const order = ['## Core memory (project)', '## Where we left off', '## Corrections and rules', '## Facts and decisions'].map((h) => md.indexOf(h));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    for (const m of [fact, corr, cont]) expect(md).toContain(`[${m.memory.id}]`);
    expect(md).toContain('never push to main');
    expect(result.tokens).toBeLessThanOrEqual(500);
    expect(result.tokens).toBe(estimateTokens(md));
    expect(result.sections.map((s) => s.name)).toEqual(['core:project', 'continuation', 'rules', 'facts']);
  });

  it('packs into a small budget and says what was left out and why', async () => {
    for (let i = 0; i < 40; i++) await cairn.remember({ text: `finding ${i}: the handler_${i} function in src/handlers/h${i}.ts returns early on empty input`, kind: 'fact' });
    const result = await cairn.context({ budget: 200 });
    expect(result.tokens).toBeLessThanOrEqual(200);
    expect(result.sections.find((s) => s.name === 'facts')?.ids.length).toBeGreaterThan(0);
    expect(result.omitted.filter((o) => o.reason === 'budget').length).toBeGreaterThan(20);
  });

  it('leaves near-duplicates out', async () => {
    const a = await cairn.remember({ text: 'run the tests with npm test -- --runInBand to avoid port clashes', kind: 'procedure' });
    const b = await cairn.remember({ text: 'run the tests with npm test -- --runInBand to avoid the port clashes', kind: 'procedure' });
    const result = await cairn.context({ budget: 1000 });
    const ids = result.sections.flatMap((s) => s.ids);
    expect(ids.filter((id) => id === a.memory.id || id === b.memory.id)).toHaveLength(1);
    expect(result.omitted.find((o) => o.reason === 'near-duplicate')).toBeDefined();
  });

  it('with a query, brings the relevant memory in over unrelated ones; every ranker runs', async () => {
    for (let i = 0; i < 30; i++) await cairn.remember({ text: `unrelated note ${i} about styling buttons in the settings page`, kind: 'note' });
    const target = await cairn.remember({ text: 'acquire_lock() must be called before touching workspace metadata', kind: 'fact' });
    const result = await cairn.context({ query: 'workspace metadata lock', budget: 120 });
    expect(result.markdown).toContain(target.memory.id);
    for (const ranker of ['composite', 'recency', 'importance', 'bm25', 'cosine', 'random']) {
      const r = await cairn.context({ query: 'workspace metadata lock', budget: 300, ranker });
      expect(r.ranker).toBe(ranker);
      expect(r.tokens).toBeLessThanOrEqual(300);
    }
    await expect(cairn.context({ ranker: 'nope' })).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'ranker' });
    cairn.registerRanker('shortest', (c) => 1 / c.memory.text.length);
    expect((await cairn.context({ ranker: 'shortest', budget: 300 })).ranker).toBe('shortest');
  });

  it('favours the session being resumed and warns when core memory is over budget', async () => {
    writeFileSync(join(root, 'user-MEMORY.md'), Array.from({ length: 90 }, (_, i) => `- rule ${i}`).join('\n'));
    const mine = await cairn.remember({ text: 'the parser lives in src/parse/lexer.ts:88', kind: 'fact', session: 'compacted' });
    for (let i = 0; i < 20; i++) await cairn.remember({ text: `other session fact number ${i} with src/other/f${i}.ts`, kind: 'fact', session: 'other', importance: 0.9 });
    const result = await cairn.context({ budget: 700, favorSession: 'compacted' });
    expect(result.warnings.join()).toMatch(/90 lines, over its budget of 80/);
    expect(result.markdown).toContain('core memory cut at 80 lines');
    expect(result.sections.find((s) => s.name === 'facts')?.ids[0]).toBe(mine.memory.id);
  });
});
