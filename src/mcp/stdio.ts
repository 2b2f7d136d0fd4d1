import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Cairn } from '../cairn.js';
import { createEmbedderFromSpec, loadConfig, openCairn } from '../config.js';
import { packageVersion } from '../paths.js';
import { createMcpServer } from './server.js';

/** Serve cairn's MCP tools on a stdio pair until the client disconnects. */
export async function serveStdio(cairn: Cairn, io: { stdin: Readable; stdout: Writable }): Promise<void> {
  const server = createMcpServer(cairn, { version: packageVersion(), logger: cairn.deps.logger });
  const transport = new StdioServerTransport(io.stdin, io.stdout);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    io.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close().catch(() => {});
}

/**
 * Entry for `node bin/cairn.js mcp` without the rest of the CLI (commander, every command): the
 * server stays resident for a whole agent session, so what it loads is memory held all along.
 */
export async function mcpMain(): Promise<number> {
  const config = loadConfig({ env: process.env });
  const { cairn } = await openCairn(config, {
    cwd: process.cwd(),
    actor: 'mcp',
    makeEmbedder: (spec) => createEmbedderFromSpec(spec, config),
  });
  try {
    await serveStdio(cairn, { stdin: process.stdin, stdout: process.stdout });
  } finally {
    await cairn.close();
  }
  return 0;
}

