// Building DOM without HTML strings: every piece of data goes in as a text node or an attribute,
// so memory text (which may contain markup) is always shown as text, never parsed.

const SVG_NS = 'http://www.w3.org/2000/svg';

function apply(el, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.setAttribute('class', Array.isArray(value) ? value.filter(Boolean).join(' ') : value);
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key === 'style' && typeof value === 'object') Object.assign(el.style, value);
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2).toLowerCase(), value);
    else if (key === 'text') el.textContent = String(value);
    else if (key === 'value' && 'value' in el) el.value = value;
    else if (value === true) el.setAttribute(key, '');
    else el.setAttribute(key, String(value));
  }
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** An HTML element: h('div', { class: 'x', onClick }, 'text', child…). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  apply(el, attrs);
  append(el, children);
  return el;
}

/** An SVG element. */
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2).toLowerCase(), value);
    else el.setAttribute(key, String(value));
  }
  append(el, children);
  return el;
}

/** Replace an element's children. */
export function mount(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
const UNITS = [
  ['year', 365 * 86400e3],
  ['month', 30 * 86400e3],
  ['week', 7 * 86400e3],
  ['day', 86400e3],
  ['hour', 3600e3],
  ['minute', 60e3],
];

/** "3 days ago". */
export function ago(ms, now = Date.now()) {
  if (ms === null || ms === undefined) return '—';
  const diff = ms - now;
  for (const [unit, size] of UNITS) if (Math.abs(diff) >= size) return rtf.format(Math.round(diff / size), unit);
  return 'just now';
}

const dateFmt = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
const dayFmt = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });

export function when(ms) {
  return ms === null || ms === undefined ? '—' : dateFmt.format(new Date(ms));
}

export function day(ms) {
  return dayFmt.format(new Date(ms));
}

/** A <time> with the exact date on hover and a relative date shown. */
export function time(ms) {
  if (ms === null || ms === undefined) return h('span', { class: 'muted' }, '—');
  return h('time', { datetime: new Date(ms).toISOString(), title: when(ms) }, ago(ms));
}

const numFmt = new Intl.NumberFormat();
export function num(n) {
  return n === null || n === undefined ? '—' : numFmt.format(n);
}

export function bytes(n) {
  if (n === null || n === undefined) return '—';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n < 10 && i > 0 ? n.toFixed(1) : Math.round(n)} ${units[i]}`;
}

/** `github.com/acme/app` → `acme/app`; null → `no project`. The full name belongs in a title. */
export function projectName(project) {
  if (project === null || project === undefined) return 'no project';
  const parts = project.split('/').filter(Boolean);
  return parts.length >= 2 ? parts.slice(-2).join('/') : project;
}

export function debounce(fn, ms) {
  let timer = 0;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}
