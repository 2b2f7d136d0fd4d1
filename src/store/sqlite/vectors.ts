/**
 * The SQLite store's in-process vector index, kept in step with the `vectors` table (the source of
 * truth): every row carries a `seq` that grows with each write, so a process applies only the rows
 * with `seq` above the last one it saw, whoever wrote them.
 *
 * Below `annThreshold` vectors the index is exact (brute force). From there on it is HNSW
 * (`usearch`, loaded lazily), persisted next to the database so a new process maps it in a few
 * milliseconds instead of rebuilding:
 *
 * - `<db>.vectors.json`: which index file is current, and the model, dimension, epoch and highest
 *   `seq` it contains. Written to a temporary name and renamed, so readers see a whole one.
 * - `<db>.vectors.<seq>-<random>.usearch`: the index itself, immutable once named in the JSON.
 *
 * A process opens the file named by the JSON when its model, dimension and epoch match, then applies
 * the rows written since; anything else (no file, another epoch, a truncated or overwritten file)
 * rebuilds from the table. The file is saved again after a build and once enough rows were applied
 * since it was written, never on every write; when two processes save, the higher `seq` wins.
 * A build runs in a detached builder process by default (./vector-builder.ts); until its copy is
 * saved, search is exact.
 */
import { statSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { CairnError } from '../../errors.js';
import type { EmbedderIdentity } from '../../types.js';
import { HnswVectorIndex, loadUsearch, type HnswOptions, type UsearchModule } from '../ann-index.js';
import { ProjectVectors } from '../project-vectors.js';
import { ExactVectorIndex, type VectorIndex } from '../vector-index.js';
import { VectorFiles } from './vector-files.js';

/** Options for the SQLite store's vector index. */
export interface SqliteVectorIndexOptions {
  /**
   * Number of vectors from which search uses the HNSW index; below it, search is exact. Brute force
   * over 256-dimension vectors (the store's first fetch, top 200) measured p50 1.4 ms at 5K,
   * 2.6 ms at 10K and 8.8 ms at 20K on a busy 2-core machine (`cairn bench vectors`), and the
   * vector search is only one part of recall's 5 ms budget. `Infinity` keeps search exact.
   * @default 10000
   */
  annThreshold?: number;
  /**
   * Save the HNSW index again once this many rows (or 10% of the index if more, up to five times
   * this) were applied since the saved copy.
   * @default 1000
   */
  saveEvery?: number;
  /**
   * How a saved index is opened: `view` memory-maps it (fastest open; later writes are kept in a
   * small exact side index until the next save), `load` reads it whole.
   * @default 'view'
   */
  open?: 'view' | 'load';
  /**
   * Keep the HNSW index in files next to the database (never for `:memory:`).
   * @default true
   */
  persist?: boolean;
  /** HNSW parameters. */
  hnsw?: HnswOptions;
  /**
   * Who builds the HNSW index when no valid saved copy exists: `background` spawns a detached
   * `node vector-builder.js` (one at a time, guarded by `<db>.vectors.lock`) and searches exactly
   * until its copy is saved, so a hook never spends seconds building; `inline` builds in the
   * searching process. Falls back to `inline` when the builder script is not on disk.
   * @default 'background'
   */
  build?: 'inline' | 'background';
  /**
   * How a project-filtered search runs once the index is HNSW: `exact` scans the int8 copies of
   * the project's and the user-wide memories' vectors (../project-vectors.ts) when they are at
   * most `PROJECT_EXACT_MAX_SHARE` of the index; `hnsw` always walks the whole store's graph and
   * filters after. The int8 copies are read from the table from a process's second project-filtered
   * search on, ~4 ms of rows per search (those searches still walk the graph), so a one-shot CLI
   * recall keeps the mapped HNSW index alone; once read, catchUp keeps them in step.
   * @default 'exact'
   */
  projectSearch?: 'exact' | 'hnsw';
}

/** What the index currently is, for status output. */
export interface VectorIndexState {
  kind: 'none' | 'exact' | 'hnsw';
  size: number;
  /** Set when the HNSW index would be used but `usearch` cannot be loaded. */
  warning: string | null;
}

const DEFAULT_THRESHOLD = 10_000;
const DEFAULT_SAVE_EVERY = 1_000;
/**
 * A project-filtered search scans the project's vectors exactly while they (with the user-wide
 * ones) are at most this share of the index. At 100K MiniLM vectors an int8 scan of everything
 * cost ~2.5× the HNSW walk of 200 neighbours, one of a third of them about as much (load ~10).
 */
export const PROJECT_EXACT_MAX_SHARE = 0.4;
/** The project-filtered search of a process from which the int8 copies are read (see `projectSearch`). */
const PROJECT_EXACT_FROM_SEARCH = 2;
/** Time a search may spend reading the int8 copies while they fill. */
const PROJECT_READ_BUDGET_MS = 4;
/** Rows read per batch when building from the table. */
const BUILD_BATCH = 8_192;

export class SqliteVectors {
  private index: VectorIndex | null = null;
  private model: string | null = null;
  private epoch = '';
  /** Highest `seq` applied to the index. */
  private seq = 0;
  /** Highest `seq` in the saved file this process opened or wrote (0: none). */
  private savedSeq = 0;
  /** Path of the file a mapped index is viewing. */
  private mappedPath: string | null = null;
  private usearch: { module: UsearchModule } | { error: string } | null = null;
  /** Why the last save failed (the previous copy stays in use). */
  private saveError: string | null = null;
  private readonly threshold: number;
  private readonly saveEvery: number;
  private readonly openMode: 'view' | 'load';
  private readonly persist: boolean;
  private readonly hnsw: HnswOptions;
  private readonly buildMode: 'inline' | 'background';
  private readonly files: VectorFiles;
  private readonly projectSearch: 'exact' | 'hnsw';
  /** Int8 copies of every vector grouped by project, once read (see `projectSearch`). */
  private projects: ProjectVectors | null = null;
  /** Project-filtered searches asked for so far in this process. */
  private projectSearches = 0;
  /** The copies hold every row up to this `seq` once `projectsRead` reaches it. */
  private projectsTarget = 0;
  /** Highest `seq` read into the copies so far. */
  private projectsRead = 0;
  /** Prepared statements of the hot path (every search syncs), per connection. */
  private statements = new WeakMap<Database.Database, Map<string, Database.Statement>>();

  constructor(
    private readonly db: () => Database.Database,
    private readonly location: string,
    options: SqliteVectorIndexOptions = {},
  ) {
    this.threshold = options.annThreshold ?? DEFAULT_THRESHOLD;
    this.saveEvery = options.saveEvery ?? DEFAULT_SAVE_EVERY;
    this.openMode = options.open ?? 'view';
    this.persist = (options.persist ?? true) && location !== ':memory:' && location !== '';
    this.hnsw = options.hnsw ?? {};
    this.buildMode = options.build ?? 'background';
    this.projectSearch = options.projectSearch ?? 'exact';
    this.files = new VectorFiles(location);
  }

  /** True once `usearch` was loaded in this process. */
  get annAvailable(): boolean {
    return this.usearch !== null && 'module' in this.usearch;
  }

  /** The index as it is now (no sync). */
  state(): VectorIndexState {
    const kind = this.index === null ? 'none' : this.index instanceof HnswVectorIndex ? 'hnsw' : 'exact';
    const warning =
      this.usearch && 'error' in this.usearch
        ? `vector index: usearch unavailable (${this.usearch.error}); using exact search`
        : this.saveError !== null
          ? `vector index: could not save the HNSW index (${this.saveError}); each process rebuilds or catches up`
          : null;
    return { kind, size: this.index?.size ?? 0, warning };
  }

  /** Try loading `usearch` if `count` vectors would use it; returns the state for status output. */
  async probe(count: number): Promise<VectorIndexState> {
    if (count >= this.threshold && this.usearch === null) this.usearch = await loadUsearch();
    return this.state();
  }

  /**
   * Bring the index up to date with what any process wrote since the last call and return it
   * (null when no model has claimed the table). Throws when `model` is not the stored one.
   */
  async sync(model: EmbedderIdentity): Promise<VectorIndex | null> {
    const db = this.db();
    const raw = this.stateValue(db, 'vector_model');
    if (raw === null) return null;
    const stored = JSON.parse(raw) as EmbedderIdentity;
    if (stored.model !== model.model || stored.dimension !== model.dimension) {
      throw new CairnError(
        'EMBEDDER_MISMATCH',
        `the vector index was built with ${stored.model} (${stored.dimension} dims) but the query embedder is ${model.model} (${model.dimension} dims); run \`cairn reindex\``,
      );
    }
    const epoch = this.stateValue(db, 'vector_epoch') ?? '';
    const fresh = !this.index || this.model !== stored.model || this.epoch !== epoch;
    if (this.usearch === null && this.wantsAnn(db, fresh)) this.usearch = await loadUsearch();
    // Everything below is synchronous: concurrent callers in this process cannot interleave.
    if (!this.index || this.model !== stored.model || this.epoch !== epoch) this.open(stored, epoch);
    this.catchUp();
    return this.index;
  }

  /** Forget the index and delete its files (after the table was cleared). */
  drop(): void {
    this.reset();
    if (this.persist) this.files.dropAll();
  }

  /** Forget the in-memory index (on close). */
  reset(): void {
    this.index = null;
    this.model = null;
    this.epoch = '';
    this.seq = 0;
    this.savedSeq = 0;
    this.mappedPath = null;
    this.projects = null;
  }

  /**
   * The int8 copies to search exactly for a filter on `projects` (null: user-wide memories), or
   * null when the whole index is searched instead: the index is exact, the option is `hnsw`, this
   * is the process's first such search, the copies are still being read, or the projects hold
   * too much of the index. Call right after {@link sync}.
   */
  projectVectors(projects: ReadonlyArray<string | null>): ProjectVectors | null {
    const index = this.index;
    const module = this.module;
    if (this.projectSearch !== 'exact' || !(index instanceof HnswVectorIndex) || !module) return null;
    if (!this.projects) {
      if (++this.projectSearches < PROJECT_EXACT_FROM_SEARCH) return null;
      this.projects = new ProjectVectors(module, index.dimension);
      this.projectsRead = 0;
      this.projectsTarget = this.seq;
    }
    if (this.projectsRead < this.projectsTarget && !this.readProjects(this.projects)) return null;
    return this.projects.sizeOf(projects) <= this.projects.size * PROJECT_EXACT_MAX_SHARE ? this.projects : null;
  }

  /**
   * Read the next rows (by `seq`, up to the `seq` applied when the copies were started; later rows
   * reach them through catchUp) for about PROJECT_READ_BUDGET_MS; true once all are read. A
   * search pays at most that while the copies fill: reading 100K rows in one go took seconds on
   * a loaded machine.
   */
  private readProjects(projects: ProjectVectors): boolean {
    const started = performance.now();
    const rows = this.statement(
      this.db(),
      'SELECT v.memory_rowid, v.vector, v.seq, m.project FROM vectors v JOIN memories m ON m.rowid = v.memory_rowid WHERE v.seq > ? AND v.seq <= ? ORDER BY v.seq',
    )
      .raw(true)
      .iterate(this.projectsRead, this.projectsTarget) as IterableIterator<[number, Buffer, number, string | null]>;
    let count = 0;
    let done = true;
    for (const [rowid, vector, seq, project] of rows) {
      if (vector.byteLength === projects.dimension * 4) projects.upsert(rowid, project, vector);
      this.projectsRead = seq;
      // Leaving the loop closes the statement's iterator.
      if (++count % 256 === 0 && performance.now() - started > PROJECT_READ_BUDGET_MS) {
        done = false;
        break;
      }
    }
    if (done) this.projectsRead = this.projectsTarget;
    return done;
  }

  /** Whether the next sync may need the HNSW index (cheap checks first: max(seq) bounds the count). */
  private wantsAnn(db: Database.Database, fresh: boolean): boolean {
    if (!Number.isFinite(this.threshold)) return false;
    if (!fresh) return (this.index?.size ?? 0) >= this.threshold || this.maxSeq(db) - this.seq + (this.index?.size ?? 0) >= this.threshold;
    if (this.maxSeq(db) < this.threshold) return false;
    const saved = this.files.read();
    if (saved && saved.epoch === (stateValue(db, 'vector_epoch') ?? '') && saved.count >= this.threshold) return true;
    return this.count(db) >= this.threshold;
  }

  private maxSeq(db: Database.Database): number {
    return (this.statement(db, 'SELECT max(seq) FROM vectors').pluck().get() as number | null) ?? 0;
  }

  private stateValue(db: Database.Database, key: string): string | null {
    return (this.statement(db, 'SELECT value FROM state WHERE key = ?').pluck().get(key) as string | undefined) ?? null;
  }

  /** A prepared statement kept for the connection's life. */
  private statement(db: Database.Database, sql: string): Database.Statement {
    let byConnection = this.statements.get(db);
    if (!byConnection) this.statements.set(db, (byConnection = new Map()));
    let stmt = byConnection.get(sql);
    if (!stmt) byConnection.set(sql, (stmt = db.prepare(sql)));
    return stmt;
  }

  private count(db: Database.Database): number {
    return db.prepare('SELECT count(*) FROM vectors').pluck().get() as number;
  }

  private get module(): UsearchModule | null {
    return this.usearch && 'module' in this.usearch ? this.usearch.module : null;
  }

  /** Start over for this model and epoch: the saved file if it matches, else a build from the table. */
  private open(stored: EmbedderIdentity, epoch: string): void {
    this.reset();
    this.model = stored.model;
    this.epoch = epoch;
    const module = this.module;
    if (module && this.wantsAnn(this.db(), true)) {
      // Twice: a process saving a newer copy may delete the file between our reads.
      if (this.openSaved(module, stored, epoch) || this.openSaved(module, stored, epoch)) return;
      if (!this.persist || this.buildMode === 'inline' || !this.requestBuild()) {
        this.build(module, stored.dimension);
        return;
      }
    }
    // Exact until the background builder's copy appears (checked on every sync, see catchUp).
    this.index = new ExactVectorIndex(stored.dimension);
  }

  /** Start the background builder (false: no builder script here, build inline). */
  private requestBuild(): boolean {
    const options: SqliteVectorIndexOptions = { annThreshold: this.threshold, saveEvery: this.saveEvery, hnsw: this.hnsw, build: 'inline' };
    return this.files.requestBuild(options);
  }

  /** Build (or open) the HNSW index for the stored model and save it; for the builder process. */
  async buildAndSave(): Promise<void> {
    const raw = stateValue(this.db(), 'vector_model');
    if (raw === null) return;
    await this.sync(JSON.parse(raw) as EmbedderIdentity);
  }

  private openSaved(module: UsearchModule, stored: EmbedderIdentity, epoch: string): boolean {
    const sidecar = this.files.read();
    if (!sidecar || sidecar.model !== stored.model || sidecar.dimension !== stored.dimension || sidecar.epoch !== epoch) return false;
    const path = this.files.path(sidecar.file);
    try {
      if (statSync(path).size !== sidecar.bytes) return false;
      const hnsw = hnswFor(stored.model, this.hnsw);
      this.index = this.openMode === 'view' ? HnswVectorIndex.view(module, path, stored.dimension, hnsw) : HnswVectorIndex.load(module, path, stored.dimension, hnsw);
    } catch {
      // Missing, truncated or overwritten: the caller rebuilds from the table.
      this.index = null;
      return false;
    }
    this.mappedPath = this.openMode === 'view' ? path : null;
    this.seq = sidecar.seq;
    this.savedSeq = sidecar.seq;
    return true;
  }

  /** Build the HNSW index from the whole table and save it. */
  private build(module: UsearchModule, dimension: number): void {
    const index = HnswVectorIndex.create(module, dimension, hnswFor(this.model ?? '', this.hnsw));
    const rows = this.db().prepare('SELECT memory_rowid, vector, seq FROM vectors ORDER BY seq').iterate() as IterableIterator<{
      memory_rowid: number;
      vector: Buffer;
      seq: number;
    }>;
    let keys: number[] = [];
    let matrix = new Float32Array(BUILD_BATCH * dimension);
    let seq = 0;
    const flush = (): void => {
      if (keys.length === 0) return;
      index.addBatch(keys, matrix.subarray(0, keys.length * dimension));
      keys = [];
    };
    for (const row of rows) {
      if (row.vector.byteLength !== dimension * 4) continue;
      new Uint8Array(matrix.buffer, keys.length * dimension * 4, dimension * 4).set(row.vector);
      keys.push(row.memory_rowid);
      seq = row.seq;
      if (keys.length === BUILD_BATCH) flush();
    }
    flush();
    matrix = new Float32Array(0);
    this.index = index;
    this.seq = seq;
    this.save();
  }

  /** Apply the rows written since the last sync; switch to HNSW or save when due. */
  private catchUp(): void {
    const index = this.index;
    if (!index) return;
    const rows = this.statement(
      this.db(),
      'SELECT v.memory_rowid, v.vector, v.seq, m.project FROM vectors v LEFT JOIN memories m ON m.rowid = v.memory_rowid WHERE v.seq > ? ORDER BY v.seq',
    ).all(this.seq) as Array<{
      memory_rowid: number;
      vector: Buffer;
      seq: number;
      project: string | null;
    }>;
    for (const row of rows) {
      const vector = new Float32Array(row.vector.byteLength / 4);
      new Uint8Array(vector.buffer).set(row.vector);
      index.upsert(row.memory_rowid, vector);
      if (this.projects && vector.length === this.projects.dimension) this.projects.upsert(row.memory_rowid, row.project, vector);
      this.seq = row.seq;
    }
    const module = this.module;
    if (index instanceof ExactVectorIndex) {
      if (!module || index.size < this.threshold || !this.model) return;
      const stored: EmbedderIdentity = { model: this.model, dimension: index.dimension };
      if (this.openSaved(module, stored, this.epoch)) {
        this.catchUp();
        return;
      }
      if (!this.persist || this.buildMode === 'inline' || !this.requestBuild()) this.build(module, index.dimension);
      return;
    }
    if (!(index instanceof HnswVectorIndex)) return;
    if (this.seq - this.savedSeq < saveAfter(this.saveEvery, index.size)) return;
    if (index.mapped) {
      try {
        index.materialize(this.mappedPath as string);
        this.mappedPath = null;
      } catch {
        // Another process saved a newer copy and deleted the mapped file: open the newest copy.
        const stored: EmbedderIdentity = { model: this.model as string, dimension: index.dimension };
        this.open(stored, this.epoch);
        this.catchUp();
        return;
      }
    }
    this.save();
  }

  /**
   * Save the index beside the database unless another process saved a copy at least as new.
   * Best effort: a failed save leaves the previous copy in place and shows in `state().warning`.
   */
  private save(): void {
    const index = this.index;
    if (!this.persist || !(index instanceof HnswVectorIndex) || index.mapped || !this.model) return;
    try {
      this.files.publish((path) => index.save(path), { model: this.model, dimension: index.dimension, epoch: this.epoch, seq: this.seq, count: index.size });
      this.savedSeq = this.seq;
      this.saveError = null;
    } catch (error) {
      this.saveError = error instanceof Error ? error.message : String(error);
    }
  }
}

/**
 * The search beam for a model's vectors, unless the options set one. The store-wide default (1024)
 * was tuned on feature-hashed vectors, whose short queries sit far from their documents; a trained
 * encoder's do not: on 47,360 stored all-MiniLM-L6-v2 vectors and 200 bench queries, recall@10
 * against exact search was 0.992 at ef 256 and 0.999 at 1024, for 7.6 against 19.2 ms a search of
 * 200 neighbours (load 4.9). Hashed and unknown-kind vectors keep 1024.
 */
export function hnswFor(model: string, options: HnswOptions): HnswOptions {
  if (options.expansionSearch !== undefined || model.startsWith('hash:') || model === '') return options;
  return { ...options, expansionSearch: ENCODER_EXPANSION_SEARCH };
}

/** The HNSW search beam for trained encoders' vectors (see {@link hnswFor}). */
export const ENCODER_EXPANSION_SEARCH = 256;

/**
 * Rows to apply before saving again: `saveEvery` or 10% of the index if more, but at most five
 * times `saveEvery`, so the exact side index of a mapped file stays small (5,000 rows ≈ 1 ms).
 */
export function saveAfter(saveEvery: number, size: number): number {
  return Math.min(Math.max(saveEvery, size * 0.1), saveEvery * 5);
}

function stateValue(db: Database.Database, key: string): string | null {
  return (db.prepare('SELECT value FROM state WHERE key = ?').pluck().get(key) as string | undefined) ?? null;
}
