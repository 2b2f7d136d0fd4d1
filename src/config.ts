import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { createCairn, type Cairn } from './cairn.js';
import { CairnError } from './errors.js';
import { streamLogger } from './runtime.js';
import { openSqliteStore } from './store/sqlite/store.js';
import { withCache } from './embed/cache.js';
import type { Embedder, Logger, Store } from './types.js';
import { resolveProject, type ProjectIdentity } from './workspace/project.js';

/**
 * Configuration read once at an entry point (CLI, MCP server, hook): flags, then environment,
 * then `<home>/config.json`, then defaults. Nothing below the entry points reads env or files.
 */
export interface Config {
  /** Data home. @default `--home`, else `$CAIRN_HOME`, else `~/.cairn` */
  home: string;
  /** SQLite database file. @default `<home>/cairn.db` */
  dbPath: string;
  /**
   * Where memories live: a SQLite file (`sqlite:PATH` or a bare path) or a PostgreSQL URL
   * (`postgres://user:pass@host/db[?schema=NAME]`). @default `--store`, else `$CAIRN_STORE`,
   * else config `store`, else `dbPath`
   */
  store: string;
  /** Embedder spec (`hash`, `static:/dir`, `ollama:model@url`, …) or null for BM25 only. */
  embedder: string | null;
  logDir: string;
}

interface FileConfig {
  embedder?: string | null;
  db?: string;
  store?: string;
}

export interface ConfigSources {
  home?: string | undefined;
  /** `--store`: a SQLite path or a `postgres://` URL. */
  store?: string | undefined;
  env?: NodeJS.ProcessEnv;
}

export function loadConfig(sources: ConfigSources = {}): Config {
  const env = sources.env ?? process.env;
  const home = resolve(sources.home ?? env.CAIRN_HOME ?? join(homedir(), '.cairn'));
  const file = join(home, 'config.json');
  let fileConfig: FileConfig = {};
  if (existsSync(file)) {
    try {
      fileConfig = JSON.parse(readFileSync(file, 'utf8')) as FileConfig;
    } catch (error) {
      throw new CairnError('INVALID_INPUT', `${file} is not valid JSON: ${(error as Error).message}`, { cause: error });
    }
  }
  const dbPath = env.CAIRN_DB ?? fileConfig.db ?? join(home, 'cairn.db');
  return {
    home,
    dbPath,
    store: sources.store ?? env.CAIRN_STORE ?? fileConfig.store ?? dbPath,
    embedder: env.CAIRN_EMBEDDER ?? fileConfig.embedder ?? null,
    logDir: join(home, 'logs'),
  };
}

export interface OpenOptions {
  cwd: string;
  actor: string;
  session?: string | null;
  logger?: Logger;
  /** Build an embedder from its spec (injected so entry points choose what to load). */
  makeEmbedder?: (spec: string) => Promise<Embedder>;
}

export interface Opened {
  cairn: Cairn;
  project: ProjectIdentity;
}

/** True when `store` names a PostgreSQL database rather than a SQLite file. */
export function isPostgresStore(store: string): boolean {
  return /^postgres(ql)?:\/\//i.test(store);
}

/** Open a store from its spec: `postgres://…` (the `pg` driver loaded only then) or a SQLite path. */
export async function openStoreSpec(spec: string): Promise<Store> {
  if (isPostgresStore(spec)) {
    const { openPostgresStore } = await import('./store/postgres/store.js');
    return openPostgresStore(spec);
  }
  const path = spec.startsWith('sqlite:') ? spec.slice('sqlite:'.length) : spec;
  return openSqliteStore(path);
}

/** Embedders that cost microseconds a text (hashing, a static table) gain nothing from a persistent cache. */
const CHEAP_EMBEDDER = /^(hash|static|builtin)\b/i;

/**
 * Put the embedding cache in front of `embedder`: an in-process LRU, plus the store's persistent
 * table for embedders that are slow or remote, so the same text is embedded once per model.
 */
export function cachedEmbedder(embedder: Embedder, spec: string, store: Store): Embedder {
  const persist = CHEAP_EMBEDDER.test(spec.trim()) ? undefined : store.embeddingCache;
  return withCache(embedder, persist ? { persist } : {});
}

/** Open the configured store and wire cairn for work in `cwd`. */
export async function openCairn(config: Config, options: OpenOptions): Promise<Opened> {
  const project = resolveProject(options.cwd);
  const store = await openStoreSpec(config.store);
  let embedder: Embedder | null = null;
  if (config.embedder && options.makeEmbedder) {
    try {
      embedder = await options.makeEmbedder(config.embedder);
      embedder = cachedEmbedder(embedder, config.embedder, store);
    } catch (error) {
      await store.close();
      throw error;
    }
  }
  const cairn = createCairn({
    store,
    embedder,
    project: project.id,
    workspaceRoot: project.root,
    session: options.session ?? null,
    actor: options.actor,
    core: { project: join(project.root, '.cairn', 'MEMORY.md'), user: join(config.home, 'MEMORY.md') },
    logger: options.logger ?? streamLogger((line) => process.stderr.write(line), 'warn'),
  });
  return { cairn, project };
}
