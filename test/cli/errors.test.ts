/**
 * Bad input at the CLI: one line naming what is wrong, exit 1 for what the user fixes, nothing
 * stored lost; doctor reports instead of crashing; the process edges (EPIPE, --version, hook --help).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useColour } from '../../src/cli/colour.js';
import { commandName } from '../../src/cli/main.js';
import { packagePath } from '../../src/paths.js';
import { runCli, tempDir } from '../helpers/cli.js';

const BIN = packagePath('bin', 'cairn.js');

describe('CLI errors', () => {
  it('an invalid config.json is one line naming file, field and expected value; doctor still runs', async () => {
    const home = tempDir();
    writeFileSync(join(home, 'config.json'), '{"embedder": 42}');
    const run = await runCli(['status'], { home });
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/config\.json: field "embedder" must be .*, got number 42/);
    const doctor = await runCli(['doctor', '--json'], { home });
    expect(doctor.code).toBe(1);
    const checks = doctor.json<{ checks: Array<{ check: string; status: string }> }>().checks;
    expect(checks.find((c) => c.check === 'config')?.status).toBe('fail');
    expect(checks.find((c) => c.check === 'disk space')?.status).toBe('ok');
    writeFileSync(join(home, 'config.json'), '{not json');
    expect((await runCli(['doctor'], { home })).stdout).toMatch(/FAIL\s+config: .*not valid JSON/);
  });

  it('a 0-byte database is an error, left as it is', async () => {
    const home = tempDir();
    writeFileSync(join(home, 'cairn.db'), '');
    const run = await runCli(['remember', 'x'], { home });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/cairn\.db is an empty file \(0 bytes\)/);
    expect(statSync(join(home, 'cairn.db')).size).toBe(0);
    expect((await runCli(['doctor'], { home })).stdout).toMatch(/FAIL\s+database: .* empty file/);
  });

  it('a damaged database is a clear exit-1 error and doctor names it (PRAGMA integrity_check)', async () => {
    const home = tempDir();
    for (let i = 0; i < 40; i++) expect((await runCli(['remember', `memory ${i} about the parser ${'x'.repeat(200)}`], { home })).code).toBe(0);
    const db = join(home, 'cairn.db');
    // Overwrite pages in the middle of the file (not the header): SQLite opens it, reads fail.
    const bytes = readFileSync(db);
    for (let i = 8192; i < bytes.length - 4096; i += 7) bytes[i] = (bytes[i] as number) ^ 0x5a;
    writeFileSync(db, bytes);
    const run = await runCli(['list', '--limit', '100'], { home });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/damaged|not a cairn database/);
    expect(run.stderr).not.toMatch(/internal error|at .*\.js:\d+/);
    const doctor = await runCli(['doctor'], { home });
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(/FAIL\s+database: /);

    writeFileSync(db, Buffer.from('this is not a database at all, just text'.repeat(200)));
    const notDb = await runCli(['status'], { home });
    expect(notDb.code).toBe(1);
    expect(notDb.stderr).toMatch(/not a cairn database/);
  });

  it('an explicit store folder that does not exist is an error; the default home is created with a note', async () => {
    const dir = tempDir();
    const run = await runCli(['status'], { home: join(dir, 'typo') });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/store folder .*typo does not exist/);
    mkdirSync(join(dir, 'user'));
    const { main } = await import('../../src/cli/main.js');
    const { PassThrough, Readable } = await import('node:stream');
    const err = new PassThrough();
    let stderr = '';
    err.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await main(['status', '--json'], { stdout: new PassThrough(), stderr: err, stdin: Readable.from(['']), env: { HOME: join(dir, 'user') }, cwd: dir });
    expect(code).toBe(0);
    expect(stderr).toMatch(/created .*user\/\.cairn/);
  });

  it('ingest of a path that does not exist exits 1', async () => {
    const home = tempDir();
    const run = await runCli(['ingest', join(home, 'does', 'not', 'exist')], { home });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/no such file or folder/);
  });

  it('finds the command name past global options', () => {
    expect(commandName(['--home', 'x', '--json', 'recall', 'q'])).toBe('recall');
    expect(commandName(['--store', 'a.db', 'list'])).toBe('list');
    expect(commandName(['--version'])).toBeNull();
    expect(commandName([])).toBeNull();
  });

  it('colours only on a TTY and never with NO_COLOR', () => {
    expect(useColour({ isTTY: true }, {})).toBe(true);
    expect(useColour({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(useColour({ isTTY: false }, {})).toBe(false);
    expect(useColour({ isTTY: false }, { FORCE_COLOR: '1' })).toBe(true);
    expect(useColour({ isTTY: true }, { TERM: 'dumb' })).toBe(false);
  });
});

describe('the cairn process (needs dist/: npm run build)', () => {
  it('--version answers without loading the CLI', () => {
    const version = (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version;
    expect(execFileSync(process.execPath, [BIN, '--version'], { encoding: 'utf8' }).trim()).toBe(version);
  });

  it('hook --help prints the hook usage; help is not wrapped mid-sentence when piped', () => {
    const hook = spawnSync(process.execPath, [BIN, 'hook', '--help'], { encoding: 'utf8' });
    expect(hook.status).toBe(0);
    expect(hook.stdout).toMatch(/Usage: cairn hook/);
    const remember = spawnSync(process.execPath, [BIN, 'remember', '--help'], { encoding: 'utf8' });
    expect(remember.stdout).toContain('(sets importance 0.9 / 0.6 / 0.3)');
  });

  it('`cairn … | head` exits quietly, no EPIPE trace', () => {
    const home = tempDir();
    const out = spawnSync('sh', ['-c', `"${process.execPath}" "${BIN}" --home "${home}" --help | head -c 10 >/dev/null; "${process.execPath}" "${BIN}" --home "${home}" bench --help | head -n 1 > /dev/null`], { encoding: 'utf8' });
    expect(out.stderr).not.toMatch(/EPIPE|Error/);
  });
});
