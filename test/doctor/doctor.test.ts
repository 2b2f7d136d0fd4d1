import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('cairn doctor', () => {
  it('reports a healthy store, missing hooks with advice, and hook errors from the log', async () => {
    const userHome = tempDir('cairn-doctor-');
    dirs.push(userHome);
    const home = join(userHome, '.cairn');
    mkdirSync(home);
    const cli = (args: string[]) => runCli(args, { home, cwd: userHome, env: { HOME: userHome } });
    await cli(['remember', 'the build uses make -j4']);
    mkdirSync(join(home, 'logs'), { recursive: true });
    writeFileSync(join(home, 'logs', 'hooks.log'), `${JSON.stringify({ t: new Date().toISOString(), level: 'error', message: 'hook failed', error: 'boom' })}\n`);
    const run = await cli(['doctor', '--json']);
    expect(run.code).toBe(0);
    const report = run.json<{ ok: boolean; checks: Array<{ check: string; status: string; advice?: string; detail: string }> }>();
    expect(report.ok).toBe(true);
    expect(report.checks.find((c) => c.check === 'integrity')?.status).toBe('ok');
    expect(report.checks.find((c) => c.check === 'claude code hooks')).toMatchObject({ status: 'warn', advice: 'run `cairn install claude`' });
    expect(report.checks.find((c) => c.check === 'hooks log')?.detail).toContain('boom');
    await cli(['install', 'claude']);
    const after = (await cli(['doctor', '--json'])).json<{ checks: Array<{ check: string; status: string }> }>();
    expect(after.checks.find((c) => c.check === 'claude code hooks')?.status).toBe('ok');
    // An install by an earlier cairn: one SessionStart command, whose long contexts Claude Code cuts to a preview.
    const settingsPath = join(userHome, '.claude', 'settings.json');
    writeFileSync(settingsPath, readFileSync(settingsPath, 'utf8').replaceAll(/ session-start --part(?:s)? \d+(?: --parts \d+)?/g, ' session-start'));
    const old = (await cli(['doctor', '--json'])).json<{ checks: Array<{ check: string; status: string; advice?: string }> }>();
    expect(old.checks.find((c) => c.check === 'claude code hooks')).toMatchObject({ status: 'warn', advice: expect.stringMatching(/cairn install claude/) });
  });

  it('fails (exit 1) with advice when vectors point at no memory', async () => {
    const home = tempDir('cairn-doctor-bad-');
    dirs.push(home);
    await runCli(['remember', 'one memory'], { home });
    const db = new Database(join(home, 'cairn.db'));
    db.prepare('INSERT INTO vectors (memory_rowid, vector, seq) VALUES (999, ?, 1)').run(Buffer.alloc(12));
    db.close();
    const run = await runCli(['doctor'], { home });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/FAIL\s+vectors: 1 vectors belong to no memory/);
    expect(run.stdout).toContain('cairn reindex');
  });
});
