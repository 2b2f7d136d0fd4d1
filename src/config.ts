import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createCairn, type Cairn } from './cairn.js';
import { CairnError } from './errors.js';
import { streamLogger } from './runtime.js';
import { openSqliteStore } from './store/sqlite/store.js';
import { withCache } from './embed/cache.js';
import { resolveDefaultEmbedder } from './embed/default.js';
import type { Embedder, EmbedderIdentity, Logger, Store } from './types.js';
import { specForModel } from './embed/model-spec.js';
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
  /**
   * Embedder spec (`onnx:all-minilm-l6-v2-q`, `hash`, `static:/dir`, `ollama:model@url`, …) or null
   * for BM25 only. @default `$CAIRN_EMBEDDER`, else config `embedder`, else
   * `onnx:all-minilm-l6-v2-q` when its model files are in place (sizes checked), else null.
   * `"embedder": null` (or `"none"`, or `CAIRN_EMBEDDER=none`) opts out: BM25 only.
   */
  embedder: string | null;
  /** Where `embedder` came from: `env`, `config`, or `default` (nothing named one). */
  embedderSource: 'env' | 'config' | 'default';
  /** Why there is no embedder although none was opted out of (the default's files are missing or damaged). */
  embedderNote?: string;
  logDir: string;
  /** True when nothing named the store: it is `~/.cairn/cairn.db` (or `$HOME`'s equivalent). */
  storeIsDefault?: boolean;
}

interface FileConfig {
  embedder?: string | null;
  db?: string;
  store?: string;
}

// zod costs tens of milliseconds to load; hooks read config on every prompt, so it is loaded only
// when a config.json exists (and then synchronously, as loadConfig is).
const requireModule = createRequire(import.meta.url);

/** The schema of `<home>/config.json`. Unknown keys are allowed (newer versions may add some). */
function fileConfigSchema() {
  const { z } = requireModule('zod') as typeof import('zod');
  return z.looseObject({
    embedder: z.string().min(1).nullable().optional(),
    db: z.string().min(1).optional(),
    store: z.string().min(1).optional(),
  });
}

/** What a value is, for "expected X, got Y". */
function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `"${value.length > 40 ? `${value.slice(0, 40)}…` : value}"`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

const EXPECTED: Record<string, string> = {
  embedder: 'an embedder spec string (e.g. "onnx:all-minilm-l6-v2-q", "hash", "ollama:nomic-embed-text"), or null / "none" for BM25 only',
  db: 'a path to a SQLite file (a string)',
  store: 'a SQLite path or a postgres:// URL (a string)',
};

/**
 * Read and validate `<home>/config.json`; a bad file is one line naming the file, the field and
 * what it should hold.
 */
export function readFileConfig(file: string): FileConfig {
  if (!existsSync(file)) return {};
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new CairnError('CONFIG_INVALID', `${file} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new CairnError('CONFIG_INVALID', `${file}: expected a JSON object like {"embedder": "builtin"}, got ${describeValue(raw)}`);
  }
  const parsed = fileConfigSchema().safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = String(issue?.path[0] ?? 'value');
    const got = (raw as Record<string, unknown>)[field];
    throw new CairnError('CONFIG_INVALID', `${file}: field "${field}" must be ${EXPECTED[field] ?? issue?.message ?? 'valid'}, got ${describeValue(got)}`, { field });
  }
  return parsed.data as FileConfig;
}

export interface ConfigSources {
  home?: string | undefined;
  /** `--store`: a SQLite path or a `postgres://` URL. */
  store?: string | undefined;
  env?: NodeJS.ProcessEnv;
  /** Skip `<home>/config.json` (doctor, when the file itself is what is broken). */
  ignoreFile?: boolean;
  /** The package's `models` folder, where the default embedder's files are looked for after `<home>/models` (tests inject one). */
  packageModels?: string;
}

/** Spellings of "no embedder, BM25 only" in `$CAIRN_EMBEDDER` and the config file. */
const OPT_OUT = new Set(['none', 'off', 'bm25']);

/** The embedder setting: env, then the file (where null opts out), then the installed default. */
function resolveEmbedder(env: NodeJS.ProcessEnv, file: FileConfig, home: string, packageModels?: string): Pick<Config, 'embedder' | 'embedderSource' | 'embedderNote'> {
  const fromEnv = env.CAIRN_EMBEDDER?.trim();
  if (fromEnv) return { embedder: OPT_OUT.has(fromEnv.toLowerCase()) ? null : fromEnv, embedderSource: 'env' };
  if (file.embedder !== undefined) {
    const value = file.embedder?.trim() ?? null;
    return { embedder: value === null || OPT_OUT.has(value.toLowerCase()) ? null : value, embedderSource: 'config' };
  }
  const found = resolveDefaultEmbedder(home, packageModels);
  if (found.spec === null) return { embedder: null, embedderSource: 'default', embedderNote: found.reason };
  return { embedder: found.spec, embedderSource: 'default' };
}

export function loadConfig(sources: ConfigSources = {}): Config {
  const env = sources.env ?? process.env;
  const home = resolve(sources.home ?? env.CAIRN_HOME ?? join(env.HOME ?? homedir(), '.cairn'));
  const file = join(home, 'config.json');
  const fileConfig = sources.ignoreFile ? {} : readFileConfig(file);
  const dbPath = env.CAIRN_DB ?? fileConfig.db ?? join(home, 'cairn.db');
  const store = sources.store ?? env.CAIRN_STORE ?? fileConfig.store ?? dbPath;
  return {
    home,
    dbPath,
    store,
    ...resolveEmbedder(env, fileConfig, home, sources.packageModels),
    logDir: join(home, 'logs'),
    storeIsDefault: sources.home === undefined && env.CAIRN_HOME === undefined && store === join(home, 'cairn.db'),
  };
}

/**
 * Before a command opens the store: the SQLite file's folder must exist. The default home
 * (`~/.cairn`) is created with a note; a folder named explicitly (`--home`, `$CAIRN_HOME`,
 * `--store`, `$CAIRN_DB`, config `db`/`store`) that does not exist is an error, so a typo does not
 * quietly start an empty store somewhere else.
 */
export function prepareStoreLocation(config: Config, note: (line: string) => void): void {
  if (isPostgresStore(config.store)) return;
  const path = config.store.startsWith('sqlite:') ? config.store.slice('sqlite:'.length) : config.store;
  if (path === ':memory:') return;
  const dir = dirname(resolve(path));
  if (existsSync(dir)) return;
  if (!config.storeIsDefault) {
    throw new CairnError('INVALID_INPUT', `the store folder ${dir} does not exist; create it first (mkdir -p ${dir}) or check --home / --store / $CAIRN_HOME`, { field: 'store' });
  }
  mkdirSync(dir, { recursive: true });
  note(`cairn: created ${dir} for your memories`);
}

export interface OpenOptions {
  cwd: string;
  actor: string;
  session?: string | null;
  logger?: Logger;
  /** Build an embedder from its spec (injected so entry points choose what to load). */
  makeEmbedder?: (spec: string) => Promise<Embedder>;
  /** Write memories without a vector, for the background fill (short-lived CLI processes). */
  deferVectors?: boolean;
  /**
   * While a model switch is under way, the index's own model for recall. Long-running servers pass
   * their memoized loader (src/embed/server-fill.ts), so the idle fill sees when it is loaded.
   * @default {@link indexEmbedder} with `makeEmbedder`
   */
  indexEmbedder?: (index: EmbedderIdentity) => Promise<Embedder | null>;
  /**
   * A SQLite store runs a hybrid recall's full-text search in a worker thread (`worker`), beside
   * the vector leg: for long-running servers that recall with vectors.
   * @default 'inline'
   */
  textSearch?: 'inline' | 'worker';
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
export async function openStoreSpec(spec: string, options: { textSearch?: 'inline' | 'worker' } = {}): Promise<Store> {
  if (isPostgresStore(spec)) {
    const { openPostgresStore } = await import('./store/postgres/store.js');
    return openPostgresStore(spec);
  }
  const path = spec.startsWith('sqlite:') ? spec.slice('sqlite:'.length) : spec;
  return openSqliteStore(path, options.textSearch ? { textSearch: options.textSearch } : {});
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

/** Build the configured embedder; the embed module is loaded only when one is configured. */
export async function createEmbedderFromSpec(spec: string, config: Config, options: { threads?: number; workers?: number } = {}): Promise<Embedder> {
  const module = (await import('./embed/index.js').catch((error: unknown) => {
    throw new CairnError('MISSING_DEPENDENCY', `embedder "${spec}" is configured but the embed module failed to load: ${(error as Error).message}`, { cause: error });
  })) as { createEmbedder(spec: string, options: { home: string; threads?: number; workers?: number }): Promise<Embedder> };
  return module.createEmbedder(spec, { home: config.home, ...options });
}

/**
 * An embedder for the index's model (a model switch under way: recall keeps searching the old
 * vectors), or null when it cannot be rebuilt from its id or its files are not here.
 */
export async function indexEmbedder(index: EmbedderIdentity, make: (spec: string) => Promise<Embedder>, store: Store): Promise<Embedder | null> {
  const spec = specForModel(index.model);
  if (spec === null) return null;
  const embedder = await make(spec);
  const health = embedder.availability ? await embedder.availability() : { ok: true as const };
  if (!health.ok || embedder.model !== index.model || embedder.dimension !== index.dimension) {
    await embedder.close?.();
    return null;
  }
  return cachedEmbedder(embedder, spec, store);
}

/** Open the configured store and wire cairn for work in `cwd`. */
export async function openCairn(config: Config, options: OpenOptions): Promise<Opened> {
  const project = resolveProject(options.cwd);
  const store = await openStoreSpec(config.store, options.textSearch ? { textSearch: options.textSearch } : {});
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
  const make = options.makeEmbedder;
  const cairn = createCairn({
    store,
    embedder,
    // While a model switch is under way, recall searches the old index with its own model.
    ...(embedder && (options.indexEmbedder || make)
      ? { indexEmbedder: options.indexEmbedder ?? ((index: EmbedderIdentity) => indexEmbedder(index, make as (spec: string) => Promise<Embedder>, store)) }
      : {}),
    deferVectors: options.deferVectors ?? false,
    project: project.id,
    workspaceRoot: project.root,
    session: options.session ?? null,
    actor: options.actor,
    core: { project: join(project.root, '.cairn', 'MEMORY.md'), user: join(config.home, 'MEMORY.md') },
    logger: options.logger ?? streamLogger((line) => process.stderr.write(line), 'warn'),
  });
  return { cairn, project };
}
