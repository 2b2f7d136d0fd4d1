import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import { invalid } from '../../errors.js';
import type { Run } from './memory.js';

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw invalid(`--port must be an integer from 0 to 65535 (got "${value}")`, 'port');
  return n;
}

/** Open `url` in the desktop's browser; failing to is not an error (the URL is printed). */
function openBrowser(url: string): void {
  const [command, args] =
    process.platform === 'darwin' ? ['open', [url]] : process.platform === 'win32' ? ['cmd', ['/c', 'start', '', url]] : ['xdg-open', [url]];
  try {
    const child = spawn(command as string, args as string[], { stdio: 'ignore', detached: true });
    child.on('error', () => {});
    child.unref();
  } catch {
    // no desktop browser: the printed URL is enough
  }
}

export function registerUiCommand(program: Command, run: Run): void {
  run(
    program
      .command('ui')
      .summary('the memory browser on loopback')
      .description(
        'Serve the memory browser on 127.0.0.1 until interrupted. The printed URL carries a random token;\n' +
          'without it the server answers 401. Search with the score breakdown, edit / forget / undo, snapshots, sessions, review.',
      )
      .option('-p, --port <n>', 'port to listen on (0: any free port)', port, 0)
      .option('--open', 'open the URL in the default browser'),
    async (ctx, opts: { port: number; open?: boolean }) => {
      // Loaded on use: the HTTP stack stays out of every other command's (and hook's) start-up.
      const { startUi } = await import('../../web/server.js');
      const cairn = await ctx.cairn('ui');
      const ui = await startUi(cairn, { port: opts.port, home: ctx.config.home });
      if (ctx.json) ctx.printJson({ url: ui.url, port: ui.port });
      else {
        ctx.out(`cairn memory browser: ${ui.url}`);
        ctx.note('(listening on 127.0.0.1 only; the token in the URL is the key — Ctrl-C to stop)');
      }
      if (opts.open) openBrowser(ui.url);
      await new Promise<void>((resolve) => {
        const stop = (): void => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          resolve();
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await ui.close();
    },
  );
}
