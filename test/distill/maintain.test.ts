import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { targetImportance } from '../../src/distill/maintain.js';
import type { Memory } from '../../src/types.js';
import { DAY, Turns, sessionRecord, testCairn } from './helpers.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('maintain', () => {
  it('decays operational context by half a week at a time, keeps durable memories, boosts used ones', async () => {
    const t = await testCairn();
    const now = t.clock.now();
    const fact = await t.cairn.remember({ text: '`parse()` lives in src/parse.ts:10', kind: 'fact', importance: 0.6 });
    const session = await t.cairn.remember({ text: 'Task: wire the retry loop in src/http.ts', kind: 'continuation', scope: 'session', session: 's1', importance: 0.6, createdAt: now - 7 * DAY });
    const used = await t.cairn.remember({ text: '`fetchAll()` pages through results, see src/api.ts:40', kind: 'fact', importance: 0.5 });
    for (let i = 0; i < 7; i++) await t.cairn.deps.store.touch([used.memory.id], now, true);

    const dry = await t.cairn.maintain({ dryRun: true });
    expect(dry.decayed.map((c) => [c.id, c.from, c.to])).toEqual([[session.memory.id, 0.6, 0.3]]);
    expect(dry.reweighted.map((c) => [c.id, c.to])).toEqual([[used.memory.id, 0.65]]);
    expect((await t.cairn.deps.store.getMemory(session.memory.id))?.importance).toBe(0.6);

    const report = await t.cairn.maintain();
    expect(report.decayed).toHaveLength(1);
    expect((await t.cairn.deps.store.getMemory(session.memory.id))?.importance).toBe(0.3);
    expect((await t.cairn.deps.store.getMemory(fact.memory.id))?.importance).toBe(0.6);
    expect((await t.cairn.deps.store.getMemory(used.memory.id))?.importance).toBe(0.65);
    // Idempotent: recomputed from the base, not compounded.
    const again = await t.cairn.maintain();
    expect(again.decayed).toEqual([]);
    expect(again.reweighted).toEqual([]);
    expect(report.vacuum).not.toBeNull();
  });

  it('forgets operational memories that fell below the floor (restorable), never corrections or manual ones', async () => {
    const t = await testCairn();
    const now = t.clock.now();
    const old = await t.cairn.remember({ text: 'Task: an old task in src/a.ts', kind: 'continuation', scope: 'session', session: 's0', source: 'distill', importance: 0.6, createdAt: now - 30 * DAY });
    const manual = await t.cairn.remember({ text: 'Task: a manual old note in src/b.ts', kind: 'continuation', scope: 'session', session: 's0', importance: 0.6, createdAt: now - 30 * DAY });
    const rule = await t.cairn.remember({ text: "Don't mock the database in src/db.test.ts", kind: 'correction', source: 'distill', importance: 0.05, createdAt: now - 300 * DAY });
    const report = await t.cairn.maintain();
    expect(report.pruned.map((c) => c.id)).toEqual([old.memory.id]);
    expect((await t.cairn.deps.store.getMemory(old.memory.id))?.deletedAt).not.toBeNull();
    expect((await t.cairn.deps.store.getMemory(manual.memory.id))?.deletedAt).toBeNull();
    expect((await t.cairn.deps.store.getMemory(rule.memory.id))?.deletedAt).toBeNull();
    await t.cairn.restore(old.memory.id);
    expect((await t.cairn.deps.store.getMemory(old.memory.id))?.deletedAt).toBeNull();
    const at = (await t.cairn.deps.store.listEvents({ memoryId: old.memory.id, types: ['forget'] }))[0];
    expect(at?.data.reason).toMatch(/below 0.1/);
  });

  it('rebuilds the review queue: near-duplicates, contradictions, stale files; closes items whose memories are gone', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cairn-maintain-'));
    dirs.push(root);
    mkdirSync(join(root, 'src'));
    writeFileSync(join(root, 'src', 'a.ts'), 'export const a = 1;\n');
    const t = await testCairn({ workspaceRoot: root });
    const a = await t.cairn.remember({ text: 'Tests run with `npm test` from the app folder (passed).', kind: 'procedure' });
    const b = await t.cairn.remember({ text: 'Tests run with `npm test` from the app folder (they passed).', kind: 'procedure' });
    const c = await t.cairn.remember({ text: 'Always mock the HTTP client in the unit tests of `sync()`', kind: 'preference' });
    const d = await t.cairn.remember({ text: 'Never mock the HTTP client in the unit tests of `sync()`', kind: 'preference' });
    const e = await t.cairn.remember({ text: '`a` is exported from src/a.ts:1', kind: 'fact' });
    writeFileSync(join(root, 'src', 'a.ts'), 'export const b = 2;\n');

    const report = await t.cairn.maintain();
    expect(report.review.queued).toEqual({ 'near-duplicate': 1, contradiction: 1, stale: 1 });
    const open = await t.cairn.review();
    expect(open.map((x) => [x.item.kind, x.item.memoryIds])).toEqual([
      ['near-duplicate', [a.memory.id, b.memory.id]],
      ['contradiction', [c.memory.id, d.memory.id]],
      ['stale', [e.memory.id]],
    ]);
    // Rebuilding again queues nothing twice.
    expect((await t.cairn.maintain()).review.queued).toEqual({ 'near-duplicate': 0, contradiction: 0, stale: 0 });
    // Merge the duplicates: one left, with the other's provenance; then a forgotten memory closes its item.
    const merged = await t.cairn.resolveReview(open[0]!.item.id, { merge: true });
    expect(merged.forgotten).toEqual([b.memory.id]);
    await t.cairn.forget([e.memory.id]);
    const after = await t.cairn.maintain();
    expect(after.review.closed).toBe(1);
    expect((await t.cairn.review()).map((x) => x.item.kind)).toEqual(['contradiction']);
  });

  it('does not call claims about different symbols or files near-duplicates', async () => {
    const t = await testCairn();
    await t.cairn.remember({ text: '`def handle_info(:start_streaming, socket)` — lib/channel.ex', kind: 'fact', meta: { subject: 'sig:lib/channel.ex#handle_info:a' } });
    await t.cairn.remember({ text: '`def handle_info(:start_debug_shell, socket)` — lib/channel.ex', kind: 'fact', meta: { subject: 'sig:lib/channel.ex#handle_info:b' } });
    await t.cairn.remember({ text: 'Setting `span_processor` = `:batch` in config/dev.exs.', kind: 'fact' });
    await t.cairn.remember({ text: 'Setting `span_processor` = `:batch` in config/runtime.exs.', kind: 'fact' });
    expect((await t.cairn.maintain({ dryRun: true })).review.queued).toEqual({ 'near-duplicate': 0, contradiction: 0, stale: 0 });
  });

  it('queues two distilled claims about one subject that both stand', async () => {
    const t = await testCairn();
    await t.write(new Turns(sessionRecord('s1')).user("let's use SQLite for the job queue"));
    await t.write(new Turns(sessionRecord('s2')).user("let's go with Postgres for the job queue"));
    await t.cairn.distill();
    const queued = await t.cairn.review();
    expect(queued).toHaveLength(1);
    // Dismissed, the same pair is not queued again by maintain.
    await t.cairn.resolveReview(queued[0]!.item.id, { dismiss: true });
    expect((await t.cairn.maintain()).review.queued.contradiction).toBe(0);
  });

  it('computes the target importance from base, age and use', () => {
    const base = { kind: 'continuation', scope: 'session', importance: 0.8, meta: {}, accessCount: 0, lastAccessedAt: null, createdAt: 0, updatedAt: 0 } as unknown as Memory;
    expect(targetImportance(base, 14 * DAY, 7).target).toBe(0.2);
    expect(targetImportance({ ...base, kind: 'fact', scope: 'project' }, 140 * DAY, 7).target).toBe(0.8);
    expect(targetImportance({ ...base, meta: { baseImportance: 0.4 } }, 0, 7)).toEqual({ base: 0.4, target: 0.4 });
  });
});
