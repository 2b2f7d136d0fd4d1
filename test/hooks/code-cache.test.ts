import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';

// bin/cairn-hook.cjs loads the hooks bundle through V8's code cache (<home>/cache/hook-code/). The
// cache may only ever save time: whatever is in that folder, the hook runs. Each case runs in its
// own process, because a cache V8 takes for valid but is not crashes the process that reads it.

const ROOT = resolve(import.meta.dirname, '../..');
const ENTRY = join(ROOT, 'bin', 'cairn-hook.cjs');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A small bundle with the header scripts/bundle-hooks.mjs writes, and enough functions to cache. */
function writeBundle(dir: string, answer: number): string {
  const fns = Array.from({ length: 40 }, (_, i) => `function f${i}(x) { return x.map((v) => v * ${i + 1}).filter((v) => v % 3 !== 1).reduce((a, b) => a + b, 0); }`).join('\n');
  const body = `${fns}\nexports.answer = () => ${answer} + [${Array.from({ length: 40 }, (_, i) => `f${i}([1, 2, 3])`).join(', ')}].length * 0;\nexports.hookMain = async () => 0;\n`;
  const file = join(dir, 'hook.cjs');
  writeFileSync(file, `//cairn-bundle sha256=${createHash('sha256').update(body).digest('hex')}\n${body}`);
  return file;
}

const LOAD = `
const { loadHooks } = require(${JSON.stringify(ENTRY)});
const hooks = loadHooks(process.argv[1], process.env, { bundle: process.argv[2], execArgv: [] });
const answer = hooks.exports.answer();
const saved = hooks.saveCache(process.argv[3]);
process.stdout.write(JSON.stringify({ cache: hooks.cache, answer, saved }));
`;

function load(home: string, bundle: string, env: NodeJS.ProcessEnv = {}, path = ''): { status: number | null; cache?: string; answer?: number; saved?: boolean; stderr: string } {
  const run = spawnSync(process.execPath, ['-e', LOAD, 'prompt', bundle, path], { env: { ...process.env, CAIRN_HOME: home, ...env }, encoding: 'utf8' });
  return { status: run.status, stderr: run.stderr, ...(run.status === 0 ? JSON.parse(run.stdout) : {}) };
}

function cacheFiles(home: string): string[] {
  const dir = join(home, 'cache', 'hook-code');
  return existsSync(dir) ? readdirSync(dir).map((f) => join(dir, f)) : [];
}

function setup(): { home: string; bundle: string } {
  const home = tempDir('cairn-code-cache-');
  dirs.push(home);
  mkdirSync(join(home, 'src'));
  return { home, bundle: writeBundle(join(home, 'src'), 42) };
}

describe('the hooks code cache', () => {
  it('is written after a miss and taken on the next load', () => {
    const { home, bundle } = setup();
    expect(load(home, bundle)).toMatchObject({ status: 0, cache: 'miss', answer: 42, saved: true });
    expect(cacheFiles(home)).toHaveLength(1);
    expect(cacheFiles(home)[0]).toMatch(/prompt-[0-9a-f]+\.bin$/);
    expect(load(home, bundle)).toMatchObject({ status: 0, cache: 'hit', answer: 42, saved: false });
    expect(load(home, bundle, { CAIRN_HOOK_CODE_CACHE: '0' })).toMatchObject({ status: 0, cache: 'off', answer: 42 });
  });

  it('is rewritten, keeping what it held, when a hook takes a path it was not made from, up to a limit', () => {
    const { home, bundle } = setup();
    expect(load(home, bundle, {}, 'startup//json')).toMatchObject({ cache: 'miss', saved: true });
    expect(load(home, bundle, {}, 'startup//json')).toMatchObject({ cache: 'hit', saved: false });
    expect(load(home, bundle, {}, 'compact//json')).toMatchObject({ cache: 'hit', saved: true });
    expect(load(home, bundle, {}, 'compact//json')).toMatchObject({ cache: 'hit', saved: false });
    expect(load(home, bundle, {}, 'startup//json')).toMatchObject({ cache: 'hit', saved: false });
    for (let i = 0; i < 10; i++) load(home, bundle, {}, `other-${i}`);
    expect(readFileSync(cacheFiles(home)[0]!, 'latin1').split('\n')[2]!.split(' ')).toHaveLength(6);
    expect(load(home, bundle, {}, 'other-99')).toMatchObject({ cache: 'hit', saved: false, answer: 42 });
  });

  it('ignores a truncated cache and rewrites it', () => {
    const { home, bundle } = setup();
    load(home, bundle);
    const [file] = cacheFiles(home);
    const whole = readFileSync(file!);
    for (const size of [0, 10, Math.floor(whole.length / 2), whole.length - 1]) {
      writeFileSync(file!, whole.subarray(0, size));
      expect(load(home, bundle), `cut to ${size} bytes`).toMatchObject({ status: 0, cache: 'miss', answer: 42, saved: true });
      expect(readFileSync(file!).length).toBe(whole.length);
    }
  });

  it('never hands V8 a cache corrupted in place: rejected, not a crash, and rewritten', () => {
    const { home, bundle } = setup();
    load(home, bundle);
    const [file] = cacheFiles(home);
    const whole = readFileSync(file!);
    const bad = Buffer.from(whole);
    // Past the header, the same length: only a checksum can tell.
    for (let i = Math.floor(bad.length * 0.3); i < bad.length; i += 97) bad[i]! ^= 0x5a;
    writeFileSync(file!, bad);
    const run = load(home, bundle);
    expect(run.stderr).toBe('');
    expect(run).toMatchObject({ status: 0, cache: 'rejected', answer: 42, saved: true });
    expect(load(home, bundle)).toMatchObject({ status: 0, cache: 'hit', answer: 42 });
  });

  it('does not take a cache made for another Node version or another bundle', () => {
    const { home, bundle } = setup();
    load(home, bundle);
    const [file] = cacheFiles(home);
    const whole = readFileSync(file!).toString('latin1');
    // The same file, stamped for another Node: the key in it no longer matches.
    writeFileSync(file!, Buffer.from(whole.replace(`|${process.version}|`, '|v19.0.0|'), 'latin1'));
    expect(load(home, bundle)).toMatchObject({ status: 0, cache: 'miss', answer: 42, saved: true });
    // A rebuilt bundle (other content, other hash) gets its own cache, whatever its size.
    const rebuilt = writeBundle(join(home, 'src'), 7);
    expect(load(home, rebuilt)).toMatchObject({ status: 0, cache: 'miss', answer: 7 });
    expect(load(home, rebuilt)).toMatchObject({ status: 0, cache: 'hit', answer: 7 });
  });

  it('survives writers racing for the same cache: every process runs, the file ends whole', async () => {
    const { home, bundle } = setup();
    const runs = await Promise.all(
      Array.from({ length: 6 }, () => new Promise<{ code: number | null; out: string }>((done) => {
        const child = spawn(process.execPath, ['-e', LOAD, 'prompt', bundle], { env: { ...process.env, CAIRN_HOME: home } });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.on('close', (code) => done({ code, out }));
      })),
    );
    for (const run of runs) expect(run.code).toBe(0);
    for (const run of runs) expect(JSON.parse(run.out).answer).toBe(42);
    expect(cacheFiles(home).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(load(home, bundle)).toMatchObject({ status: 0, cache: 'hit', answer: 42 });
  });

  it('removes the same event’s caches of other builds unused for a week, and stale temporary files, when it writes', () => {
    const { home, bundle } = setup();
    load(home, bundle);
    const dir = join(home, 'cache', 'hook-code');
    const old = Date.now() / 1000 - 8 * 86400;
    const files = { otherBuild: join(dir, 'prompt-0123456789abc.bin'), recentBuild: join(dir, 'prompt-0123456789abd.bin'), otherEvent: join(dir, 'session-start-0123456789abc.bin'), tmp: join(dir, 'prompt-x.bin.1.a.tmp') };
    for (const f of Object.values(files)) writeFileSync(f, 'x');
    for (const f of [files.otherBuild, files.otherEvent, files.tmp]) utimesSync(f, old, old);
    writeFileSync(bundle, readFileSync(bundle, 'utf8').replace('exports.hookMain', 'exports.other = 1;\nexports.hookMain'));
    expect(load(home, bundle)).toMatchObject({ cache: 'miss', saved: true });
    expect(existsSync(files.otherBuild)).toBe(false);
    expect(existsSync(files.tmp)).toBe(false);
    expect(existsSync(files.recentBuild)).toBe(true);
    expect(existsSync(files.otherEvent)).toBe(true);
  });

  it('writes nothing when the data home does not exist', () => {
    const { home, bundle } = setup();
    expect(load(join(home, 'nowhere'), bundle)).toMatchObject({ status: 0, cache: 'miss', answer: 42, saved: false });
    expect(existsSync(join(home, 'nowhere'))).toBe(false);
  });
});

const BUNDLE = join(ROOT, 'dist', 'hooks-bundle', 'hook.cjs');

describe.skipIf(!existsSync(BUNDLE))('bin/cairn-hook.cjs with the built hooks bundle', () => {
  it('answers the same with no cache, a fresh cache and a corrupted one, and logs which it used', () => {
    const home = tempDir('cairn-hook-cjs-');
    dirs.push(home);
    const hook = (session: string) =>
      spawnSync(process.execPath, [ENTRY, 'session-start'], { input: JSON.stringify({ session_id: session, cwd: home, source: 'startup' }), env: { ...process.env, CAIRN_HOME: home }, encoding: 'utf8' });
    const outputs = ['a', 'b'].map((s) => hook(s));
    for (const f of cacheFiles(home)) {
      const bytes = readFileSync(f);
      for (let i = Math.floor(bytes.length / 2); i < bytes.length; i += 501) bytes[i]! ^= 0xff;
      writeFileSync(f, bytes);
    }
    outputs.push(hook('c'), hook('d'));
    for (const run of outputs) {
      expect(run.status).toBe(0);
      expect(run.stderr).toBe('');
      expect(run.stdout).toBe(outputs[0]!.stdout);
    }
    const log = readFileSync(join(home, 'logs', 'hooks.log'), 'utf8');
    expect([...log.matchAll(/"codeCache":"(\w+)"/g)].map((m) => m[1])).toEqual(['miss', 'hit', 'rejected', 'hit']);
  });

  it('loads neither node:crypto nor the streams (through node:v8) for a session start and a prompt', () => {
    // Each costs every hook ~3-4 ms at start; only a hash, a new id or an ingest needs them.
    const home = tempDir('cairn-hook-modules-');
    dirs.push(home);
    const report = join(home, 'modules.cjs');
    writeFileSync(report, "const before = new Set(process.moduleLoadList);\nprocess.on('exit', () => require('node:fs').writeFileSync(process.env.MODULES_OUT, process.moduleLoadList.filter((m) => !before.has(m)).join('\\n')));\n");
    for (const [event, input] of [
      ['session-start', { session_id: 's', cwd: home, source: 'startup' }],
      ['prompt', { session_id: 's', cwd: home, prompt: 'where is the config loaded' }],
    ] as const) {
      const out = join(home, `${event}.txt`);
      for (let i = 0; i < 2; i++) {
        const run = spawnSync(process.execPath, ['-r', report, ENTRY, event], { input: JSON.stringify(input), env: { ...process.env, CAIRN_HOME: home, MODULES_OUT: out }, encoding: 'utf8' });
        expect(run.status).toBe(0);
        // The deprecation notice of process.binding (bin/cairn-hook.cjs setV8Flags) is held back.
        expect(run.stderr).toBe('');
      }
      const loaded = readFileSync(out, 'utf8').split('\n');
      expect(loaded).toContain('NativeModule vm');
      for (const unwanted of ['NativeModule crypto', 'NativeModule stream', 'NativeModule v8']) expect(loaded).not.toContain(unwanted);
    }
  });
});
