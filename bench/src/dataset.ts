/**
 * Corpus databases for the scale suites: generated once per (corpus version, schema, seed, size,
 * embedder), cached under `<home>/bench-cache/`, and handed to each measurement as a fresh copy
 * so no run changes what the next one measures (writes, access counters).
 *
 * Population is honest: every memory goes through `prepareMemory` (validation, redaction, file
 * references, content hash — exactly what `remember` stores) and the public `Store.writeMemory`
 * (one transaction per memory, with its events, its vector and the closing of a revised memory).
 * It skips only remember's duplicate and near-duplicate lookups, whose cost the write suite measures.
 */
import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { monotonicFactory } from 'ulid';
import { type Embedder, type MemoryEvent, type MemoryWrite, createCairn, openSqliteStore } from 'cairn-memory';
import { type Deps, VectorFiles, loadMigrations, prepareMemory, processAlive } from 'cairn-memory/testing';
import { CORPUS_NOW, CORPUS_VERSION, canonicalLine, defaultQueryCount, generateCorpus, type CorpusMemory, type CorpusQuery } from './corpus.js';
import { createRng } from './prng.js';
import type { Dataset } from './types.js';

export interface CorpusSpec {
  seed: number;
  size: number;
  /** Also store an embedding per memory (the corpus a hybrid write or recall runs against). */
  embedder?: Embedder | null;
}

export interface KnownAnswerQuery extends CorpusQuery {
  /** The memory id of the known answer in this database. */
  targetId: string;
}

export interface CorpusManifest {
  key: string;
  version: string;
  schemaVersion: number;
  seed: number;
  size: number;
  embedder: string | null;
  /** sha256 over the generated memories (their canonical lines). */
  sha256: string;
  rows: { inserted: number; duplicates: number; revised: number; forgotten: number };
  /** Known-answer queries in a seeded random order (take any prefix). */
  queries: KnownAnswerQuery[];
  buildMs: number;
  builtAt: string;
}

export interface CorpusDb {
  path: string;
  manifest: CorpusManifest;
  /** Build time in this run, or null when the database came from the cache. */
  buildMs: number | null;
}

const BATCH = 256;

function slug(text: string): string {
  return text.replace(/[^A-Za-z0-9]+/g, '_');
}

export function corpusKey(spec: CorpusSpec, schemaVersion: number): string {
  const embedder = spec.embedder ? `-${slug(spec.embedder.model)}` : '';
  return `${CORPUS_VERSION}-schema${schemaVersion}-s${spec.seed}-n${spec.size}${embedder}`;
}

function latestSchema(): number {
  return loadMigrations().at(-1)?.version ?? 0;
}

/** The cached corpus database for `spec`, building it first when absent. */
export async function ensureCorpusDb(cacheDir: string, spec: CorpusSpec, log: (line: string) => void = () => {}): Promise<CorpusDb> {
  mkdirSync(cacheDir, { recursive: true });
  sweepAbandoned(cacheDir);
  sweepAbandoned(join(cacheDir, 'work'));
  const schemaVersion = latestSchema();
  const key = corpusKey(spec, schemaVersion);
  const path = join(cacheDir, `${key}.db`);
  const manifestPath = join(cacheDir, `${key}.json`);
  if (existsSync(path) && existsSync(manifestPath)) {
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as CorpusManifest;
    if (manifest.version === CORPUS_VERSION && manifest.schemaVersion === schemaVersion) return { path, manifest, buildMs: null };
  }
  const tmp = join(cacheDir, `${key}.building-${process.pid}.db`);
  removeDb(tmp);
  const migrated = await migrateEarlier(cacheDir, spec, schemaVersion, tmp, log);
  if (migrated) {
    removeDb(path);
    renameSync(tmp, path);
    const manifest: CorpusManifest = { ...migrated, key, schemaVersion };
    writeFileSync(`${manifestPath}.tmp`, JSON.stringify(manifest));
    renameSync(`${manifestPath}.tmp`, manifestPath);
    return { path, manifest, buildMs: null };
  }
  log(`building corpus ${key} (${spec.size.toLocaleString('en-US')} memories) …`);
  const started = process.hrtime.bigint();
  const built = await populate(tmp, spec, log);
  const buildMs = Number(process.hrtime.bigint() - started) / 1e6;
  removeDb(path);
  renameSync(tmp, path);
  const manifest: CorpusManifest = { key, version: CORPUS_VERSION, schemaVersion, seed: spec.seed, size: spec.size, embedder: spec.embedder?.model ?? null, ...built, buildMs, builtAt: new Date().toISOString() };
  writeFileSync(`${manifestPath}.tmp`, JSON.stringify(manifest));
  renameSync(`${manifestPath}.tmp`, manifestPath);
  log(`built ${key} in ${(buildMs / 1000).toFixed(1)} s`);
  return { path, manifest, buildMs };
}

/**
 * A corpus cached under an earlier schema, with the same generator, seed, size and embedder,
 * copied to `tmp` and brought to the current schema by the store's own migrations — the rows are
 * the generator's either way, and a migration must give what a fresh build gives (the store's
 * migration tests hold every version to that). Saves rebuilding (and re-embedding) a 100K corpus
 * after each schema change. Null when there is none or it does not open.
 */
async function migrateEarlier(cacheDir: string, spec: CorpusSpec, schemaVersion: number, tmp: string, log: (line: string) => void): Promise<CorpusManifest | null> {
  for (let version = schemaVersion - 1; version >= 1; version--) {
    const key = corpusKey(spec, version);
    const path = join(cacheDir, `${key}.db`);
    const manifestPath = join(cacheDir, `${key}.json`);
    if (!existsSync(path) || !existsSync(manifestPath)) continue;
    let manifest: CorpusManifest;
    try {
      manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as CorpusManifest;
    } catch {
      continue;
    }
    if (manifest.version !== CORPUS_VERSION || manifest.schemaVersion !== version) continue;
    try {
      copyFileSync(path, tmp);
      const store = await openSqliteStore(tmp);
      // What a migration leaves to the store to fill (the near-duplicate bands, the BM25 postings), as a fresh build holds it.
      await store.fillNearDuplicateIndex?.();
      await store.fillTextSearchIndex?.();
      await store.close();
    } catch (error) {
      removeDb(tmp);
      log(`could not migrate ${key}: ${(error as Error).message}; building afresh`);
      return null;
    }
    log(`migrated cached corpus ${key} to schema ${schemaVersion}`);
    return manifest;
  }
  return null;
}

async function populate(path: string, spec: CorpusSpec, log: (line: string) => void): Promise<Pick<CorpusManifest, 'sha256' | 'rows' | 'queries'>> {
  const store = await openSqliteStore(path);
  const idRng = createRng(spec.seed ^ 0x51d5);
  const nextId = monotonicFactory(() => idRng.next());
  const embedder = spec.embedder ?? null;
  // createCairn wires the same Deps remember gets; the corpus's clock makes createdAt fixed.
  const { deps } = createCairn({ store, embedder, clock: { now: () => CORPUS_NOW }, ids: { next: (at?: number) => nextId(at) }, actor: 'bench' });
  const hash = createHash('sha256');
  const idOf = new Array<string>(spec.size);
  const queries: KnownAnswerQuery[] = [];
  const rows = { inserted: 0, duplicates: 0, revised: 0, forgotten: 0 };
  let batch: CorpusMemory[] = [];
  const flush = async (): Promise<void> => {
    const vectors = embedder ? await embedder.embed(batch.map((m) => m.text)) : [];
    for (const [i, item] of batch.entries()) {
      const write = toWrite(deps, item, idOf);
      const vector = vectors[i];
      if (embedder && vector) write.embedding = { model: embedder, vector };
      const result = await store.writeMemory(write);
      idOf[item.index] = result.memory.id;
      if (!result.inserted) rows.duplicates++;
      else {
        rows.inserted++;
        if (item.revises !== null) rows.revised++;
        if (item.forgotten) rows.forgotten++;
      }
      if (item.query) queries.push({ ...item.query, targetId: result.memory.id });
    }
    batch = [];
  };
  try {
    let count = 0;
    for (const memory of generateCorpus({ seed: spec.seed, size: spec.size, queries: defaultQueryCount(spec.size) })) {
      hash.update(`${canonicalLine(memory)}\n`);
      batch.push(memory);
      if (batch.length >= BATCH) await flush();
      if (++count % 50_000 === 0) log(`  ${count.toLocaleString('en-US')} / ${spec.size.toLocaleString('en-US')}`);
    }
    await flush();
  } finally {
    await store.close();
  }
  queries.sort((a, b) => a.order - b.order);
  return { sha256: hash.digest('hex'), rows, queries };
}

/** The write `remember` would make for this generated memory (minus the duplicate lookups). */
function toWrite(deps: Deps, item: CorpusMemory, idOf: string[]): MemoryWrite {
  const supersedes = item.revises !== null ? idOf[item.revises] : undefined;
  const { memory } = prepareMemory(deps, {
    text: item.text,
    kind: item.kind,
    scope: item.scope,
    project: item.project,
    session: item.session,
    tags: item.tags,
    source: item.source,
    pinned: item.pinned,
    createdAt: item.createdAt,
    ...(item.importance !== null ? { importance: item.importance } : {}),
    ...(supersedes ? { supersedes } : {}),
  });
  const events: MemoryEvent[] = [{ memoryId: memory.id, type: 'create', at: memory.createdAt, actor: 'bench', data: { source: memory.source, kind: memory.kind, supersedes: memory.supersedes } }];
  if (item.forgotten) {
    const forgottenAt = memory.createdAt + 3_600_000;
    memory.deletedAt = forgottenAt;
    events.push({ memoryId: memory.id, type: 'forget', at: forgottenAt, actor: 'bench', data: { reason: 'bench corpus' } });
  }
  if (!supersedes) return { memory, events };
  events.push({ memoryId: supersedes, type: 'supersede', at: memory.createdAt, actor: 'bench', data: { by: memory.id } });
  return { memory, events, closes: { id: supersedes, at: memory.createdAt } };
}

/** Delete half-built corpora and working copies left by runs that were killed (their pid is gone). */
function sweepAbandoned(dir: string): void {
  if (!existsSync(dir)) return;
  for (const file of readdirSync(dir)) {
    const pid = /\.building-(\d+)\.db(?:-wal|-shm|-journal)?$/.exec(file)?.[1] ?? /-(\d+)-[0-9a-f]{8}\.db(?:-wal|-shm|-journal)?$/.exec(file)?.[1];
    if (pid && Number(pid) !== process.pid && !processAlive(Number(pid))) rmSync(join(dir, file), { force: true });
  }
}

function removeDb(path: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${path}${suffix}`, { force: true });
  // The vector index saved beside it (<db>.vectors.json, .usearch files, a builder's lock).
  new VectorFiles(path).dropAll();
}

/** A private copy of a corpus database for one measurement; `dispose` deletes it. */
export function workingCopy(corpus: CorpusDb, workDir: string): { path: string; dispose(): void } {
  mkdirSync(workDir, { recursive: true });
  const path = join(workDir, `${corpus.manifest.key}-${process.pid}-${randomBytes(4).toString('hex')}.db`);
  copyFileSync(corpus.path, path);
  return { path, dispose: () => removeDb(path) };
}

/** How a corpus database is described in results. */
export function datasetOf(corpus: CorpusDb): Dataset {
  const m = corpus.manifest;
  return {
    name: m.key,
    sha256: m.sha256,
    generator: { version: m.version, seed: m.seed, size: m.size, queries: m.queries.length },
    buildMs: corpus.buildMs,
    cachedBuildMs: m.buildMs,
  };
}
