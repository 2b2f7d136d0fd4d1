import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BENCH_ABSENT, loadBenchWorkspace } from '../../src/cli/commands/bench.js';
import { runCli, tempDir } from '../helpers/cli.js';

// The benchmarks live in the repository's bench/ workspace (package cairn-bench), not in the
// published package; `cairn bench` loads them when present.
describe('the benchmarks workspace', () => {
  it('loads when present: the suites come from bench/', async () => {
    const bench = await loadBenchWorkspace();
    expect(typeof bench).toBe('object');
    expect((bench as Exclude<typeof bench, string>).SUITES.map((s) => s.name)).toContain('recall');
  });

  it('says plainly that benchmarks run from a clone when the workspace is absent', async () => {
    const nowhere = new URL(`file://${tempDir('cairn-no-bench-')}/bench/dist/index.js`);
    expect(await loadBenchWorkspace('cairn-bench-not-installed-anywhere', nowhere)).toBe(BENCH_ABSENT);
    expect(BENCH_ABSENT).toMatch(/clone of the repository/);
  });

  it('a clone whose node_modules has no workspace link finds the built workspace beside it, or says to build it', async () => {
    const clone = tempDir('cairn-clone-');
    const entry = new URL(`file://${clone}/bench/dist/index.js`);
    mkdirSync(join(clone, 'bench', 'dist'), { recursive: true });
    writeFileSync(join(clone, 'bench', 'package.json'), '{}');
    expect(await loadBenchWorkspace('cairn-bench-not-linked', entry)).toMatch(/not built: run `npm run build`/);
    writeFileSync(join(clone, 'bench', 'dist', 'index.js'), 'export const SUITES = [{ name: "here" }];');
    const bench = await loadBenchWorkspace('cairn-bench-not-linked', entry);
    expect(typeof bench === 'string' ? bench : bench.SUITES.map((s) => s.name)).toEqual(['here']);
  });

  it('the published package carries no benchmark code: bench/ is outside package.json "files"', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { files: string[]; workspaces: string[] };
    expect(pkg.workspaces).toContain('bench');
    expect(pkg.files.some((f) => f === 'bench' || f.startsWith('bench/'))).toBe(false);
  });

  it('runs the workspace through the CLI from the repository', async () => {
    const home = tempDir('cairn-bench-ws-');
    const r = await runCli(['bench', 'nosuch'], { home, cwd: home });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('unknown suite "nosuch"');
  });
});
