/**
 * The files the SQLite store keeps beside the database for its HNSW index (see ./vectors.ts):
 * `<db>.vectors.json` names the current `<db>.vectors.<seq>-<random>.usearch` and records what it
 * holds; `<db>.vectors.lock` marks a running background builder.
 */
import { createRequire } from 'node:module';
import { nodeCrypto } from '../../runtime.js';
import { closeSync, existsSync, openSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkIndexFile } from '../ann-index.js';

/** What `<db>.vectors.json` records about the saved index. */
export interface SavedIndex {
  format: 1;
  model: string;
  dimension: number;
  /** `state('vector_epoch')` when it was built: another epoch means the table was cleared since. */
  epoch: string;
  /** Highest `vectors.seq` it contains. */
  seq: number;
  count: number;
  /** File name, in the database's folder. */
  file: string;
  bytes: number;
}

/** A builder lock older than this is from a builder that died. */
const STALE_LOCK_MS = 30 * 60_000;

export class VectorFiles {
  private readonly dir: string;
  private readonly base: string;

  constructor(private readonly location: string) {
    this.dir = dirname(location);
    this.base = basename(location);
  }

  /** Full path of a file named in the sidecar. */
  path(file: string): string {
    return join(this.dir, file);
  }

  private get sidecar(): string {
    return `${this.location}.vectors.json`;
  }

  private get lock(): string {
    return `${this.location}.vectors.lock`;
  }

  read(): SavedIndex | null {
    try {
      const parsed = JSON.parse(readFileSync(this.sidecar, 'utf8')) as Partial<SavedIndex>;
      if (parsed.format !== 1 || typeof parsed.file !== 'string' || typeof parsed.seq !== 'number' || typeof parsed.bytes !== 'number') return null;
      if (basename(parsed.file) !== parsed.file) return null;
      return parsed as SavedIndex;
    } catch {
      return null;
    }
  }

  /** Whether the file a sidecar names is there, whole, and an index of its dimension. */
  usable(saved: SavedIndex): boolean {
    const path = this.path(saved.file);
    try {
      return statSync(path).size === saved.bytes && checkIndexFile(path, saved.dimension).bytes === saved.bytes;
    } catch {
      return false;
    }
  }

  /**
   * Save an index (`write` writes it to the path it is given) and point the sidecar at it, unless a
   * usable copy at least as new (same model and epoch, `seq` ≥ ours) is already there. Throws when
   * writing fails; the previous copy then stays in place.
   */
  publish(write: (path: string) => void, meta: Omit<SavedIndex, 'format' | 'file' | 'bytes'>): void {
    const file = `${this.base}.vectors.${meta.seq}-${nodeCrypto().randomBytes(4).toString('hex')}.usearch`;
    const path = this.path(file);
    const temp = `${path}.${process.pid}.tmp`;
    try {
      write(temp);
      const { bytes } = checkIndexFile(temp, meta.dimension);
      const current = this.read();
      if (current && current.epoch === meta.epoch && current.model === meta.model && current.seq >= meta.seq && this.usable(current)) {
        rmSync(temp, { force: true });
        return;
      }
      renameSync(temp, path);
      const sidecarTemp = `${this.sidecar}.${process.pid}.tmp`;
      writeFileSync(sidecarTemp, JSON.stringify({ format: 1, ...meta, file, bytes } satisfies SavedIndex));
      renameSync(sidecarTemp, this.sidecar);
      // Readers that mapped the previous file keep their mapping; new readers open this one.
      if (current && current.file !== file) rmSync(this.path(current.file), { force: true });
    } finally {
      rmSync(temp, { force: true });
    }
  }

  /** Delete the sidecar, every index file and the lock. */
  dropAll(): void {
    let names: string[] = [];
    try {
      names = readdirSync(this.dir);
    } catch {
      return;
    }
    const prefix = `${this.base}.vectors.`;
    for (const name of names) if (name.startsWith(prefix)) rmSync(join(this.dir, name), { force: true });
  }

  /**
   * Start a detached builder (`node vector-builder.js <db> <options>`) unless one is running.
   * False when no builder script is on disk (running from sources): the caller builds inline.
   */
  requestBuild(options: object): boolean {
    const script = builderScript();
    if (script === null) return false;
    try {
      closeSync(openSync(this.lock, 'wx'));
    } catch {
      // A builder holds the lock; one that died long ago (a build takes minutes at 1M) leaves a stale one.
      try {
        if (Date.now() - statSync(this.lock).mtimeMs < STALE_LOCK_MS) return true;
        rmSync(this.lock, { force: true });
        closeSync(openSync(this.lock, 'wx'));
      } catch {
        return true;
      }
    }
    const { spawn } = createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process');
    const child = spawn(process.execPath, [script, this.location, JSON.stringify(options)], { detached: true, stdio: 'ignore' });
    child.on('error', () => rmSync(this.lock, { force: true }));
    child.unref();
    return true;
  }

  /** Called by the builder when it is done. */
  releaseLock(): void {
    rmSync(this.lock, { force: true });
  }
}

/**
 * The builder script beside this module (dist/store/sqlite/), or beside the hooks bundle's
 * chunks (dist/hooks-bundle/ → dist/store/sqlite/); null when running from sources.
 */
function builderScript(): string | null {
  for (const relative of ['./vector-builder.js', '../store/sqlite/vector-builder.js']) {
    const path = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(path)) return path;
  }
  return null;
}
