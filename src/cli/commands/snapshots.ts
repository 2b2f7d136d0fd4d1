import type { Command } from 'commander';
import { diffLines, snapshotLine } from '../format.js';
import type { Run } from './memory.js';

export function registerSnapshotCommands(program: Command, run: Run): void {
  run(
    program
      .command('snapshot')
      .summary('seal the current memory set under a label')
      .description('Seal the current memories (this project and the user scope) under a label. Recall can run --as-of it; two snapshots can be diffed.')
      .argument('<label>', 'a name, e.g. before-refactor'),
    async (ctx, label: string) => {
      const snap = await (await ctx.cairn()).snapshot(label);
      if (ctx.json) return ctx.printJson(snap);
      ctx.out(`snapshot ${snap.label}: ${snap.memoryCount} memories sealed (${snap.id})`);
    },
  );

  run(program.command('snapshots').summary('list snapshots, oldest first'), async (ctx) => {
    const snaps = await (await ctx.cairn()).snapshots();
    if (ctx.json) return ctx.printJson(snaps);
    if (snaps.length === 0) ctx.out('no snapshots yet (cairn snapshot LABEL)');
    for (const s of snaps) ctx.out(snapshotLine(s));
  });

  run(
    program
      .command('diff')
      .summary('what changed between two snapshots')
      .argument('<from>', 'snapshot label or id')
      .argument('[to]', 'snapshot label or id, or "now"', 'now'),
    async (ctx, from: string, to: string) => {
      const result = await (await ctx.cairn()).diff(from, to);
      if (ctx.json) return ctx.printJson(result);
      for (const line of diffLines(result)) ctx.out(line);
    },
  );
}
