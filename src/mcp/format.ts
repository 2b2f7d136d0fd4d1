/**
 * What the model reads from cairn's tools. Claude Code and Codex hand the model a tool's
 * `structuredContent` when there is one, so it carries only what an agent should read: the memory
 * text, id, kind, staleness and one short why — never scoring internals (bm25, rrf, recency,
 * penalties …: `cairn recall --json` and the server's debug flag show those).
 */
import type { RecallHit, Staleness } from '../recall/recall.js';
import type { Memory, SessionFactDetail } from '../types.js';

/** One recall hit as the model reads it (≈ 200 characters of JSON for a typical hit). */
export interface HitForModel {
  id: string;
  kind: string;
  /** The memory's text, whole; absent when this context window already holds it. */
  text?: string;
  /** Why it matched, in a few words. */
  why?: string;
  /** Set when a file it names changed, moved or is gone. */
  stale?: string;
  /** Set instead of `text` when the agent already has this memory in its context. */
  note?: string;
  /** Scoring internals, only with the server's debug flag. */
  debug?: Record<string, unknown>;
}

const DAY = 86_400_000;

function age(ms: number): string {
  if (ms < DAY) return 'today';
  const days = Math.round(ms / DAY);
  if (days < 60) return `${days}d old`;
  return `${Math.round(days / 30)}mo old`;
}

/** A few words on why a hit came back: word overlap or meaning, tags, pin, scope, age. */
export function shortWhy(hit: RecallHit, now: number): string {
  const parts: string[] = [];
  const w = hit.why;
  if (w.coverage >= 0.999) parts.push('all query words');
  else if (w.coverage > 0) parts.push(`${Math.round(w.coverage * 100)}% of query words`);
  if ((w.cosine ?? 0) > 0 && w.coverage < 0.5) parts.push('similar meaning');
  if (w.matchedTags.length > 0) parts.push(`tags ${w.matchedTags.join(', ')}`);
  if (w.pinned) parts.push('pinned');
  if (hit.memory.scope !== 'project') parts.push(`${hit.memory.scope} scope`);
  parts.push(age(Math.max(0, now - hit.memory.updatedAt)));
  return parts.join(' · ');
}

/** One line on what changed about the memory's files, or null when nothing did. */
export function staleNote(staleness: Staleness): string | null {
  const notes: string[] = [];
  for (const file of staleness.files) {
    if (file.status === 'line-moved' && file.movedTo) notes.push(`${file.path}:${file.line} is now line ${file.movedTo}`);
    else if (file.status === 'file-missing') notes.push(`${file.path} is not in the workspace`);
    else if (file.status === 'file-changed') notes.push(`${file.path} changed since — verify`);
  }
  if (staleness.reasons.includes('superseded')) notes.push('superseded by a newer version');
  if (staleness.reasons.includes('forgotten')) notes.push('forgotten');
  if (notes.length === 0 && staleness.stale) notes.push(staleness.reasons.join(', '));
  return notes.length > 0 ? notes.join('; ') : null;
}

export function hitForModel(hit: RecallHit, now: number, options: { inContext?: boolean; debug?: boolean } = {}): HitForModel {
  const out: HitForModel = { id: hit.memory.id, kind: hit.memory.kind };
  if (options.inContext) out.note = 'already in your context above';
  else {
    out.text = hit.memory.text;
    out.why = shortWhy(hit, now);
    const stale = staleNote(hit.staleness);
    if (stale) out.stale = stale;
  }
  if (options.debug) out.debug = { ...hit.why, score: hit.score };
  return out;
}

/** The readable line of a hit (the `content` text, for clients that do not pass structured content). */
export function hitLine(hit: HitForModel): string {
  if (hit.text === undefined) return `- [${hit.id}] (${hit.kind}) ${hit.note ?? ''}`.trimEnd();
  const stale = hit.stale ? ` — STALE: ${hit.stale}` : '';
  return `- [${hit.id}] (${hit.kind}${hit.why ? ` · ${hit.why}` : ''}) ${hit.text}${stale}`;
}

/** A section of the context as the model reads it: memories with their ids, or a block of text. */
export interface ContextSectionForModel {
  title: string;
  items?: Array<{ id: string; text: string }>;
  text?: string;
}

const ITEM = /^- (.*) \[([0-9A-HJKMNP-TV-Z]{26})\]$/;

/** The context's Markdown split into its sections, each memory with its id (what was injected, verbatim). */
export function contextSections(markdown: string): ContextSectionForModel[] {
  const sections: ContextSectionForModel[] = [];
  let current: { title: string; lines: string[] } | null = null;
  const flush = (): void => {
    if (!current) return;
    const items: Array<{ id: string; text: string }> = [];
    const rest: string[] = [];
    for (const line of current.lines) {
      const match = ITEM.exec(line);
      if (match) items.push({ id: match[2]!, text: match[1]! });
      else if (line.trim().length > 0) rest.push(line);
    }
    const section: ContextSectionForModel = { title: current.title };
    if (items.length > 0) section.items = items;
    if (rest.length > 0) section.text = rest.join('\n');
    if (section.items || section.text) sections.push(section);
  };
  for (const line of markdown.split('\n')) {
    if (line.startsWith('## ')) {
      flush();
      current = { title: line.slice(3).trim(), lines: [] };
    } else if (current) current.lines.push(line);
  }
  flush();
  return sections;
}

/** A memory, whole, as the model reads it from `get`. */
export function memoryForModel(memory: Memory, stale: string | null): Record<string, unknown> {
  const out: Record<string, unknown> = { id: memory.id, type: 'memory', kind: memory.kind, scope: memory.scope, text: memory.text };
  if (memory.tags.length > 0) out.tags = memory.tags;
  if (memory.files.length > 0) out.files = memory.files.map((f) => (f.line ? `${f.path}:${f.line}` : f.path));
  out.updated = new Date(memory.updatedAt).toISOString().slice(0, 10);
  if (memory.deletedAt !== null) out.status = 'forgotten (restorable with `cairn restore`)';
  else if (memory.validTo !== null) out.status = 'superseded by a newer version';
  if (stale) out.stale = stale;
  return out;
}

/** A session fact, whole, as the model reads it from `get`: the detail and where it occurred. */
export function factForModel(fact: SessionFactDetail): Record<string, unknown> {
  const out: Record<string, unknown> = { id: fact.id, type: 'session-fact', kind: fact.kind, text: fact.text, session: fact.sessionId };
  if (fact.path) out.location = fact.line ? `${fact.path}:${fact.line}` : fact.path;
  if (fact.note) out.note = fact.note;
  out.seen = fact.sources.slice(-10).map((s) => {
    const where = `turn ${s.seq} (${s.role}${s.toolName ? ` ${s.toolName}` : ''})`;
    return s.note ? `${where}: ${s.note}` : where;
  });
  if (fact.sources.length > 10) out.seenTotal = fact.sources.length;
  return out;
}
