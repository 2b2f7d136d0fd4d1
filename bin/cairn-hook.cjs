#!/usr/bin/env node
// The entry the installed hook commands run: `node bin/cairn-hook.cjs EVENT` is `cairn hook EVENT`,
// with less start-up per hook (docs/BENCHMARKS.md, hooks notes):
// - CommonJS, so Node never starts its ES module loader for a hook;
// - it loads dist/hooks-bundle/hook.cjs (one CommonJS file, built by scripts/bundle-hooks.mjs)
//   through node:vm with V8's code cache: after a hook has run, the bytecode of every function it
//   compiled is written to <home>/cache/hook-code/, and the next hook of the same event takes it
//   instead of parsing and compiling that code again (the technique of v8-compile-cache).
// The cache can only save time, never break a hook: it is keyed by the bundle's content hash, size
// and mtime, the Node and V8 versions, the platform, the V8 flags and the event; a file that does
// not match (truncated, another version, corrupt) is ignored, V8's own check rejects what is left,
// and a rejected cache is rewritten. Writes go to a temporary file renamed into place, so a reader
// sees a whole file or none. `CAIRN_HOOK_CODE_CACHE=0` turns the cache off.
// Without a built bundle (a checkout never built) it runs bin/cairn.js, which knows what to do.
'use strict';

const { closeSync, existsSync, fstatSync, mkdirSync, openSync, read, readFileSync, readSync, renameSync, unlinkSync, writeFileSync } = require('node:fs');
const { dirname, join, resolve } = require('node:path');

const BUNDLE = join(__dirname, '..', 'dist', 'hooks-bundle', 'hook.cjs');
/** A built CLI: without the bundle, the hooks run from dist/ (see fallback). */
const UNBUNDLED_CLI = join(__dirname, '..', 'dist', 'cli', 'main.js');
const MAGIC = 'cairn-hook-code-cache 2\n';
/** First line of the bundle: `//cairn-bundle sha256=<hex of the rest>` (scripts/bundle-hooks.mjs). */
const BUNDLE_HEADER = /^\/\/cairn-bundle sha256=([0-9a-f]{64})\n/;
const REFRESH_EVENT = 'refresh-context';
/** Hook paths one event's cache is rebuilt for (see saveCache). */
const MAX_PATHS = 6;
/**
 * V8 checks a code cache's version, source length, flags and size, but its checksum only with this
 * flag (off by default in release builds): without it, a cache corrupted in place crashes the
 * process while V8 reads it. Native, it costs nothing measurable (16.1 vs 15.9 ms CPU to
 * deserialize a 500 KB cache, medians of 12, load ~11).
 */
const V8_FLAGS = '--verify-snapshot-checksum';

/**
 * `v8.setFlagsFromString` without loading node:v8: that module loads the whole streams stack at
 * start (for its heap snapshot streams; 19 internal modules, ~3 ms of every hook), which nothing
 * else on a hook's path needs. The binding under it is reached through `process.binding`, with its
 * deprecation notice held back for the call (it would go to the hook's stderr); where that binding
 * is gone (a future Node) or differs, node:v8 as before.
 */
function setV8Flags(flags) {
  const quiet = process.noDeprecation;
  try {
    process.noDeprecation = true;
    const binding = process.binding('v8');
    if (typeof binding.setFlagsFromString === 'function') return binding.setFlagsFromString(flags);
  } catch {
    // No such binding here: the public module below.
  } finally {
    process.noDeprecation = quiet;
  }
  require('node:v8').setFlagsFromString(flags);
}

/** FNV-1a, 52 bits: a short file name for a key. The whole key is checked inside the file. */
function shortHash(text) {
  let h1 = 0x811c9dc5;
  let h2 = 0x050c5d1f;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ c, 0x01000193) >>> 0;
  }
  return `${h1.toString(16).padStart(8, '0')}${(h2 & 0xfffff).toString(16).padStart(5, '0')}`;
}

/**
 * Where the code cache of `event` lives and the key it must carry, or null when the cache is off.
 * The key names everything V8's own check does not: the bundle's content (hash, size, mtime) and
 * the flags this process runs with (a flag change makes V8 reject the cache; keyed, it never flaps).
 */
function cacheSlot(event, bundle, env, execArgv) {
  if (env.CAIRN_HOOK_CODE_CACHE === '0') return null;
  const home = resolve(env.CAIRN_HOME ?? join(env.HOME ?? require('node:os').homedir(), '.cairn'));
  const optimizer = event === REFRESH_EVENT ? 'turbofan' : 'no-turbofan';
  const key = [bundle.sha, bundle.size, bundle.mtimeMs, process.version, process.versions.v8, process.platform, process.arch, optimizer, execArgv.join(' '), env.NODE_OPTIONS ?? '', event].join('|');
  const dir = join(home, 'cache', 'hook-code');
  return { home, dir, key, file: join(dir, `${event.replace(/[^a-z-]/g, '_')}-${shortHash(key)}.bin`) };
}

/**
 * The cache stored for `slot` — its bytecode and the hook paths it was made from — or undefined: a
 * missing, short or foreign file is no cache.
 * File: MAGIC, the key, a line of paths, the payload's length (4 bytes), the payload.
 */
function readCache(slot) {
  let data;
  try {
    data = readFileSync(slot.file);
  } catch {
    return undefined;
  }
  const header = `${MAGIC}${slot.key}\n`;
  const headerBytes = Buffer.byteLength(header);
  if (data.length <= headerBytes + 4 || data.toString('latin1', 0, headerBytes) !== header) return undefined;
  const eol = data.indexOf(10, headerBytes);
  if (eol < 0 || data.length < eol + 5) return undefined;
  const paths = data.toString('latin1', headerBytes, eol).split(' ').filter(Boolean);
  // The payload's length: a file cut short is not handed to V8. What V8 is handed it checks itself,
  // checksum included (see V8_FLAGS).
  const payload = data.subarray(eol + 5);
  return payload.length === data.readUInt32LE(eol + 1) ? { payload, paths } : undefined;
}

/** Writes the cache whole or not at all: a temporary file, then a rename over the old one. */
function writeCache(slot, payload, paths = []) {
  if (!existsSync(slot.home)) return false;
  const tmp = `${slot.file}.${process.pid}.${Date.now().toString(36)}.tmp`;
  try {
    mkdirSync(slot.dir, { recursive: true });
    const header = Buffer.from(`${MAGIC}${slot.key}\n${paths.join(' ')}\n`, 'latin1');
    const length = Buffer.alloc(4);
    length.writeUInt32LE(payload.length, 0);
    writeFileSync(tmp, Buffer.concat([header, length, payload]), { mode: 0o600 });
    renameSync(tmp, slot.file);
    prune(slot);
    return true;
  } catch {
    try {
      unlinkSync(tmp);
    } catch {
      // nothing was written
    }
    return false;
  }
}

/**
 * Each build, Node version or flag set writes its own files: after a write, the same event's files
 * of other keys unused for a week go (a hit does not touch its file, so an old one still in use is
 * at worst written again), and temporary files a killed writer left for over an hour.
 */
function prune(slot) {
  try {
    const { readdirSync, statSync } = require('node:fs');
    const prefix = slot.file.slice(slot.dir.length + 1).replace(/-[0-9a-f]+\.bin$/, '-');
    const now = Date.now();
    for (const name of readdirSync(slot.dir)) {
      const path = join(slot.dir, name);
      if (path === slot.file) continue;
      const age = now - statSync(path).mtimeMs;
      if ((name.endsWith('.tmp') && age > 3600_000) || (name.startsWith(prefix) && name.endsWith('.bin') && age > 7 * 86400_000)) unlinkSync(path);
    }
  } catch {
    // Pruning is housekeeping: another process may have removed the same file.
  }
}

/** The bundle's source and identity, or null when it is missing or has no content hash. */
function readBundle(path) {
  let fd;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null;
  }
  try {
    const { size, mtimeMs } = fstatSync(fd);
    const bytes = Buffer.allocUnsafe(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, bytes, read, size - read, read);
      if (n === 0) break;
      read += n;
    }
    // Latin-1: a plain copy, no UTF-8 validation pass; the builder writes ASCII only (a file from
    // anywhere else has no header line, below, and is not loaded).
    const source = bytes.toString('latin1', 0, read);
    const header = BUNDLE_HEADER.exec(source);
    return header ? { path, source, sha: header[1], size, mtimeMs } : null;
  } finally {
    closeSync(fd);
  }
}

/**
 * Loads the hooks bundle (with the code cache when one matches) and returns its exports and a
 * function that stores the cache for the next hook of this event when it was missing or rejected.
 * Null when there is no built bundle.
 * @param {string} event @param {NodeJS.ProcessEnv} env @param {{ bundle?: string, execArgv?: string[] }} [options]
 */
function loadHooks(event, env = process.env, options = {}) {
  const bundle = readBundle(options.bundle ?? BUNDLE);
  if (!bundle) return null;
  const vm = require('node:vm');
  // V8's optimizing compiler off before any hook code loads: hooks are short, and with TurboFan
  // off the functions compiled lazily are exactly what the code cache holds (same-run A/B at 100K
  // in docs/BENCHMARKS.md). The detached refresh-context child, which ingests, keeps it.
  if (event !== REFRESH_EVENT) setV8Flags('--no-turbofan');
  const slot = cacheSlot(event, bundle, env, options.execArgv ?? process.execArgv);
  if (slot) setV8Flags(V8_FLAGS);
  const cached = slot ? readCache(slot) : undefined;
  // The CommonJS wrapper, as Node's own loader builds it.
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${bundle.source}\n})`, {
    filename: bundle.path,
    cachedData: cached?.payload,
    importModuleDynamically: vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const module = { exports: {}, filename: bundle.path };
  const requireHere = require('node:module').createRequire(bundle.path);
  script.runInThisContext().call(module.exports, module.exports, requireHere, module, bundle.path, dirname(bundle.path));
  const outcome = !slot ? 'off' : cached === undefined ? 'miss' : script.cachedDataRejected ? 'rejected' : 'hit';
  return {
    exports: module.exports,
    cache: outcome,
    /**
     * After the hook ran: store the bytecode it compiled when the cache was missing or rejected,
     * or when this run took a path (`path`, e.g. a session start after /compact) the cache was not
     * made from — the new cache then holds both, since V8 writes every function compiled so far,
     * those it took from the cache included. At most MAX_PATHS paths, so it settles.
     */
    saveCache(path = '') {
      if (!slot) return false;
      const name = path.replace(/\s/g, '_') || '-';
      const known = outcome === 'hit' ? cached.paths : [];
      if (outcome === 'hit' && (known.includes(name) || known.length >= MAX_PATHS)) return false;
      try {
        // V8 stamps its flags into the cache: the ones this process loaded with (a transcript
        // ingest turns the optimizer back on; a cache stamped with that would be rejected next time).
        if (event !== REFRESH_EVENT) setV8Flags('--no-turbofan');
        return writeCache(slot, script.createCachedData(), [...known, name]);
      } catch {
        return false;
      }
    },
  };
}

/**
 * Start reading the hook's input (fd 0) before the bundle loads, so the read (on a thread of
 * libuv's pool) overlaps loading instead of following it; the hook takes the result as its first
 * chunk and reads on from there (src/hooks/run.ts readFd0). None for a terminal (nothing is
 * waited for there), the refresh child (its input is an argument) or an fd 0 that cannot be stat'ed.
 */
function readFirstChunk(event) {
  try {
    if (event === REFRESH_EVENT || fstatSync(0).isCharacterDevice()) return undefined;
  } catch {
    return undefined;
  }
  const buffer = Buffer.allocUnsafe(64 * 1024);
  return new Promise((done) => read(0, buffer, 0, buffer.length, null, (error, n) => done({ error, n, buffer })));
}

/** `node bin/cairn-hook.cjs EVENT [INPUT]`: run one hook and exit. */
function main(argv) {
  const event = argv[0] ?? '';
  if (argv.includes('--help') || argv.includes('-h')) return fallback(argv);
  // Only where the bundle or the unbundled hooks will take it (a read started here is theirs).
  const firstRead = existsSync(BUNDLE) && existsSync(UNBUNDLED_CLI) ? readFirstChunk(event) : undefined;
  let hooks;
  try {
    hooks = loadHooks(event);
  } catch (error) {
    return failed(event, error);
  }
  if (!hooks) return fallback(argv, firstRead);
  globalThis.__cairnHookCodeCache = hooks.cache;
  hooks.exports
    .hookMain(
      argv,
      (code) => {
        hooks.saveCache(typeof globalThis.__cairnHookPath === 'string' ? globalThis.__cairnHookPath : '');
        process.exit(code);
      },
      // loadHooks already set the optimizer for this event (without node:v8).
      { optimizerSet: true, ...(firstRead ? { firstRead } : {}) },
    )
    .catch((error) => failed(event, error));
}

/**
 * No hooks bundle, or `--help`. A checkout that was never built (a plugin installed from git) and
 * `--help` go to bin/cairn.js as `cairn hook …`, which says what to do; a build without the bundle
 * (tsc alone) runs the unbundled hooks.
 */
function fallback(argv, firstRead) {
  if (existsSync(UNBUNDLED_CLI) && !argv.includes('--help') && !argv.includes('-h')) {
    import('../dist/hooks/run.js').then(({ hookMain }) => hookMain(argv, undefined, firstRead ? { firstRead } : {})).catch((error) => failed(argv[0] ?? '', error));
    return;
  }
  process.argv = [process.argv[0], join(__dirname, 'cairn.js'), 'hook', ...argv];
  import('./cairn.js').catch((error) => failed(argv[0] ?? '', error));
}

/** A hook must never break the agent, but it must not fail silently either. */
function failed(event, error) {
  const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
  import('./setup.js')
    .then(({ report }) => {
      process.exitCode = report('hook', event, `cairn's hook could not load (${reason}); reinstall cairn or run npm install in its folder.`);
    })
    .catch(() => {
      process.stderr.write(`cairn: hook could not load (${reason})\n`);
      process.exitCode = 1;
    });
}

module.exports = { loadHooks, cacheSlot, readCache, writeCache, main, V8_FLAGS, MAX_PATHS };

if (require.main === module) main(process.argv.slice(2));
