import { packageVersion } from '../../paths.js';
import type { Command } from 'commander';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createMcpServer } from '../../mcp/server.js';
import type { Run } from './memory.js';


export function registerMcpCommand(program: Command, run: Run): void {
  run(
    program
      .command('mcp')
      .summary('MCP server on stdio (for Claude Code, Codex, Cursor …)')
      .description('Serve the MCP tools remember, recall, forget, revise, snapshot and status on stdin/stdout until the client disconnects.'),
    async (ctx) => {
      const cairn = await ctx.cairn('mcp');
      const server = createMcpServer(cairn, { version: packageVersion(), logger: cairn.deps.logger });
      const transport = new StdioServerTransport(ctx.io.stdin, ctx.io.stdout);
      const closed = new Promise<void>((resolve) => {
        transport.onclose = () => resolve();
        ctx.io.stdin.once('end', () => resolve());
      });
      await server.connect(transport);
      await closed;
      await server.close().catch(() => {});
    },
  );
}
