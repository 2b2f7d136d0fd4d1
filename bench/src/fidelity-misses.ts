/**
 * Why a needed detail was not carried by cairn's context at its default budget (issue #15): for
 * each one the hook's text left out, the cause —
 *
 * - `rankedOut`: some candidate line held it verbatim, the packer did not choose that line;
 * - `rendered`: the store held it (a session fact's text, path or note) but no candidate line
 *   carries it verbatim (the line spells it otherwise, cuts it, or merges it away);
 * - `notCaptured`: no session fact and no candidate held it. Then where it was in the transcript
 *   before the cut (the user's words, the agent's, a tool's input or output by tool class) says
 *   which extractor should have captured it, and `inStoredText` whether the bounded turn text
 *   still held it (so it was lost by extraction, not by truncation).
 *
 * Pure functions over what `measureCut` already has.
 */
import { toolClass } from 'cairn-memory/testing';

export type MissCause = 'rankedOut' | 'rendered' | 'notCaptured';
export type DetailType = 'call' | 'flag' | 'pathLine' | 'path' | 'error' | 'command';

export interface Miss {
  detail: string;
  type: DetailType;
  cause: MissCause;
  /** Where the detail occurred before the cut, most direct first (`user`, `assistant`, `input:edit`, `output:read` …). */
  sources: string[];
  /** The stored (bounded) turn text holds it. */
  inStoredText: boolean;
}

/** What kind of detail the matcher found (used-details.ts): a call, flag, path:line, path, error name or command line. */
export function detailType(detail: string): DetailType {
  if (/\s/.test(detail.trim())) return 'command';
  if (detail.endsWith('(')) return 'call';
  if (detail.startsWith('--')) return 'flag';
  if (/^(?:[A-Z][A-Za-z0-9]*(?:Error|Exception)|E[A-Z]{3,}|TS\d{4})$/.test(detail)) return 'error';
  if (/:\d+$/.test(detail)) return 'pathLine';
  return 'path';
}

type Json = Record<string, unknown>;

function stringsOf(value: unknown, out: string[]): void {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringsOf(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value as Json)) stringsOf(v, out);
}

/** The texts of a transcript's lines, each labelled by where it came from. */
export function labelledTexts(lines: readonly string[]): Array<{ source: string; text: string }> {
  const out: Array<{ source: string; text: string }> = [];
  const toolOf = new Map<string, string>();
  for (const line of lines) {
    let value: Json;
    try {
      value = JSON.parse(line) as Json;
    } catch {
      continue;
    }
    if (value.type !== 'user' && value.type !== 'assistant') continue;
    if (value.isMeta === true || value.isCompactSummary === true) continue;
    const content = ((value.message ?? {}) as Json).content;
    const role = value.type as string;
    if (typeof content === 'string') {
      out.push({ source: role, text: content });
      continue;
    }
    if (!Array.isArray(content)) continue;
    for (const block of content as Json[]) {
      if (block.type === 'text' && typeof block.text === 'string') out.push({ source: role, text: block.text });
      else if (block.type === 'tool_use') {
        const name = typeof block.name === 'string' ? block.name : 'tool';
        if (typeof block.id === 'string') toolOf.set(block.id, name);
        const texts: string[] = [];
        stringsOf(block.input, texts);
        out.push({ source: `input:${toolClass(name)}`, text: texts.join('\n') });
      } else if (block.type === 'tool_result') {
        const name = typeof block.tool_use_id === 'string' ? (toolOf.get(block.tool_use_id) ?? null) : null;
        const texts: string[] = [];
        stringsOf(block.content, texts);
        out.push({ source: `output:${toolClass(name)}`, text: texts.join('\n') });
      }
    }
  }
  return out;
}

/** Most direct first: what the user or the agent wrote, what a tool was given, then what it printed. */
const SOURCE_ORDER = ['user', 'assistant', 'input:edit', 'input:shell', 'input:search', 'input:read', 'input:other', 'output:read', 'output:shell', 'output:search', 'output:edit', 'output:other'];

export interface MissInput {
  needed: readonly string[];
  /** What the agent has after the cut: the summary (real compactions) and what the session-start hook injected (default budget). */
  hookText: string;
  /** Every candidate line the context could have chosen. */
  candidateLines: readonly string[];
  /** The stored session facts: text, path and note of each. */
  factTexts: readonly string[];
  /** The stored (bounded) turn texts and tool inputs. */
  storedText: string;
  /** The transcript before the cut. */
  before: readonly string[];
}

/** The cause of each needed detail the hook's text did not carry. */
export function classifyMisses(input: MissInput): Miss[] {
  const missed = input.needed.filter((d) => !input.hookText.includes(d));
  if (missed.length === 0) return [];
  const pool = input.candidateLines.join('\n');
  const facts = input.factTexts.join('\n');
  const texts = labelledTexts(input.before);
  return missed.map((detail) => {
    const sources = [...new Set(texts.filter((t) => t.text.includes(detail)).map((t) => t.source))].sort((a, b) => rank(a) - rank(b));
    const cause: MissCause = pool.includes(detail) ? 'rankedOut' : facts.includes(detail) ? 'rendered' : 'notCaptured';
    return { detail, type: detailType(detail), cause, sources, inStoredText: input.storedText.includes(detail) };
  });
}

function rank(source: string): number {
  const i = SOURCE_ORDER.indexOf(source);
  return i < 0 ? SOURCE_ORDER.length : i;
}

/** Counts of misses by cause, and of the never-captured ones by detail type and first source. */
export function tallyMisses(misses: readonly Miss[]): { byCause: Record<MissCause, number>; notCaptured: Record<string, number>; notCapturedInStoredText: number } {
  const byCause: Record<MissCause, number> = { rankedOut: 0, rendered: 0, notCaptured: 0 };
  const notCaptured: Record<string, number> = {};
  let inStored = 0;
  for (const m of misses) {
    byCause[m.cause]++;
    if (m.cause !== 'notCaptured') continue;
    const key = `${m.type} from ${m.sources[0] ?? 'nowhere'}`;
    notCaptured[key] = (notCaptured[key] ?? 0) + 1;
    if (m.inStoredText) inStored++;
  }
  return { byCause, notCaptured, notCapturedInStoredText: inStored };
}
