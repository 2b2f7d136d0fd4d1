/**
 * The fidelity measure (SPEC §9): on a real session with a /compact, of the exact details used
 * after the compaction that were already known before it, the share that a given text carries.
 * Pure functions over Claude Code JSONL lines; the suite in suites/fidelity.ts drives cairn.
 */
import { createHash } from 'node:crypto';
import { coverage, extractDetails, neededDetails as neededIn } from 'cairn-memory/testing';

export { coverage, extractDetails };

export interface CompactSplit {
  /** Lines before the compact boundary. */
  before: string[];
  /** The boundary line and the summary line (what Claude Code writes at /compact). */
  boundary: string[];
  /** Lines after the summary, up to the next boundary. */
  after: string[];
  summary: string;
  trigger: string | null;
  /** True for a real compaction (boundary + Claude Code's summary); false for a cut point the bench chose. */
  real: boolean;
}

type Json = Record<string, unknown>;

/** One JSONL line as an object; null for anything else. */
export function parse(line: string): Json | null {
  try {
    const value: unknown = JSON.parse(line);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : null;
  } catch {
    return null;
  }
}

/** The string values of a tool input (a command, a path, an edit's text), unescaped. */
function inputText(input: unknown): string {
  if (typeof input === 'string') return input;
  if (Array.isArray(input)) return input.map(inputText).join('\n');
  if (input && typeof input === 'object') return Object.values(input as Json).map(inputText).join('\n');
  return '';
}

function contentText(content: unknown, includeToolResults: boolean): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const block of content as Json[]) {
    if (block.type === 'text' && typeof block.text === 'string') parts.push(block.text);
    else if (block.type === 'tool_use') parts.push(inputText(block.input));
    else if (includeToolResults && block.type === 'tool_result') parts.push(contentText(block.content, true));
  }
  return parts.join('\n');
}

/** Split a transcript at each compact boundary (one split per compaction). */
export function splitAtCompactions(lines: string[]): CompactSplit[] {
  const splits: CompactSplit[] = [];
  const boundaries: number[] = [];
  lines.forEach((line, i) => {
    if (line.includes('"compact_boundary"') && parse(line)?.subtype === 'compact_boundary') boundaries.push(i);
  });
  boundaries.forEach((at, k) => {
    const boundaryLine = parse(lines[at] as string);
    let summaryIndex = -1;
    for (let j = at + 1; j < Math.min(lines.length, at + 5); j++) {
      if (parse(lines[j] as string)?.isCompactSummary === true) {
        summaryIndex = j;
        break;
      }
    }
    if (summaryIndex < 0) return;
    const summaryLine = parse(lines[summaryIndex] as string);
    const message = (summaryLine?.message ?? {}) as Json;
    const next = boundaries[k + 1] ?? lines.length;
    const meta = (boundaryLine?.compactMetadata ?? {}) as Json;
    splits.push({
      before: lines.slice(0, at),
      boundary: lines.slice(at, summaryIndex + 1),
      after: lines.slice(summaryIndex + 1, next),
      summary: contentText(message.content, false),
      trigger: typeof meta.trigger === 'string' ? meta.trigger : null,
      real: true,
    });
  });
  return splits;
}

/** The text of transcript lines: what the agent and user wrote, tool inputs, and (optionally) tool results. */
export function transcriptText(lines: readonly string[], includeToolResults: boolean): string {
  const out: string[] = [];
  for (const line of lines) {
    const value = parse(line);
    if (!value || (value.type !== 'user' && value.type !== 'assistant')) continue;
    if (value.isMeta === true || value.isCompactSummary === true) continue;
    const message = (value.message ?? {}) as Json;
    out.push(contentText(message.content, includeToolResults));
  }
  return out.join('\n');
}

/** Bash command lines in transcript lines (tool_use inputs). */
export function bashCommands(lines: readonly string[]): string[] {
  const out: string[] = [];
  for (const line of lines) {
    if (!line.includes('"tool_use"')) continue;
    const value = parse(line);
    const content = ((value?.message ?? {}) as Json).content;
    if (!Array.isArray(content)) continue;
    for (const block of content as Json[]) {
      if (block.type === 'tool_use' && block.name === 'Bash' && typeof (block.input as Json | undefined)?.command === 'string') {
        out.push((block.input as Json).command as string);
      }
    }
  }
  return out;
}

/** How a transcript format's lines read: their text (optionally with tool output) and the shell commands run. */
export interface TranscriptReading {
  text: (lines: readonly string[], includeToolResults: boolean) => string;
  commands: (lines: readonly string[]) => string[];
}

/** Claude Code's JSONL. */
export const CLAUDE_READING: TranscriptReading = { text: transcriptText, commands: bashCommands };

/** Details used after the compaction that already appeared before it (the product's matcher, src/ledger/used-details.ts). */
export function neededDetails(split: CompactSplit, reading: TranscriptReading = CLAUDE_READING): string[] {
  return neededIn(reading.text(split.before, true), reading.text(split.after, false), reading.commands(split.after));
}

/** The last `tokens` (chars / 4) of the pre-compaction conversation: what a recency cut keeps. */
export function recencyBaseline(split: CompactSplit, tokens: number, reading: TranscriptReading = CLAUDE_READING): string {
  const text = reading.text(split.before, true);
  return text.slice(Math.max(0, text.length - tokens * 4));
}

/** Lines that are conversation (user or assistant, not meta, not a compact summary). */
function isConversation(line: string): boolean {
  const value = parse(line);
  return value !== null && (value.type === 'user' || value.type === 'assistant') && value.isMeta !== true && value.isCompactSummary !== true;
}

/** Where the bench cuts a session that has no compaction there: these shares of its conversation lines. */
export const CUT_FRACTIONS: Readonly<Record<'long' | 'short', readonly number[]>> = { long: [0.3, 0.5, 0.7], short: [0.5] };
/** A session with at least this many conversation lines gets the `long` cuts; below `MIN_CUT_LINES`, none. */
export const LONG_SESSION_LINES = 150;
export const MIN_CUT_LINES = 40;
/** A chosen cut keeps this many lines away from a real compaction boundary (that one is measured as is). */
const CUT_CLEARANCE = 50;

/**
 * Cut points for sessions (or parts of sessions) without a compaction there: the transcript is cut
 * as if /compact had run at a fixed share of its conversation lines, with no summary (`summary`
 * is empty, `real` false). They widen the sample beyond the few real compactions for what needs no
 * summary (cairn against recency and random, the budget curve, fitting the value model); the
 * comparison with Claude Code's summary uses real compactions only. Each cut is placed just before
 * a user line, the way a compaction interrupts the conversation.
 */
export function cutPoints(lines: string[]): CompactSplit[] {
  const conversation: number[] = [];
  const boundaries: number[] = [];
  lines.forEach((line, i) => {
    if (line.includes('"compact_boundary"') && parse(line)?.subtype === 'compact_boundary') boundaries.push(i);
    else if (isConversation(line)) conversation.push(i);
  });
  if (conversation.length < MIN_CUT_LINES) return [];
  const fractions = conversation.length >= LONG_SESSION_LINES ? CUT_FRACTIONS.long : CUT_FRACTIONS.short;
  const out: CompactSplit[] = [];
  const taken = new Set<number>();
  for (const fraction of fractions) {
    let k = Math.floor(conversation.length * fraction);
    while (k < conversation.length && parse(lines[conversation[k] as number] as string)?.type !== 'user') k++;
    const at = conversation[k];
    if (at === undefined || taken.has(at)) continue;
    if (boundaries.some((b) => Math.abs(b - at) < CUT_CLEARANCE)) continue;
    taken.add(at);
    const next = boundaries.find((b) => b > at) ?? lines.length;
    out.push({ before: lines.slice(0, at), boundary: [], after: lines.slice(at, next), summary: '', trigger: null, real: false });
  }
  return out;
}

/**
 * The tuning and report halves, decided before any figure is seen: sessions are ordered by
 * sha256 of their id within two strata (sessions with a real compaction, and the rest) and
 * alternate between the halves, so each half gets real compactions and the split never depends
 * on results. Files of one session (its subagents) fall in the same half.
 */
export function assignHalves(sessions: ReadonlyArray<{ id: string; real: boolean }>): Map<string, 'tuning' | 'report'> {
  const out = new Map<string, 'tuning' | 'report'>();
  for (const real of [true, false]) {
    const ids = [...new Set(sessions.filter((s) => s.real === real && !out.has(s.id)).map((s) => s.id))];
    const keyed = ids.map((id) => ({ id, key: createHash('sha256').update(id).digest('hex') })).sort((a, b) => a.key.localeCompare(b.key));
    keyed.forEach(({ id }, i) => out.set(id, i % 2 === 0 ? 'tuning' : 'report'));
  }
  return out;
}
