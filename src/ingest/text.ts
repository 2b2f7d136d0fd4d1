/**
 * Small, allocation-light helpers the readers share: safe field access on parsed JSON, text
 * extraction from the content shapes agents use, bounding long text, timestamps.
 */

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

export function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

export function obj(value: unknown): JsonObject | null {
  return isObject(value) ? value : null;
}

/** Bounds per kind of text, in UTF-16 code units. */
export const LIMITS = {
  /** User and assistant words. */
  message: 32_000,
  /** Compaction summaries (they run long and are worth keeping whole). */
  summary: 64_000,
  /** Tool input / output summaries. */
  tool: 2_000,
  /** System and command output. */
  system: 2_000,
  /** Session titles. */
  title: 200,
} as const;

/** How far a cut may move to land on whitespace, so a token (possibly a secret) is never split. */
const CUT_SLACK = 120;

/**
 * Keep the head and the tail of a long text, cutting on whitespace so that no token is split in
 * two (a half secret would slip past the redactor), with a marker saying how much was dropped.
 */
export function bound(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.max(1, Math.floor(max / 2));
  let headEnd = half;
  const headSpace = lastWhitespace(text, half, half - CUT_SLACK);
  if (headSpace > 0) headEnd = headSpace;
  else headEnd = dropPartialToken(text, half);
  let tailStart = text.length - half;
  const tailSpace = firstWhitespace(text, tailStart, tailStart + CUT_SLACK);
  if (tailSpace >= 0) tailStart = tailSpace + 1;
  else tailStart = skipPartialToken(text, tailStart);
  if (tailStart <= headEnd) return text.slice(0, max);
  return `${text.slice(0, headEnd).trimEnd()}\n…[${tailStart - headEnd} chars omitted]…\n${text.slice(tailStart).trimStart()}`;
}

function isSpace(code: number): boolean {
  return code === 32 || code === 10 || code === 9 || code === 13;
}

function lastWhitespace(text: string, from: number, to: number): number {
  for (let i = from; i > Math.max(0, to); i--) if (isSpace(text.charCodeAt(i))) return i;
  return -1;
}

function firstWhitespace(text: string, from: number, to: number): number {
  const end = Math.min(text.length, to);
  for (let i = from; i < end; i++) if (isSpace(text.charCodeAt(i))) return i;
  return -1;
}

/** A very long unbroken run at the cut: drop it whole rather than keep half of it. */
function dropPartialToken(text: string, at: number): number {
  let i = at;
  while (i > 0 && !isSpace(text.charCodeAt(i - 1))) i--;
  return i;
}

function skipPartialToken(text: string, at: number): number {
  let i = at;
  while (i < text.length && !isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** Epoch milliseconds from an ISO string, epoch seconds or epoch milliseconds; null otherwise. */
export function toTime(value: unknown): number | null {
  if (typeof value === 'string') {
    const t = Date.parse(value);
    return Number.isNaN(t) ? null : t;
  }
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) {
    return value < 1e11 ? Math.round(value * 1000) : Math.round(value);
  }
  return null;
}

/**
 * The readable text of a content value in any of the shapes agents write: a string, an array of
 * blocks (`{type:'text', text}`, `{type:'output_text'|'input_text', text}`, `{text}`), or a block.
 * Images and other binary blocks become a short placeholder.
 */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    let out = '';
    for (const part of content) {
      const text = blockText(part);
      if (text.length === 0) continue;
      out = out.length === 0 ? text : `${out}\n${text}`;
    }
    return out;
  }
  return blockText(content);
}

function blockText(block: unknown): string {
  if (typeof block === 'string') return block;
  if (!isObject(block)) return '';
  const text = block.text;
  if (typeof text === 'string') return text;
  const type = block.type;
  if (type === 'image' || type === 'input_image' || type === 'image_url') return '[image]';
  if (type === 'document') return '[document]';
  if (block.content !== undefined && block.content !== block) return contentText(block.content);
  return '';
}

/** Compact JSON of a value for tool summaries; strings are kept as they are. */
export function compactJson(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

/** Argument names that say what a tool call does, most telling first. */
const PRIMARY_ARGS = [
  'command',
  'cmd',
  'pattern',
  'query',
  'file_path',
  'absolute_path',
  'path',
  'notebook_path',
  'url',
  'description',
  'prompt',
  'objective',
  'skill',
] as const;

/** A one-line description of a tool call: `Bash: npm test`, `Edit: src/a.ts`. */
export function describeToolCall(name: string, input: unknown): string {
  let args: unknown = input;
  if (typeof input === 'string') {
    const trimmed = input.trimStart();
    if (trimmed.startsWith('{')) {
      try {
        args = JSON.parse(input);
      } catch {
        args = input;
      }
    }
  }
  if (isObject(args)) {
    for (const key of PRIMARY_ARGS) {
      const value = args[key];
      if (typeof value === 'string' && value.length > 0) return `${name}: ${bound(value, 1_000)}`;
      if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string')) {
        return `${name}: ${bound(value.join(' '), 1_000)}`;
      }
    }
    return `${name}: ${bound(compactJson(args), 500)}`;
  }
  if (typeof args === 'string' && args.length > 0) return `${name}: ${bound(args, 1_000)}`;
  return name;
}

const REMINDER_OPEN = '<system-reminder>';
const REMINDER_SPAN = /<system-reminder>[\s\S]*?(?:<\/system-reminder>|$)/g;

/** Remove `<system-reminder>` spans (hook-injected context, including cairn's own). */
export function stripSystemReminders(text: string): string {
  if (!text.includes(REMINDER_OPEN)) return text;
  return text.replace(REMINDER_SPAN, '').trim();
}

/** The text between `<tag>` and `</tag>`, or null. */
export function tagContent(text: string, tag: string): string | null {
  const open = `<${tag}>`;
  const start = text.indexOf(open);
  if (start < 0) return null;
  const close = text.indexOf(`</${tag}>`, start + open.length);
  return text.slice(start + open.length, close < 0 ? text.length : close);
}

/** Cheap stable 32-bit FNV-1a hash as 8 hex chars, for ids derived from paths. */
export function shortHash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}

/** File name without directory and without the last extension(s) given. */
export function stem(path: string, ...extensions: string[]): string {
  const slash = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  let name = path.slice(slash + 1);
  for (const ext of extensions) if (name.endsWith(ext)) name = name.slice(0, -ext.length);
  return name;
}
