import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createCairn } from '../../src/cairn.js';
import { createHashEmbedder } from '../../src/embed/hash.js';
import { reindex } from '../../src/embed/reindex.js';
import { CairnError } from '../../src/errors.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { runCli, tempDir } from '../helpers/cli.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const TEXTS = [
  'parse_config(path) lives in src/config.py and reads TOML',
  'the test suite runs with vitest in watch mode',
  'deploys go through the staging cluster first',
  'the user prefers short paragraphs in articles',
  'garbage collector finalizer ordering matters for PyObject_GC_Del',
  'retry the flaky network test three times before failing',
  'database migrations run forward automatically',
];

async function seeded() {
  const dir = tempDir('cairn-reindex-');
  dirs.push(dir);
  const store = await openSqliteStore(join(dir, 'cairn.db'));
  const plain = createCairn({ store, project: 'p' });
  for (const text of TEXTS) await plain.remember({ text });
  return store;
}

describe('a switched embedder before reindex', () => {
  it('never mixes models: writes go in without a vector, recall runs on BM25, one warning; reindex then switches the index', async () => {
    const store = await seeded();
    await reindex(store, createHashEmbedder({ dimension: 64 }));
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, error() {}, warn: (m: string) => warnings.push(m) };
    const switched = createHashEmbedder({ dimension: 128 });
    const cairn = createCairn({ store, embedder: switched, project: 'p', logger });
    await cairn.remember({ text: 'the release train leaves on Thursdays' });
    expect((await cairn.recall({ query: 'release train', touch: false })).mode).toBe('bm25');
    expect(await store.vectorModel()).toEqual({ model: 'hash:v1:64', dimension: 64 });
    expect((await store.stats()).vectors).toBe(TEXTS.length);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/holds hash:v1:64 \(64 dims\).*cairn reindex/);
    expect(await reindex(store, switched)).toMatchObject({ cleared: true, embedded: TEXTS.length + 1, vectors: TEXTS.length + 1 });
    expect((await cairn.recall({ query: 'release train', touch: false })).mode).toBe('hybrid');
    await store.close();
  });
});

describe('reindex', () => {
  it('embeds every memory without a vector, in batches, and recall turns hybrid', async () => {
    const store = await seeded();
    const embedder = createHashEmbedder({ dimension: 64 });
    const progress: Array<[number, number]> = [];
    const summary = await reindex(store, embedder, { batchSize: 3, onProgress: (done, total) => progress.push([done, total]) });
    expect(summary).toMatchObject({ model: 'hash:v1:64', dimension: 64, previous: null, cleared: false, embedded: 7, batches: 3, vectors: 7, remaining: 0, complete: true });
    expect(progress.at(-1)).toEqual([7, 7]);
    expect(await store.vectorModel()).toEqual({ model: 'hash:v1:64', dimension: 64 });
    const result = await createCairn({ store, embedder, project: 'p' }).recall({ query: 'finalizer ordering', touch: false });
    expect(result.mode).toBe('hybrid');
    expect(result.hits[0]?.memory.text).toContain('PyObject_GC_Del');
    // Nothing left to do: a second run embeds nothing.
    expect(await reindex(store, embedder)).toMatchObject({ embedded: 0, batches: 0, vectors: 7, cleared: false });
    await store.close();
  });

  it('is resumable: a stopped run leaves the rest for the next one, and BM25 recall works meanwhile', async () => {
    const store = await seeded();
    const embedder = createHashEmbedder({ dimension: 64 });
    const stop = new AbortController();
    const first = await reindex(store, embedder, { batchSize: 2, signal: stop.signal, onProgress: (done) => done > 0 && stop.abort() });
    expect(first).toMatchObject({ embedded: 2, vectors: 2, remaining: 5, complete: false });
    const bm25 = await createCairn({ store, project: 'p' }).recall({ query: 'vitest watch', touch: false });
    expect(bm25.mode).toBe('bm25');
    expect(bm25.hits[0]?.memory.text).toContain('vitest');
    const second = await reindex(store, embedder, { batchSize: 2 });
    expect(second).toMatchObject({ embedded: 5, vectors: 7, remaining: 0, complete: true, cleared: false });
    await store.close();
  });

  it('switching to another dimension clears the index and rebuilds it', async () => {
    const store = await seeded();
    await reindex(store, createHashEmbedder({ dimension: 64 }));
    const summary = await reindex(store, createHashEmbedder({ dimension: 32 }));
    expect(summary).toMatchObject({ model: 'hash:v1:32', previous: { model: 'hash:v1:64', dimension: 64 }, cleared: true, embedded: 7, vectors: 7 });
    expect(await store.vectorModel()).toEqual({ model: 'hash:v1:32', dimension: 32 });
    const result = await createCairn({ store, embedder: createHashEmbedder({ dimension: 32 }), project: 'p' }).recall({ query: 'staging cluster', touch: false });
    expect(result.mode).toBe('hybrid');
    await store.close();
  });

  it('a mismatched embedder without reindex falls back to BM25 on recall and writes without a vector (never mixed)', async () => {
    const store = await seeded();
    await reindex(store, createHashEmbedder({ dimension: 64 }));
    const other = createCairn({ store, embedder: createHashEmbedder({ dimension: 16 }), project: 'p' });
    expect((await other.recall({ query: 'staging', touch: false })).mode).toBe('bm25');
    await other.remember({ text: 'a brand new finding about caching' });
    expect(await store.vectorModel()).toEqual({ model: 'hash:v1:64', dimension: 64 });
    expect((await store.stats()).vectors).toBe(TEXTS.length);
    // The store itself still refuses another model's vectors outright.
    await expect(store.searchVector(new Float32Array(16), { model: 'hash:v1:16', dimension: 16 }, { limit: 5 })).rejects.toBeInstanceOf(CairnError);
    await store.close();
  });

  it('rejects a bad batch size', async () => {
    const store = await seeded();
    await expect(reindex(store, createHashEmbedder(), { batchSize: 0 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await store.close();
  });
});

describe('cairn reindex', () => {
  it('builds, switches and reports as JSON; before the switch, recall searches the old index and status/doctor show the switch', async () => {
    const home = tempDir('cairn-reindex-cli-');
    dirs.push(home);
    for (const text of TEXTS.slice(0, 4)) {
      const added = await runCli(['remember', text, '--json'], { home, cwd: home });
      expect(added.code).toBe(0);
    }
    const none = await runCli(['reindex', '--json'], { home, cwd: home, env: {} });
    expect(none.code).toBe(1);
    expect(JSON.parse(none.stdout).error.code).toBe('INVALID_INPUT');

    const built = await runCli(['reindex', '--embedder', 'hash:64', '--batch', '2', '--json'], { home, cwd: home });
    expect(built.code).toBe(0);
    expect(JSON.parse(built.stdout)).toMatchObject({ model: 'hash:v1:64', spec: 'hash:64', embedded: 4, batches: 2, vectors: 4, cleared: false, complete: true });

    // Switched embedder, switch not run yet: recall searches the old index with its own model (hash:64 can be rebuilt from its id).
    const env = { CAIRN_EMBEDDER: 'hash:32' };
    const mismatch = await runCli(['recall', 'staging cluster', '--json'], { home, cwd: home, env });
    expect(mismatch.code).toBe(0);
    expect(JSON.parse(mismatch.stdout).mode).toBe('hybrid');
    const doctor = await runCli(['doctor', '--json'], { home, cwd: home, env });
    expect(doctor.stdout).toMatch(/the vector index holds hash:v1:64, the configured embedder is hash:v1:32: switching, 0 of 4 memories have the new vector; recall searches hash:v1:64/);
    const status = await runCli(['status'], { home, cwd: home, env });
    expect(status.stdout).toMatch(/recall: hybrid over the vectors of hash:v1:64 until the switch completes/);
    expect(status.stdout).toMatch(/switching hash:v1:64 → hash:v1:32: 0 of 4 memories have the new vector \(0%\)/);
    const statusJson = JSON.parse((await runCli(['status', '--json'], { home, cwd: home, env })).stdout);
    expect(statusJson.vectors.switching).toMatchObject({ from: { model: 'hash:v1:64' }, to: { model: 'hash:v1:32', dimension: 32 }, staged: 0, memories: 4, recall: 'old' });

    const switched = await runCli(['reindex', '--json'], { home, cwd: home, env });
    expect(switched.code).toBe(0);
    expect(JSON.parse(switched.stdout)).toMatchObject({ model: 'hash:v1:32', cleared: true, staged: true, previous: { model: 'hash:v1:64' }, embedded: 4, vectors: 4 });
    expect(JSON.parse((await runCli(['status', '--json'], { home, cwd: home, env })).stdout).vectors.switching).toBeNull();
    const recalled = await runCli(['recall', 'staging cluster', '--json'], { home, cwd: home, env });
    expect(recalled.code).toBe(0);

    const human = await runCli(['reindex', '--embedder', 'hash:32'], { home, cwd: home });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/hash:v1:32 \(32 dims\): embedded 0 memories/);
  });
});
