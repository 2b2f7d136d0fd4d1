import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';

const home = tempDir('cairn-cli-home-');
const cwd = tempDir('cairn-cli-cwd-');
afterAll(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(cwd, { recursive: true, force: true });
});
const cli = (args: string[], stdin?: string) => runCli(args, { home, cwd, ...(stdin !== undefined ? { stdin } : {}) });

describe('cairn CLI', () => {
  it('walks the newcomer path: remember, recall with why, forget, restore, snapshot, diff', async () => {
    const r1 = await cli(['remember', 'parse_config(path: Path, *, strict: bool = False) -> Config is in src/config.py:42', '--kind', 'fact', '--tags', 'config']);
    expect(r1.code).toBe(0);
    const id = /remembered (\S+)/.exec(r1.stdout)?.[1] as string;
    expect(id).toMatch(/^[0-9A-Z]{26}$/);
    const snap = await cli(['snapshot', 'before']);
    expect(snap.stdout).toContain('1 memories sealed');

    const recall = await cli(['recall', 'parseConfig', 'signature']);
    expect(recall.code).toBe(0);
    expect(recall.stdout).toContain(id);
    expect(recall.stdout).toMatch(/why: score \d\.\d\d · relevance/);

    expect((await cli(['forget', id, '--reason', 'test'])).stdout).toContain(`forgot ${id}`);
    expect((await cli(['recall', 'parse_config'])).stdout).toContain('no memories match');
    expect((await cli(['restore', id])).code).toBe(0);
    expect((await cli(['recall', 'parse_config'])).stdout).toContain(id);

    await cli(['revise', id, 'parse_config(path: Path, *, strict: bool = True) -> Config is in src/config.py:44']);
    await cli(['snapshot', 'after']);
    const diff = await cli(['diff', 'before', 'after']);
    expect(diff.stdout).toMatch(/diff before → after: \+0 −0 ~1/);
    expect(diff.stdout).toContain('strict: bool = True');

    const show = await cli(['show', id]);
    expect(show.stdout).toContain('versions:');
    expect(show.stdout).toMatch(/forget by cli/);
  });

  it('prints JSON with --json on every command', async () => {
    const remember = await cli(['--json', 'remember', 'use pnpm, never npm', '--kind', 'preference', '--scope', 'user']);
    const created = remember.json<{ memory: { id: string; scope: string }; created: boolean }>();
    expect(created).toMatchObject({ created: true, memory: { scope: 'user' } });
    const recall = (await cli(['recall', 'pnpm', '--json'])).json<{ hits: Array<{ why: { score: number } }> }>();
    expect(recall.hits[0]?.why.score).toBeGreaterThan(0);
    const status = (await cli(['status', '--json'])).json<{ stats: { active: number }; recallMode: string }>();
    expect(status.stats.active).toBeGreaterThanOrEqual(2);
    expect(status.recallMode).toBe('bm25');
    for (const args of [['snapshots'], ['list'], ['diff', 'before', 'now'], ['show', created.memory.id], ['forget', created.memory.id], ['restore', created.memory.id]]) {
      const run = await cli([...args, '--json']);
      expect(run.code, args.join(' ')).toBe(0);
      expect(() => JSON.parse(run.stdout), args.join(' ')).not.toThrow();
    }
  });

  it('gives one-line errors and exit 1 for user mistakes', async () => {
    const empty = await cli(['remember', '   ']);
    expect(empty.code).toBe(1);
    expect(empty.stderr.trim().split('\n')).toHaveLength(1);
    expect(empty.stderr).toMatch(/^cairn: text is empty/);
    const huge = await cli(['remember', 'x'.repeat(10_000)]);
    expect(huge.code).toBe(1);
    expect(huge.stderr).toContain('limit is 8192');
    const badKind = await cli(['remember', 'hello', '--kind', 'nonsense']);
    expect(badKind.code).toBe(1);
    expect(badKind.stderr).toContain('kind must be one of');
    expect((await cli(['forget', '01NOTANID'])).stderr).toMatch(/not found/);
    expect((await cli(['recall', 'x', '--k', 'zero'])).code).toBe(1);
    expect((await cli(['no-such-command'])).code).toBe(1);
    const json = await cli(['--json', 'restore', 'missing']);
    expect(json.json<{ error: { code: string } }>().error.code).toBe('NOT_FOUND');
    expect(empty.stderr).not.toMatch(/\n\s+at /);
  });

  it('imports JSONL (bad lines by number) from a file and stdin, and exports', async () => {
    const file = join(cwd, 'in.jsonl');
    writeFileSync(file, `${JSON.stringify({ text: 'imported one', kind: 'fact' })}\n{broken\n${JSON.stringify({ text: 'imported two' })}\n`);
    const run = await cli(['import', file]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('imported 2 of 3 lines');
    expect(run.stderr).toContain('line 2: not valid JSON');
    const stdin = await cli(['import', '-', '--json'], `${JSON.stringify({ text: 'from stdin' })}\n`);
    expect(stdin.json()).toMatchObject({ imported: 1 });
    const exported = await cli(['export']);
    const texts = exported.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { text: string }).text);
    expect(texts).toEqual(expect.arrayContaining(['imported one', 'imported two', 'from stdin']));
    expect((await cli(['export', '--format', 'markdown'])).stdout).toMatch(/^# cairn memories/);
    expect((await cli(['import', join(cwd, 'missing.jsonl')])).stderr).toMatch(/cannot read/);
  });

  it('has help a newcomer can follow', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    for (const cmd of ['remember', 'recall', 'forget', 'restore', 'revise', 'snapshot', 'snapshots', 'diff', 'import', 'export', 'status', 'mcp']) {
      expect(help.stdout).toContain(cmd);
    }
    expect((await cli(['remember', '--help'])).stdout).toContain('--kind');
  });

  it('honours CAIRN_HOME', async () => {
    const other = tempDir('cairn-env-home-');
    const { main } = await import('../../src/cli/main.js');
    const { PassThrough, Readable } = await import('node:stream');
    const out = new PassThrough();
    let text = '';
    out.on('data', (c: Buffer) => (text += c.toString()));
    const code = await main(['status', '--json'], { stdout: out, stderr: new PassThrough(), stdin: Readable.from(['']), env: { CAIRN_HOME: other }, cwd });
    expect(code).toBe(0);
    expect((JSON.parse(text) as { home: string }).home).toBe(other);
    rmSync(other, { recursive: true, force: true });
  });
});
