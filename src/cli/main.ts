import { packageVersion } from '../paths.js';
import { Command, CommanderError } from 'commander';
import { isCairnError } from '../errors.js';
import { CommandContext, type CliIo, type GlobalOptions } from './context.js';
import type { Run } from './commands/memory.js';
import { paint } from './colour.js';

type Register = (program: Command, run: Run) => void;

/**
 * Command modules, loaded on demand: a run loads only the module of the command it names (a
 * command module pulls in the store, zod, the embedders …), `--help` and unknown names load all.
 * The names are a hint; a command not found after loading its module falls back to loading all.
 */
const COMMAND_MODULES: Array<[names: readonly string[], load: () => Promise<Register>]> = [
  [['remember', 'recall', 'forget', 'restore', 'revise', 'show', 'list', 'pin', 'unpin'], async () => (await import('./commands/memory.js')).registerMemoryCommands],
  [['get'], async () => (await import('./commands/get.js')).registerGetCommand],
  [['snapshot', 'snapshots', 'diff'], async () => (await import('./commands/snapshots.js')).registerSnapshotCommands],
  [['import', 'export'], async () => (await import('./commands/transfer.js')).registerTransferCommands],
  [['ingest', 'sessions', 'history'], async () => (await import('./commands/ingest.js')).registerIngestCommands],
  [['distill', 'maintain', 'review'], async () => (await import('./commands/distill.js')).registerDistillCommands],
  [['hook'], async () => (await import('./commands/hook.js')).registerHookCommand],
  [['install'], async () => (await import('./commands/install.js')).registerInstallCommand],
  [['doctor'], async () => (await import('./commands/doctor.js')).registerDoctorCommand],
  [['context', 'core'], async () => (await import('./commands/context.js')).registerContextCommands],
  [['status'], async () => (await import('./commands/status.js')).registerStatusCommand],
  [['mcp'], async () => (await import('./commands/mcp.js')).registerMcpCommand],
  [
    ['bench'],
    async () => {
      const { loadBenchWorkspace, registerBenchCommand } = await import('./commands/bench.js');
      const bench = await loadBenchWorkspace();
      return (program, run) => registerBenchCommand(program, run, bench);
    },
  ],
  [['ui'], async () => (await import('./commands/ui.js')).registerUiCommand],
  [['serve'], async () => (await import('./commands/serve.js')).registerServeCommand],
  [['token'], async () => (await import('./commands/token.js')).registerTokenCommands],
  [['migrate'], async () => (await import('./commands/migrate.js')).registerMigrateCommand],
  [['copy'], async () => (await import('./commands/copy.js')).registerCopyCommand],
  [['reindex'], async () => (await import('./commands/reindex.js')).registerReindexCommand],
  [['embed'], async () => (await import('./commands/embed.js')).registerEmbedCommands],
];

/** Global options that take a value (their value is not the command name). */
const GLOBAL_WITH_VALUE = new Set(['--home', '--store']);

/** The command `argv` names, or null (no command, `--help`, `--version`). */
export function commandName(argv: readonly string[]): string | null {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (GLOBAL_WITH_VALUE.has(arg)) i++;
    else if (!arg.startsWith('-')) return arg;
    else if (arg === '-h' || arg === '--help' || arg === '-V' || arg === '--version') return null;
  }
  return null;
}

async function registerCommands(program: Command, run: Run, argv: readonly string[]): Promise<void> {
  const name = commandName(argv);
  const wanted = name === null ? -1 : COMMAND_MODULES.findIndex(([names]) => names.includes(name));
  if (wanted >= 0) {
    (await (COMMAND_MODULES[wanted] as (typeof COMMAND_MODULES)[number])[1]())(program, run);
    if (program.commands.some((c) => c.name() === name || c.aliases().includes(name as string))) return;
  }
  for (const [i, [, load]] of COMMAND_MODULES.entries()) if (i !== wanted) (await load())(program, run);
  // `cairn` alone: a short status and the next commands (last: it needs every command registered).
  (await import('./commands/home.js')).registerHomeAction(program, run);
}

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
    .option('--debug', 'print stack traces of internal errors (also $CAIRN_DEBUG=1)')
    .option('--store <spec>', 'a SQLite file or postgres://user:pass@host/db (default: $CAIRN_STORE, config "store", else <home>/cairn.db)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      // One error prefix everywhere: `cairn: …` (commander says `error: …`).
      outputError: (s, write) => write(paint(io.stderr, io.env).red(s.replace(/^error: /, 'cairn: '))),
      // Wrap help to the terminal; piped or redirected, leave lines whole (no breaks mid-sentence).
      getOutHelpWidth: () => (io.stdout.isTTY ? (io.stdout.columns ?? 80) : 10_000),
      getErrHelpWidth: () => (io.stderr.isTTY ? (io.stderr.columns ?? 80) : 10_000),
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

  try {
    await registerCommands(program, run, argv);
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    exitCode = reportError(error, io, { json: argv.includes('--json'), debug: argv.includes('--debug') || Boolean(io.env.CAIRN_DEBUG) });
  } finally {
    for (const ctx of contexts) await ctx.close().catch(() => {});
  }
  for (const ctx of contexts) exitCode = Math.max(exitCode, ctx.exitCode);
  return exitCode;
}

/** SQLite's words for a damaged file (an error thrown after the store opened fine). */
const CORRUPT_CODES = new Set(['SQLITE_CORRUPT', 'SQLITE_NOTADB']);

function reportError(error: unknown, io: CliIo, options: { json: boolean; debug: boolean }): number {
  const red = paint(io.stderr, io.env).red;
  if (error instanceof CommanderError) {
    // help and version "errors" are normal exits; commander already printed its message.
    if (error.exitCode === 0 || error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return EXIT.ok;
    return EXIT.user;
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && CORRUPT_CODES.has(code)) {
    const message = `the database is damaged (${(error as Error).message}); run \`cairn doctor\``;
    if (options.json) io.stdout.write(`${JSON.stringify({ error: { code: 'STORE_CORRUPT', message, field: null } })}\n`);
    io.stderr.write(red(`cairn: ${message}\n`));
    return EXIT.user;
  }
  if (isCairnError(error) && error.isUserError) {
    if (options.json) io.stdout.write(`${JSON.stringify({ error: { code: error.code, message: error.message, field: error.field ?? null } })}\n`);
    io.stderr.write(red(`cairn: ${error.message}\n`));
    if (options.debug && error.stack) io.stderr.write(`${error.stack}\n`);
    return EXIT.user;
  }
  const message = error instanceof Error ? error.message : String(error);
  if (options.json) io.stdout.write(`${JSON.stringify({ error: { code: 'INTERNAL', message } })}\n`);
  io.stderr.write(red(`cairn: internal error: ${message}\n`));
  if (options.debug && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`);
  else io.stderr.write('(run with --debug for a stack trace; please report it)\n');
  return EXIT.internal;
}
