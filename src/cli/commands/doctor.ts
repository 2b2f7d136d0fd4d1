import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { doctor } from '../../doctor/doctor.js';
import { resolveProject } from '../../workspace/project.js';
import type { Run } from './memory.js';

const MARK = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL' } as const;

export function registerDoctorCommand(program: Command, run: Run): void {
  run(
    program
      .command('doctor')
      .summary('integrity and setup checks, with repair advice')
      .description('Checks the database, the full-text and vector indexes, the embedder, the Claude Code hooks, core memory and the hook log. Changes nothing. Exit 1 when a check fails.'),
    async (ctx) => {
      const cairn = await ctx.cairn();
      const home = ctx.io.env.HOME ?? homedir();
      const claudeDir = ctx.io.env.CLAUDE_CONFIG_DIR ?? join(home, '.claude');
      const root = resolveProject(ctx.io.cwd).root;
      const checks = await doctor({
        cairn,
        home: ctx.config.home,
        claudeSettings: [join(claudeDir, 'settings.json'), join(root, '.claude', 'settings.json'), join(root, '.claude', 'settings.local.json')],
        configuredEmbedder: ctx.config.embedder,
        now: Date.now(),
      });
      const failed = checks.some((c) => c.status === 'fail');
      if (ctx.json) ctx.printJson({ ok: !failed, checks });
      else {
        for (const c of checks) {
          ctx.out(`${MARK[c.status]}  ${c.check}: ${c.detail}`);
          if (c.advice) ctx.out(`      → ${c.advice}`);
        }
      }
      if (failed) ctx.exitCode = 1;
    },
  );
}
