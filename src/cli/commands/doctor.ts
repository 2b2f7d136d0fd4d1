import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { paint } from '../colour.js';
import { isPostgresStore, loadConfig, type Config } from '../../config.js';
import { doctor, type DoctorCheck } from '../../doctor/doctor.js';
import { checkDatabaseFile, checkDiskAndPermissions } from '../../doctor/files.js';
import { resolveProject } from '../../workspace/project.js';
import type { Run } from './memory.js';

const MARK = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL' } as const;

export function registerDoctorCommand(program: Command, run: Run): void {
  run(
    program
      .command('doctor')
      .summary('integrity and setup checks, with repair advice')
      .description('Checks the config file, the database file (PRAGMA integrity_check, schema version), disk space and permissions, the full-text and vector indexes, the embedder, the Claude Code hooks, core memory and the hook log. Changes nothing. Exit 1 when a check fails.'),
    async (ctx) => {
      // Doctor always runs: a broken config or database is reported, not thrown.
      const checks: DoctorCheck[] = [];
      let config: Config;
      let configOk = true;
      const configFile = (home: string): string => join(home, 'config.json');
      try {
        config = ctx.config;
        checks.push({ check: 'config', status: 'ok', detail: existsSync(configFile(config.home)) ? `${configFile(config.home)} is valid` : 'no config.json: defaults' });
      } catch (error) {
        configOk = false;
        config = loadConfig({ home: ctx.globals.home, store: ctx.globals.store, env: ctx.io.env, ignoreFile: true });
        checks.push({ check: 'config', status: 'fail', detail: message(error), advice: `fix that field in ${configFile(config.home)}, or move the file away to use the defaults` });
      }
      const sqlitePath = isPostgresStore(config.store) ? null : config.store.replace(/^sqlite:/, '');
      if (sqlitePath !== null && sqlitePath !== ':memory:') checks.push(...checkDatabaseFile(sqlitePath), ...checkDiskAndPermissions(sqlitePath));
      const databaseBroken = checks.some((c) => c.check === 'database' && c.status === 'fail');
      if (configOk && !databaseBroken) {
        try {
          const cairn = await ctx.cairn();
          const home = ctx.io.env.HOME ?? homedir();
          const claudeDir = ctx.io.env.CLAUDE_CONFIG_DIR ?? join(home, '.claude');
          const root = resolveProject(ctx.io.cwd).root;
          checks.push(
            ...(await doctor({
              cairn,
              home: config.home,
              claudeSettings: [join(claudeDir, 'settings.json'), join(root, '.claude', 'settings.json'), join(root, '.claude', 'settings.local.json')],
              configuredEmbedder: config.embedder,
              ...(config.embedderNote ? { embedderNote: config.embedderNote } : {}),
              now: Date.now(),
            })),
          );
        } catch (error) {
          checks.push({ check: 'store', status: 'fail', detail: `cannot open ${config.store}: ${message(error)}` });
        }
      } else {
        checks.push({ check: 'store', status: 'warn', detail: 'not opened (fix the failures above first): indexes, embedder and hooks not checked' });
      }
      const failed = checks.some((c) => c.status === 'fail');
      if (ctx.json) ctx.printJson({ ok: !failed, checks });
      else {
        const colour = paint(ctx.io.stdout, ctx.io.env);
        const tint = { ok: colour.green, warn: colour.yellow, fail: colour.red } as const;
        for (const c of checks) {
          ctx.out(`${tint[c.status](MARK[c.status])}  ${c.check}: ${c.detail}`);
          if (c.advice) ctx.out(`      → ${c.advice}`);
        }
      }
      if (failed) ctx.exitCode = 1;
    },
  );
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
