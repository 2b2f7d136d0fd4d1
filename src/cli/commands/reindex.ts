import { availableParallelism, setPriority } from 'node:os';
import type { Command } from 'commander';
import { createEmbedderFromSpec, openStoreSpec, prepareStoreLocation } from '../../config.js';
import { invalid } from '../../errors.js';
import type { FillSummary } from '../../embed/fill.js';
import type { Embedder, Store } from '../../types.js';
import type { CommandContext } from '../context.js';
import { ProgressBar } from '../progress.js';
import { positiveInt, type Run } from './memory.js';

/**
 * Embedding workers of a foreground reindex or fill: one ONNX session per core, up to two;
 * `$CAIRN_REINDEX_WORKERS` overrides (1: one session in this thread, as before the pool).
 */
function bulkWorkers(env: NodeJS.ProcessEnv): number {
  const asked = Number(env.CAIRN_REINDEX_WORKERS);
  return Number.isInteger(asked) && asked >= 1 ? asked : Math.min(2, availableParallelism());
}

interface ReindexOptions {
  embedder?: string;
  batch?: number;
  fill?: boolean;
  maxSeconds?: number;
}

export function registerReindexCommand(program: Command, run: Run): void {
  run(
    program
      .command('reindex')
      .summary('build the vector index with the configured (or given) embedder; resumable')
      .description(
        'Build the vector index with an embedder: every memory without a vector is embedded in batches, outside database\n' +
          'transactions. When the index holds another model (or dimension), the new vectors are built beside the old ones and\n' +
          'replace them in one step once every memory has one; recall keeps searching the old index meanwhile (or BM25 when\n' +
          'the old model cannot be loaded). A killed run continues where it stopped: run it again. The background fill does\n' +
          'the same switch a minute at a time after ingests and `cairn remember`; this finishes it now.',
      )
      .option('--embedder <spec>', 'embedder spec (default: $CAIRN_EMBEDDER, else config "embedder"), e.g. hash:256, static:potion-base-8M')
      .option('--batch <n>', 'memories per embedding batch (default 256; 32 with --fill)', positiveInt('batch'))
      .option('--fill', 'the background fill: embed what is still missing (or continue a model switch), and do nothing while another process fills')
      .option('--max-seconds <n>', 'with --fill: stop starting batches after this many seconds (the next run continues)', positiveInt('max-seconds'))
      .addHelpText(
        'after',
        '\nOne process fills the vector index at a time (a lease in the store; a killed filler is taken over at once).\n' +
          'Memories written by hooks and CLI commands get their vectors after the next ingest, or from an idle MCP server.\n' +
          'ONNX models embed in min(2, cores) worker threads, one session each ($CAIRN_REINDEX_WORKERS=1: one session).\n' +
          '\nExamples:\n  cairn reindex\n  cairn reindex --fill --max-seconds 60\n  cairn reindex --embedder static:potion-base-8M --batch 512 --json',
      ),
    async (ctx, opts: ReindexOptions) => {
      const spec = opts.embedder ?? ctx.config.embedder;
      if (!spec) throw invalid(`no embedder: pass --embedder <spec> or set "embedder" in the config (or $CAIRN_EMBEDDER)${ctx.config.embedderNote ? ` (${ctx.config.embedderNote})` : ''}`, 'embedder');
      if (opts.maxSeconds !== undefined && !opts.fill) throw invalid('--max-seconds goes with --fill', 'max-seconds');
      if (opts.fill) return fillCommand(ctx, spec, opts);
      const { reindex } = await import('../../embed/reindex.js');
      let store: Store | null = null;
      let embedder: Embedder | null = null;
      try {
        embedder = await createEmbedderFromSpec(spec, ctx.config, { workers: bulkWorkers(ctx.io.env) });
        prepareStoreLocation(ctx.config, (line) => ctx.note(line));
        store = await openStoreSpec(ctx.config.store);
        const bar = new ProgressBar(ctx.io.stderr, `reindex ${embedder.model}`, 1);
        const summary = await reindex(store, embedder, {
          batchSize: opts.batch ?? 256,
          by: 'cli reindex',
          onProgress: (done, total) => {
            bar.setTotal(total);
            bar.update(done);
          },
        });
        bar.done();
        const report = { ...summary, spec, ms: Math.round(summary.ms) };
        if (ctx.json) return ctx.printJson(report);
        if (summary.staged && summary.previous) {
          ctx.out(
            summary.cleared
              ? `switched from ${summary.previous.model} (${summary.previous.dimension} dims): the new vectors replaced the old ones in one step`
              : `switching from ${summary.previous.model}: stopped with ${summary.remaining} memories still without the new vector; run it again to continue (recall searches the old index meanwhile)`,
          );
        } else if (summary.cleared && summary.previous) ctx.out(`dropped the vectors of ${summary.previous.model} (${summary.previous.dimension} dims)`);
        ctx.out(
          `${summary.model} (${summary.dimension} dims): embedded ${summary.embedded} memories in ${summary.batches} batches, ` +
            `${(summary.ms / 1000).toFixed(1)} s · ${summary.vectors} vectors · ${summary.remaining} without a vector` +
            (summary.signed > 0 ? ` · ${summary.signed} token signatures written for recall's rerank` : ''),
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

/** `cairn reindex --fill`: the bounded, lease-guarded fill the background runs (src/embed/fill.ts). */
async function fillCommand(ctx: CommandContext, spec: string, opts: ReindexOptions): Promise<void> {
  const { fillVectors } = await import('../../embed/fill.js');
  // Started detached by a hook or `cairn remember`: low priority and one ONNX thread, so the
  // agent keeps a core.
  const background = ctx.io.env.CAIRN_HOOK_CHILD === '1';
  if (background) {
    try {
      setPriority(10);
    } catch {
      // Not permitted here: run at normal priority.
    }
  }
  let store: Store | null = null;
  let embedder: Embedder | null = null;
  try {
    embedder = await createEmbedderFromSpec(spec, ctx.config, background ? { threads: 1 } : { workers: bulkWorkers(ctx.io.env) });
    prepareStoreLocation(ctx.config, (line) => ctx.note(line));
    store = await openStoreSpec(ctx.config.store);
    const bar = new ProgressBar(ctx.io.stderr, `fill ${embedder.model}`, 1);
    const summary = await fillVectors(store, embedder, {
      batchSize: opts.batch ?? 32,
      ...(opts.maxSeconds !== undefined ? { maxMs: opts.maxSeconds * 1000 } : {}),
      by: background ? 'background fill' : 'cli fill',
      onProgress: (done, total) => {
        bar.setTotal(total);
        bar.update(done);
      },
    });
    bar.done();
    if (ctx.json) return ctx.printJson({ ...summary, spec, ms: Math.round(summary.ms) });
    ctx.out(fillLine(summary));
  } finally {
    await embedder?.close?.();
    await store?.close();
  }
}

/** One line for a fill's outcome. */
export function fillLine(summary: FillSummary): string {
  const head = `${summary.model}: ${summary.embedded} vectors written in ${(summary.ms / 1000).toFixed(1)} s · ${summary.remaining} still waiting`;
  const from = summary.switching ? ` (switching from ${summary.switching.from.model}, built beside its vectors)` : '';
  switch (summary.outcome) {
    case 'done':
      return summary.switching?.committed ? `${head} · switched from ${summary.switching.from.model}: the new vectors replaced the old ones in one step` : `${head} · done`;
    case 'stopped':
      return `${head}${from} · stopped (time limit or interrupted): run it again to continue`;
    case 'busy':
      return `${head} · another process is filling (${summary.holder?.by}, pid ${summary.holder?.pid} on ${summary.holder?.host}): nothing to do here`;
    case 'mismatch':
      return `${head} · the index holds ${summary.index?.model ?? 'another model'} and this store cannot build the new vectors beside it: \`cairn reindex\` switches it (the fill never mixes models)`;
    case 'unavailable':
      return `${head} · the model is unavailable: ${summary.reason}`;
  }
}
