#!/usr/bin/env node
// Builds dist/hooks-bundle/hook.cjs from dist/hooks/run.js (run by `npm run build`, after tsc): the
// one file bin/cairn-hook.cjs loads for a hook (docs/MCP.md, "Hook latency"). What a hook process
// pays before it does any work is mostly loading code, so this bundle is built to load less:
// - One CommonJS file, so the entry can load it through node:vm with V8's code cache (Node 20 has
//   no code cache for ES modules). The modules only some hooks need stay inside it, wrapped to run
//   on first use; with the cache, V8 never parses them unless a hook calls them.
// - Node's built-ins through `require`, not `import`: an ESM import of node:fs builds a namespace
//   of every export, which runs fs's lazy getters and loads the whole streams stack (19 internal
//   modules). node:worker_threads loads it too, and the worker internals: it is loaded when first
//   used. A dynamic `import()` of a built-in becomes a `require` on first use.
// - better-sqlite3's JavaScript (13 small CommonJS files) inside the bundle, its compiled addon
//   loaded from where its install put it (src/store/sqlite/database.ts).
// - zod as CommonJS (evaluated on first use, not at the bundle's start: see zodAsCommonJs).
// - Minified and ASCII only: V8 parses every byte of a file it compiles without a cache.
// - Its first line is `//cairn-bundle sha256=<hash of the rest>`: the code cache's key.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist', 'hooks-bundle');

/** Packages left to Node at run time: native addons and the embedders' large libraries, loaded only when a hook embeds. */
const EXTERNAL = ['usearch', '@huggingface/transformers', '@huggingface/tokenizers', 'onnxruntime-node', 'gpt-tokenizer', '@energetic-ai/*', 'bindings'];

const builtins = new Set(builtinModules.filter((m) => !m.startsWith('_')));
const requireBuiltin = createRequire(import.meta.url);
/**
 * Built-ins loaded only when first used: node:worker_threads loads the streams stack and the worker
 * internals (25 modules), and only the full-text search worker of a long-running process uses it.
 * node:crypto (OpenSSL's bindings and 17 internal modules, ~4 ms) only for a hash or a random id;
 * node:v8 loads the streams stack too (~3 ms), and only an ingest turns the optimizer back on;
 * node:os (~0.7 ms) only for the home folder when CAIRN_HOME is not set, or a priority.
 * A module of the bundle that imports one of them at its top no longer costs every hook its load.
 */
const LAZY = new Set(['worker_threads', 'crypto', 'v8', 'os']);

/** `import … from 'node:X'` reads `require('node:X')` (see above). */
const builtinsThroughRequire = {
  name: 'builtins-through-require',
  setup(b) {
    // Digits too: node:v8 (without them it was left to esbuild, and loaded at the bundle's start).
    b.onResolve({ filter: /^(node:)?[a-z0-9_/]+$/ }, (args) => {
      const name = args.path.replace(/^node:/, '');
      if (!builtins.has(name) || args.namespace === 'builtin') return undefined;
      // A require() of a built-in inside bundled CommonJS (better-sqlite3's) stays a plain require.
      if (args.kind === 'require-call') return { path: `node:${name}`, external: true };
      return { path: name, namespace: 'builtin' };
    });
    b.onLoad({ filter: /.*/, namespace: 'builtin' }, (args) => {
      const id = JSON.stringify(`node:${args.path}`);
      const module = requireBuiltin(`node:${args.path}`);
      const names = Object.keys(module).filter((n) => /^[A-Za-z_$][\w$]*$/.test(n) && n !== 'default');
      if (LAZY.has(args.path)) {
        // Loaded when one of its exports is first used (esbuild reads a CommonJS import's names at use).
        return { contents: `let m;\nconst load = () => (m ??= require(${id}));\nmodule.exports = {${names.map((n) => ` get ${n}() { return load().${n}; }`).join(',')} };`, loader: 'js' };
      }
      // One ES module per built-in, shared by every chunk: plain bindings, read once. Accessors
      // (fs's lazy ReadStream, promises, …) are left out — reading them is what loads the streams;
      // an import of one fails the build, it does not go wrong at run time.
      const plain = names.filter((n) => Object.getOwnPropertyDescriptor(module, n)?.get === undefined);
      return { contents: `const m = require(${id});\nexport default m;\nexport const {${plain.join(', ')}} = m;\n`, loader: 'js' };
    });
  },
};

/**
 * A dynamic `import()` of an external package (usearch, a CommonJS package) becomes a `require` on
 * first use: code run through node:vm has no ES module loader of its own before Node 20.12.
 */
const externalImportsThroughRequire = {
  name: 'external-imports-through-require',
  setup(b) {
    b.onResolve({ filter: /^usearch$/ }, (args) => (args.kind === 'dynamic-import' ? { path: args.path, namespace: 'external-require' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'external-require' }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: 'js' }));
  },
};

/**
 * zod through its CommonJS build. Bundled as ES modules, esbuild defines every zod namespace's
 * exports (~1,000 getters) at the bundle's start, whether or not a hook ever validates anything;
 * as CommonJS, zod is evaluated when a module that imports it first runs (an ingest's resume
 * state, an export file), and a hook that does not costs nothing.
 */
const zodAsCommonJs = {
  name: 'zod-as-commonjs',
  setup(b) {
    b.onResolve({ filter: /^zod(\/.*)?$/ }, (args) => (args.kind === 'require-call' ? undefined : { path: requireBuiltin.resolve(args.path) }));
  },
};

/** src/store/sqlite/driver.ts loads better-sqlite3 through createRequire (unbundled builds); in the bundle it is the bundled copy. */
const bundledDriver = {
  name: 'bundled-better-sqlite3',
  setup(b) {
    b.onResolve({ filter: /\/driver\.js$/ }, (args) => (args.importer.endsWith(join('store', 'sqlite', 'database.js')) ? { path: 'driver', namespace: 'bundled-driver', pluginData: args.resolveDir } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'bundled-driver' }, (args) => ({
      contents: "import BetterSqlite3 from 'better-sqlite3';\nexport { BetterSqlite3 };\n",
      loader: 'js',
      resolveDir: args.pluginData,
    }));
  },
};

rmSync(outdir, { recursive: true, force: true });
const result = await build({
  entryPoints: [join(root, 'dist', 'hooks', 'run.js')],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  outfile: join(outdir, 'hook.cjs'),
  external: EXTERNAL,
  minify: process.env.CAIRN_BUNDLE_MINIFY !== '0',
  keepNames: false,
  logLevel: 'warning',
  write: false,
  metafile: process.env.CAIRN_BUNDLE_REPORT === '1',
  plugins: [builtinsThroughRequire, externalImportsThroughRequire, zodAsCommonJs, ...(process.env.CAIRN_BUNDLE_SQLITE === '0' ? [] : [bundledDriver])],
  // `import.meta.url` of every bundled module is the bundle's own URL: paths relative to it
  // (vector-files.ts's builder script, the workers) resolve from dist/hooks-bundle/ as they did
  // from the ES module chunks this bundle replaced.
  define: { 'import.meta.url': '__cairnModuleUrl' },
  banner: { js: '"use strict";var __cairnModuleUrl = require("node:url").pathToFileURL(__filename).href;' },
});
// The first line carries the hash of the rest: bin/cairn-hook.cjs keys its code cache by it
// without hashing a megabyte on every hook.
// ASCII only: esbuild leaves non-ASCII characters in regular expression literals, and one of them
// makes V8 hold the whole source as two-byte characters (decoded and scanned at twice the size).
// A \uXXXX escape means the same character in a string, a template or a regular expression.
const body = Buffer.from(result.outputFiles[0].text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
mkdirSync(outdir, { recursive: true });
writeFileSync(join(outdir, 'hook.cjs'), Buffer.concat([Buffer.from(`//cairn-bundle sha256=${createHash('sha256').update(body).digest('hex')}\n`), body]));

/** CAIRN_BUNDLE_REPORT=1: the bundle's size and its largest modules, to see what could be left out. */
if (result.metafile) {
  const [output] = Object.values(result.metafile.outputs);
  console.log(`hook.cjs: ${output.bytes} bytes`);
  const modules = Object.entries(output.inputs).map(([input, { bytesInOutput }]) => ({ input, bytesInOutput }));
  for (const m of modules.sort((a, b) => b.bytesInOutput - a.bytesInOutput).slice(0, 40)) console.log(String(m.bytesInOutput).padStart(8), m.input);
}
