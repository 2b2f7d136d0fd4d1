import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { BenchReport, SuiteResult } from '../../bench/src/types.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { fixtures } from '../ingest/helpers.js';

const home = tempDir('cairn-bench-ingest-');
const data = tempDir('cairn-bench-ingest-data-');
// The project's own transcript fixtures stand in for ../shared/data: the suite must run and emit
// well-formed results here; its figures are never asserted on.
cpSync(fixtures, join(data, 'transcripts'), { recursive: true });
afterAll(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(data, { recursive: true, force: true });
});

describe('cairn bench ingest', () => {
  it('--quick --json emits a self-describing result with every figure, its target and a verdict', async () => {
    const run = await runCli(['bench', 'ingest', '--quick', '--data', data, '--json'], { home, cwd: home });
    expect(run.code, run.stderr).toBe(0);
    const report = run.json<BenchReport>();
    expect(report.schema).toBe('cairn-bench/1');
    expect(report.results).toHaveLength(1);
    const result = report.results[0] as SuiteResult;
    expect(result).toMatchObject({ suite: 'ingest', status: 'ok', reason: null });
    expect(result.env.command).toBe(`cairn bench ingest --quick --data ${data} --json`);
    expect(result.env.machine.cores).toBeGreaterThan(0);

    const byName = new Map(result.metrics.map((m) => [m.name, m]));
    expect([...byName.keys()]).toEqual([
      'ingest throughput (median of 1)',
      'bare read + JSON.parse loop',
      'ingest / bare loop',
      'cores busy during ingest',
      'unchanged re-ingest, 1,000 files (p50)',
      'turns stored / (copies × one copy)',
    ]);
    for (const m of result.metrics) {
      expect(typeof m.value, m.name).toBe('number');
      expect(m.pass === null || typeof m.pass === 'boolean').toBe(true);
      expect(m.pass === null).toBe(m.target === null);
    }
    expect(byName.get('ingest throughput (median of 1)')).toMatchObject({ unit: 'MB/s', target: { op: '>=', value: 250 }, anchor: '124 MB/s (weighted-compact)' });
    expect(byName.get('ingest / bare loop')).toMatchObject({ unit: 'share', target: { op: '>=', value: 0.5 } });
    expect(byName.get('unchanged re-ingest, 1,000 files (p50)')).toMatchObject({ unit: 'ms', target: { op: '<=', value: 100 } });
    // Not a timing: every copy of the corpus stored all its turns (fresh ids, nothing deduplicated).
    expect(byName.get('turns stored / (copies × one copy)')).toMatchObject({ value: 1, pass: true });

    expect(result.datasets).toHaveLength(2);
    for (const d of result.datasets) expect(d.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(result.details).toMatchObject({ replica: { copies: 1 }, unchanged: { files: 1000 } });
    expect((result.details.source as { files: number }).files).toBe(11);
    // The replica and its databases are gone.
    const work = join(home, 'bench-cache', 'work');
    expect(existsSync(work) ? readdirSync(work).filter((name) => name.startsWith('ingest-')) : []).toEqual([]);
  }, 120_000); // generous: a loaded 2-core machine took 38 s; nothing here is about speed

  it('is skipped, with the reason, when the data folder has no transcripts', async () => {
    const run = await runCli(['bench', 'ingest', '--quick', '--data', join(home, 'nowhere'), '--json'], { home, cwd: home });
    expect(run.code, run.stderr).toBe(0);
    const result = run.json<BenchReport>().results[0] as SuiteResult;
    expect(result).toMatchObject({ suite: 'ingest', status: 'skipped', metrics: [] });
    expect(result.reason).toMatch(/^no transcripts at .*nowhere/);
  });
});
