import { existsSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { barChart, chartsFor, escapeXml, groupedBarChart, lineChart } from '../../bench/src/charts.js';
import { metric } from '../../bench/src/metrics.js';
import { renderDocs, writeDocs } from '../../bench/src/report.js';
import type { BenchReport, Metric, RunEnv, SuiteResult } from '../../bench/src/types.js';
import { tempDir } from '../helpers/cli.js';

const root = tempDir('cairn-bench-charts-');
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Node {
  name: string;
  attrs: Record<string, string>;
  children: Node[];
  text: string;
}

/** A rough XML parser: enough to prove an SVG is well-formed (balanced tags, quoted attributes, escaped text). */
function parseXml(xml: string): Node {
  const body = xml.replace(/^<\?xml[^?]*\?>\s*/, '');
  const root: Node = { name: '#root', attrs: {}, children: [], text: '' };
  const stack: Node[] = [root];
  const tag = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/y;
  let i = 0;
  while (i < body.length) {
    const lt = body.indexOf('<', i);
    const text = lt === -1 ? body.slice(i) : body.slice(i, lt);
    if (/&(?!(amp|lt|gt|quot|apos|#\d+);)/.test(text)) throw new Error(`unescaped & in text: ${text}`);
    (stack[stack.length - 1] as Node).text += text;
    if (lt === -1) break;
    tag.lastIndex = lt;
    const m = tag.exec(body);
    if (!m) throw new Error(`malformed tag at ${lt}: ${body.slice(lt, lt + 60)}`);
    const [, close, name, rawAttrs, selfClose] = m as unknown as [string, string, string, string, string];
    if (close) {
      const open = stack.pop();
      if (!open || open.name !== name) throw new Error(`</${name}> closes <${open?.name}>`);
    } else {
      const attrs: Record<string, string> = {};
      for (const a of rawAttrs.matchAll(/([\w:-]+)="([^"]*)"/g)) {
        if (a[1]! in attrs) throw new Error(`duplicate attribute ${a[1]}`);
        attrs[a[1]!] = a[2]!;
      }
      const node: Node = { name, attrs, children: [], text: '' };
      (stack[stack.length - 1] as Node).children.push(node);
      if (!selfClose) stack.push(node);
    }
    i = tag.lastIndex;
  }
  if (stack.length !== 1) throw new Error(`unclosed <${stack[stack.length - 1]?.name}>`);
  const elements = root.children;
  if (elements.length !== 1) throw new Error(`expected one root element, got ${elements.length}`);
  return elements[0] as Node;
}

function all(node: Node, name: string): Node[] {
  return [...(node.name === name ? [node] : []), ...node.children.flatMap((c) => all(c, name))];
}

function expectSvg(svg: string): Node {
  const doc = parseXml(svg);
  expect(doc.name).toBe('svg');
  expect(doc.attrs.xmlns).toBe('http://www.w3.org/2000/svg');
  expect(Number(doc.attrs.width)).toBeGreaterThan(0);
  expect(Number(doc.attrs.height)).toBeGreaterThan(0);
  expect(all(doc, 'title').length).toBeGreaterThan(0);
  for (const n of [...all(doc, 'rect'), ...all(doc, 'circle'), ...all(doc, 'line'), ...all(doc, 'text')]) {
    for (const [k, v] of Object.entries(n.attrs)) if (['x', 'y', 'width', 'height', 'cx', 'cy', 'x1', 'x2', 'y1', 'y2'].includes(k)) expect(Number.isFinite(Number(v)), `${n.name} ${k}="${v}"`).toBe(true);
  }
  return doc;
}

const env = {
  command: 'cairn bench all --quick',
  commit: 'abc',
  dirty: false,
  machine: { cpu: 'cpu', cores: 2, memoryBytes: 2 ** 30, platform: 'linux', arch: 'x64', loadAverage: [] },
  node: 'v20',
  date: '2026-01-01T00:00:00.000Z',
} as RunEnv;

function result(suite: string, metrics: Metric[], details: Record<string, unknown> = {}): SuiteResult {
  // `load` is cast in so the fixture fits both the current and the next SuiteResult shape.
  return { suite, description: suite, status: 'ok', reason: null, env, datasets: [], metrics, details, durationMs: 1, load: { start: 0, end: 0 } } as SuiteResult;
}

function fullReport(): BenchReport {
  return {
    schema: 'cairn-bench/1',
    env,
    options: { suites: ['all'], quick: true, seed: 42, sizes: [10_000, 100_000], data: '/data' },
    results: [
      result('recall', [metric('recall p50 @10K (bm25, touch)', 1.2, 'ms'), metric('recall p50 @100K (bm25, touch)', 3.4, 'ms'), metric('recall p95 @10K (bm25, touch)', 9, 'ms')]),
      result('context', [metric('context p50 @10K (query)', 2, 'ms'), metric('context p50 @100K (query)', 6, 'ms'), metric('context p50 @100K (session start, no query)', 5, 'ms')]),
      result('write', [metric('remember p50 @10K (no embedder)', 0.8, 'ms'), metric('remember p50 @100K (no embedder)', 1.5, 'ms')]),
      result('locomo', [metric('evidence recall@5 (bm25)', 0.6, 'share'), metric('evidence recall@5 (hybrid)', 0.7, 'share'), metric('evidence recall@10 (bm25)', 0.7, 'share')]),
      result('beir', [metric('scifact nDCG@10 (bm25)', 0.66, 'share'), metric('scifact recall@100 (bm25)', 0.9, 'share')]),
      result('fidelity', [], {
        sessions: [
          { session: 'aaaaaaaa-1111', needed: 10, summary: 0.2, cairn: { composite: 0.5, recency: 0.3 }, summaryPlusCairn: 0.6 },
          { session: 'bbbbbbbb-<&>', needed: 30, summary: 0.1, cairn: { composite: 0.4, recency: 0.2 }, summaryPlusCairn: 0.45 },
        ],
      }),
      result('peers', [], {
        size: 1000,
        rows: [
          { peer: 'cairn', synthetic: { status: 'ok', recallP50Ms: 1, writeP50Ms: 2, hitAt10: 1 }, locomo: { status: 'ok', recallAt5: 0.5, recallAt10: 0.6 } },
          { peer: 'ghost', synthetic: { status: 'unavailable', recallP50Ms: null, writeP50Ms: null, hitAt10: null }, locomo: { status: 'unavailable', recallAt5: null, recallAt10: null } },
        ],
      }),
    ],
  };
}

describe('SVG charts', () => {
  it('escapes text for XML', () => {
    expect(escapeXml(`a<b & "c" 'd'>`)).toBe('a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;');
  });

  it('draws a line chart with one polyline and a marker per point', () => {
    const doc = expectSvg(lineChart({ title: 'T <1>', xLabel: 'size', yLabel: 'ms', unit: 'ms', series: [{ name: 'a', points: [{ x: 1000, y: 1 }, { x: 10_000, y: 2 }] }, { name: 'b & c', points: [{ x: 10_000, y: 5 }] }] }));
    expect(all(doc, 'polyline')).toHaveLength(2);
    expect(all(doc, 'circle')).toHaveLength(3);
    expect(all(doc, 'title')[0]!.text).toBe('T &lt;1&gt;');
  });

  it('draws bar charts, and says so when there is nothing to draw', () => {
    const bars = expectSvg(barChart({ title: 'q', unit: 'share', max: 1, groups: [{ name: 'g', bars: [{ label: 'x', value: 0.5 }, { label: 'y', value: 2 }] }] }));
    const rects = all(bars, 'rect').filter((r) => r.attrs.class === 'bar');
    expect(rects).toHaveLength(2);
    expect(Number(rects[1]!.attrs.width)).toBeGreaterThan(Number(rects[0]!.attrs.width));
    const empty = expectSvg(barChart({ title: 'q', unit: 'share', groups: [] }));
    expect(all(empty, 'text').some((t) => t.text.includes('no data'))).toBe(true);
    const grouped = expectSvg(groupedBarChart({ title: 'g', unit: 'share', categories: ['s1', 's2'], series: [{ name: 'a', values: [0.1, null] }, { name: 'b', values: [0.2, 0.3] }] }));
    expect(all(grouped, 'rect').filter((r) => r.attrs.class === 'bar')).toHaveLength(3);
  });

  it('builds the latency, quality, fidelity and peers charts from a report', () => {
    const charts = chartsFor(fullReport());
    expect(charts.map((c) => c.file)).toEqual(['latency.svg', 'quality.svg', 'fidelity-sessions.svg', 'peers.svg']);
    const [latency, quality, fidelity, peers] = charts.map((c) => expectSvg(c.svg)) as [Node, Node, Node, Node];
    expect(all(latency, 'polyline')).toHaveLength(4); // recall, context query, context start, remember
    expect(all(latency, 'g').filter((g) => g.attrs.class === 'series').map((g) => g.attrs['data-name'])).toContain('remember p50');
    const qualityLabels = all(quality, 'text').map((t) => t.text);
    expect(qualityLabels).toContain('cairn, recency');
    expect(qualityLabels).toContain('evidence recall@5 (hybrid)');
    expect(qualityLabels).toContain('scifact nDCG@10 (bm25)');
    expect(qualityLabels).not.toContain('scifact recall@100 (bm25)');
    // pooled by needed details: summary (0.2·10 + 0.1·30) / 40 = 0.125
    expect(qualityLabels).toContain('0.125');
    expect(all(fidelity, 'rect').filter((r) => r.attrs.class === 'bar')).toHaveLength(6);
    expect(all(peers, 'rect').filter((r) => r.attrs.class === 'bar')).toHaveLength(3);
  });

  it('leaves out charts a run has no data for', () => {
    const report = fullReport();
    report.results = report.results.filter((r) => r.suite === 'recall');
    expect(chartsFor(report).map((c) => c.file)).toEqual(['latency.svg']);
    report.results = [];
    expect(chartsFor(report)).toEqual([]);
  });

  it('writes the charts next to the page and embeds them as images', () => {
    const page = join(root, 'docs', 'BENCHMARKS.md');
    const written = writeDocs(fullReport(), page);
    expect(written).toContain(page);
    for (const file of ['latency.svg', 'quality.svg', 'fidelity-sessions.svg', 'peers.svg']) {
      const path = join(root, 'docs', 'bench', file);
      expect(existsSync(path)).toBe(true);
      expectSvg(readFileSync(path, 'utf8'));
    }
    const md = readFileSync(page, 'utf8');
    expect(md).toContain('## Charts');
    expect(md).toContain('![Latency p50 against corpus size](bench/latency.svg)');
    expect(md).toContain('(bench/fidelity-sessions.svg)');
    expect(renderDocs(fullReport())).not.toContain('## Charts');
  });

  it('a run of some suites redraws only the charts drawn from those suites, and keeps the other sections', () => {
    const page = join(root, 'partial', 'BENCHMARKS.md');
    writeDocs(fullReport(), page);
    const quality = join(root, 'partial', 'bench', 'quality.svg');
    const fidelity = join(root, 'partial', 'bench', 'fidelity-sessions.svg');
    writeFileSync(quality, 'kept');
    writeFileSync(fidelity, 'redrawn');
    const before = readFileSync(page, 'utf8');
    const some = fullReport();
    some.results = some.results.filter((r) => r.suite === 'fidelity');
    writeDocs(some, page);
    expect(readFileSync(quality, 'utf8')).toBe('kept'); // it also draws LoCoMo and BEIR
    expect(readFileSync(fidelity, 'utf8')).not.toBe('redrawn');
    const after = readFileSync(page, 'utf8');
    const section = (md: string, name: string): string => md.split(`\n## ${name}\n`)[1]!.split('\n## ')[0]!;
    expect(section(after, 'recall')).toBe(section(before, 'recall'));
  });
});
