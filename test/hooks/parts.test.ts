import { mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { awaitPart, claimRest, HOOK_TEXT_MAX, parsePartArgs, partsCapacity, splitParts, writeRest } from '../../src/hooks/parts.js';
import { tempDir } from '../helpers/cli.js';

const dir = tempDir('cairn-hook-parts-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The text the parts carry, their continuation lines taken off. */
const rejoin = (parts: string[]): string => parts.map((p, i) => (i === 0 ? p : p.slice(p.indexOf('\n') + 1))).join('');

describe('session-start context in parts', () => {
  it('reads --parts N and --part K, and refuses what makes no sense', () => {
    expect(parsePartArgs([])).toBeNull();
    expect(parsePartArgs(['--parts', '4'])).toEqual({ parts: 4, part: 1 });
    expect(parsePartArgs(['--part', '3', '--parts', '4'])).toEqual({ parts: 4, part: 3 });
    expect(parsePartArgs(['--part', '5', '--parts', '4'])).toBeNull();
    expect(parsePartArgs(['--part', '2'])).toBeNull();
    expect(parsePartArgs(['--parts', 'x'])).toBeNull();
    expect(parsePartArgs(['--parts', '0'])).toBeNull();
  });

  it('cuts at line ends into parts of at most the cap, later ones saying they continue, nothing lost', () => {
    const lines = Array.from({ length: 400 }, (_, i) => `- \`src/module${i}.ts:${i + 1}\` — a detail line ${'x'.repeat(i % 60)}\n`);
    const text = `# cairn memory\n${lines.join('')}`;
    const parts = splitParts(text);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(HOOK_TEXT_MAX);
    parts.slice(1).forEach((part, i) => expect(part.startsWith(`cairn memory, continued (part ${i + 2} of ${parts.length}):\n`)).toBe(true));
    // Whole lines in every part.
    for (const part of parts) expect(part.endsWith('\n')).toBe(true);
    expect(rejoin(parts)).toBe(text);
    expect(text.length).toBeLessThanOrEqual(partsCapacity(parts.length));
  });

  it('keeps a short text whole, and cuts a line longer than a part', () => {
    expect(splitParts('short\n')).toEqual(['short\n']);
    const long = `head\n${'y'.repeat(HOOK_TEXT_MAX * 2)}\ntail\n`;
    const parts = splitParts(long);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(HOOK_TEXT_MAX);
    expect(rejoin(parts)).toBe(long);
  });

  it('a later part reads what the first left for this session, never an earlier start’s', async () => {
    const home = join(dir, 'home');
    mkdirSync(home, { recursive: true });
    writeRest(home, 'S1', ['second', 'third']);
    const now = Date.now();
    expect(await awaitPart(home, 'S1', 2, now, 200)).toBe('second');
    expect(await awaitPart(home, 'S1', 3, now, 200)).toBe('third');
    // Fewer parts than commands: the fourth prints nothing.
    expect(await awaitPart(home, 'S1', 4, now, 200)).toBeNull();
    // Another session's rest is not this one's.
    expect(await awaitPart(home, 'S2', 2, now, 100)).toBeNull();
    // A rest left by a start long before this command began (another /compact) is ignored…
    const folder = join(home, 'cache', 'hook-parts');
    const [stale] = readdirSync(folder).map((f) => join(folder, f));
    const minuteAgo = Date.now() - 60_000;
    writeFileSync(stale!, JSON.stringify({ at: minuteAgo, rest: ['old'] }));
    utimesSync(stale!, new Date(minuteAgo), new Date(minuteAgo));
    expect(await awaitPart(home, 'S1', 2, Date.now(), 100)).toBeNull();
    // …until the first part's command of this start writes it again.
    setTimeout(() => writeRest(home, 'S1', ['fresh']), 50);
    expect(await awaitPart(home, 'S1', 2, Date.now(), 2_000)).toBe('fresh');
    // A torn file is waited past, not read: the first part's command renames a whole file into place.
    writeRest(home, 'S3', ['ok']);
    const before = readdirSync(folder);
    for (const f of before) if (!f.endsWith('.tmp')) writeFileSync(join(folder, f), '{"at":');
    setTimeout(() => writeRest(home, 'S3', ['ok again']), 50);
    expect(await awaitPart(home, 'S3', 2, Date.now(), 2_000)).toBe('ok again');
  });
});

describe('session-start in parts: a failing first part', () => {
  it('leaves an empty rest, so the other commands stop waiting at once and print nothing', async () => {
    const { runHook } = await import('../../src/hooks/run.js');
    const { PassThrough, Readable } = await import('node:stream');
    const home = join(dir, 'broken');
    mkdirSync(home, { recursive: true });
    // A database file that is not one: the first part's command fails opening the store.
    writeFileSync(join(home, 'cairn.db'), 'not a database, '.repeat(512));
    const input = JSON.stringify({ session_id: 'S-broken', source: 'startup', cwd: dir });
    const run = async (part: number): Promise<string> => {
      const stdout = new PassThrough();
      let out = '';
      stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      expect(await runHook('session-start', { stdin: Readable.from([input]), stdout, env: {}, cwd: dir, home, parts: { parts: 4, part } })).toBe(0);
      return out;
    };
    expect(await run(1)).toBe('');
    const started = Date.now();
    expect(await run(2)).toBe('');
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

describe('session-start in parts: a first part killed outright', () => {
  it('the others stop waiting once its process is gone, and wait for it while it lives', async () => {
    const home = join(dir, 'killed');
    mkdirSync(home, { recursive: true });
    // A first part's command that claims the session's parts and then hangs, as one stuck in its work.
    // (The built module: `npm test` builds first; src/ runs only under vitest's transform.)
    const built = pathToFileURL(join(process.cwd(), 'dist', 'hooks', 'parts.js')).href;
    const child = spawn(process.execPath, ['-e', `import(${JSON.stringify(built)}).then((m) => { m.claimRest(process.argv[1], 'S-killed'); console.log('claimed'); setInterval(() => {}, 1000); })`, home], { stdio: ['ignore', 'pipe', 'inherit'] });
    await once(child.stdout!, 'data');
    // While it lives, a later part keeps waiting (here to the end of a short wait)…
    expect(await awaitPart(home, 'S-killed', 2, Date.now(), 300)).toBeNull();
    setTimeout(() => child.kill('SIGKILL'), 100);
    // …and once it is killed (no catch runs, no rest is written), the wait ends at once, not after 8 s.
    const started = Date.now();
    expect(await awaitPart(home, 'S-killed', 2, started, 8_000)).toBeNull();
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  it('a claim by a live process is replaced by its rest, which the others read', async () => {
    const home = join(dir, 'claimed');
    mkdirSync(home, { recursive: true });
    claimRest(home, 'S-live');
    setTimeout(() => writeRest(home, 'S-live', ['second']), 100);
    expect(await awaitPart(home, 'S-live', 2, Date.now(), 2_000)).toBe('second');
  });
});
