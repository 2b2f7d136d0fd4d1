import type { Command } from 'commander';
import { createEmbedderFromSpec, openStoreSpec, prepareStoreLocation } from '../../config.js';
import { invalid } from '../../errors.js';
import type { Embedder, Store } from '../../types.js';
import { ProgressBar } from '../progress.js';
import { positiveInt, type Run } from './memory.js';

interface ReindexOptions {
  embedder?: string;
  batch: number;
}

export function registerReindexCommand(program: Command, run: Run): void {
  run(
    program
      .command('reindex')
      .summary('build the vector index with the configured (or given) embedder; resumable')
      .description(
        'Switch the vector index to an embedder: when the index holds another model (or dimension) its vectors are dropped,\n' +
          'then every memory without a vector is embedded in batches, outside database transactions. Recall keeps working on\n' +
          'BM25 meanwhile. A killed run continues where it stopped: run it again. Use it after changing the "embedder" setting.',
      )
      .option('--embedder <spec>', 'embedder spec (default: $CAIRN_EMBEDDER, else config "embedder"), e.g. hash:256, static:potion-base-8M')
      .option('--batch <n>', 'memories per embedding batch', positiveInt('batch'), 256)
      .addHelpText('after', '\nExamples:\n  cairn reindex\n  cairn reindex --embedder static:potion-base-8M --batch 512 --json'),
    async (ctx, opts: ReindexOptions) => {
      const spec = opts.embedder ?? ctx.config.embedder;
      if (!spec) throw invalid('no embedder configured: pass --embedder <spec> or set "embedder" in the config (or $CAIRN_EMBEDDER)', 'embedder');
      const { reindex } = await import('../../embed/reindex.js');
      let store: Store | null = null;
      let embedder: Embedder | null = null;
      try {
        embedder = await createEmbedderFromSpec(spec, ctx.config);
        prepareStoreLocation(ctx.config, (line) => ctx.note(line));
        store = await openStoreSpec(ctx.config.store);
        const bar = new ProgressBar(ctx.io.stderr, `reindex ${embedder.model}`, 1);
        const summary = await reindex(store, embedder, {
          batchSize: opts.batch,
          onProgress: (done, total) => {
            bar.setTotal(total);
            bar.update(done);
          },
        });
        bar.done();
        const report = { ...summary, spec, ms: Math.round(summary.ms) };
        if (ctx.json) return ctx.printJson(report);
        if (summary.cleared && summary.previous) ctx.out(`dropped the vectors of ${summary.previous.model} (${summary.previous.dimension} dims)`);
        ctx.out(
          `${summary.model} (${summary.dimension} dims): embedded ${summary.embedded} memories in ${summary.batches} batches, ` +
            `${(summary.ms / 1000).toFixed(1)} s · ${summary.vectors} vectors · ${summary.remaining} without a vector`,
        );
        if (ctx.config.embedder && ctx.config.embedder !== spec) {
          ctx.note(`note: the configured embedder is "${ctx.config.embedder}"; set "embedder": "${spec}" so recall uses this index`);
        }
      } finally {
        await embedder?.close?.();
        await store?.close();
      }
    },
  );
}
