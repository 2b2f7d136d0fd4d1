import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCairn, type Cairn } from '../../src/cairn.js';
import { createHashEmbedder } from '../../src/embed/hash.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Clock } from '../../src/types.js';

const DAY = 86_400_000;

class FakeClock implements Clock {
  constructor(public t = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

describe('memory operations', () => {
  let cairn: Cairn;
  let clock: FakeClock;
  let root: string;

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'cairn-ops-'));
    clock = new FakeClock();
    cairn = createCairn({
      store: await openSqliteStore(':memory:'),
      embedder: createHashEmbedder({ dimension: 64 }),
      clock,
      project: 'github.com/acme/app',
      workspaceRoot: root,
      session: 'sess-1',
      actor: 'test',
    });
  });
  afterEach(async () => {
    await cairn.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('remembers, redacts secrets and drops private spans before storing', async () => {
    const result = await cairn.remember({
      text: 'deploy with AWS key AKIAIOSFODNN7EXAMPLE <private>my home address</private> then run make deploy',
      kind: 'procedure',
      tags: ['Deploy'],
    });
    expect(result.created).toBe(true);
    expect(result.memory.text).not.toContain('AKIAIOSFODNN7EXAMPLE');
    expect(result.memory.text).toContain('[REDACTED:');
    expect(result.memory.text).not.toContain('home address');
    expect(result.memory.tags).toEqual(['deploy']);
    expect(result.memory).toMatchObject({ kind: 'procedure', scope: 'project', project: 'github.com/acme/app', session: 'sess-1' });
    expect(Object.keys(result.redacted).length).toBeGreaterThan(0);
  });

  it('rejects empty, private-only and huge texts with the limit named', async () => {
    await expect(cairn.remember({ text: '   ' })).rejects.toMatchObject({ code: 'TEXT_EMPTY' });
    await expect(cairn.remember({ text: '<private>secret</private>' })).rejects.toMatchObject({ code: 'TEXT_EMPTY' });
    await expect(cairn.remember({ text: 'x'.repeat(9000) })).rejects.toThrow(/limit is 8192/);
    await expect(cairn.remember({ text: 'ok', kind: 'bogus' as never })).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'kind' });
    await expect(cairn.remember({ text: 'ok', importance: 2 })).rejects.toMatchObject({ field: 'importance' });
    expect((await cairn.status()).stats.memories).toBe(0);
  });

  it('an exact duplicate makes no new row and bumps access; a near duplicate is reported, not merged', async () => {
    const first = await cairn.remember({ text: 'The API server listens on port 8080 in development' });
    const again = await cairn.remember({ text: 'the api server listens on  port 8080 in development' });
    expect(again.created).toBe(false);
    expect(again.memory.id).toBe(first.memory.id);
    expect((await cairn.get(first.memory.id)).memory.accessCount).toBeGreaterThanOrEqual(1);
    const near = await cairn.remember({ text: 'The API server listens on port 8080 in development mode' });
    expect(near.created).toBe(true);
    expect(near.similar.map((s) => s.id)).toContain(first.memory.id);
    expect((await cairn.status()).stats.active).toBe(2);
  });

  it('recalls with a why breakdown, BM25 + vectors fused, and code identifiers', async () => {
    await cairn.remember({ text: 'def process_workspace_changes(path: Path, db: Database, *, force: bool = False) -> list[ChangeResult]', kind: 'fact' });
    await cairn.remember({ text: 'acquire_lock() must be called before touching workspace metadata: race with the filesystem watcher', kind: 'fact' });
    await cairn.remember({ text: 'The user prefers short paragraphs in articles', kind: 'preference', scope: 'user' });
    const result = await cairn.recall({ query: 'processWorkspaceChanges signature' });
    expect(result.mode).toBe('hybrid');
    const top = result.hits[0];
    expect(top?.memory.text).toContain('process_workspace_changes');
    expect(top?.why.bm25Rank).toBe(1);
    expect(top?.why.vectorRank).not.toBeNull();
    expect(top?.why.score).toBeCloseTo(top?.score ?? -1);
    for (const key of ['relevance', 'recency', 'importance', 'usage', 'recentlyRecalledPenalty', 'tagBoost', 'scopeFactor'] as const) {
      expect(typeof top?.why[key]).toBe('number');
    }
    // user-scope memories are recalled inside a project too
    const pref = await cairn.recall({ query: 'paragraphs articles' });
    expect(pref.hits[0]?.memory.scope).toBe('user');
  });

  it('ranks by the composite score: importance, tags, recency by kind, recently-recalled penalty, pinned first', async () => {
    const low = await cairn.remember({ text: 'cache invalidation lives in cache.ts', importance: 0.1 });
    const high = await cairn.remember({ text: 'cache invalidation lives in cache_v2.ts', importance: 1, kind: 'fact' });
    let hits = (await cairn.recall({ query: 'cache invalidation', touch: false })).hits;
    expect(hits[0]?.memory.id).toBe(high.memory.id);
    // a tag match adds 10%
    const tagged = await cairn.remember({ text: 'cache invalidation notes for redis', importance: 0.1, tags: ['redis'] });
    hits = (await cairn.recall({ query: 'cache invalidation', tags: ['redis'], touch: false })).hits;
    expect(hits.map((h) => h.memory.id)).toEqual([tagged.memory.id]);
    expect(hits[0]?.why.tagBoost).toBeCloseTo(1.1);
    // recently recalled memories are pushed down when diversifying, never by default (#15.6)
    const first = await cairn.recall({ query: 'cache invalidation lives' });
    const penalised = first.hits.map((h) => h.memory.id);
    const again = await cairn.recall({ query: 'cache invalidation lives', touch: false });
    expect(again.hits.map((h) => h.memory.id)).toEqual(penalised);
    expect(again.hits.every((h) => h.why.recentlyRecalledPenalty === 0)).toBe(true);
    const second = await cairn.recall({ query: 'cache invalidation lives', touch: false, diversify: true });
    expect(second.hits[0]?.why.recentlyRecalledPenalty).toBeGreaterThan(0);
    clock.advance(60 * 60_000);
    const later = await cairn.recall({ query: 'cache invalidation lives', touch: false, diversify: true });
    expect(later.hits[0]?.why.recentlyRecalledPenalty).toBe(0);
    expect(penalised.length).toBeGreaterThan(0);
    // continuation context decays in days, facts do not
    const cont = await cairn.remember({ text: 'next step: finish cache invalidation refactor', kind: 'continuation' });
    clock.advance(14 * DAY);
    const aged = (await cairn.recall({ query: 'cache invalidation', touch: false })).hits;
    const contHit = aged.find((h) => h.memory.id === cont.memory.id);
    const factHit = aged.find((h) => h.memory.id === high.memory.id);
    expect(contHit?.why.recency).toBeLessThan(0.3);
    expect(factHit?.why.recency).toBeGreaterThan(0.9);
    // pinned comes first regardless of score
    await cairn.update(low.memory.id, { pinned: true });
    hits = (await cairn.recall({ query: 'cache invalidation', touch: false })).hits;
    expect(hits[0]?.memory.id).toBe(low.memory.id);
  });

  it('scopes: session > project > user, and other projects stay out', async () => {
    await cairn.remember({ text: 'build with cargo build --release', scope: 'session' });
    await cairn.remember({ text: 'build with cargo build --workspace' });
    await cairn.remember({ text: 'build with cargo build --locked', scope: 'user' });
    await cairn.remember({ text: 'build with cargo build --offline', project: 'github.com/other/repo' });
    const hits = (await cairn.recall({ query: 'cargo build', touch: false })).hits;
    expect(hits.map((h) => h.memory.text)).not.toContain('build with cargo build --offline');
    expect(hits[0]?.memory.scope).toBe('session');
    expect(hits[0]?.why.scopeFactor).toBeGreaterThan(1);
    const all = (await cairn.recall({ query: 'cargo build', allProjects: true, touch: false })).hits;
    expect(all).toHaveLength(4);
    const users = (await cairn.recall({ query: 'cargo build', scopes: ['user'], touch: false })).hits;
    expect(users.map((h) => h.memory.scope)).toEqual(['user']);
  });

  it('forget and restore, with the event log as the audit trail', async () => {
    const m = (await cairn.remember({ text: 'flaky test: await server.close() in afterEach' })).memory;
    const result = await cairn.forget([m.id], 'obsolete');
    expect(result.forgotten).toEqual([m.id]);
    expect((await cairn.recall({ query: 'flaky test' })).hits).toHaveLength(0);
    expect((await cairn.forget([m.id])).unchanged).toEqual([m.id]);
    await expect(cairn.forget(['nope'])).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await cairn.restore(m.id);
    expect((await cairn.recall({ query: 'flaky test' })).hits[0]?.memory.id).toBe(m.id);
    const detail = await cairn.get(m.id);
    expect(detail.events.map((e) => e.type)).toEqual(['create', 'forget', 'restore']);
    expect(detail.events[1]?.data).toEqual({ reason: 'obsolete' });
  });

  it('revise closes the old version; recall returns the new one; history lists both', async () => {
    const v1 = (await cairn.remember({ text: 'tests run with npm test', kind: 'procedure', tags: ['test'] })).memory;
    const v2 = (await cairn.revise(v1.id, 'tests run with npm test -- --runInBand')).memory;
    expect(v2.supersedes).toBe(v1.id);
    expect(v2).toMatchObject({ kind: 'procedure', tags: ['test'] });
    const hits = (await cairn.recall({ query: 'tests run npm', touch: false })).hits;
    expect(hits.map((h) => h.memory.id)).toEqual([v2.id]);
    const detail = await cairn.get(v2.id);
    expect(detail.versions.map((v) => v.id)).toEqual([v1.id, v2.id]);
    expect(detail.events.map((e) => e.type)).toEqual(expect.arrayContaining(['create', 'supersede', 'revise']));
    await expect(cairn.revise(v1.id, 'again')).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('snapshots seal a set; recall as-of and diff show what changed', async () => {
    const a = (await cairn.remember({ text: 'retry budget is 3 attempts' })).memory;
    const b = (await cairn.remember({ text: 'timeouts are 30 seconds' })).memory;
    await cairn.snapshot('monday');
    await cairn.forget([b.id]);
    const a2 = (await cairn.revise(a.id, 'retry budget is 5 attempts')).memory;
    const c = (await cairn.remember({ text: 'circuit breaker opens after 10 failures' })).memory;
    await cairn.snapshot('friday');
    const asOf = await cairn.recall({ query: 'retry budget attempts', asOf: 'monday', touch: false });
    expect(asOf.hits.map((h) => h.memory.id)).toEqual([a.id]);
    const d = await cairn.diff('monday', 'friday');
    expect(d.added.map((m) => m.id)).toEqual([c.id]);
    expect(d.removed.map((m) => m.id)).toEqual([b.id]);
    expect(d.revised.map((r) => [r.before.id, r.after.id])).toEqual([[a.id, a2.id]]);
    expect((await cairn.diff('friday', 'now')).added).toEqual([]);
    await expect(cairn.snapshot('monday')).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(cairn.diff('nope', 'now')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await cairn.snapshots()).map((s) => s.label)).toEqual(['monday', 'friday']);
  });

  it('checks staleness by content hash and line text, not just existence', async () => {
    const file = join(root, 'src', 'lock.ts');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(root, 'src'), { recursive: true });
    writeFileSync(file, 'import x\n\nexport function acquireLock(path: string) {\n  return true;\n}\n');
    const m = (await cairn.remember({ text: 'acquireLock(path) is defined in src/lock.ts:3' })).memory;
    expect(m.files[0]).toMatchObject({ path: 'src/lock.ts', line: 3 });
    expect(m.files[0]?.hash).toMatch(/^[0-9a-f]{64}$/);
    const check = async () => (await cairn.recall({ query: 'acquireLock', touch: false })).hits[0]?.staleness;
    expect((await check())?.stale).toBe(false);
    writeFileSync(file, '// header\nimport x\n\nexport function acquireLock(path: string) {\n  return true;\n}\n');
    const moved = await check();
    expect(moved?.reasons).toEqual(['line-moved']);
    expect(moved?.files[0]).toMatchObject({ status: 'line-moved', movedTo: 4 });
    writeFileSync(file, 'export function acquireLock(path: string, timeoutMs: number) {}\n');
    expect((await check())?.reasons).toEqual(['file-changed']);
    rmSync(file);
    expect((await check())?.reasons).toEqual(['file-missing']);
  });

  it('imports JSONL with bad lines reported by number, idempotently; exports round-trip', async () => {
    const lines = [
      JSON.stringify({ text: 'first imported fact', kind: 'fact', tags: ['a'] }),
      'not json',
      JSON.stringify({ text: 'second imported fact', kind: 'nonsense' }),
      '',
      JSON.stringify({ text: 'third imported decision', kind: 'decision', createdAt: '2025-05-01T00:00:00Z' }),
      JSON.stringify({ kind: 'fact' }),
    ];
    const result = await cairn.importJsonl(lines);
    expect(result).toMatchObject({ imported: 2, duplicates: 0 });
    expect(result.failed.map((f) => f.line)).toEqual([2, 3, 6]);
    expect(result.failed[1]?.error).toMatch(/kind/);
    const again = await cairn.importJsonl(lines);
    expect(again).toMatchObject({ imported: 0, duplicates: 2 });
    const exported: string[] = [];
    for await (const line of cairn.exportJsonl()) exported.push(line);
    expect(exported).toHaveLength(2);
    // created-asc: the decision carries an older createdAt, so it comes first
    expect(JSON.parse(exported[0] as string)).toMatchObject({ text: 'third imported decision', kind: 'decision', createdAt: '2025-05-01T00:00:00.000Z' });
    const md = await cairn.exportMarkdown();
    expect(md).toContain('## Decisions');
    expect(md).toContain('- first imported fact #a');
  });

  it('imports a conversation turn with its session and line, exports them back, and refuses unknown provenance fields', async () => {
    const turn = { text: 'Caroline: five years already!', provenance: { sessionId: 'chat-7', line: 12 } };
    const result = await cairn.importJsonl([JSON.stringify(turn), JSON.stringify({ text: 'x', provenance: { line: 'twelve' } }), JSON.stringify({ text: 'y', provenance: { session: 'a' } })]);
    expect(result).toMatchObject({ imported: 1 });
    expect(result.failed.map((f) => f.line)).toEqual([2, 3]);
    const exported: string[] = [];
    for await (const line of cairn.exportJsonl()) exported.push(line);
    expect(JSON.parse(exported[0] as string)).toMatchObject(turn);
  });
});
