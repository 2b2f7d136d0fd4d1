/**
 * `cairn import` commits lines a chunk at a time (`Store.writeMemories`, one transaction per
 * chunk): what it stores must be what writing the lines one by one with `remember` stores — the
 * same memories, duplicates counted and touched the same way, within the file and across re-runs
 * and chunk boundaries — and a chunk that fails leaves nothing of itself behind.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createCairn, type Cairn } from '../../src/cairn.js';
import { importJsonl } from '../../src/memory/transfer.js';
import { createHashEmbedder } from '../../src/embed/hash.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/store.js';
import type { Memory, MemoryWrite } from '../../src/types.js';

const PROJECT = 'github.com/acme/app';
let now = Date.UTC(2026, 0, 1);
const clock = { now: () => now };
const open: Array<{ store: SqliteStore }> = [];

async function make(withEmbedder: boolean): Promise<{ cairn: Cairn; store: SqliteStore }> {
  const store = await openSqliteStore(':memory:');
  const cairn = createCairn({ store, embedder: withEmbedder ? createHashEmbedder() : null, clock, project: PROJECT, actor: 'test' });
  open.push({ store });
  return { cairn, store };
}

afterEach(async () => {
  for (const { store } of open.splice(0)) await store.close();
});

/** What a store holds, without ids or times: one row per memory, sorted. */
function contents(store: SqliteStore): unknown[] {
  return store.db
    .prepare(
      `SELECT text, kind, scope, project, tags, importance, source, provenance, context, content_hash, meta, access_count,
              (SELECT count(*) FROM events e WHERE e.memory_id = m.id) AS events,
              (SELECT count(*) FROM vectors v WHERE v.memory_rowid = m.rowid) AS vectors
         FROM memories m ORDER BY text, content_hash`,
    )
    .all();
}

/** 200 lines (four chunks of 64), with repeats inside and across chunks, near-duplicates and bad lines. */
function file(): string[] {
  const lines: string[] = [];
  for (let i = 0; i < 200; i++) {
    if (i % 47 === 13) lines.push('{"text": ');
    else if (i % 17 === 7) lines.push(JSON.stringify({ text: `retry budget of worker ${i % 5} is ${(i % 5) * 7} ms`, tags: ['repeat'] }));
    else lines.push(JSON.stringify({ text: `import test memory ${i}: the retry budget of worker ${i % 37} is ${i * 7} ms`, tags: [`t${i % 11}`], meta: { n: i } }));
  }
  lines.push(JSON.stringify({ text: 'import test memory 3: the retry budget of worker 3 is 21 ms', tags: ['t3'], meta: { n: 3 } }));
  return lines;
}

describe('import in chunks', () => {
  for (const withEmbedder of [false, true]) {
    it(`stores what remembering the lines one by one stores${withEmbedder ? ' (with vectors)' : ''}, also on a re-run`, async () => {
      const lines = file();
      const batched = await make(withEmbedder);
      const single = await make(withEmbedder);
      const progress: number[] = [];
      const first = await importJsonl(batched.cairn.deps, lines, (line) => progress.push(line), { chunkMemories: 64 });
      const counts = { imported: 0, duplicates: 0 };
      for (const line of lines) {
        let input: Record<string, unknown>;
        try {
          input = JSON.parse(line) as Record<string, unknown>;
        } catch {
          continue;
        }
        const written = await single.cairn.remember({ ...(input as { text: string }), source: 'import' });
        if (written.created) counts.imported++;
        else counts.duplicates++;
      }
      expect(first.failed.map((f) => f.line)).toEqual(lines.flatMap((line, i) => (line.endsWith(': ') ? [i + 1] : [])));
      expect({ imported: first.imported, duplicates: first.duplicates }).toEqual(counts);
      expect(first.duplicates).toBeGreaterThan(5);
      expect(contents(batched.store)).toEqual(contents(single.store));
      expect(progress.at(-1)).toBe(lines.length);
      expect(progress.length).toBeGreaterThanOrEqual(4);

      const again = await batched.cairn.importJsonl(lines);
      expect(again).toMatchObject({ imported: 0, duplicates: counts.imported + counts.duplicates });
      const accessed = batched.store.db.prepare('SELECT sum(access_count) FROM memories').pluck().get() as number;
      expect(accessed).toBe(counts.duplicates + again.duplicates);
    });
  }

  it('writeMemories: later writes see earlier ones, duplicates are touched once per write, a failure rolls the batch back', async () => {
    const { cairn, store } = await make(false);
    const base: Memory = (await cairn.remember({ text: 'seed memory' })).memory;
    const write = (id: string, text: string): MemoryWrite => ({
      memory: { ...base, id, text, contentHash: `hash-${text}` },
      events: [{ memoryId: id, type: 'create', at: now, actor: 'test', data: {} }],
    });
    const results = await store.writeMemories([write('A1', 'alpha'), write('A2', 'alpha'), write('A3', 'beta'), write('A4', 'alpha')], { touchDuplicatesAt: now + 5 });
    expect(results.map((r) => [r.memory.id, r.inserted])).toEqual([
      ['A1', true],
      ['A1', false],
      ['A3', true],
      ['A1', false],
    ]);
    expect((await store.getMemory('A1'))?.accessCount).toBe(2);
    expect((await store.getMemory('A1'))?.lastAccessedAt).toBe(now + 5);
    const failing = { ...write('B2', 'gamma'), closes: { id: 'missing', at: now } };
    await expect(store.writeMemories([write('B1', 'delta'), failing])).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await store.getMemory('B1')).toBeNull();
    expect(await store.searchText('delta', { limit: 5 })).toEqual([]);
    now += 1;
  });
});
