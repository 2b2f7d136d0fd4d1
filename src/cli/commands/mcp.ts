import type { Command } from 'commander';
import { serveStdio } from '../../mcp/stdio.js';
import type { Run } from './memory.js';

export function registerMcpCommand(program: Command, run: Run): void {
  run(
    program
      .command('mcp')
      .summary('MCP server on stdio (for Claude Code, Codex, Cursor …)')
      .description(
        'Serve the MCP tools remember, recall, forget, revise, context, history, snapshot and status on stdin/stdout until the client disconnects.',
      ),
    async (ctx) => {
      await serveStdio(await ctx.cairn('mcp'), { stdin: ctx.io.stdin, stdout: ctx.io.stdout });
    },
  );
}
