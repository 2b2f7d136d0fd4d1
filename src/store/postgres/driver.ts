/**
 * The thin layer between cairn's PostgreSQL store and the `pg` driver: the driver loaded lazily
 * (an optional peer dependency), a pool whose connections all use the store's schema, and
 * transactions on one pooled client with retries on serialization failures and deadlocks.
 *
 * `pg`'s own types stay inside this file: the store sees the small interfaces below.
 */
import { CairnError, isCairnError } from '../../errors.js';

/** What a query returns. */
export interface QueryResult<R> {
  rows: R[];
  rowCount: number | null;
}

/** Something queries run on: the pool, or one client inside a transaction. */
export interface Queryable {
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<R>>;
}

interface PgClient extends Queryable {
  release(destroy?: boolean | Error): void;
}

interface PgPool extends Queryable {
  connect(): Promise<PgClient>;
  end(): Promise<void>;
  on(event: 'connect', listener: (client: PgClient) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

interface PgModule {
  Pool: new (config: Record<string, unknown>) => PgPool;
  types: { getTypeParser(oid: number, format?: string): (value: string) => unknown };
}

let loading: Promise<PgModule> | null = null;

/** Import `pg` on first use; a clear MISSING_DEPENDENCY error when it is not installed. */
export function loadPg(): Promise<PgModule> {
  loading ??= import('pg').then(
    (module: { default?: unknown }) => (module.default ?? module) as PgModule,
    (error: unknown) => {
      loading = null;
      throw new CairnError(
        'MISSING_DEPENDENCY',
        'the PostgreSQL store needs the `pg` package, which is not installed: run `npm install pg` where cairn is installed',
        { cause: error },
      );
    },
  );
  return loading;
}

export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}

export interface ParsedUrl {
  /** The URL handed to `pg` (cairn's own parameters removed). */
  connectionString: string;
  /** `?schema=NAME`: the schema cairn's tables live in. @default the server's search_path (usually `public`) */
  schema: string | null;
  /** The URL with any password replaced by `***`, for `status` and messages. */
  redacted: string;
}

/** Split a `postgres://` URL into what `pg` needs and cairn's `schema` parameter. */
export function parsePostgresUrl(url: string): ParsedUrl {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    throw new CairnError('INVALID_INPUT', `not a valid PostgreSQL URL: ${redactUrl(url)}`, { cause: error, field: 'store' });
  }
  const schema = parsed.searchParams.get('schema');
  if (schema !== null && !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) {
    throw new CairnError('INVALID_INPUT', `schema must be a plain identifier (got "${schema}")`, { field: 'store' });
  }
  parsed.searchParams.delete('schema');
  const connectionString = parsed.toString();
  return { connectionString, schema, redacted: redactUrl(url) };
}

export function redactUrl(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^:/@]*):[^@/]*@/i, '$1:***@');
}

/** PostgreSQL error codes that mean "try the whole transaction again". */
const RETRYABLE = new Set(['40001', '40P01']);

function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function isUniqueViolation(error: unknown): boolean {
  return sqlState(error) === '23505';
}

/** Wrap a driver error (connection refused, bad SQL …) as STORE_FAILED; CairnErrors pass through. */
export function storeError(error: unknown, where: string): CairnError {
  if (isCairnError(error)) return error;
  const message = error instanceof Error ? error.message || String((error as { code?: unknown }).code ?? error) : String(error);
  return new CairnError('STORE_FAILED', `PostgreSQL (${where}): ${message}`, { cause: error });
}

export interface DatabaseOptions {
  /** Connections in the pool. @default 10 */
  maxConnections?: number;
  /** Attempts for a transaction that hits a serialization failure or a deadlock. @default 8 */
  maxAttempts?: number;
}

/**
 * A pool on one database and schema. Every connection sets `search_path` to the schema (then
 * `public`, where extensions such as pgvector usually live) before its first query.
 */
export class PgDatabase implements Queryable {
  readonly schema: string | null;
  readonly location: string;
  private readonly pool: PgPool;
  private readonly maxAttempts: number;
  private readonly sessionSettings: string[] = [];
  /** Which version of the session settings each pooled client has run. */
  private readonly prepared = new WeakMap<PgClient, number>();
  private settingsVersion = 1;

  private constructor(pool: PgPool, url: ParsedUrl, options: DatabaseOptions) {
    this.pool = pool;
    this.schema = url.schema;
    this.location = url.redacted;
    this.maxAttempts = options.maxAttempts ?? 8;
    pool.on('error', () => {
      // An idle client lost its connection; the pool drops it and the next query reconnects.
    });
  }

  static async connect(url: string, options: DatabaseOptions = {}): Promise<PgDatabase> {
    const pg = await loadPg();
    const parsed = parsePostgresUrl(url);
    const parseInt8 = (value: string): number => Number(value);
    const pool = new pg.Pool({
      connectionString: parsed.connectionString,
      max: options.maxConnections ?? 10,
      idleTimeoutMillis: 30_000,
      // int8 (counts, epoch milliseconds) as numbers: every value cairn stores fits in 2^53.
      types: {
        getTypeParser: (oid: number, format?: string) => (oid === 20 ? parseInt8 : pg.types.getTypeParser(oid, format)),
      },
    });
    const db = new PgDatabase(pool, parsed, options);
    try {
      const version = await db.query<{ v: string }>('SELECT version() AS v');
      db.singleBackend = /PGlite/i.test(version.rows[0]?.v ?? '');
    } catch (error) {
      await pool.end().catch(() => {});
      const cause = (error as { cause?: unknown }).cause ?? error;
      const reason = cause instanceof Error ? cause.message || String((cause as { code?: unknown }).code ?? '') : String(cause);
      // Usually a wrong URL, credentials or a server that is down: something the user fixes.
      throw new CairnError('INVALID_INPUT', `cannot use the PostgreSQL database at ${parsed.redacted}: ${reason}`, { cause: error, field: 'store' });
    }
    return db;
  }

  /**
   * PGlite served over a socket runs every connection on one backend and interleaves their
   * protocol messages between transactions, so a parameterised statement (Parse, Bind, Execute)
   * from one client can bind another's. On such a server every parameterised statement runs in
   * a transaction, which the socket server keeps to one client until it ends.
   */
  private singleBackend = false;

  /** Statements each new connection runs first (search_path, then any registered settings). */
  private connectSql(): string[] {
    const path = this.schema ? [`SET search_path TO "${this.schema}", public`] : [];
    return [...path, ...this.sessionSettings];
  }

  /** Add a session setting for every connection from now on (e.g. pgvector's scan mode). */
  async addSessionSetting(sql: string): Promise<void> {
    this.sessionSettings.push(sql);
    this.settingsVersion++;
  }

  /** A pooled client that has run the session statements (search_path, settings). */
  private async acquire(): Promise<PgClient> {
    let client: PgClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw storeError(error, 'connect');
    }
    if ((this.prepared.get(client) ?? 0) < this.settingsVersion) {
      try {
        for (const sql of this.connectSql()) await client.query(sql);
      } catch (error) {
        client.release(error as Error);
        throw storeError(error, 'connect');
      }
      this.prepared.set(client, this.settingsVersion);
    }
    return client;
  }

  async query<R = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<QueryResult<R>> {
    if (this.singleBackend && params.length > 0) return this.transaction((client) => client.query<R>(sql, params));
    const client = await this.acquire();
    try {
      return await client.query<R>(sql, params);
    } catch (error) {
      throw storeError(error, firstWords(sql));
    } finally {
      client.release();
    }
  }

  /**
   * Run `work` in one transaction on one client (READ COMMITTED by default). A serialization
   * failure or deadlock rolls back and runs `work` again, with a short random back-off.
   */
  async transaction<T>(work: (client: Queryable) => Promise<T>, options: { isolation?: 'serializable' } = {}): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const client = await this.acquire();
      let broken: Error | undefined;
      try {
        await client.query(options.isolation === 'serializable' ? 'BEGIN ISOLATION LEVEL SERIALIZABLE' : 'BEGIN');
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        try {
          await client.query('ROLLBACK');
        } catch (rollbackError) {
          broken = rollbackError as Error;
        }
        const state = sqlState(error);
        if (state !== undefined && RETRYABLE.has(state) && attempt < this.maxAttempts) {
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
          continue;
        }
        throw storeError(error, 'transaction');
      } finally {
        client.release(broken);
      }
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

function firstWords(sql: string): string {
  return sql.trim().split(/\s+/).slice(0, 3).join(' ');
}
