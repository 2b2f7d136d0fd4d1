import { createReadStream, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { startBackgroundFill } from '../fill.js';
import { CairnError, invalid } from '../../errors.js';
import { boundedLines } from '../../memory/bounded-lines.js';
import { ProgressBar } from '../progress.js';
import type { Run } from './memory.js';

export function registerTransferCommands(program: Command, run: Run): void {
  run(
    program
      .command('import')
      .summary('import memories from JSONL')
      .description(
        'Import one memory per line: {"text": "...", "kind"?, "tags"?, "scope"?, "project"?, "importance"?, "createdAt"?, "meta"?, "provenance"?, "context"?}.\n' +
          'A conversation imported one memory per turn gives each turn {"provenance": {"sessionId": "...", "line": N}} (N: its place in the session): each turn is then stored with the turn before it as its context (searched and embedded with it, not shown; a line\'s own "context" wins, null: none), and recall lets adjacent turns lend each other relevance.\n' +
          'Bad lines, and lines over 1 MiB, are reported with their line numbers and skipped. Re-running an import adds no duplicates. Use - for stdin.',
      )
      .argument('<file>', 'a .jsonl file, or - for stdin'),
    async (ctx, file: string) => {
      let input: NodeJS.ReadableStream;
      // A file's bar counts bytes read (exact total); stdin's counts lines against a growing guess.
      let fileStream: { bytesRead: number } | null = null;
      let size = 0;
      if (file === '-') input = ctx.io.stdin;
      else {
        const path = resolve(ctx.io.cwd, file);
        try {
          const stat = statSync(path);
          if (!stat.isFile()) throw invalid(`${file} is not a file`, 'file');
          size = stat.size;
        } catch (error) {
          if (error instanceof CairnError) throw error;
          throw invalid(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, 'file');
        }
        const stream = createReadStream(path);
        fileStream = stream;
        input = stream;
      }
      const bar = fileStream ? new ProgressBar(ctx.io.stderr, 'importing', size, 'bytes') : new ProgressBar(ctx.io.stderr, 'importing', 1000);
      let guess = 1000;
      const cairn = await ctx.cairn();
      // Called as each chunk of lines is committed.
      const result = await cairn.importJsonl(boundedLines(input as AsyncIterable<Buffer | string>), (line) => {
        if (fileStream) return bar.update(Math.min(size, fileStream.bytesRead), `line ${line}`);
        if (line > guess) bar.setTotal((guess = line * 2));
        bar.update(line);
      });
      bar.done();
      if (result.imported > 0) await startBackgroundFill(ctx.config, ctx.io.env, cairn.deps.store);
      if (ctx.json) return ctx.printJson(result);
      ctx.out(`imported ${result.imported} of ${result.lines} lines (${result.duplicates} already stored, ${result.failed.length} bad)`);
      for (const problem of result.failed.slice(0, 50)) ctx.note(`line ${problem.line}: ${problem.error}`);
      if (result.failed.length > 50) ctx.note(`… and ${result.failed.length - 50} more bad lines`);
    },
  );

  run(
    program
      .command('export')
      .summary('export memories as JSONL or Markdown')
      .description('Write memories to stdout: JSONL (re-importable with `cairn import`) or Markdown grouped by kind.')
      .option('--format <format>', 'jsonl | markdown', 'jsonl')
      .option('--all-projects', 'every project, not just the current one'),
    async (ctx, opts: { format: string; allProjects?: boolean }) => {
      const cairn = await ctx.cairn();
      const scope = opts.allProjects ? { allProjects: true } : {};
      if (opts.format === 'markdown' || opts.format === 'md') {
        ctx.io.stdout.write(await cairn.exportMarkdown(scope));
        return;
      }
      if (opts.format !== 'jsonl') throw invalid(`--format must be jsonl or markdown (got "${opts.format}")`, 'format');
      for await (const line of cairn.exportJsonl(scope)) ctx.io.stdout.write(`${line}\n`);
    },
  );
}
