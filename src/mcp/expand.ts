/**
 * Expand ids, whole: memories (26-character ULIDs) and session facts (`f` + 11 characters), as the
 * context tells the agent to. Shared by the MCP `get` tool and `cairn get`.
 */
import type { Cairn } from '../cairn.js';
import { isCairnError } from '../errors.js';
import type { MemoryDetail } from '../memory/lifecycle.js';
import { isFactId } from '../ingest/facts/id.js';
import { stalenessOf } from '../recall/recall.js';
import type { SessionFactDetail } from '../types.js';
import { staleNote } from './format.js';

export type Expanded =
  | { id: string; type: 'memory'; detail: MemoryDetail; stale: string | null }
  | { id: string; type: 'session-fact'; fact: SessionFactDetail }
  | { id: string; type: 'missing'; error: string };

/** Most ids one call expands. */
export const MAX_EXPAND_IDS = 50;

/** Strip what an agent copies along with an id: brackets, backticks, a trailing comma. */
export function cleanId(raw: string): string {
  return raw.trim().replace(/^[[`'"(]+|[\]`'"),.;:]+$/g, '');
}

/** Each id expanded, in the order given (duplicates once); an unknown id says so instead of failing the rest. */
export async function expandIds(cairn: Cairn, ids: readonly string[]): Promise<Expanded[]> {
  const out: Expanded[] = [];
  const seen = new Set<string>();
  for (const raw of ids) {
    const id = cleanId(raw);
    if (id.length === 0 || seen.has(id)) continue;
    seen.add(id);
    try {
      if (isFactId(id)) {
        out.push({ id, type: 'session-fact', fact: await cairn.getFact(id) });
      } else {
        const detail = await cairn.get(id);
        out.push({ id, type: 'memory', detail, stale: staleNote(stalenessOf(cairn.deps, detail.memory)) });
      }
    } catch (error) {
      if (!isCairnError(error) || (error.code !== 'NOT_FOUND' && error.code !== 'INVALID_INPUT')) throw error;
      out.push({ id, type: 'missing', error: `no memory or session fact has id ${id}` });
    }
  }
  return out;
}
