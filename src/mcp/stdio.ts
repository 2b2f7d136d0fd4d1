import type { Readable, Writable } from 'node:stream';
import type { Cairn } from '../cairn.js';
import { createEmbedderFromSpec, indexEmbedder, loadConfig, openCairn, type Config } from '../config.js';
import type { ServerVectors, ServerVectorsOptions } from '../embed/server-fill.js';
import type { Embedder } from '../types.js';
import { packageVersion } from '../paths.js';
import { createMcpServer } from './server.js';
import { LineTransport } from './transport.js';

/**
 * The agent session an MCP server started by a client serves: Claude Code passes
 * CLAUDE_CODE_SESSION_ID to its MCP servers; CAIRN_SESSION_ID overrides; Codex's thread id when set.
 */
export function sessionFromEnv(env: NodeJS.ProcessEnv): string | null {
  for (const key of ['CAIRN_SESSION_ID', 'CLAUDE_CODE_SESSION_ID', 'CODEX_THREAD_ID', 'CODEX_SESSION_ID']) {
    const value = env[key];
    if (typeof value === 'string' && value.trim().length > 0) return value.trim();
  }
  return null;
}

export interface StdioOptions {
  session?: string | null;
  debug?: boolean;
  /** Called on every message from the client (the idle vector fill waits for quiet). */
  onActivity?: () => void;
}

/** Serve cairn's MCP tools on a stdio pair until the client disconnects (answering what it already sent). */
export async function serveStdio(cairn: Cairn, io: { stdin: Readable; stdout: Writable }, options: StdioOptions = {}): Promise<void> {
  const server = createMcpServer(cairn, {
    version: packageVersion(),
    logger: cairn.deps.logger,
    session: options.session ?? null,
    debug: options.debug ?? false,
  });
  const transport = new LineTransport(io.stdin, io.stdout);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
  });
  await server.connect(transport);
  const { onActivity } = options;
  if (onActivity) {
    const handle = transport.onmessage;
    transport.onmessage = (message) => {
      onActivity();
      handle?.(message);
    };
  }
  await Promise.race([closed, transport.drained()]);
  await server.close().catch(() => {});
}

/** What {@link runMcp} reads and talks to; the defaults are the process's own. */
export interface McpMainOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  stdin?: Readable;
  stdout?: Writable;
  /** Build an embedder from its spec. @default createEmbedderFromSpec */
  makeEmbedder?: (spec: string, config: Config) => Promise<Embedder>;
  /** Timing of the idle fill (tests). */
  fillTiming?: ServerVectorsOptions['timing'];
}

/**
 * Serve MCP on stdio for one agent session. Once the model is loaded (by a recall or remember that
 * needed it) — or, during a model switch, the old model recall searches with, since requests then
 * never load the new one — memories still without a vector are embedded while the client is quiet
 * (src/embed/server-fill.ts, as `cairn serve` does); CAIRN_IDLE_FILL=0 turns it off.
 */
export async function runMcp(options: McpMainOptions = {}): Promise<number> {
  const env = options.env ?? process.env;
  const config = loadConfig({ env });
  const session = sessionFromEnv(env);
  const make = (spec: string): Promise<Embedder> => (options.makeEmbedder ?? createEmbedderFromSpec)(spec, config);
  let vectors: ServerVectors | null = null;
  const { cairn } = await openCairn(config, {
    cwd: options.cwd ?? process.cwd(),
    actor: 'mcp',
    session,
    makeEmbedder: make,
    // Memoized by the server's vectors, which start the fill once this old model is loaded.
    indexEmbedder: (index) => vectors?.indexEmbedder(index) ?? Promise.resolve(null),
    // Hybrid recalls run BM25 in a worker thread beside the query embedding and vector search.
    ...(config.embedder ? { textSearch: 'worker' as const } : {}),
  });
  const embedder = cairn.deps.embedder;
  const store = cairn.deps.store;
  if (embedder) {
    vectors = (await import('../embed/server-fill.js')).serverVectors({
      store,
      embedder,
      loadIndexEmbedder: (index) => indexEmbedder(index, make, store),
      logger: cairn.deps.logger,
      by: 'mcp',
      fill: env.CAIRN_IDLE_FILL !== '0',
      ...(options.fillTiming ? { timing: options.fillTiming } : {}),
    });
  }
  try {
    await serveStdio(
      cairn,
      { stdin: options.stdin ?? process.stdin, stdout: options.stdout ?? process.stdout },
      { session, debug: env.CAIRN_MCP_DEBUG === '1', ...(vectors ? { onActivity: vectors.onActivity } : {}) },
    );
  } finally {
    await vectors?.stop();
    await cairn.close();
  }
  return 0;
}

/**
 * Entry for `node bin/cairn.js mcp` without the rest of the CLI (commander, every command): the
 * server stays resident for a whole agent session, so what it loads is memory held all along.
 */
export async function mcpMain(): Promise<number> {
  return runMcp();
}
