import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NOT_IMPLEMENTED, SUITES } from '../../bench/src/registry.js';
import { renderDocs } from '../../bench/src/report.js';
import type { BenchReport, SuiteResult } from '../../bench/src/types.js';
import { runCli, tempDir } from '../helpers/cli.js';

const home = tempDir('cairn-bench-home-');
afterAll(() => rmSync(home, { recursive: true, force: true }));
const cli = (args: string[]) => runCli(args, { home, cwd: home });
// Tiny corpora: these tests check that suites run and emit well-formed results, never timings.
const SIZE = ['--sizes', '600'];
// Generous: a loaded CI machine is slow, and nothing here is about speed.
const SLOW = { timeout: 120_000 };

function expectSelfDescribing(report: BenchReport, suite: string): SuiteResult {
  expect(report.schema).toBe('cairn-bench/1');
  expect(report.options).toMatchObject({ suites: [suite], quick: true, seed: 42, sizes: [600] });
  const result = report.results[0] as SuiteResult;
  expect(report.results).toHaveLength(1);
  for (const env of [report.env, result.env]) {
    expect(env.command).toBe(`cairn bench ${suite} --quick --sizes 600 --json`);
    expect(env.commit === null || /^[0-9a-f]{40}$/.test(env.commit)).toBe(true);
    expect(env.dirty === null || typeof env.dirty === 'boolean').toBe(true);
    expect(env.machine.cpu.length).toBeGreaterThan(0);
    expect(env.machine.cores).toBeGreaterThan(0);
    expect(env.machine.memoryBytes).toBeGreaterThan(0);
    expect(env.machine.loadAverage).toHaveLength(3);
    expect(env.node).toBe(process.version);
    expect(new Date(env.date).toISOString()).toBe(env.date);
  }
  expect(result).toMatchObject({ suite, status: 'ok', reason: null });
  expect(result.datasets.length).toBeGreaterThan(0);
  for (const d of result.datasets) {
    expect(d.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(d.generator).toMatchObject({ seed: 42, size: 600 });
    expect(d.generator?.version).toMatch(/^corpus-v\d+$/);
  }
  expect(result.metrics.length).toBeGreaterThan(0);
  for (const m of result.metrics) {
    expect(typeof m.name).toBe('string');
    expect(typeof m.value).toBe('number');
    expect(m.pass === null || typeof m.pass === 'boolean').toBe(true);
  }
  return result;
}

describe('cairn bench', () => {
  it('runs the write suite and emits a self-describing JSON report', SLOW, async () => {
    const run = await cli(['bench', 'write', '--quick', ...SIZE, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const result = expectSelfDescribing(run.json<BenchReport>(), 'write');
    const names = result.metrics.map((m) => m.name);
    expect(names).toContain('remember p50 @600 (no embedder)');
    expect(names.some((n) => /remember p50 @600 \(hash:v1:\d+\)/.test(n))).toBe(true);
    expect(names.some((n) => /remember minus its embedding p50 @600 \(hash:v1:\d+\)/.test(n))).toBe(true);
    expect(result.metrics.find((m) => m.name === 'remember p50 @600 (no embedder)')?.target).toEqual({ op: '<=', value: 2 });
    expect(existsSync(join(home, 'bench-cache'))).toBe(true);
  });

  it('runs the recall suite with a hit rate and a baseline, reusing the cached corpus', SLOW, async () => {
    const run = await cli(['bench', 'recall', '--quick', ...SIZE, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const result = expectSelfDescribing(run.json<BenchReport>(), 'recall');
    const hit = result.metrics.find((m) => m.name.startsWith('recall hit@10'));
    expect(hit?.value).toBeGreaterThanOrEqual(0);
    expect(hit?.value).toBeLessThanOrEqual(1);
    expect(result.metrics.some((m) => m.name.startsWith('baseline: bare FTS5 MATCH'))).toBe(true);
    expect(result.metrics.some((m) => m.name.includes('no touch'))).toBe(true);
    expect(result.datasets[0]?.buildMs).toBeNull(); // built by the write suite above
  });

  it('prints tables for humans and writes --out and --write-docs', SLOW, async () => {
    const out = join(home, 'results.json');
    const docs = join(home, 'BENCHMARKS.md');
    const run = await cli(['bench', 'recall', '--quick', ...SIZE, '--out', out, '--write-docs', docs]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^recall — /m);
    expect(run.stdout).toMatch(/figure\s+ours\s+target\s+anchor\s+result/);
    const saved = JSON.parse(readFileSync(out, 'utf8')) as BenchReport;
    expect(saved.results.map((r) => r.suite)).toEqual(['recall']);
    const page = readFileSync(docs, 'utf8');
    expect(page).toContain('## recall');
    expect(page).toContain('| recall p50 @600 (bm25, touch) |');
    expect(page).toMatch(/## write\n\nMeasures: [^\n]+\n\n_Not run in this pass._/);
    expect(page).toContain('`cairn bench recall --quick --sizes 600 --write-docs');
  });

  it('reports a suite that does not exist yet as skipped, never with numbers', SLOW, async () => {
    const env = { command: 'cairn bench all', commit: null, dirty: null, machine: { cpu: 'x', cores: 1, memoryBytes: 1, platform: 'linux', arch: 'x64', loadAverage: [] }, node: 'v20', date: new Date(0).toISOString() };
    const report = renderDocs({
      schema: 'cairn-bench/1',
      env,
      options: { suites: ['peers'], quick: true, seed: 42, sizes: [600], data: '/data' },
      results: [{ suite: 'peers', description: 'peers', status: 'skipped', reason: NOT_IMPLEMENTED, env, datasets: [], metrics: [], details: {}, durationMs: 0, load: { start: 0, end: 0 } }],
    });
    expect(report).toMatch(/## peers[\s\S]*Not yet implemented — no figures/);
    expect(report).toMatch(/\| \[peers\]\(#peers\) \| [^|]+ \| not yet implemented \|/);
    const planned = SUITES.find((s) => s.planned);
    if (!planned) return; // every SPEC suite exists
    const run = await cli(['bench', planned.name, '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json<BenchReport>().results[0]).toMatchObject({ suite: planned.name, status: 'skipped', reason: NOT_IMPLEMENTED, metrics: [] });
  });

  it('rejects an unknown suite with exit 1 and one line naming the suites', async () => {
    const run = await cli(['bench', 'nope']);
    expect(run.code).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^cairn: unknown suite "nope"; choose all, /);
    for (const suite of SUITES) expect(lines[0]).toContain(suite.name);
    expect(run.stdout).toBe('');
  });
});
