/**
 * The detail matcher of learn-from-use and of `cairn bench fidelity` (one matcher for both): the
 * exact details a piece of conversation uses — file paths and `path:line`, identifiers written as
 * calls, flags, error names, command lines — and whether an injected line carries one of them.
 * Pure functions over text.
 */
import { extractFileRefs } from '../workspace/files.js';

const NOT_CALLS = new Set(['if', 'for', 'while', 'switch', 'catch', 'function', 'return', 'typeof', 'await', 'print', 'console.log', 'require', 'import', 'e.g', 'i.e']);

/**
 * The exact details a text uses: file paths and `path:line`, identifiers written as calls
 * (without a `this.`/`self.` receiver), command lines (`commands`, e.g. shell tool inputs) and
 * flags, error names.
 * @example extractDetails('fixed parseConfig( in src/config.ts:42') // Set { 'src/config.ts', 'src/config.ts:42', 'parseConfig(' }
 */
export function extractDetails(text: string, commands: readonly string[] = []): Set<string> {
  const details = new Set<string>();
  for (const ref of extractFileRefs(text)) {
    details.add(ref.path);
    if (ref.line !== undefined) details.add(`${ref.path}:${ref.line}`);
  }
  for (const match of text.matchAll(/\b([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\(/g)) {
    // `this.save(` and `save(` are one detail: the receiver `this`/`self` says nothing.
    const name = (match[1] as string).replace(/^(?:this|self)\./, '');
    if (name.length >= 4 && !NOT_CALLS.has(name)) details.add(`${name}(`);
  }
  for (const match of text.matchAll(/(?<![\w-])(--[a-z][\w-]{2,})\b/g)) details.add(match[1] as string);
  for (const match of text.matchAll(/\b([A-Z][A-Za-z0-9]*(?:Error|Exception))\b|\b(E[A-Z]{3,}|TS\d{4})\b/g)) details.add((match[1] ?? match[2]) as string);
  for (const command of commands) {
    const trimmed = command.trim();
    if (trimmed.length >= 6 && trimmed.length <= 200 && !trimmed.includes('\n')) details.add(trimmed);
  }
  return details;
}

/**
 * Details used in `after` that `before` already holds verbatim (what a compaction must carry over),
 * sorted. `commands` are the shell command lines run in `after`.
 */
export function neededDetails(before: string, after: string, commands: readonly string[] = []): string[] {
  return [...extractDetails(after, commands)].filter((detail) => before.includes(detail)).sort();
}

/** True when `line` carries at least one of `details` verbatim (an injected item was used). */
export function carries(line: string, details: Iterable<string>): boolean {
  for (const d of details) if (line.includes(d)) return true;
  return false;
}

/** Share of `needed` found verbatim in `text` (1 when nothing is needed), and which. */
export function coverage(needed: readonly string[], text: string): { share: number; found: string[] } {
  const found = needed.filter((d) => text.includes(d));
  return { share: needed.length === 0 ? 1 : found.length / needed.length, found };
}
