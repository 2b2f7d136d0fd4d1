import type { Command } from 'commander';
import { HOOK_EVENTS } from '../../hooks/events.js';
import { parsePartArgs } from '../../hooks/parts.js';
import { runHook } from '../../hooks/run.js';
import type { Run } from './memory.js';

export function registerHookCommand(program: Command, run: Run): void {
  run(
    program
      .command('hook')
      .summary('Claude Code, Codex and Gemini CLI hook entry (reads the hook JSON on stdin)')
      .description(
        `Events: ${HOOK_EVENTS.join(', ')} (Claude Code's SessionStart, UserPromptSubmit, PreCompact, Stop, SessionEnd, SubagentStop and\n` +
          "Gemini CLI's BeforeAgent, PreCompress, BeforeModel, AfterAgent also work; before-model adds the post-compression context).\n" +
          'A hook never blocks the agent: on any error it exits 0 with nothing injected and logs to <home>/logs/hooks.log.',
      )
      .argument('<event>', HOOK_EVENTS.join(' | '))
      .option('--parts <n>', 'session-start: the context goes out in N parts, one per hook command (a client that caps each hook\'s text: Claude Code, 10,000 characters); this command prints the first')
      .option('--part <k>', 'session-start with --parts: print part K (2…N) of the context the first command built'),
    async (ctx, event: string, opts: { parts?: string; part?: string }) => {
      const args = [...(opts.parts !== undefined ? ['--parts', opts.parts] : []), ...(opts.part !== undefined ? ['--part', opts.part] : [])];
      await runHook(event, {
        stdin: ctx.io.stdin,
        stdout: ctx.io.stdout,
        env: ctx.io.env,
        cwd: ctx.io.cwd,
        ...(ctx.globals.home ? { home: ctx.globals.home } : {}),
        parts: parsePartArgs(args),
      });
    },
  );
}
