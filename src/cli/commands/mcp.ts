import type { Command } from 'commander';
import { serveStdio, sessionFromEnv } from '../../mcp/stdio.js';
import type { Run } from './memory.js';

export function registerMcpCommand(program: Command, run: Run): void {
  run(
    program
      .command('mcp')
      .summary('MCP server on stdio (for Claude Code, Codex, Cursor …)')
      .description(
        'Serve the MCP tools remember, recall, get, forget, revise, context, history, snapshot and status, the resources cairn://core/project, cairn://core/user, ' +
          'cairn://session/working-set and cairn://memory/{id}, and the prompts catch-up and save-findings on stdin/stdout until the client disconnects. ' +
          'The session comes from CLAUDE_CODE_SESSION_ID (or CAIRN_SESSION_ID); CAIRN_MCP_DEBUG=1 adds scoring internals to recall results. One JSON-RPC line may be at most 10 MiB.',
      ),
    async (ctx) => {
      await serveStdio(await ctx.cairn('mcp'), { stdin: ctx.io.stdin, stdout: ctx.io.stdout }, { session: sessionFromEnv(ctx.io.env), debug: ctx.io.env.CAIRN_MCP_DEBUG === '1' });
    },
  );
}
