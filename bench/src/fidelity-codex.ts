/**
 * The fidelity measure on Codex rollouts (issue #15 item 8): the same splits, needed details and
 * recency cut as fidelity.ts, read from Codex's `{timestamp, type, payload}` lines. A compaction is
 * a `compacted` line (its summary: `message`, or the last user message of `replacement_history`);
 * sessions without one are cut at the same shares of their conversation as Claude Code's.
 */
import { CUT_FRACTIONS, LONG_SESSION_LINES, MIN_CUT_LINES, neededDetails, parse, recencyBaseline, type CompactSplit, type TranscriptReading } from './fidelity.js';

type Json = Record<string, unknown>;

const payloadOf = (value: Json | null): Json => (value?.payload && typeof value.payload === 'object' ? (value.payload as Json) : {});

/** User messages Codex writes itself (instructions, environment, aborted turns), not the user's words. */
function injected(text: string): boolean {
  const t = text.trimStart();
  return t.startsWith('<') || t.startsWith('# AGENTS.md instructions');
}

function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as Json[])
    .map((c) => (typeof c.text === 'string' ? c.text : ''))
    .filter((t) => t.length > 0)
    .join('\n');
}

/** The string values of a call's arguments (JSON text or object), unescaped. */
function argumentText(args: unknown): string {
  if (typeof args === 'string') {
    const value = args.trimStart().startsWith('{') ? parse(args) : null;
    return value === null ? args : argumentText(value);
  }
  if (Array.isArray(args)) return args.map(argumentText).join('\n');
  if (args && typeof args === 'object') return Object.values(args as Json).map(argumentText).join('\n');
  return '';
}

/** The session a rollout belongs to (its `session_meta`), or null for files that are not rollouts. */
export function codexSession(lines: readonly string[]): { id: string; cwd: string | null } | null {
  for (const line of lines.slice(0, 20)) {
    const value = parse(line);
    if (value?.type !== 'session_meta') continue;
    const meta = payloadOf(value);
    if (typeof meta.id !== 'string' || meta.id.length === 0) return null;
    return { id: meta.id, cwd: typeof meta.cwd === 'string' ? meta.cwd : null };
  }
  return null;
}

/** A user message of the user's own words (not one Codex injected). */
function isUserWords(value: Json | null): boolean {
  const p = payloadOf(value);
  return value?.type === 'response_item' && p.type === 'message' && p.role === 'user' && !injected(messageText(p.content));
}

/** Lines of the conversation: the user's and agent's messages, tool calls and their outputs. */
function isConversation(value: Json | null): boolean {
  if (value?.type !== 'response_item') return false;
  const p = payloadOf(value);
  if (p.type === 'message') return p.role === 'assistant' || isUserWords(value);
  return p.type === 'function_call' || p.type === 'function_call_output' || p.type === 'custom_tool_call' || p.type === 'custom_tool_call_output' || p.type === 'local_shell_call';
}

/** What the user and the agent wrote, tool inputs, and (optionally) tool outputs. */
export function codexText(lines: readonly string[], includeToolResults: boolean): string {
  const out: string[] = [];
  for (const line of lines) {
    const value = parse(line);
    if (!isConversation(value)) continue;
    const p = payloadOf(value);
    if (p.type === 'message') out.push(messageText(p.content));
    else if (p.type === 'function_call') out.push(argumentText(p.arguments));
    else if (p.type === 'custom_tool_call') out.push(typeof p.input === 'string' ? p.input : '');
    else if (p.type === 'local_shell_call') out.push(argumentText((p.action as Json | undefined)?.command));
    else if (includeToolResults) out.push(typeof p.output === 'string' ? p.output : argumentText(p.output));
  }
  return out.join('\n');
}

/** The shell commands the agent ran (`exec_command` / `shell` calls, local shell calls). */
export function codexCommands(lines: readonly string[]): string[] {
  const out: string[] = [];
  for (const line of lines) {
    const value = parse(line);
    if (value?.type !== 'response_item') continue;
    const p = payloadOf(value);
    let command: unknown = null;
    if (p.type === 'function_call' && (p.name === 'exec_command' || p.name === 'shell')) {
      const args = typeof p.arguments === 'string' ? parse(p.arguments) : (p.arguments as Json | null);
      command = args?.cmd ?? args?.command ?? null;
    } else if (p.type === 'local_shell_call') command = (p.action as Json | undefined)?.command ?? null;
    if (Array.isArray(command) && command.every((c) => typeof c === 'string')) {
      const parts = command as string[];
      command = parts.length === 3 && /sh$/.test(parts[0] as string) && /^-\w*c$/.test(parts[1] as string) ? parts[2] : parts.join(' ');
    }
    if (typeof command === 'string' && command.trim().length > 0) out.push(command.trim());
  }
  return out;
}

/** A `compacted` line's summary: its message, else the last user message of the replacement history. */
function summaryOf(payload: Json): string {
  if (typeof payload.message === 'string' && payload.message.trim().length > 0) return payload.message.trim();
  const history = Array.isArray(payload.replacement_history) ? (payload.replacement_history as Json[]) : [];
  for (let i = history.length - 1; i >= 0; i--) {
    const item = history[i] as Json;
    if (item.type !== 'message' || item.role !== 'user') continue;
    const text = messageText(item.content).trim();
    if (text.length > 0 && !injected(text)) return text;
  }
  return '';
}

/** One split per `compacted` line, then cut points in the stretches without one. */
export function codexSplits(lines: readonly string[]): CompactSplit[] {
  const parsed = lines.map(parse);
  const compactions = parsed.flatMap((v, i) => (v?.type === 'compacted' ? [i] : []));
  const out: CompactSplit[] = [];
  compactions.forEach((at, k) => {
    const next = compactions[k + 1] ?? lines.length;
    out.push({ before: lines.slice(0, at), boundary: [lines[at] as string], after: lines.slice(at + 1, next), summary: summaryOf(payloadOf(parsed[at] ?? null)), trigger: null, real: true });
  });
  const conversation = parsed.flatMap((v, i) => (isConversation(v) ? [i] : []));
  if (conversation.length < MIN_CUT_LINES) return out;
  const fractions = conversation.length >= LONG_SESSION_LINES ? CUT_FRACTIONS.long : CUT_FRACTIONS.short;
  const taken = new Set<number>();
  for (const fraction of fractions) {
    let k = Math.floor(conversation.length * fraction);
    // Just before the user's next words, as a compaction interrupts the conversation; else the
    // next tool call (a long autonomous run has few user turns).
    let j = k;
    while (j < conversation.length && !isUserWords(parsed[conversation[j] as number] ?? null)) j++;
    if (j >= conversation.length) {
      while (k < conversation.length && payloadOf(parsed[conversation[k] as number] ?? null).type !== 'function_call') k++;
      j = k;
    }
    const at = conversation[j];
    if (at === undefined || taken.has(at) || compactions.some((c) => Math.abs(c - at) < 50)) continue;
    taken.add(at);
    const next = compactions.find((c) => c > at) ?? lines.length;
    out.push({ before: lines.slice(0, at), boundary: [], after: lines.slice(at, next), summary: '', trigger: null, real: false });
  }
  return out;
}

/** Codex's rollout lines, read the way fidelity.ts reads Claude Code's. */
export const CODEX_READING: TranscriptReading = { text: codexText, commands: codexCommands };

/** Details used after the split that already appeared before it (the product's matcher). */
export const codexNeeded = (split: CompactSplit): string[] => neededDetails(split, CODEX_READING);

/** The last `tokens` (chars / 4) of the conversation before the split. */
export const codexRecency = (split: CompactSplit, tokens: number): string => recencyBaseline(split, tokens, CODEX_READING);
