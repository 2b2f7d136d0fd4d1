import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { packagePath } from '../../paths.js';
import type { Command } from 'commander';
import { invalid } from '../../errors.js';
import { install, lineDiff } from '../../install/apply.js';
import { INSTALL_AGENTS, type Agent, type InstallScope } from '../../install/targets.js';
import { resolveProject } from '../../workspace/project.js';
import type { Run } from './memory.js';

const BIN = packagePath('bin', 'cairn.js');

export function registerInstallCommand(program: Command, run: Run): void {
  run(
    program
      .command('install')
      .summary('wire cairn into Claude Code, Codex, Gemini CLI, Cursor or VS Code')
      .description(
        'claude: merges the hooks (SessionStart, UserPromptSubmit, PreCompact, Stop, SessionEnd, SubagentStop) into Claude Code\n' +
          '        settings and adds the MCP server; keeps your other hooks; backs up every file it changes.\n' +
          'codex:  adds [mcp_servers.cairn] to ~/.codex/config.toml and SessionStart, UserPromptSubmit, PreCompact and Stop\n' +
          '        hooks to ~/.codex/hooks.json (trust them once in Codex with /hooks).   cursor: .cursor/mcp.json.   vscode: .vscode/mcp.json.\n' +
          'gemini: adds the MCP server and hooks (SessionStart, BeforeAgent, PreCompress for /compress, BeforeModel, AfterAgent,\n' +
          '        SessionEnd) to ~/.gemini/settings.json (--scope project: .gemini/settings.json); after Gemini compresses its\n' +
          '        history, BeforeModel adds cairn\'s post-compact context to the compression summary.\n' +
          'Files are edited in place with TOML and JSONC parsers: comments and everything else stay as they were.\n' +
          'Running it again changes nothing; --uninstall removes only what cairn added (a file unchanged since comes back\n' +
          'byte for byte from its backup).',
      )
      .argument('<agent>', INSTALL_AGENTS.join(' | '))
      .option('--scope <scope>', 'user (all projects) or project (this repository)', undefined)
      .option('--dry-run', 'show the changes as a diff, write nothing')
      .option('--uninstall', 'remove cairn from the configuration'),
    async (ctx, agent: string, opts: { scope?: InstallScope; dryRun?: boolean; uninstall?: boolean }) => {
      if (!INSTALL_AGENTS.includes(agent as Agent)) throw invalid(`unknown agent "${agent}" (${INSTALL_AGENTS.join(', ')})`, 'agent');
      const scope: InstallScope = opts.scope ?? (agent === 'vscode' ? 'project' : 'user');
      if (scope !== 'user' && scope !== 'project') throw invalid(`--scope must be user or project (got "${String(scope)}")`, 'scope');
      const home = ctx.io.env.HOME ?? homedir();
      const defaultHome = resolve(home, '.cairn');
      const env: Record<string, string> = ctx.config.home !== defaultHome ? { CAIRN_HOME: ctx.config.home } : {};
      const planned = install(
        agent as Agent,
        {
          launcher: { node: process.execPath, bin: BIN, env },
          scope,
          uninstall: opts.uninstall === true,
          home,
          projectRoot: resolveProject(ctx.io.cwd).root,
          env: ctx.io.env,
        },
        { dryRun: opts.dryRun === true },
      );
      if (ctx.json) return ctx.printJson({ agent, scope, dryRun: opts.dryRun === true, uninstall: opts.uninstall === true, files: planned });
      for (const plan of planned) {
        if (!plan.changed) {
          ctx.out(`${plan.path}: already up to date`);
          continue;
        }
        if (opts.dryRun) {
          ctx.out(`--- ${plan.path}${plan.before === null ? ' (new file)' : ''}`);
          for (const line of lineDiff(plan.before ?? '', plan.after ?? '')) if (!line.startsWith('  ')) ctx.out(line);
        } else {
          const verb = plan.after === null ? 'removed' : opts.uninstall ? 'updated' : 'wrote';
          ctx.out(`${verb} ${plan.path}${plan.backup ? ` (backup: ${plan.backup})` : ''}`);
        }
      }
      if (!opts.dryRun && !opts.uninstall && agent === 'claude') {
        ctx.out('done: restart Claude Code; memories now come back after /compact and in new sessions.');
        ctx.out('seed memory from your past sessions: cairn ingest');
      }
      if (!opts.dryRun && !opts.uninstall && agent === 'gemini') {
        ctx.out('done: restart Gemini CLI (/hooks and /mcp list cairn); memories now come back at session start and after a compression.');
        if (scope === 'project') ctx.out('Gemini CLI runs a project’s hooks only in a trusted folder (it asks; or /permissions trust).');
      }
      if (!opts.dryRun && !opts.uninstall && agent === 'codex') {
        ctx.out('done: Codex asks you once to trust new hooks: start codex and open /hooks to trust cairn’s (until then the MCP tools work, the session-start context does not).');
      }
    },
  );
}
