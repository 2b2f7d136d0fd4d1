import { packageVersion } from '../paths.js';
import { Command, CommanderError } from 'commander';
import { isCairnError } from '../errors.js';
import { CommandContext, type CliIo, type GlobalOptions } from './context.js';
import { registerMemoryCommands, type Run } from './commands/memory.js';
import { registerSnapshotCommands } from './commands/snapshots.js';
import { registerStatusCommand } from './commands/status.js';
import { registerTransferCommands } from './commands/transfer.js';
import { registerMcpCommand } from './commands/mcp.js';
import { registerBenchCommand } from './commands/bench.js';
import { registerContextCommands } from './commands/context.js';
import { registerIngestCommands } from './commands/ingest.js';
import { registerDistillCommands } from './commands/distill.js';
import { registerHookCommand } from './commands/hook.js';
import { registerInstallCommand } from './commands/install.js';
import { registerDoctorCommand } from './commands/doctor.js';
import { registerUiCommand } from './commands/ui.js';
import { registerServeCommand } from './commands/serve.js';
import { registerTokenCommands } from './commands/token.js';
import { registerMigrateCommand } from './commands/migrate.js';
import { registerCopyCommand } from './commands/copy.js';
import { registerReindexCommand } from './commands/reindex.js';
import { registerEmbedCommands } from './commands/embed.js';
import { registerHomeAction } from './commands/home.js';


const defaultIo = (): CliIo => ({
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  cwd: process.cwd(),
});

/** Exit codes (SPEC §5.1): 0 ok, 1 user error, 2 internal error. */
export const EXIT = { ok: 0, user: 1, internal: 2 } as const;

/**
 * Run the CLI with `argv` (without node and script) and return the exit code. Everything the
 * process touches comes through `io`, so tests drive the real CLI in-process.
 */
export async function main(argv: string[], io: CliIo = defaultIo()): Promise<number> {
  const program = new Command('cairn');
  let exitCode: number = EXIT.ok;
  const contexts: CommandContext[] = [];
  program
    .description('cairn — long-term memory for AI coding agents: exact findings survive /compact and new sessions.')
    .version(packageVersion(), '-V, --version')
    .option('--home <dir>', 'data home (default: $CAIRN_HOME, else ~/.cairn)')
    .option('--json', 'print machine-readable JSON')
    .option('--store <spec>', 'a SQLite file or postgres://user:pass@host/db (default: $CAIRN_STORE, config "store", else <home>/cairn.db)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      outputError: (s, write) => write(s),
    })
    .addHelpText(
      'after',
      '\nGetting started:\n' +
        '  cairn remember "parse_config(path: Path, *, strict: bool = False) -> Config lives in src/config.py:42" --kind fact\n' +
        '  cairn recall "parse config signature"\n' +
        '  cairn forget <id>      cairn restore <id>\n' +
        '  cairn snapshot before-refactor   cairn diff before-refactor now\n' +
        '\nEvery command takes --json. Exit codes: 0 ok, 1 user error, 2 internal error.',
    );

  const run: Run = (command, handler) => {
    command.action(async (...args: unknown[]) => {
      const cmd = args[args.length - 1] as Command;
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      const ctx = new CommandContext(io, globals);
      contexts.push(ctx);
      // commander passes positional args, then the options object, then the command.
      const positional = args.slice(0, -2);
      const options = args[args.length - 2];
      await (handler as (ctx: CommandContext, ...rest: unknown[]) => Promise<void>)(ctx, ...positional, options);
    });
  };

  registerMemoryCommands(program, run);
  registerSnapshotCommands(program, run);
  registerTransferCommands(program, run);
  registerIngestCommands(program, run);
  registerDistillCommands(program, run);
  registerHookCommand(program, run);
  registerInstallCommand(program, run);
  registerDoctorCommand(program, run);
  registerContextCommands(program, run);
  registerStatusCommand(program, run);
  registerMcpCommand(program, run);
  registerBenchCommand(program, run);
  registerUiCommand(program, run);
  registerServeCommand(program, run);
  registerTokenCommands(program, run);
  registerMigrateCommand(program, run);
  registerCopyCommand(program, run);
  registerReindexCommand(program, run);
  registerEmbedCommands(program, run);
  // `cairn` alone: a short status and the next commands (last: it needs every command registered).
  registerHomeAction(program, run);

  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    exitCode = reportError(error, io, argv.includes('--json'));
  } finally {
    for (const ctx of contexts) await ctx.close().catch(() => {});
  }
  for (const ctx of contexts) exitCode = Math.max(exitCode, ctx.exitCode);
  return exitCode;
}

function reportError(error: unknown, io: CliIo, json: boolean): number {
  if (error instanceof CommanderError) {
    // help and version "errors" are normal exits; commander already printed its message.
    if (error.exitCode === 0 || error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return EXIT.ok;
    return EXIT.user;
  }
  if (isCairnError(error) && error.isUserError) {
    if (json) io.stdout.write(`${JSON.stringify({ error: { code: error.code, message: error.message, field: error.field ?? null } })}\n`);
    io.stderr.write(`cairn: ${error.message}\n`);
    return EXIT.user;
  }
  const message = error instanceof Error ? error.message : String(error);
  if (json) io.stdout.write(`${JSON.stringify({ error: { code: 'INTERNAL', message } })}\n`);
  io.stderr.write(`cairn: internal error: ${message}\n`);
  if (io.env.CAIRN_DEBUG && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`);
  else io.stderr.write('(set CAIRN_DEBUG=1 for a stack trace; please report it)\n');
  return EXIT.internal;
}
