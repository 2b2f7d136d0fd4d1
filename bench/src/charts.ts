/**
 * Hand-written SVG charts for docs/BENCHMARKS.md (no chart library): latency against corpus size,
 * quality by ranker and retrieval mode, fidelity per session, and the peers table as bars. Each
 * chart is a self-contained SVG document (fixed width, system font, no scripts), built only from
 * a bench report, so `cairn bench all --write-docs` regenerates them with the page.
 */
import { sizeLabel } from './metrics.js';
import type { BenchReport, Metric, SuiteResult } from './types.js';

export interface ChartFile {
  /** File name without folder, e.g. `latency.svg`. */
  file: string;
  /** Alt text / caption. */
  title: string;
  svg: string;
}

export interface Series {
  name: string;
  points: { x: number; y: number }[];
}

export interface BarGroup {
  /** Heading shown above the group's bars (may be empty). */
  name: string;
  bars: { label: string; value: number }[];
}

const WIDTH = 720;
const FONT = 'font-family="-apple-system, Segoe UI, Helvetica, Arial, sans-serif"';
const PALETTE = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#ca8a04', '#db2777'];

export function escapeXml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&apos;');
}

const fmt = (n: number): string => String(Number(n.toFixed(2)));

function svgDoc(height: number, title: string, body: string[]): string {
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" role="img" ${FONT} font-size="12">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect x="0" y="0" width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="${WIDTH / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(title)}</text>`,
    ...body,
    `</svg>`,
    '',
  ].join('\n');
}

function valueLabel(value: number, unit: string): string {
  if (unit === 'ms') return value < 10 ? `${value.toFixed(2)} ms` : `${value.toFixed(1)} ms`;
  if (unit === 'share') return value.toFixed(3);
  return `${fmt(value)}${unit ? ` ${unit}` : ''}`;
}

/** "Nice" upper bound for an axis. */
function niceMax(max: number): number {
  if (!(max > 0)) return 1;
  const exp = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * exp >= max) return m * exp;
  return 10 * exp;
}

/**
 * Lines over a logarithmic x axis (corpus size) and a linear y axis; each series is drawn with
 * its points marked and labelled with their value.
 */
export function lineChart(options: { title: string; xLabel: string; yLabel: string; unit: string; series: Series[] }): string {
  const series = options.series.filter((s) => s.points.length > 0);
  const height = 380;
  const left = 70;
  const right = WIDTH - 190;
  const top = 45;
  const bottom = height - 55;
  const xs = [...new Set(series.flatMap((s) => s.points.map((p) => p.x)))].sort((a, b) => a - b);
  const yMax = niceMax(Math.max(0, ...series.flatMap((s) => s.points.map((p) => p.y))));
  const lx = (x: number): number => Math.log10(Math.max(1, x));
  const x0 = xs.length > 0 ? lx(xs[0] as number) : 0;
  const x1 = xs.length > 0 ? lx(xs[xs.length - 1] as number) : 1;
  const px = (x: number): number => (x1 === x0 ? (left + right) / 2 : left + ((lx(x) - x0) / (x1 - x0)) * (right - left));
  const py = (y: number): number => bottom - (y / yMax) * (bottom - top);
  const body: string[] = [];
  // axes and grid
  body.push(`<g class="axes" stroke="#333" stroke-width="1"><line x1="${left}" y1="${bottom}" x2="${right}" y2="${bottom}"/><line x1="${left}" y1="${top}" x2="${left}" y2="${bottom}"/></g>`);
  for (let i = 0; i <= 4; i++) {
    const v = (yMax * i) / 4;
    const y = fmt(py(v));
    body.push(`<line x1="${left}" y1="${y}" x2="${right}" y2="${y}" stroke="#e5e7eb"/>`);
    body.push(`<text x="${left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${escapeXml(fmt(v))}</text>`);
  }
  for (const x of xs) body.push(`<text x="${fmt(px(x))}" y="${bottom + 16}" text-anchor="middle">${escapeXml(sizeLabel(x))}</text>`);
  body.push(`<text x="${(left + right) / 2}" y="${height - 18}" text-anchor="middle">${escapeXml(options.xLabel)}</text>`);
  body.push(`<text x="16" y="${(top + bottom) / 2}" text-anchor="middle" transform="rotate(-90 16 ${(top + bottom) / 2})">${escapeXml(options.yLabel)}</text>`);
  series.forEach((s, i) => {
    const color = PALETTE[i % PALETTE.length] as string;
    const pts = [...s.points].sort((a, b) => a.x - b.x);
    body.push(`<g class="series" data-name="${escapeXml(s.name)}">`);
    body.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.map((p) => `${fmt(px(p.x))},${fmt(py(p.y))}`).join(' ')}"/>`);
    for (const p of pts) {
      body.push(`<circle cx="${fmt(px(p.x))}" cy="${fmt(py(p.y))}" r="3.5" fill="${color}"/>`);
      body.push(`<text x="${fmt(px(p.x) + 6)}" y="${fmt(py(p.y) - 6)}" font-size="10" fill="${color}">${escapeXml(valueLabel(p.y, options.unit))}</text>`);
    }
    body.push(`</g>`);
    const ly = top + 8 + i * 18;
    body.push(`<rect x="${right + 15}" y="${ly - 6}" width="12" height="12" fill="${color}"/>`);
    body.push(`<text x="${right + 32}" y="${ly}" dominant-baseline="middle">${escapeXml(s.name)}</text>`);
  });
  if (series.length === 0) body.push(`<text x="${WIDTH / 2}" y="${(top + bottom) / 2}" text-anchor="middle" fill="#666">no data in this run</text>`);
  return svgDoc(height, options.title, body);
}

/** Horizontal bars in headed groups; values on a shared linear axis from 0 (max 1 for shares). */
export function barChart(options: { title: string; unit: string; groups: BarGroup[]; max?: number }): string {
  const groups = options.groups.filter((g) => g.bars.length > 0);
  const barH = 16;
  const gap = 5;
  const labelW = 270;
  const left = labelW + 10;
  const right = WIDTH - 70;
  const top = 45;
  const max = options.max ?? niceMax(Math.max(0, ...groups.flatMap((g) => g.bars.map((b) => b.value))));
  const body: string[] = [];
  let y = top;
  groups.forEach((g, gi) => {
    if (g.name) {
      y += 14;
      body.push(`<text x="10" y="${y}" font-weight="bold">${escapeXml(g.name)}</text>`);
      y += 6;
    }
    const color = PALETTE[gi % PALETTE.length] as string;
    for (const b of g.bars) {
      const w = Math.max(0, (Math.min(b.value, max) / max) * (right - left));
      body.push(`<text x="${left - 6}" y="${y + barH / 2}" text-anchor="end" dominant-baseline="middle">${escapeXml(b.label)}</text>`);
      body.push(`<rect class="bar" x="${left}" y="${y}" width="${fmt(w)}" height="${barH}" fill="${color}"/>`);
      body.push(`<text x="${fmt(left + w + 4)}" y="${y + barH / 2}" dominant-baseline="middle" font-size="11">${escapeXml(valueLabel(b.value, options.unit))}</text>`);
      y += barH + gap;
    }
    y += 6;
  });
  if (groups.length === 0) {
    body.push(`<text x="${WIDTH / 2}" y="${top + 30}" text-anchor="middle" fill="#666">no data in this run</text>`);
    y += 50;
  }
  const axisY = y + 2;
  // Grid first, so bars and labels are drawn over it.
  const grid: string[] = [`<line x1="${left}" y1="${axisY}" x2="${right}" y2="${axisY}" stroke="#333"/>`];
  for (let i = 0; i <= 4; i++) {
    const x = fmt(left + (i / 4) * (right - left));
    grid.push(`<line x1="${x}" y1="${top + 20}" x2="${x}" y2="${axisY}" stroke="#e5e7eb"/>`);
    grid.push(`<text x="${x}" y="${axisY + 14}" text-anchor="middle">${escapeXml(fmt((max * i) / 4))}</text>`);
  }
  return svgDoc(axisY + 30, options.title, [...grid, ...body]);
}

/** Vertical bars grouped per category (e.g. per session), one colour per series, with a legend. */
export function groupedBarChart(options: { title: string; unit: string; categories: string[]; series: { name: string; values: (number | null)[] }[]; max?: number }): string {
  const height = 380;
  const left = 55;
  const right = WIDTH - 20;
  const top = 70;
  const bottom = height - 80;
  const max = options.max ?? niceMax(Math.max(0, ...options.series.flatMap((s) => s.values.map((v) => v ?? 0))));
  const n = Math.max(1, options.categories.length);
  const slot = (right - left) / n;
  const barW = Math.max(2, (slot * 0.8) / Math.max(1, options.series.length));
  const py = (v: number): number => bottom - (Math.min(v, max) / max) * (bottom - top);
  const body: string[] = [];
  options.series.forEach((s, i) => {
    const color = PALETTE[i % PALETTE.length] as string;
    const lx = left + i * 170;
    body.push(`<rect x="${lx}" y="36" width="12" height="12" fill="${color}"/><text x="${lx + 17}" y="42" dominant-baseline="middle">${escapeXml(s.name)}</text>`);
  });
  for (let i = 0; i <= 4; i++) {
    const v = (max * i) / 4;
    const y = fmt(py(v));
    body.push(`<line x1="${left}" y1="${y}" x2="${right}" y2="${y}" stroke="#e5e7eb"/>`);
    body.push(`<text x="${left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${escapeXml(fmt(v))}</text>`);
  }
  options.categories.forEach((cat, ci) => {
    const x0 = left + ci * slot + slot * 0.1;
    options.series.forEach((s, si) => {
      const v = s.values[ci];
      if (v === null || v === undefined) return;
      const color = PALETTE[si % PALETTE.length] as string;
      const y = py(v);
      body.push(`<rect class="bar" x="${fmt(x0 + si * barW)}" y="${fmt(y)}" width="${fmt(barW - 1)}" height="${fmt(bottom - y)}" fill="${color}"><title>${escapeXml(`${cat} — ${s.name}: ${valueLabel(v, options.unit)}`)}</title></rect>`);
    });
    const cx = fmt(left + ci * slot + slot / 2);
    const label = cat.length > 14 ? `${cat.slice(0, 13)}…` : cat;
    body.push(`<text x="${cx}" y="${bottom + 12}" text-anchor="end" font-size="10" transform="rotate(-40 ${cx} ${bottom + 12})">${escapeXml(label)}</text>`);
  });
  body.push(`<line x1="${left}" y1="${bottom}" x2="${right}" y2="${bottom}" stroke="#333"/><line x1="${left}" y1="${top}" x2="${left}" y2="${bottom}" stroke="#333"/>`);
  if (options.categories.length === 0) body.push(`<text x="${WIDTH / 2}" y="${(top + bottom) / 2}" text-anchor="middle" fill="#666">no data in this run</text>`);
  return svgDoc(height, options.title, body);
}

// ---------------------------------------------------------------- from a report

function okResult(report: BenchReport, suite: string): SuiteResult | null {
  const r = report.results.find((x) => x.suite === suite);
  return r && r.status === 'ok' ? r : null;
}

/** 10K → 10000, 1M → 1000000, 250 → 250. */
export function parseSizeLabel(label: string): number | null {
  const m = /^(\d+(?:\.\d+)?)([KM]?)$/.exec(label);
  if (!m) return null;
  return Number(m[1]) * (m[2] === 'K' ? 1e3 : m[2] === 'M' ? 1e6 : 1);
}

/** Series from metrics named like `<prefix> @<size><suffix>` (e.g. `recall p50 @10K (bm25, touch)`). */
function seriesFromMetrics(metrics: Metric[], name: string, pattern: RegExp): Series {
  const points: { x: number; y: number }[] = [];
  for (const m of metrics) {
    const match = pattern.exec(m.name);
    const x = match ? parseSizeLabel(match[1] as string) : null;
    if (x !== null && m.value !== null) points.push({ x, y: m.value });
  }
  return { name, points };
}

function latencyChart(report: BenchReport): ChartFile | null {
  const series: Series[] = [];
  const recall = okResult(report, 'recall');
  if (recall) series.push(seriesFromMetrics(recall.metrics, 'recall p50 (touch)', /^recall p50 @(\S+) \(bm25, touch\)$/));
  const context = okResult(report, 'context');
  if (context) {
    series.push(seriesFromMetrics(context.metrics, 'context p50 (query)', /^context p50 @(\S+) \(query\)$/));
    series.push(seriesFromMetrics(context.metrics, 'context p50 (start)', /^context p50 @(\S+) \(session start, no query\)$/));
  }
  const write = okResult(report, 'write');
  if (write) series.push(seriesFromMetrics(write.metrics, 'remember p50', /^remember p50 @(\S+) \(no embedder\)$/));
  if (series.every((s) => s.points.length === 0)) return null;
  const title = 'Latency p50 against corpus size';
  return { file: 'latency.svg', title, svg: lineChart({ title, xLabel: 'memories in the store (log scale)', yLabel: 'p50 (ms)', unit: 'ms', series }) };
}

interface FidelitySession {
  session: string;
  needed: number;
  summary: number;
  cairn: Record<string, number>;
  summaryPlusCairn: number;
  recency?: number;
}

function fidelitySessions(report: BenchReport): FidelitySession[] {
  const r = okResult(report, 'fidelity');
  const sessions = r?.details.sessions;
  return Array.isArray(sessions) ? (sessions as FidelitySession[]).filter((s) => typeof s.session === 'string' && typeof s.needed === 'number') : [];
}

function qualityChart(report: BenchReport): ChartFile | null {
  const groups: BarGroup[] = [];
  const sessions = fidelitySessions(report);
  const total = sessions.reduce((n, s) => n + s.needed, 0);
  if (total > 0) {
    const rankers = [...new Set(sessions.flatMap((s) => Object.keys(s.cairn ?? {})))];
    const pooled = (pick: (s: FidelitySession) => number): number => sessions.reduce((sum, s) => sum + pick(s) * s.needed, 0) / total;
    groups.push({
      name: 'fidelity: share of needed details, by ranker (at summary tokens)',
      bars: [
        { label: 'Claude Code summary', value: pooled((s) => s.summary) },
        ...rankers.map((ranker) => ({ label: `cairn, ${ranker}`, value: pooled((s) => s.cairn[ranker] ?? 0) })),
        { label: 'summary + cairn (composite)', value: pooled((s) => s.summaryPlusCairn) },
      ],
    });
  }
  const locomo = okResult(report, 'locomo');
  if (locomo) {
    const bars = locomo.metrics.filter((m) => m.unit === 'share' && m.value !== null && /^evidence recall@5 /.test(m.name)).map((m) => ({ label: m.name, value: m.value as number }));
    groups.push({ name: 'LoCoMo dev: turn-level evidence recall@5, by retrieval mode', bars });
  }
  const beir = okResult(report, 'beir');
  if (beir) {
    const bars = beir.metrics.filter((m) => m.unit === 'share' && m.value !== null && /nDCG@10/.test(m.name)).map((m) => ({ label: m.name, value: m.value as number }));
    groups.push({ name: 'BEIR: nDCG@10, by retrieval mode', bars });
  }
  if (groups.every((g) => g.bars.length === 0)) return null;
  const title = 'Quality by ranker and retrieval mode';
  return { file: 'quality.svg', title, svg: barChart({ title, unit: 'share', groups, max: 1 }) };
}

function fidelityChart(report: BenchReport): ChartFile | null {
  const sessions = fidelitySessions(report);
  if (sessions.length === 0) return null;
  const title = 'Fidelity per session: share of needed details carried';
  return {
    file: 'fidelity-sessions.svg',
    title,
    svg: groupedBarChart({
      title,
      unit: 'share',
      max: 1,
      categories: sessions.map((s) => `${s.session.replace(/^session-/, '').slice(0, 8)} (${s.needed})`),
      series: [
        { name: 'summary', values: sessions.map((s) => s.summary) },
        { name: 'cairn (composite)', values: sessions.map((s) => s.cairn.composite ?? null) },
        { name: 'summary + cairn', values: sessions.map((s) => s.summaryPlusCairn) },
      ],
    }),
  };
}

interface PeerRowLike {
  peer: string;
  synthetic: { status: string; recallP50Ms: number | null; writeP50Ms: number | null; hitAt10: number | null };
  locomo: { status: string; recallAt5: number | null; recallAt10: number | null };
}

function peersChart(report: BenchReport): ChartFile | null {
  const r = okResult(report, 'peers');
  const rows = Array.isArray(r?.details.rows) ? (r?.details.rows as PeerRowLike[]) : [];
  if (rows.length === 0) return null;
  const size = typeof r?.details.size === 'number' ? sizeLabel(r.details.size) : '';
  const quality = (pick: (row: PeerRowLike) => number | null): BarGroup['bars'] =>
    rows.flatMap((row) => {
      const v = pick(row);
      return v === null ? [] : [{ label: row.peer, value: v }];
    });
  const title = 'Peers: quality on the same workloads';
  return {
    file: 'peers.svg',
    title,
    svg: barChart({
      title,
      unit: 'share',
      max: 1,
      groups: [
        { name: `synthetic known answers: hit@10 @${size}`, bars: quality((row) => row.synthetic.hitAt10) },
        { name: 'LoCoMo dev: evidence recall@5', bars: quality((row) => row.locomo.recallAt5) },
        { name: 'LoCoMo dev: evidence recall@10', bars: quality((row) => row.locomo.recallAt10) },
      ],
    }),
  };
}

/** The suites each chart draws on: a run of only some of them must not redraw it (docs-merge.ts). */
export const CHART_SUITES: Readonly<Record<string, readonly string[]>> = {
  'latency.svg': ['recall', 'context', 'write'],
  'quality.svg': ['fidelity', 'locomo', 'beir'],
  'fidelity-sessions.svg': ['fidelity'],
  'peers.svg': ['peers'],
};

/** The charts a report has data for (a chart with no data in this run is left out). */
export function chartsFor(report: BenchReport): ChartFile[] {
  return [latencyChart(report), qualityChart(report), fidelityChart(report), peersChart(report)].filter((c): c is ChartFile => c !== null);
}
