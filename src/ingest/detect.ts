/**
 * Which transcript format a file holds, from its path and its first line(s). Content wins over
 * the path where it is unambiguous, because users copy transcripts around.
 */
import { isObject, type JsonObject } from './text.js';
import type { TranscriptFormat } from './types.js';

const CLAUDE_TYPES = new Set([
  'user',
  'assistant',
  'system',
  'summary',
  'file-history-snapshot',
  'queue-operation',
  'progress',
  'custom-title',
  'attachment',
]);
const CODEX_TYPES = new Set(['session_meta', 'response_item', 'event_msg', 'turn_context', 'compacted', 'world_state']);
const GENERIC_ROLES = new Set(['user', 'assistant', 'tool_call', 'tool_result', 'system']);

/** The outcome of detection: a format, or why the file is not one. */
export type Detection = { format: TranscriptFormat } | { format: null; reason: string };

/** The first parseable JSON objects of the head, lazily (most files are known from line one). */
function* firstJsonLines(head: string, max: number): Generator<JsonObject> {
  let start = 0;
  let yielded = 0;
  while (yielded < max && start < head.length) {
    let end = head.indexOf('\n', start);
    if (end < 0) end = head.length;
    const text = head.slice(start, end).trim();
    start = end + 1;
    if (text.length === 0) continue;
    try {
      const value: unknown = JSON.parse(text);
      if (isObject(value)) {
        yielded++;
        yield value;
      }
    } catch {
      // A truncated first line inside the head, or junk: look at the next one.
    }
  }
}

function classifyLine(line: JsonObject, path: string): TranscriptFormat | null {
  const type = line.type;
  if (typeof type === 'string') {
    if (CODEX_TYPES.has(type) && ('payload' in line || type === 'session_meta')) return 'codex';
    if (CLAUDE_TYPES.has(type) && ('uuid' in line || 'sessionId' in line || 'leafUuid' in line || 'messageId' in line)) {
      return 'claude-code';
    }
    if ((type === 'user' || type === 'gemini' || type === 'info') && 'id' in line && 'content' in line) return 'gemini-jsonl';
  }
  if ('sessionId' in line && 'projectHash' in line) return 'gemini-jsonl';
  if ('turn' in line && typeof line.role === 'string' && GENERIC_ROLES.has(line.role)) return 'generic';
  if (typeof line.role === 'string' && isObject(line.message) && 'content' in line.message) return 'cursor';
  if (path.includes('/.codex/') && (typeof line.role === 'string' || typeof line.type === 'string')) return 'codex';
  return null;
}

/**
 * The shape of a first line too long to parse from the head (a 50 MB tool result), from how
 * each agent starts its lines.
 */
const PARTIAL_FIRST_LINE: Array<[RegExp, TranscriptFormat]> = [
  [/^\{"timestamp":"[^"]*","type":"(?:session_meta|response_item|event_msg|turn_context|compacted)"/, 'codex'],
  [/^\{"parentUuid":|^\{"type":"(?:summary|file-history-snapshot|queue-operation)"/, 'claude-code'],
  [/^\{\s*"sessionId"\s*:\s*"[^"]*"\s*,\s*"projectHash"/, 'gemini-jsonl'],
  [/^\{\s*"turn"\s*:\s*\d+\s*,\s*"role"\s*:\s*"/, 'generic'],
  [/^\{"role":"(?:user|assistant)","message":\{/, 'cursor'],
];

function byPath(path: string): TranscriptFormat | null {
  const p = path.replaceAll('\\', '/');
  if (/\/rollout-[^/]*\.jsonl$/.test(p) || p.includes('/.codex/sessions/')) return 'codex';
  if (p.includes('/.claude/projects/')) return 'claude-code';
  if (p.includes('/agent-transcripts/')) return 'cursor';
  if (p.includes('/.gemini/tmp/')) return p.endsWith('.jsonl') ? 'gemini-jsonl' : 'gemini-json';
  return null;
}

/**
 * Detect the format of `path` from its first bytes (`head`, typically 64 KiB).
 * JSONL formats are recognised from their first parseable lines; a head without one falls back
 * to the path (`~/.claude/projects/…`, `rollout-*.jsonl`, …).
 */
export function detectFormat(path: string, head: string): Detection {
  const lower = path.toLowerCase();
  const trimmed = head.trimStart();
  if (lower.endsWith('.md')) {
    if (lower.endsWith('.aider.chat.history.md') || /^# aider chat started at /m.test(head)) return { format: 'aider' };
    return { format: null, reason: 'markdown that is not an Aider chat history' };
  }
  if (lower.endsWith('.json')) {
    if (trimmed.startsWith('[')) return { format: null, reason: 'JSON array (e.g. a Gemini prompt log), not a chat' };
    if (!trimmed.startsWith('{')) return { format: null, reason: 'not a JSON object' };
    if (/"messages"\s*:|"history"\s*:/.test(head) || lower.includes('/chats/')) return { format: 'gemini-json' };
    return { format: null, reason: 'JSON without messages or history' };
  }
  if (!lower.endsWith('.jsonl')) return { format: null, reason: 'not a transcript file type' };
  if (trimmed.length === 0) {
    const hinted = byPath(path);
    return hinted ? { format: hinted } : { format: null, reason: 'empty file' };
  }
  for (const line of firstJsonLines(head, 8)) {
    const format = classifyLine(line, path);
    if (format) return { format };
  }
  for (const [pattern, format] of PARTIAL_FIRST_LINE) if (pattern.test(trimmed)) return { format };
  const hinted = byPath(path);
  if (hinted) return { format: hinted };
  return { format: null, reason: 'first lines match no known transcript format' };
}
