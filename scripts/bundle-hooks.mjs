#!/usr/bin/env node
// Builds dist/hooks-bundle/ from dist/hooks/run.js (run by `npm run build`, after tsc): the one
// module bin/cairn.js loads for `cairn hook EVENT`, with the modules only some hooks need split
// into chunks loaded on first use. What a hook process pays before it does any work is mostly
// loading code, so this bundle is built to load less (docs/BENCHMARKS.md, hooks notes):
// - Node's built-in modules through `require`, not `import`: an ESM import of node:fs builds a
//   namespace of every export, which runs fs's lazy getters and loads the whole streams stack
//   (19 internal modules); `require('node:fs')` loads nothing new. node:worker_threads loads it
//   too, and the worker internals: it is loaded when first used.
// - better-sqlite3's JavaScript (13 small CommonJS files) inside the bundle, its compiled addon
//   loaded from where its install put it (src/store/sqlite/database.ts), instead of 13 resolutions,
//   reads and compilations through Node's CommonJS loader.
// - Minified: V8 parses every byte of a module it loads, the functions it never calls included.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
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
 */
const LAZY = new Set(['worker_threads']);

/** `import … from 'node:X'` reads `require('node:X')` (see above). */
const builtinsThroughRequire = {
  name: 'builtins-through-require',
  setup(b) {
    b.onResolve({ filter: /^(node:)?[a-z_/]+$/ }, (args) => {
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
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outdir,
  entryNames: '[name]',
  external: EXTERNAL,
  minify: process.env.CAIRN_BUNDLE_MINIFY !== '0',
  keepNames: false,
  logLevel: 'warning',
  metafile: process.env.CAIRN_BUNDLE_REPORT === '1',
  plugins: [builtinsThroughRequire, ...(process.env.CAIRN_BUNDLE_SQLITE === '0' ? [] : [bundledDriver])],
  // Every chunk gets a `require` for the built-ins and the addons (ESM has none of its own).
  // All chunks are in one folder: the first to run makes it, the others reuse it (making one is not free).
  banner: { js: "import { createRequire as __cairnRequire } from 'node:module'; const require = (globalThis.__cairnHookRequire ??= __cairnRequire(import.meta.url));" },
});

/**
 * CAIRN_BUNDLE_REPORT=1: what every hook loads before it runs — the entry and the chunks it imports
 * statically — and the largest modules in it, to see what could load on first use instead.
 */
if (result.metafile) {
  const outputs = result.metafile.outputs;
  const entry = Object.keys(outputs).find((file) => file.endsWith('/run.js'));
  const seen = new Set();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop();
    if (seen.has(file) || !outputs[file]) continue;
    seen.add(file);
    for (const i of outputs[file].imports) if (i.kind === 'import-statement' && !i.external) queue.push(i.path);
  }
  const modules = [...seen].flatMap((file) => Object.entries(outputs[file].inputs).map(([input, { bytesInOutput }]) => ({ input, bytesInOutput })));
  const total = [...seen].reduce((sum, file) => sum + outputs[file].bytes, 0);
  console.log(`loaded by every hook: ${total} bytes in ${seen.size} files`);
  for (const m of modules.sort((a, b) => b.bytesInOutput - a.bytesInOutput).slice(0, 40)) console.log(String(m.bytesInOutput).padStart(8), m.input);
}
