/**
 * What a bench run looks like to people: a table per suite in the terminal, and
 * docs/BENCHMARKS.md (`cairn bench all --write-docs`). Both show, per figure, the target and
 * anchor of SPEC §9, our number, and pass / fail; a suite that did not run says why.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CHART_SUITES, chartsFor, type ChartFile } from './charts.js';
import { mergeDocs } from './docs-merge.js';
import { NOT_IMPLEMENTED } from './registry.js';
import { SPEC_SUITES, suiteSpec } from './spec.js';
import type { BenchReport, Dataset, Metric, RunEnv, SuiteResult, Target } from './types.js';

export function formatValue(value: number | null, unit: string): string {
  if (value === null) return '—';
  if (unit === 'ms') return `${value < 10 ? value.toFixed(3) : value.toFixed(1)} ms`;
  if (unit === '×') return `${value.toFixed(1)}×`;
  if (unit === 'share') return value.toFixed(3);
  return `${value} ${unit}`;
}

export function formatTarget(target: Target | null, unit: string): string {
  if (!target) return '—';
  const value = String(Number(target.value.toFixed(3)));
  return `${target.op === '<=' ? '≤' : '≥'} ${unit === 'share' || unit === '×' ? value : `${value} ${unit}`}`;
}

function verdict(m: Metric): string {
  return m.pass === null ? '—' : m.pass ? 'pass' : 'FAIL';
}

function gib(bytes: number): string {
  return `${(bytes / 2 ** 30).toFixed(1)} GiB`;
}

function machineLine(env: RunEnv): string {
  const m = env.machine;
  const load = m.loadAverage.length > 0 ? `, load average ${m.loadAverage.join(' / ')} at start` : '';
  return `${m.cpu} × ${m.cores} cores, ${gib(m.memoryBytes)} RAM, ${m.platform}/${m.arch}${load}`;
}

function datasetLine(d: Dataset): string {
  const built = d.buildMs !== null ? `built in ${(d.buildMs / 1000).toFixed(1)} s this run` : `cached (built in ${((d.cachedBuildMs ?? 0) / 1000).toFixed(1)} s)`;
  const gen = d.generator ? `${d.generator.version}, seed ${d.generator.seed}, ${d.generator.size.toLocaleString('en-US')} memories, ${d.generator.queries} known-answer queries` : (d.source ?? '');
  return `${d.name}: ${gen}; sha256 ${d.sha256 ? d.sha256.slice(0, 16) : 'n/a'}…; ${built}`;
}

function rows(metrics: Metric[]): string[][] {
  return metrics.map((m) => [m.name, formatValue(m.value, m.unit), formatTarget(m.target, m.unit), m.anchor ?? '', verdict(m), m.note ?? '']);
}

function textTable(header: string[], body: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)];
}

const HEADER = ['figure', 'ours', 'target', 'anchor', 'result', 'note'];

/** The terminal view of a report. */
export function formatReport(report: BenchReport): string[] {
  const env = report.env;
  const out = [
    `cairn bench · ${env.date} · commit ${env.commit?.slice(0, 12) ?? 'unknown'}${env.dirty ? ' (+ uncommitted changes)' : ''} · Node ${env.node}`,
    `machine: ${machineLine(env)}`,
    `command: ${env.command}`,
  ];
  for (const result of report.results) {
    const spec = suiteSpec(result.suite);
    out.push('', `${result.suite} — ${result.description}`);
    if (spec) out.push(`  SPEC §9 target: ${spec.target}`);
    if (result.status !== 'ok') {
      out.push(`  ${result.status}: ${result.reason ?? ''}`);
      continue;
    }
    for (const line of textTable(HEADER, rows(result.metrics))) out.push(`  ${line}`);
    for (const d of result.datasets) out.push(`  dataset ${datasetLine(d)}`);
    out.push(`  (${(result.durationMs / 1000).toFixed(1)} s; load average ${result.load.start} → ${result.load.end})`);
  }
  return out;
}

const cell = (text: string): string => text.replaceAll('|', '\\|');

function mdTable(header: string[], body: string[][]): string[] {
  return [`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`, ...body.map((r) => `| ${r.map(cell).join(' | ')} |`)];
}

function summaryStatus(result: SuiteResult | undefined): string {
  if (!result) return 'not run in this pass';
  if (result.status !== 'ok') return result.reason === NOT_IMPLEMENTED ? NOT_IMPLEMENTED : `${result.status}: ${result.reason ?? ''}`;
  const judged = result.metrics.filter((m) => m.pass !== null);
  const failed = judged.filter((m) => m.pass === false).length;
  if (judged.length === 0) return 'ran (no figure judged at these sizes)';
  return failed === 0 ? `meets target (${judged.length}/${judged.length} judged figures pass)` : `**misses target** (${failed} of ${judged.length} judged figures fail)`;
}

/** Folder, next to the page, that holds its charts. */
export const CHART_DIR = 'bench';

export interface RenderDocsOptions {
  /** Charts to embed, linked as `<chartDir>/<file>` (written by `writeDocs`). @default none */
  charts?: ChartFile[];
  /** @default CHART_DIR */
  chartDir?: string;
}

/**
 * Write docs/BENCHMARKS.md (at `path`) and its SVG charts (in `<dirname(path)>/bench/`), the charts
 * embedded in the page as Markdown images. Returns the files written.
 */
export function writeDocs(report: BenchReport, path: string): string[] {
  const ran = new Set(report.results.map((r) => r.suite));
  const partial = SPEC_SUITES.some((spec) => !ran.has(spec.name));
  // A run of some suites redraws only the charts drawn from nothing but those suites.
  const charts = chartsFor(report).filter((c) => !partial || (CHART_SUITES[c.file] ?? []).every((suite) => ran.has(suite)));
  const dir = join(dirname(path), CHART_DIR);
  const written: string[] = [];
  if (charts.length > 0) mkdirSync(dir, { recursive: true });
  for (const chart of charts) {
    const file = join(dir, chart.file);
    writeFileSync(file, chart.svg);
    written.push(file);
  }
  mkdirSync(dirname(path), { recursive: true });
  const fresh = renderDocs(report, { charts, chartDir: CHART_DIR });
  // A run of some suites replaces just their sections of an existing page (docs-merge.ts).
  writeFileSync(path, partial && existsSync(path) ? mergeDocs(readFileSync(path, 'utf8'), fresh, ran) : fresh);
  written.push(path);
  return written;
}

function chartLines(options: RenderDocsOptions): string[] {
  const charts = options.charts ?? [];
  if (charts.length === 0) return [];
  const dir = options.chartDir ?? CHART_DIR;
  return ['', '## Charts', '', ...charts.flatMap((c) => [`![${c.title}](${dir}/${c.file})`, ''])].slice(0, -1);
}

/** docs/BENCHMARKS.md for a report (a full `bench all` run gives the complete page). */
export function renderDocs(report: BenchReport, options: RenderDocsOptions = {}): string {
  const env = report.env;
  const byName = new Map(report.results.map((r) => [r.suite, r]));
  const lines: string[] = [
    '# Benchmarks',
    '',
    `<!-- Generated by \`${env.command}\` (bench/src/report.ts). Do not edit by hand: rerun the command. -->`,
    '',
    'Every figure below was measured by `cairn bench` in one run, on the machine described here, and is',
    'reproduced by the command shown. Targets and anchors are those of SPEC §9. A suite that could not run, or',
    'does not exist yet, says so instead of showing a number. A suite re-measured on its own',
    '(`cairn bench <suite> --write-docs`) replaces just its section, which names its own command and commit.',
    '',
    ...mdTable(
      ['', ''],
      [
        ['command', `\`${env.command}\``],
        ['commit', env.commit ? `\`${env.commit}\`${env.dirty ? ' plus uncommitted changes' : ''}` : 'unknown'],
        ['machine', machineLine(env)],
        ['Node', env.node],
        ['date', env.date],
        ['seed / sizes', `${report.options.seed} / ${report.options.sizes.map((s) => s.toLocaleString('en-US')).join(', ')}${report.options.quick ? ' (--quick)' : ''}`],
      ],
    ),
    '',
    '## Where cairn stands',
    '',
    ...mdTable(
      ['suite', 'target (SPEC §9)', 'status'],
      SPEC_SUITES.map((spec) => [`[${spec.name}](#${spec.name})`, spec.target, summaryStatus(byName.get(spec.name))]),
    ),
    ...chartLines(options),
  ];
  for (const spec of SPEC_SUITES) {
    const result = byName.get(spec.name);
    lines.push('', `## ${spec.name}`, '', `Measures: ${spec.measures}. Anchor: ${spec.anchor}. Target: ${spec.target}.`, '');
    if (!result) {
      lines.push('_Not run in this pass._');
      continue;
    }
    if (result.status !== 'ok') {
      lines.push(
        result.reason === NOT_IMPLEMENTED
          ? `_Not yet implemented — no figures. The suite will live in \`bench/src/suites/${spec.name}.ts\`._`
          : `_${result.status === 'skipped' ? 'Skipped' : 'Failed'}: ${result.reason ?? 'no reason given'}._`,
      );
      continue;
    }
    lines.push(...suiteBody(result));
  }
  // Suites beyond SPEC §9's list (e.g. `vectors`) get a section of their own after them.
  const specNames = new Set(SPEC_SUITES.map((spec) => spec.name));
  for (const result of report.results.filter((r) => !specNames.has(r.suite))) {
    lines.push('', `## ${result.suite}`, '', `Measures: ${result.description}. Not a SPEC §9 suite; targets shown are the issue's.`, '');
    if (result.status !== 'ok') {
      lines.push(`_${result.status === 'skipped' ? 'Skipped' : 'Failed'}: ${result.reason ?? 'no reason given'}._`);
      continue;
    }
    lines.push(...suiteBody(result));
  }
  lines.push('', '## How these are measured', '', ...METHOD, '');
  return `${lines.join('\n')}\n`;
}

/** A suite's figures, its datasets and how long it ran. */
function suiteBody(result: SuiteResult): string[] {
  return [
    ...mdTable(HEADER, rows(result.metrics)),
    '',
    'Datasets:',
    '',
    ...result.datasets.map((d) => `- ${datasetLine(d)}`),
    '',
    `Suite time ${(result.durationMs / 1000).toFixed(1)} s; 1-minute load average ${result.load.start} at its start, ${result.load.end} at its end (${result.env.machine.cores} cores).`,
    `Measured by \`${result.env.command}\` at commit ${result.env.commit ? `\`${result.env.commit.slice(0, 12)}\`${result.env.dirty ? ' plus uncommitted changes' : ''}` : 'unknown'} on ${result.env.date}.`,
  ];
}

const METHOD = [
  '- **Corpus.** A seeded synthetic corpus (`bench/src/corpus.ts`) that looks like a coding agent\'s memory: unique',
  '  identifiers in camel/snake/Pascal case, signatures in TypeScript, Python, Rust, Go, Java and Ruby,',
  '  `path/to/file.ext:line` findings, test commands with flags, prose rules, preferences, corrections and',
  '  decisions, ten projects, session/project/user scopes, kinds and tags with skewed frequencies, lengths',
  '  mostly 60–300 characters with a tail to ~1,500, plus ~3% revised (superseded) and ~1% forgotten rows.',
  '  It is written through `prepareMemory` and `Store.writeMemory` (what `remember` stores) and cached under',
  '  `<home>/bench-cache/`, keyed by generator version, schema version, seed and size (a corpus cached under',
  '  an earlier schema is copied and brought forward by the store\'s own migrations); each measurement runs',
  '  on a fresh copy. Its sha256 is taken over the generated memories.',
  '- **Known answers.** Up to 1,000 memories per corpus are the answer of one query each, built from the',
  '  memory\'s distinctive identifier written in another case style plus a paraphrase word, its `path:line`,',
  '  or the identifier\'s words plus the file name. Latency is measured on searches that find something,',
  '  and the hit rate (the known answer in the top 10) is reported beside it.',
  '- **Timing.** In-process, one call at a time, `process.hrtime.bigint()` around each call, warmup calls',
  '  excluded; percentiles are nearest-rank. Recall runs BM25-only (no embedder), with `touch: false` and on',
  '  the real path (touch). Baselines on the same database and terms: a bare FTS5 `MATCH … ORDER BY rank`,',
  '  and the store\'s `searchText` (the same match joined with the memory filter).',
  '- **Writes.** `remember` on a store pre-filled with the corpus, with no embedder and with the hash embedder',
  '  (`hash:v1:64`, on a corpus embedded with it); embedding alone is timed on the same texts, so the target',
  '  "2 ms plus embedding" is judged as p50 ≤ 2 ms + embedding p50.',
];
