import type { Readable, Writable } from 'node:stream';
import type { Cairn } from '../cairn.js';
import { createEmbedderFromSpec, loadConfig, openCairn } from '../config.js';
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

/**
 * Entry for `node bin/cairn.js mcp` without the rest of the CLI (commander, every command): the
 * server stays resident for a whole agent session, so what it loads is memory held all along.
 */
export async function mcpMain(): Promise<number> {
  const config = loadConfig({ env: process.env });
  const session = sessionFromEnv(process.env);
  const { cairn } = await openCairn(config, {
    cwd: process.cwd(),
    actor: 'mcp',
    session,
    makeEmbedder: (spec) => createEmbedderFromSpec(spec, config),
  });
  // Once the model is loaded (by a recall or remember that needed it), fill missing vectors while
  // the client is quiet (src/embed/idle-fill.ts); CAIRN_IDLE_FILL=0 turns it off.
  let lastActivity = Date.now();
  const embedder = cairn.deps.embedder;
  const stopFill =
    embedder && process.env.CAIRN_IDLE_FILL !== '0'
      ? (await import('../embed/idle-fill.js')).startIdleFill({ store: cairn.deps.store, embedder, lastActivity: () => lastActivity, logger: cairn.deps.logger })
      : null;
  try {
    await serveStdio(cairn, { stdin: process.stdin, stdout: process.stdout }, { session, debug: process.env.CAIRN_MCP_DEBUG === '1', onActivity: () => (lastActivity = Date.now()) });
  } finally {
    await stopFill?.();
    await cairn.close();
  }
  return 0;
}
