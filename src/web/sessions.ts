/**
 * Sessions as the browser shows them: a session with its corrections, compactions and the
 * memories distilled from it, and windows of its turns (opened at a given turn, e.g. the
 * transcript turn a memory came from, or a correction).
 */
import type { Cairn } from '../cairn.js';
import { CairnError } from '../errors.js';
import { substrateOf } from '../history/history.js';
import type { CompactionRecord, CorrectionRecord, Memory, SessionRecord, TurnRecord } from '../types.js';
import type { CatalogCache } from './catalog.js';

const TEXT_LIMIT = 6000;
const TOOL_INPUT_LIMIT = 1500;
const FIND_PAGE = 1000;

export interface SessionView {
  session: SessionRecord;
  compactions: CompactionRecord[];
  corrections: CorrectionRecord[];
  /** Memories written in this session or distilled from it, newest first. */
  memories: Memory[];
  /** Sub-agent sessions started from this one. */
  children: SessionRecord[];
  /** False while the background scan that finds distilled memories is still running. */
  complete: boolean;
}

export interface TurnView extends TurnRecord {
  /** True when `text` was cut to keep the page light. */
  truncated: boolean;
  /** The corrections this turn makes (the user pushing back). */
  corrects: CorrectionRecord[];
  /** The corrections made of this turn (it is their premise). */
  correctedBy: string[];
}

export interface TurnWindow {
  turns: TurnView[];
  /** Compactions whose boundary lies in this window. */
  compactions: CompactionRecord[];
  /** seq to ask for to continue after this window, or null at the end. */
  nextSeq: number | null;
  /** seq of the first turn of the window. */
  fromSeq: number;
  /** The turn asked for with `around`, when found. */
  focus: string | null;
}

async function mustSession(cairn: Cairn, id: string): Promise<SessionRecord> {
  const session = await substrateOf(cairn.deps).getSession(id);
  if (!session) throw new CairnError('NOT_FOUND', `session ${id} not found`, { field: 'id' });
  return session;
}

export async function sessionView(cairn: Cairn, catalog: CatalogCache, id: string): Promise<SessionView> {
  const substrate = substrateOf(cairn.deps);
  const session = await mustSession(cairn, id);
  const [compactions, corrections, catalogued, written] = await Promise.all([
    substrate.getCompactions(id),
    substrate.getCorrections({ sessionId: id, limit: 1000 }),
    catalog.within(3000),
    // Written in the session (indexed), whether or not the background scan is done.
    cairn.deps.store.listMemories({ session: id, includeSuperseded: true, includeDeleted: true, limit: 500 }),
  ]);
  // Distilled from it: provenance points at the session (known once the background scan is done).
  const ids = new Set([...written.map((m) => m.id), ...(catalogued?.bySession.get(id) ?? []).slice(-500)]);
  const memories = (await cairn.deps.store.getMemories([...ids])).sort((a, b) => b.createdAt - a.createdAt);
  // Sub-agents carry their parent's project; a page of the project's sessions finds them.
  const siblings = session.project ? await substrate.listSessions({ project: session.project, limit: 500 }) : [];
  return { session, compactions, corrections, memories, children: siblings.filter((s) => s.parentId === id), complete: catalogued !== null };
}

function cut(turn: TurnRecord): { text: string; toolInput: string | null; truncated: boolean } {
  const long = turn.text.length > TEXT_LIMIT;
  return {
    text: long ? `${turn.text.slice(0, TEXT_LIMIT)}…` : turn.text,
    toolInput: turn.toolInput && turn.toolInput.length > TOOL_INPUT_LIMIT ? `${turn.toolInput.slice(0, TOOL_INPUT_LIMIT)}…` : turn.toolInput,
    truncated: long,
  };
}

/** seq of turn `turnId` in session `id`, or null. */
async function seqOf(cairn: Cairn, id: string, turnId: string): Promise<number | null> {
  const substrate = substrateOf(cairn.deps);
  for (let from = 0; ; ) {
    const page = await substrate.getTurns(id, { fromSeq: from, limit: FIND_PAGE });
    const hit = page.find((t) => t.id === turnId || t.sourceUuid === turnId);
    if (hit) return hit.seq;
    const last = page[page.length - 1];
    if (page.length < FIND_PAGE || !last) return null;
    from = last.seq + 1;
  }
}

export async function turnWindow(
  cairn: Cairn,
  id: string,
  options: { fromSeq?: number; limit: number; around?: string },
): Promise<TurnWindow> {
  const substrate = substrateOf(cairn.deps);
  await mustSession(cairn, id);
  let fromSeq = options.fromSeq ?? 0;
  let focus: string | null = null;
  if (options.around) {
    const seq = await seqOf(cairn, id, options.around);
    if (seq === null) throw new CairnError('NOT_FOUND', `turn ${options.around} not found in session ${id}`, { field: 'around' });
    fromSeq = Math.max(0, seq - Math.min(10, Math.floor(options.limit / 4)));
    focus = options.around;
  }
  const [turns, compactions, corrections] = await Promise.all([
    substrate.getTurns(id, { fromSeq, limit: options.limit + 1 }),
    substrate.getCompactions(id),
    substrate.getCorrections({ sessionId: id, limit: 5000 }),
  ]);
  const page = turns.slice(0, options.limit);
  const more = turns.length > options.limit;
  const first = page[0]?.seq ?? fromSeq;
  const last = page[page.length - 1]?.seq ?? fromSeq;
  const views: TurnView[] = page.map((turn) => ({
    ...turn,
    ...cut(turn),
    corrects: corrections.filter((c) => c.correctionTurnId === turn.id),
    correctedBy: corrections.filter((c) => c.premiseTurnId === turn.id).map((c) => c.id),
  }));
  if (focus !== null) {
    const hit = page.find((t) => t.sourceUuid === focus);
    if (hit) focus = hit.id;
  }
  return {
    turns: views,
    compactions: compactions.filter((c) => c.seq >= first && (more ? c.seq <= last : true)),
    nextSeq: more ? (turns[options.limit]?.seq ?? null) : null,
    fromSeq: first,
    focus,
  };
}
