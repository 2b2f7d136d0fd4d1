/**
 * Preparing a context candidate for packing — its staleness note, whether its file is gone, the
 * tokens of its line and its index terms — is most of a context build's time at 100K memories.
 * A fresh build prepares only what could fit; {@link prepareContext} prepares every candidate of a
 * no-query context ahead of time (the precomputed session-start context, src/context/cache.ts),
 * so that a later build ranks and packs them with its own clock, exactly as a fresh one would.
 */
import type { Deps } from '../deps.js';
import { stalenessOf } from '../recall/recall.js';
import { indexTerms } from '../store/tokenize.js';
import { estimateTokens } from '../tokens.js';
import type { Memory, MemoryFilter } from '../types.js';
import type { FileReader } from '../workspace/files.js';
import type { Candidate } from './rankers.js';

/** What packing needs of a candidate beyond its score. */
export interface PreparedItem {
  /** The staleness note appended to its line ('' when none). */
  note: string;
  /** A file it points at is gone: it counts for half (STALE_FILE_FACTOR). */
  missing: boolean;
  /** Estimated tokens of its line and newline. */
  tokens: number;
  /**
   * Its index terms joined by spaces (index terms hold none), for the near-duplicate check;
   * computed when first needed by a fresh build. One string, not an array: a precomputed context
   * holds ~500 candidates and is parsed on every session start that uses it.
   */
  terms?: string;
}

/** Every candidate of a no-query context, gathered and prepared: all a build needs but the clock and the core memory files. */
export interface PreparedContext {
  candidates: Candidate[];
  maxRrf: number;
  bm25Max: number;
  cosineMax: number | null;
  items: Record<string, PreparedItem>;
  /**
   * The terms of an item read from a precomputed context (src/context/cache.ts), which keeps them
   * apart from `items` and unparsed until the near-duplicate check asks for one: ~40 of ~400 are
   * asked for, and they were over a quarter of the entry's bytes. Never serialized.
   */
  termsOf?: (id: string) => string | undefined;
}

/** A memory's context line. */
export function itemLine(memory: Memory, note: string): string {
  const text = memory.text.replace(/\s*\n\s*/g, ' ⏎ ');
  return `- ${text}${note} [${memory.id}]`;
}

/** Prepare one candidate, reading the files it points at through `files`. */
export function prepareItem(deps: Deps, memory: Memory, files: FileReader): PreparedItem {
  const staleness = stalenessOf(deps, memory, true, files);
  let note = '';
  const moved = staleness.files.find((f) => f.status === 'line-moved' && f.movedTo);
  const missing = staleness.files.some((f) => f.status === 'file-missing');
  // A missing file costs the item half its score, not a notice on every line (they were ~9% of the text).
  if (moved) note = ` (${moved.path}:${moved.line} is now line ${moved.movedTo})`;
  else if (!missing && staleness.reasons.includes('file-changed')) note = ' (file changed since — verify)';
  return { note, missing, tokens: estimateTokens(`${itemLine(memory, note)}\n`) };
}

/** The index terms of a candidate's text (the near-duplicate check). */
export function termsOf(memory: Memory): string[] {
  return indexTerms(memory.text);
}

/** The terms of a prepared item, or of its memory when they were not prepared. */
export function preparedTerms(item: Pick<PreparedItem, 'terms'>, memory: Memory): string[] {
  if (item.terms === undefined) return termsOf(memory);
  return item.terms.length === 0 ? [] : item.terms.split(' ');
}

/**
 * Gather and prepare every candidate of a no-query context (`gather`: the context builder's own
 * gathering, passed in to keep one definition of it).
 */
export async function prepareContext(
  deps: Deps,
  gather: (filter: MemoryFilter) => Promise<Omit<PreparedContext, 'items'>>,
  filter: MemoryFilter,
  files: FileReader,
): Promise<PreparedContext> {
  const gathered = await gather(filter);
  const items: Record<string, PreparedItem> = {};
  for (const c of gathered.candidates) items[c.memory.id] = { ...prepareItem(deps, c.memory, files), terms: termsOf(c.memory).join(' ') };
  return { ...gathered, items };
}
