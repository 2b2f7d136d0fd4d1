// Small charts drawn as inline SVG (no chart library): growth over time, a donut, bar lists.
import { day, h, num, s } from './dom.js';

/** Memories written per bucket (bars) and the running total (line). `unit`: day, week or month. */
export function growthChart({ unit, buckets: raw }, { width = 720, height = 200 } = {}) {
  if (raw.length === 0) return h('p', { class: 'muted' }, 'No memories yet.');
  let running = 0;
  const buckets = raw.map((b) => ({ ...b, total: (running += b.created) }));
  const pad = { l: 48, r: 62, t: 12, b: 24 };
  const w = width - pad.l - pad.r;
  const hgt = height - pad.t - pad.b;
  const maxBar = Math.max(...buckets.map((b) => b.created), 1);
  const maxTotal = Math.max(running, 1);
  const bw = w / buckets.length;
  const x = (i) => pad.l + i * bw;
  const yBar = (v) => pad.t + hgt - (v / maxBar) * hgt;
  const yTot = (v) => pad.t + hgt - (v / maxTotal) * hgt;
  const line = buckets.map((b, i) => `${i === 0 ? 'M' : 'L'}${(x(i) + bw / 2).toFixed(1)},${yTot(b.total).toFixed(1)}`).join(' ');
  const area = `${line} L${(x(buckets.length - 1) + bw / 2).toFixed(1)},${pad.t + hgt} L${(x(0) + bw / 2).toFixed(1)},${pad.t + hgt} Z`;
  const ticks = [0, 0.5, 1];
  const labelIdx = [...new Set([0, Math.floor((buckets.length - 1) / 2), buckets.length - 1])];
  const label = (ms) => (unit === 'month' ? new Date(ms).toLocaleDateString(undefined, { month: 'short', year: 'numeric' }) : day(ms));
  return s(
    'svg',
    { viewBox: `0 0 ${width} ${height}`, width, height, class: 'chart growth', role: 'img', 'aria-label': `Memories over time: ${num(running)} written, per ${unit}` },
    ticks.map((t) => s('line', { x1: pad.l, x2: pad.l + w, y1: pad.t + hgt * (1 - t), y2: pad.t + hgt * (1 - t), class: 'grid' })),
    ticks.map((t) => s('text', { x: pad.l - 6, y: pad.t + hgt * (1 - t) + 4, class: 'axis', 'text-anchor': 'end' }, num(Math.round(maxBar * t)))),
    ticks.map((t) => s('text', { x: pad.l + w + 6, y: pad.t + hgt * (1 - t) + 4, class: 'axis total' }, num(Math.round(maxTotal * t)))),
    buckets.map((b, i) =>
      s(
        'rect',
        { x: (x(i) + Math.max(0.5, bw * 0.15)).toFixed(1), y: yBar(b.created).toFixed(1), width: Math.max(1, bw * 0.7).toFixed(1), height: Math.max(0, pad.t + hgt - yBar(b.created)).toFixed(1), class: 'bar' },
        s('title', {}, `${unit === 'day' ? '' : `${unit} of `}${label(b.start)}: ${num(b.created)} written · ${num(b.total)} in all`),
      ),
    ),
    s('path', { d: area, class: 'area' }),
    s('path', { d: line, class: 'line' }),
    labelIdx.map((i) => s('text', { x: x(i) + bw / 2, y: height - 6, class: 'axis', 'text-anchor': i === 0 ? 'start' : i === buckets.length - 1 ? 'end' : 'middle' }, label(buckets[i].start))),
  );
}

/** A donut of parts ({ key, label, value }) with a legend; colours come from CSS classes `seg-<key>`. */
export function donut(parts, { size = 150, thickness = 22, center } = {}) {
  const total = parts.reduce((a, p) => a + p.value, 0);
  const r = size / 2 - thickness / 2 - 1;
  const c = 2 * Math.PI * r;
  let offset = 0;
  const arcs = parts
    .filter((p) => p.value > 0)
    .map((p) => {
      const len = total ? (p.value / total) * c : 0;
      const arc = s(
        'circle',
        { cx: size / 2, cy: size / 2, r, class: `seg seg-${p.key}`, 'stroke-width': thickness, 'stroke-dasharray': `${len.toFixed(2)} ${(c - len).toFixed(2)}`, 'stroke-dashoffset': (-offset).toFixed(2), transform: `rotate(-90 ${size / 2} ${size / 2})` },
        s('title', {}, `${p.label}: ${num(p.value)} (${total ? Math.round((p.value / total) * 100) : 0}%)`),
      );
      offset += len;
      return arc;
    });
  return h(
    'div',
    { class: 'donut' },
    s(
      'svg',
      { viewBox: `0 0 ${size} ${size}`, width: size, height: size, role: 'img', 'aria-label': parts.map((p) => `${p.label} ${p.value}`).join(', ') },
      s('circle', { cx: size / 2, cy: size / 2, r, class: 'seg-track', 'stroke-width': thickness }),
      arcs,
      s('text', { x: size / 2, y: size / 2 + 2, class: 'donut-n', 'text-anchor': 'middle' }, num(total)),
      s('text', { x: size / 2, y: size / 2 + 18, class: 'donut-l', 'text-anchor': 'middle' }, center ?? 'total'),
    ),
    h(
      'ul',
      { class: 'legend' },
      parts.map((p) => h('li', {}, h('span', { class: `swatch sw-${p.key}` }), h('span', { class: 'lg-label' }, p.label), h('span', { class: 'lg-n' }, num(p.value)))),
    ),
  );
}

/** Horizontal bars: rows of { label, value, title?, onClick?, cutStart? } (cutStart: a label too long loses its start, not its end — project names differ at the end). */
export function barList(rows, { max } = {}) {
  const top = max ?? Math.max(...rows.map((r) => r.value), 1);
  return h(
    'ul',
    { class: 'barlist' },
    rows.map((r) =>
      h(
        'li',
        {
          class: r.onClick ? 'clickable' : '',
          onClick: r.onClick,
          title: r.title ?? '',
          // Reachable and usable from the keyboard like a link.
          ...(r.onClick ? { tabindex: '0', role: 'link', onKeydown: (e) => e.key === 'Enter' && (e.preventDefault(), r.onClick()) } : {}),
        },
        r.cutStart ? h('span', { class: 'bl-label cut-start' }, h('bdi', {}, r.label)) : h('span', { class: 'bl-label' }, r.label),
        h('span', { class: 'bl-track' }, h('span', { class: `bl-fill ${r.cls ?? ''}`, style: { width: `${Math.max(1, (r.value / top) * 100)}%` } })),
        h('span', { class: 'bl-n' }, num(r.value)),
      ),
    ),
  );
}

/**
 * Memories over time, one line per project: the running total of memories written in it.
 * `series`: [{ label, title, total, counts }] with counts per bucket of `starts`.
 */
export function projectLines({ unit, starts, series }, { width = 720, height = 220 } = {}) {
  if (starts.length === 0 || series.length === 0) return h('p', { class: 'muted' }, 'No memories yet.');
  const pad = { l: 44, r: 12, t: 12, b: 24 };
  const w = width - pad.l - pad.r;
  const hgt = height - pad.t - pad.b;
  const lines = series.map((sr) => {
    let running = 0;
    return { ...sr, running: sr.counts.map((c) => (running += c)) };
  });
  const max = Math.max(1, ...lines.map((l) => l.running.at(-1)));
  const step = starts.length > 1 ? w / (starts.length - 1) : 0;
  const x = (i) => pad.l + (starts.length > 1 ? i * step : w / 2);
  const y = (v) => pad.t + hgt - (v / max) * hgt;
  const label = (ms) => (unit === 'month' ? new Date(ms).toLocaleDateString(undefined, { month: 'short', year: 'numeric' }) : day(ms));
  const ticks = [0, 0.5, 1];
  const labelIdx = [...new Set([0, Math.floor((starts.length - 1) / 2), starts.length - 1])];
  return s(
    'svg',
    { viewBox: `0 0 ${width} ${height}`, width, height, class: 'chart lines', role: 'img', 'aria-label': `Memories over time by project: ${lines.map((l) => `${l.label} ${l.total}`).join(', ')}` },
    ticks.map((t) => s('line', { x1: pad.l, x2: pad.l + w, y1: pad.t + hgt * (1 - t), y2: pad.t + hgt * (1 - t), class: 'grid' })),
    ticks.map((t) => s('text', { x: pad.l - 6, y: pad.t + hgt * (1 - t) + 4, class: 'axis', 'text-anchor': 'end' }, num(Math.round(max * t)))),
    lines.map((l, k) =>
      s(
        'g',
        { class: `series series-${k}` },
        s('title', {}, `${l.title}: ${num(l.total)} memories`),
        s('path', { d: l.running.map((v, i) => `${i === 0 ? 'M' : 'L'}${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' '), class: 'series-line' }),
        s('circle', { cx: x(starts.length - 1).toFixed(1), cy: y(l.running.at(-1)).toFixed(1), r: 3, class: 'series-end' }),
      ),
    ),
    labelIdx.map((i) => s('text', { x: x(i), y: height - 6, class: 'axis', 'text-anchor': i === 0 ? 'start' : i === starts.length - 1 ? 'end' : 'middle' }, label(starts[i]))),
  );
}

/** Shares from 0 to 1 as bars, each with its target (a tick) when it has one: [{ label, title?, value, target, pass, note }]. */
export function shareBars(rows) {
  return h(
    'ul',
    { class: 'barlist shares' },
    rows.map((r) =>
      h(
        'li',
        { title: `${r.title ?? r.label}: ${r.value.toFixed(3)}${r.target ? ` (target ${r.target.op} ${r.target.value})` : ''}${r.note ? ` — ${r.note}` : ''}` },
        h('span', { class: 'bl-label' }, r.label),
        h(
          'span',
          { class: 'bl-track' },
          h('span', { class: `bl-fill ${r.pass === false ? 'miss' : r.pass ? 'pass' : ''}`, style: { width: `${Math.max(1, Math.min(1, r.value) * 100)}%` } }),
          r.target ? h('span', { class: 'bl-target', style: { left: `${Math.min(1, r.target.value) * 100}%` } }) : null,
        ),
        h('span', { class: 'bl-n' }, r.value.toFixed(3)),
      ),
    ),
  );
}
