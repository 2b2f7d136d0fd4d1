import { CairnError, invalid } from '../errors.js';
import { embedAllSigned, type Deps } from '../deps.js';
import { sanitize } from '../privacy/redact.js';
import { KINDS, SCOPES, type FileRef, type Kind, type Memory, type MemoryEvent, type MemoryWrite, type Provenance, type Scope, type Source } from '../types.js';
import { captureFileRefs, extractFileRefs } from '../workspace/files.js';
import {
  KIND_IMPORTANCE,
  PRIORITY_IMPORTANCE,
  checkText,
  contentHash,
  normalizeTags,
  type Priority,
} from './normalize.js';
import { findSimilar, type SimilarMemory } from './similar.js';
import { embeddingText, normalizeContext } from './context.js';

export interface RememberInput {
  text: string;
  /** @default 'note' */
  kind?: Kind;
  tags?: string[];
  /** Sugar for importance: high 0.9, medium 0.6, low 0.3. */
  priority?: Priority;
  /** 0..1; wins over priority. @default by kind (corrections 0.8 … notes 0.4) */
  importance?: number;
  /** @default 'project' inside a project, else 'user' */
  scope?: Scope;
  /** Overrides the instance's project. */
  project?: string | null;
  session?: string | null;
  /** Files the memory is about: `path` or `path:line`; paths in the text are found too. */
  files?: string[];
  /** Id of the memory this one replaces (its validity is closed, it is kept). */
  supersedes?: string;
  /** @default 'manual' */
  source?: Source;
  provenance?: Provenance | null;
  /**
   * The words this memory answers (a conversation turn's previous turn): indexed and embedded with
   * the text so recall finds a reply by its question, never shown as the memory (`Memory.context`,
   * src/memory/context.ts). Redacted like the text; cut at MAX_CONTEXT_CHARS.
   */
  context?: string | null;
  pinned?: boolean;
  meta?: Record<string, unknown>;
  /** Original creation time (imports). */
  createdAt?: number;
}

export interface RememberResult {
  memory: Memory;
  /** False when an identical active memory already existed (it was touched, not duplicated). */
  created: boolean;
  /** Existing memories that say nearly the same thing (reported, never merged silently). */
  similar: SimilarMemory[];
  /** Secrets removed before storing, by kind. */
  redacted: Record<string, number>;
}

/** A memory ready to write: validated, redacted, with file references captured. */
export interface PreparedMemory {
  memory: Memory;
  redacted: Record<string, number>;
}

function parseFileArg(arg: string): { path: string; line?: number } {
  const match = /^(.*?):(\d+)$/.exec(arg.trim());
  if (match?.[1]) return { path: match[1], line: Number(match[2]) };
  return { path: arg.trim() };
}

function checkEnum<T extends string>(value: T | undefined, allowed: readonly T[], field: string): void {
  if (value !== undefined && !allowed.includes(value)) {
    throw invalid(`${field} must be one of ${allowed.join(', ')} (got "${String(value)}")`, field);
  }
}

/** Validate and redact input into a Memory (no I/O but reading referenced files). */
export function prepareMemory(deps: Deps, input: RememberInput): PreparedMemory {
  if (typeof input.text !== 'string') throw invalid('text must be a string', 'text');
  checkEnum(input.kind, KINDS, 'kind');
  checkEnum(input.scope, SCOPES, 'scope');
  if (input.importance !== undefined && !(input.importance >= 0 && input.importance <= 1)) {
    throw invalid(`importance must be between 0 and 1 (got ${input.importance})`, 'importance');
  }
  if (input.priority !== undefined && !(input.priority in PRIORITY_IMPORTANCE)) {
    throw invalid(`priority must be high, medium or low (got "${String(input.priority)}")`, 'priority');
  }
  const clean = sanitize(input.text);
  const text = checkText(clean.text);
  if (input.context !== undefined && input.context !== null && typeof input.context !== 'string') throw invalid('context must be a string', 'context');
  const cleanContext = typeof input.context === 'string' ? sanitize(input.context) : null;
  const context = normalizeContext(cleanContext?.text);
  const redacted = { ...clean.found };
  for (const [kind, count] of Object.entries(cleanContext?.found ?? {})) redacted[kind] = (redacted[kind] ?? 0) + count;
  const kind = input.kind ?? 'note';
  const project = input.project !== undefined ? input.project : deps.project;
  const scope: Scope = input.scope ?? (project === null ? 'user' : 'project');
  const now = input.createdAt ?? deps.clock.now();
  const refs = [...extractFileRefs(text), ...(input.files ?? []).map(parseFileArg)];
  const files: FileRef[] = deps.workspaceRoot ? captureFileRefs(refs, deps.workspaceRoot) : dedupeRefs(refs);
  const importance = input.importance ?? (input.priority ? PRIORITY_IMPORTANCE[input.priority] : KIND_IMPORTANCE[kind]);
  const memory: Memory = {
    id: deps.ids.next(now),
    text,
    kind,
    scope,
    project: scope === 'user' ? null : project,
    session: input.session !== undefined ? input.session : deps.session,
    tags: normalizeTags(input.tags),
    importance,
    source: input.source ?? 'manual',
    provenance: input.provenance ?? null,
    context,
    files,
    createdAt: now,
    updatedAt: now,
    validFrom: now,
    validTo: null,
    supersedes: input.supersedes ?? null,
    accessCount: 0,
    lastAccessedAt: null,
    lastRecalledAt: null,
    pinned: input.pinned ?? false,
    deletedAt: null,
    // The same words answering something else are another memory (two turns both saying "Yes!").
    contentHash: contentHash(context === null ? text : `${text}\u0000${context}`),
    meta: input.meta ?? {},
  };
  if (memory.scope === 'project' && memory.project === null) {
    throw invalid('scope "project" needs a project: run inside a git repository or folder, or pass project', 'scope');
  }
  return { memory, redacted };
}

function dedupeRefs(refs: Array<{ path: string; line?: number }>): FileRef[] {
  const seen = new Map<string, FileRef>();
  for (const ref of refs) seen.set(`${ref.path}:${ref.line ?? ''}`, ref.line === undefined ? { path: ref.path } : { path: ref.path, line: ref.line });
  return [...seen.values()];
}

/**
 * What storing a prepared memory writes: the memory, its vector when there is one, its `create`
 * event and, when it supersedes another, that one's `supersede` event and closing.
 */
export function memoryWrite(deps: Deps, memory: Memory, vector: Float32Array | null, signature?: Uint8Array): MemoryWrite {
  const at = memory.createdAt;
  const events: MemoryEvent[] = [
    { memoryId: memory.id, type: 'create', at, actor: deps.actor, data: { source: memory.source, kind: memory.kind, supersedes: memory.supersedes } },
  ];
  if (memory.supersedes) events.push({ memoryId: memory.supersedes, type: 'supersede', at, actor: deps.actor, data: { by: memory.id } });
  return {
    memory,
    ...(vector && deps.embedder ? { embedding: { model: deps.embedder, vector, ...(signature ? { signature } : {}) } } : {}),
    events,
    ...(memory.supersedes ? { closes: { id: memory.supersedes, at } } : {}),
  };
}

/**
 * Memories whose near-duplicate bands a remember fills while the store's index is incomplete:
 * 128 cost a remember 40 ms of CPU at 100K (load ~7); `cairn migrate` fills them all at once.
 */
const FILL_CHUNK = 32;

/**
 * Store one memory: validate → redact → exact-duplicate check (no new row; access bumped) →
 * near-duplicates reported → store with its embedding. No LLM on this path.
 */
export async function remember(deps: Deps, input: RememberInput): Promise<RememberResult> {
  const { memory, redacted } = prepareMemory(deps, input);
  const existing = await deps.store.findByContentHash(memory.contentHash, memory.project);
  if (existing && !input.supersedes) {
    await deps.store.touch([existing.id], deps.clock.now(), false);
    return { memory: existing, created: false, similar: [], redacted };
  }
  if (input.supersedes) {
    const old = await deps.store.getMemory(input.supersedes);
    if (!old) throw new CairnError('NOT_FOUND', `memory ${input.supersedes} not found`, { field: 'supersedes' });
    if (old.validTo !== null) throw new CairnError('CONFLICT', `memory ${old.id} was already superseded`, { field: 'supersedes' });
    if (old.deletedAt !== null) throw new CairnError('CONFLICT', `memory ${old.id} is forgotten; restore it first`, { field: 'supersedes' });
  }
  const [embedded] = await embedAllSigned(deps, [embeddingText(memory)], [memory.text]);
  const vector = embedded?.vector ?? null;
  const similar = input.supersedes ? [] : await findSimilar(deps, memory.text, vector, memory.project);
  const write = await deps.store.writeMemory(memoryWrite(deps, memory, vector, embedded?.signature));
  if (!write.inserted) {
    // Another process stored the same text between our check and our write.
    await deps.store.touch([write.memory.id], deps.clock.now(), false);
  }
  // A store written before its near-duplicate index existed is filled a chunk per remember (a
  // no-op once complete); until then the check above used full-text search.
  await deps.store.fillNearDuplicateIndex?.({ chunk: FILL_CHUNK, maxChunks: 1 });
  return { memory: write.memory, created: write.inserted, similar, redacted };
}
