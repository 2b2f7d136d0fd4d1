import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyStore } from '../../src/store/postgres/copy.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/store.js';
import type { EmbedderIdentity, Memory, MemoryEvent, Store } from '../../src/types.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { dropTestSchemas, realPgUrl, startPglite, withFreshSchema, type PgServer } from '../serve/pg.js';
import { makeMemory } from './conformance.js';

const MODEL: EmbedderIdentity = { model: 'test:v1', dimension: 3 };
const created = (m: Memory): MemoryEvent => ({ memoryId: m.id, type: 'create', at: m.createdAt, actor: 'token:alice', data: { n: 1 } });

let pglite: PgServer;
const dir = tempDir('cairn-copy-');
beforeAll(async () => {
  pglite = await startPglite();
}, 60_000);
afterAll(async () => {
  await pglite?.stop();
  if (realPgUrl) await dropTestSchemas(realPgUrl, 'cp');
});

/** A store holding a bit of everything: versions, a forgotten memory, vectors, events, a snapshot, state, substrate, review. */
async function fill(store: Store): Promise<Memory[]> {
  const a = makeMemory({ text: 'parse_config(path) lives in src/config.py:42', tags: ['config'], files: [{ path: 'src/config.py', line: 42 }], meta: { k: [1, 2] } });
  const b = makeMemory({ text: 'the port is 8080' });
  const b2 = makeMemory({ text: 'the port is 9090', supersedes: b.id });
  const c = makeMemory({ text: 'forgotten: the flaky test needs a retry', project: null, scope: 'user' });
  await store.writeMemory({ memory: a, events: [created(a)], embedding: { model: MODEL, vector: new Float32Array([0.6, 0.8, 0]) } });
  await store.writeMemory({ memory: b, events: [created(b)], embedding: { model: MODEL, vector: new Float32Array([0.1, 0.2, 0.3]) } });
  await store.writeMemory({ memory: b2, events: [created(b2)], closes: { id: b.id, at: b2.createdAt } });
  await store.writeMemory({ memory: c, events: [created(c)] });
  await store.patchMemory(c.id, { deletedAt: 5, updatedAt: 5 }, { memoryId: c.id, type: 'forget', at: 5, actor: 'cli', data: { reason: 'wrong' } });
  await store.createSnapshot({ id: 'S1', label: 'before', createdAt: 10, memoryCount: 0 }, {});
  await store.setState('last_ingest_at', '12345');
  await store.queueReview([
    { id: 'R1', key: 'dup:a:b', kind: 'near-duplicate', project: 'proj-a', memoryIds: [a.id, b2.id], reason: 'similar', data: { s: 0.9 }, createdAt: 7, resolvedAt: null, resolution: null },
  ]);
  await store.substrate?.writeSubstrate({
    sessions: [{ id: 's1', agent: 'claude-code', project: 'proj-a', cwd: '/repo', branch: 'main', parentId: null, startedAt: 1, endedAt: 9, inputTokens: 10, outputTokens: 20, cacheReadTokens: 0, cacheCreationTokens: 0, compactions: 0, sourcePath: '/t/s1.jsonl', title: 'first' }],
    turns: [
      { id: 's1:u1', sessionId: 's1', seq: 0, role: 'user', text: 'why does processWorkspaceChanges drop events?', toolName: null, toolInput: null, toolUseId: null, isError: false, flags: ['queued'], at: 2, sourceUuid: 'u1', sourceLine: 1 },
      { id: 's1:r1', sessionId: 's1', seq: 1, role: 'tool_result', text: 'FAILED', toolName: 'Bash', toolInput: 'cargo test', toolUseId: 't1', isError: true, flags: [], at: 3, sourceUuid: 'r1', sourceLine: 2 },
    ],
    compactions: [{ id: 's1:cb', sessionId: 's1', trigger: 'auto', preTokens: 1000, summary: 'summary', at: 4, seq: 2, sourceLine: 3 }],
    corrections: [{ id: 's1:u2:c', sessionId: 's1', premiseTurnId: null, correctionTurnId: 's1:u1', kind: 'pushback', lang: 'en', text: 'no', at: 5 }],
    cursor: { path: '/t/s1.jsonl', size: 100, mtimeMs: 1.5, offset: 100, headHash: 'h', state: { format: 'claude-code' }, updatedAt: 6 },
  });
  const fact = { sessionId: 's1', kind: 'command' as const, text: 'cargo test', path: null, line: null, seq: 1, role: 'tool_result' as const, toolName: 'Bash', at: 3 };
  await store.substrate?.writeSubstrate({
    sessions: [],
    turns: [],
    compactions: [],
    corrections: [],
    facts: [
      { ...fact, id: 'fcmd', note: 'exit 101 · error: FAILED', turnId: 's1:r1' },
      { ...fact, id: 'fcmd', note: null, turnId: 's1:u1', seq: 0, role: 'user', toolName: null, at: 2 },
      { ...fact, id: 'fpath', kind: 'path', text: 'src/config.py:42', path: 'src/config.py', line: 42, note: null, turnId: 's1:u1', seq: 0, role: 'user', toolName: null },
    ],
    cursor: null,
  });
  const ledger = store.ledger!;
  await ledger.openWindow('s1', 'startup', 1, { project: 'proj-a' });
  const injected = await ledger.record({ session: 's1', project: 'proj-a', via: 'hook', name: 'session-start', target: 'context', memories: [a.id, b2.id], facts: ['fcmd'], blocks: ['core:project'], tokens: 120, at: 2 });
  await ledger.openWindow('s1', 'compact', 4, { project: 'proj-a' });
  await ledger.record({ session: 's1', project: 'proj-a', via: 'hook', name: 'session-start', target: 'context', memories: [a.id], facts: ['fpath'], tokens: 80, at: 5 });
  await ledger.markUsed(injected.id, [a.id, 'fcmd'], 8);
  await ledger.recordOutcome({
    session: 's1', window: 1, project: 'proj-a', reason: 'compact', measuredAt: 9, turnsAfter: 3, injected: 2, used: 1, needed: 4, missed: 1,
    missedFacts: ['fpath'], kinds: { path: { injected: 1, used: 0, left: 2, missed: 1 } },
  });
  return [a, b, b2, c];
}

async function expectSameContent(from: Store, to: Store, memories: Memory[]): Promise<void> {
  for (const m of memories) expect(await to.getMemory(m.id)).toEqual(await from.getMemory(m.id));
  expect((await to.versions(memories[1]!.id)).map((m) => m.id)).toEqual([memories[1]!.id, memories[2]!.id]);
  expect(await to.listEvents({ limit: 100 })).toEqual(await from.listEvents({ limit: 100 }));
  expect([...(await to.snapshotMemberIds('S1'))].sort()).toEqual([...(await from.snapshotMemberIds('S1'))].sort());
  expect(await to.getState('last_ingest_at')).toBe('12345');
  expect(await to.vectorModel()).toEqual(MODEL);
  expect((await to.searchVector(new Float32Array([0.6, 0.8, 0]), MODEL, { limit: 1 }))[0]?.id).toBe(memories[0]!.id);
  expect((await to.searchText('processWorkspaceChanges parse_config', { limit: 3 }))[0]?.id).toBe(memories[0]!.id);
  expect(await to.getReview('R1')).toEqual(await from.getReview('R1'));
  expect(await to.substrate?.getTurns('s1')).toEqual(await from.substrate?.getTurns('s1'));
  expect(await to.substrate?.getSession('s1')).toEqual(await from.substrate?.getSession('s1'));
  expect(await to.substrate?.getCursor('/t/s1.jsonl')).toEqual(await from.substrate?.getCursor('/t/s1.jsonl'));
  expect((await to.substrate?.searchTurns('workspace changes', { limit: 5 }))?.map((h) => h.turn.id)).toEqual(['s1:u1']);
  // session facts with every occurrence, and their index
  expect(await to.substrate?.listFacts('s1')).toEqual(await from.substrate?.listFacts('s1'));
  expect(await to.substrate?.getFact('fcmd')).toEqual(await from.substrate?.getFact('fcmd'));
  expect((await to.substrate?.searchFacts('config.py', { limit: 5 }))?.map((h) => h.fact.id)).toEqual(['fpath']);
  // the injection ledger and what learn-from-use measured
  expect(await to.ledger?.windows('s1')).toEqual(await from.ledger?.windows('s1'));
  expect(await to.ledger?.injections('s1')).toEqual(await from.ledger?.injections('s1'));
  expect(await to.ledger?.outcomes({ session: 's1' })).toEqual(await from.ledger?.outcomes({ session: 's1' }));
}

function copySuite(name: string, pgUrl: () => string): void {
  describe(`cairn copy: SQLite ⇄ ${name}`, () => {
    it('copies every table both ways and verifies counts and hashes; a second run changes nothing', async () => {
      const sqlite: SqliteStore = await openSqliteStore(join(dir, `${name}-a.db`));
      const memories = await fill(sqlite);
      const pg = await openPostgresStore(pgUrl());
      const back = await openSqliteStore(join(dir, `${name}-b.db`));
      try {
        const there = await copyStore(sqlite, pg, { batchSize: 2 });
        expect(there.tables.filter((t) => !t.ok)).toEqual([]);
        expect(there.tables.find((t) => t.table === 'memories')).toMatchObject({ source: 4, target: 4 });
        await expectSameContent(sqlite, pg, memories);
        expect((await copyStore(sqlite, pg, { batchSize: 2 })).ok).toBe(true);
        // new events after a copy number after the copied ones
        await pg.appendEvents([{ memoryId: memories[0]!.id, type: 'access', at: 99, actor: 't', data: {} }]);
        expect((await pg.listEvents({ limit: 1 }))[0]?.id).toBe(6);
        await pg.appendEvents([]);
        const backAgain = await copyStore(pg, back, { batchSize: 3 });
        expect(backAgain.tables.filter((t) => !t.ok)).toEqual([]);
        await expectSameContent(pg, back, memories);
      } finally {
        await Promise.all([sqlite.close(), pg.close(), back.close()]);
      }
    });

    it('reports a difference when the target holds rows the source does not', async () => {
      const sqlite = await openSqliteStore(join(dir, `${name}-diff.db`));
      await fill(sqlite);
      const pg = await openPostgresStore(pgUrl());
      try {
        const extra = makeMemory({ text: 'already in the target' });
        await pg.writeMemory({ memory: extra, events: [] });
        const report = await copyStore(sqlite, pg);
        expect(report.ok).toBe(false);
        expect(report.tables.filter((t) => !t.ok).map((t) => t.table)).toEqual(['memories']);
      } finally {
        await Promise.all([sqlite.close(), pg.close()]);
      }
    });

    it('resumes an interrupted copy where it stopped', async () => {
      const sqlite = await openSqliteStore(join(dir, `${name}-resume.db`));
      for (let i = 0; i < 30; i++) {
        const m = makeMemory({ text: `resumable finding ${i}` });
        await sqlite.writeMemory({ memory: m, events: [created(m)] });
      }
      const pg = await openPostgresStore(pgUrl());
      try {
        let batches = 0;
        await expect(
          copyStore(sqlite, pg, {
            batchSize: 5,
            onProgress: () => {
              if (++batches === 3) throw new Error('interrupted');
            },
          }),
        ).rejects.toThrow('interrupted');
        expect(await pg.countMemories({})).toBe(15);
        const resumed = await copyStore(sqlite, pg, { batchSize: 5 });
        expect(resumed.ok).toBe(true);
        expect(resumed.resumed).toBe(15);
        expect(await pg.countMemories({})).toBe(30);
      } finally {
        await Promise.all([sqlite.close(), pg.close()]);
      }
    });
  });
}

copySuite('PostgreSQL (pglite + pgvector)', () => withFreshSchema(pglite.url, 'cp'));
if (realPgUrl) {
  const url = realPgUrl;
  copySuite('PostgreSQL (real server, exact vectors)', () => withFreshSchema(url, 'cp'));
}

describe('cairn copy (CLI)', () => {
  it('copies with --from sqlite:PATH --to postgres://… and prints the verification', async () => {
    const path = join(dir, 'cli.db');
    const sqlite = await openSqliteStore(path);
    await fill(sqlite);
    await sqlite.close();
    const target = withFreshSchema(pglite.url, 'cp');
    const home = tempDir('cairn-copy-home-');
    const result = await runCli(['copy', '--from', `sqlite:${path}`, '--to', target], { home });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/ok {3}memories +4 → +4/);
    expect((await runCli(['copy', '--from', `sqlite:${path}`, '--to', `sqlite:${path}`], { home })).code).toBe(1);
  });
});
