/**
 * The contracts of cairn: the memory model, the session substrate, and the interfaces every
 * adapter (store, embedder, clock, logger) implements. The rest of the code depends on these,
 * not on each other's internals.
 */

export const KINDS = [
  'fact',
  'decision',
  'preference',
  'procedure',
  'correction',
  'entity',
  'continuation',
  'note',
] as const;
export type Kind = (typeof KINDS)[number];

export const SCOPES = ['session', 'project', 'user'] as const;
export type Scope = (typeof SCOPES)[number];

export const SOURCES = ['manual', 'hook', 'ingest', 'distill', 'import'] as const;
export type Source = (typeof SOURCES)[number];

/** A file a memory talks about, captured at write time so staleness can be checked later. */
export interface FileRef {
  /** Path as written (relative to the project root when inside it). */
  path: string;
  /** 1-based line the memory points at, when it names one. */
  line?: number;
  /** sha256 of the file's content when the memory was written; absent when the file was not readable. */
  hash?: string;
  /** The text of `line` at write time (trimmed), used to find the line again after edits. */
  lineText?: string;
}

/** Where a memory came from: a transcript turn, a hook, an import file. */
export interface Provenance {
  transcript?: string;
  line?: number;
  uuid?: string;
  sessionId?: string;
  turnId?: string;
  /** Every other source that produced the same memory (dedup merges keep them all). */
  also?: Array<Omit<Provenance, 'also'>>;
}

/** One stored memory. Times are epoch milliseconds. */
export interface Memory {
  id: string;
  text: string;
  kind: Kind;
  scope: Scope;
  /** Project identity (see workspace/project.ts); null for user-scope memories. */
  project: string | null;
  session: string | null;
  tags: string[];
  /** 0..1 */
  importance: number;
  source: Source;
  provenance: Provenance | null;
  /**
   * The words this memory answers, stored beside it (a conversation turn's previous turn: "How long
   * have you been married?" for the reply "5 years already!"). Indexed for full text and embedded
   * with the text (`embeddingText`), so recall finds a reply by the question it answers; never shown
   * as the memory's text. Null when the memory stands alone.
   */
  context: string | null;
  files: FileRef[];
  createdAt: number;
  updatedAt: number;
  validFrom: number;
  /** Set when a newer version superseded this one; the row is kept. */
  validTo: number | null;
  supersedes: string | null;
  accessCount: number;
  lastAccessedAt: number | null;
  lastRecalledAt: number | null;
  pinned: boolean;
  /** Soft delete (forget); restore clears it. */
  deletedAt: number | null;
  /** Normalised-text hash used for exact-duplicate detection. */
  contentHash: string;
  meta: Record<string, unknown>;
}

export const EVENT_TYPES = [
  'create',
  'revise',
  'supersede',
  'forget',
  'restore',
  'access',
  'update',
  'merge',
  'pin',
  'unpin',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** One line of the append-only audit log. */
export interface MemoryEvent {
  id?: number;
  memoryId: string;
  type: EventType;
  at: number;
  /** Who made the change: 'cli', 'mcp', 'hook', 'ingest', a token name … */
  actor: string;
  data: Record<string, unknown>;
}

export interface Snapshot {
  id: string;
  label: string;
  createdAt: number;
  memoryCount: number;
}

/** Filters shared by recall, listing and counting. Absent fields do not filter. */
export interface MemoryFilter {
  project?: string | null;
  /** Include user-scope memories (project null) alongside `project`. Default true. */
  includeUserScope?: boolean;
  session?: string;
  kinds?: Kind[];
  scopes?: Scope[];
  /** Memories carrying all of these tags. */
  tags?: string[];
  /** Memories carrying at least one of these tags. */
  anyTags?: string[];
  /** Only memories sealed in this snapshot (id). */
  snapshotId?: string;
  /** Include superseded versions. Default false. */
  includeSuperseded?: boolean;
  /** Include forgotten memories. Default false. */
  includeDeleted?: boolean;
  /** Only forgotten memories. */
  onlyDeleted?: boolean;
  createdAfter?: number;
  createdBefore?: number;
  pinned?: boolean;
  sources?: Source[];
}

export interface ListOptions extends MemoryFilter {
  limit?: number;
  offset?: number;
  order?: 'created-desc' | 'created-asc' | 'updated-desc' | 'importance-desc' | 'access-desc';
}

export interface ScoredId {
  id: string;
  /** Higher is better; comparable only within one result list. */
  score: number;
}

/** The part of a memory a near-duplicate check reads (`Store.getMemoryTexts`). */
export type MemoryText = Pick<Memory, 'id' | 'text' | 'kind'> & {
  /** The text's distinct index terms, when the store keeps them (SQLite: `memories.terms`); else the check tokenizes `text`. */
  terms?: readonly string[];
  /** The memory's stored vector, when the caller asked for that model's and one is stored (`Store.nearDuplicateCandidates`). */
  vector?: Float32Array;
};

/** What a memory write changes atomically. */
export interface MemoryWrite {
  memory: Memory;
  /** Precomputed embedding (computed before the transaction starts) and the model that made it. */
  embedding?: { model: EmbedderIdentity; vector: Float32Array; signature?: Uint8Array };
  events: MemoryEvent[];
  /** Close this memory's validity (a revision or a supersede). */
  closes?: { id: string; at: number };
}

export interface MemoryPatch {
  text?: string;
  tags?: string[];
  importance?: number;
  kind?: Kind;
  scope?: Scope;
  pinned?: boolean;
  deletedAt?: number | null;
  validTo?: number | null;
  meta?: Record<string, unknown>;
  provenance?: Provenance | null;
  files?: FileRef[];
  updatedAt: number;
}

export interface EmbedderIdentity {
  /** Stable model id, e.g. `static:potion-base-8M` or `ollama:nomic-embed-text`. */
  model: string;
  dimension: number;
}

/** An embedder's health: when not ok, `reason` is one line naming the bad file and the fix. */
export type EmbedderAvailability = { ok: true } | { ok: false; reason: string };

/** What the texts of one `embed` call are: asymmetric models (e5) embed the two differently. */
export interface EmbedOptions {
  /**
   * `query` for a recall query, `document` for a stored text.
   * @default 'document'
   */
  purpose?: 'query' | 'document';
}

/** Turns text into unit-length vectors. Batched; may be slow; never called inside a DB transaction. */
export interface Embedder extends EmbedderIdentity {
  embed(texts: string[], options?: EmbedOptions): Promise<Float32Array[]>;
  /**
   * Whether the model can run, without loading it (local models check their files; `verify`
   * also checks checksums). Absent means always available.
   */
  availability?(options?: { verify?: boolean }): Promise<EmbedderAvailability>;
  /** Release resources (workers, sockets). */
  close?(): Promise<void>;
  /**
   * Contextual models only (`onnx:`): each text's word pieces and their last-layer states, unit
   * length, without the model's own markers — what recall's `rerank` compares (src/recall/rerank.ts).
   */
  tokenStates?(texts: string[]): Promise<TokenStates[]>;
  /**
   * Contextual models only: each text's vector and, from the same model run, the token signature of
   * its first `signed[i].length` characters (the memory's own text within its embedding text;
   * src/embed/token-signature.ts), which recall's rerank reads instead of running the model.
   */
  embedSigned?(texts: string[], signed: readonly string[]): Promise<SignedEmbedding[]>;
}

/** A vector and its text's token signature, from one model run. */
export interface SignedEmbedding {
  vector: Float32Array;
  signature: Uint8Array;
}

/** One text as a contextual model sees it: word pieces (`##` marks a continuation) and their states. */
export interface TokenStates {
  tokens: string[];
  states: Float32Array[];
}

export interface StoreCapabilities {
  /** Ranked full-text search over memories. */
  fullText: boolean;
  /** Vector storage and similarity search. */
  vectors: boolean;
  /** Approximate nearest neighbour index (else exact search). */
  ann: boolean;
  /** Session substrate (sessions, turns, compactions, corrections). */
  substrate: boolean;
}

export interface StoreStats {
  memories: number;
  active: number;
  superseded: number;
  forgotten: number;
  events: number;
  snapshots: number;
  vectors: number;
  byKind: Record<string, number>;
  byScope: Record<string, number>;
  sizeBytes: number | null;
  schemaVersion: number;
  vectorModel: EmbedderIdentity | null;
  /** Conditions the user should know about (e.g. a PostgreSQL server without pgvector). */
  warnings?: string[];
}

export interface TextSearchOptions extends MemoryFilter {
  limit: number;
  /**
   * Match on only this many of the query's rarest terms (a near-duplicate probe: a memory sharing
   * half the terms of a text must share some of its rarest). Backends may ignore it.
   */
  rarestTerms?: number;
  /**
   * A vector search runs while this one is awaited (hybrid recall): a backend may search off the
   * caller's thread so the two overlap. Never changes the hits.
   */
  alongsideVectors?: boolean;
}

export interface VectorSearchOptions extends MemoryFilter {
  limit: number;
}

/** A persistent key → vector table under the embedding cache; keys are `<model>#<sha256 hex of the text>`. */
export interface EmbeddingCacheStore {
  get(keys: string[]): Promise<Map<string, Float32Array>>;
  put(entries: Array<[string, Float32Array]>): Promise<void>;
}

/** Which surface gave the agent an injection: a hook, an MCP tool, or the CLI. */
export type InjectionVia = 'hook' | 'mcp' | 'cli';
/**
 * Where an injection went: `context` (the model's context window: hook context, tool results) or
 * `summary` (the compaction request's instructions, PreCompact: it shapes the summary and does not
 * count as being in the next window).
 */
export type InjectionTarget = 'context' | 'summary';

/** One injection to record: what one hook run or tool call gave the agent. */
export interface InjectionInput {
  session: string;
  project: string | null;
  via: InjectionVia;
  /** The event or tool: `session-start`, `prompt`, `pre-compact`, `recall`, `context`, `get` … */
  name: string;
  target: InjectionTarget;
  /** Memory ids given, in the order given. */
  memories: string[];
  /** Session fact ids given (`f…`). */
  facts: string[];
  /** Blocks without an id (e.g. `core:project`, `core:user`, `working-set`). */
  blocks?: string[];
  /** Tokens of the text injected (estimated o200k tokens, src/tokens.ts). */
  tokens: number;
  at: number;
}

/** A recorded injection. */
export interface LedgerInjection {
  id: number;
  session: string;
  project: string | null;
  /** The context window it went into (0 = the session's first; each compaction or /clear opens the next). */
  window: number;
  at: number;
  via: InjectionVia;
  name: string;
  target: InjectionTarget;
  memories: string[];
  facts: string[];
  blocks: string[];
  tokens: number;
  /** Which of the items the agent used afterwards, once learn-from-use has looked (absent: not measured). */
  used?: string[];
}

/** A context window of a session: 0 at the first injection or session start, +1 per compaction or /clear. */
export interface LedgerWindow {
  window: number;
  at: number;
  /** What opened it: `startup`, `compact`, `clear`, `resume` (no earlier window known), `first-injection` … */
  reason: string;
}

/** Per-item totals across the ledger, for the learn-from-use value model. */
export interface LedgerItemStats {
  injected: number;
  /** Injections of it that learn-from-use has looked at, and how many of those it was used in. */
  measured: number;
  used: number;
  lastInjectedAt: number;
}

/** Per detail kind (`path`, `command`, `rule` …): items injected, used afterwards, candidates left out, and those that were needed. */
export interface OutcomeCounts {
  injected: number;
  used: number;
  /** Session facts of this kind known before the window and not injected (candidates left out); absent for memories. */
  left?: number;
  /** Of those, the ones that held a needed detail. */
  missed: number;
}

/** Which measured windows {@link LedgerStore.outcomes} returns (all given filters apply). */
export interface OutcomeQuery {
  session?: string;
  /** One project's; `null`: windows whose project is unknown. */
  project?: string | null;
  /** Only windows opened for this reason (`compact` …). */
  reason?: string;
  /** Only the latest this many (by when they were measured), still oldest first. */
  last?: number;
}

/**
 * What learn-from-use saw after one context window (SQLite migration 009, PostgreSQL 008): how
 * many items were injected into it and used afterwards, and how many needed details (used after
 * it, known before it) nothing injected carried. Counts and ids only, never text.
 */
export interface LedgerOutcome {
  session: string;
  window: number;
  project: string | null;
  /** What opened the window (`compact`, `startup` …). */
  reason: string;
  measuredAt: number;
  /** Turns of the conversation after the window's start when measured (a grown transcript is measured again). */
  turnsAfter: number;
  /** Memories and session facts injected into the window (distinct). */
  injected: number;
  used: number;
  /** Needed details: used after the window's start and known before it (compaction windows only). */
  needed: number;
  /** Needed details that no injected item carried. */
  missed: number;
  /** Session facts that held a missed detail (candidates the context left out), ids only. */
  missedFacts: string[];
  kinds: Record<string, OutcomeCounts>;
  /**
   * Compaction windows: the needed details (used after it, known before it) as `learnKey` hashes
   * (src/context/learn.ts), what later sessions of the project learn from. Absent or empty for
   * other windows.
   */
  learned?: string[];
}

/**
 * The injection ledger's storage (SQLite migration 008, PostgreSQL 007): what each hook and tool
 * gave the agent, per session and context window. Ids only — no text — so nothing here needs
 * redaction. Use it through `cairn.ledger` (src/ledger/ledger.ts), which adds the clock.
 */
export interface LedgerStore {
  /**
   * Open the session's next context window (0 when it has none) and return it; with
   * `onlyIfNone`, return the current window instead when the session already has one (resume).
   */
  openWindow(session: string, reason: string, at: number, options?: { project?: string | null; onlyIfNone?: boolean }): Promise<LedgerWindow>;
  /** The session's current (highest) window, or null when none was opened. */
  currentWindow(session: string): Promise<LedgerWindow | null>;
  /** Record one injection into the session's current window (window 0 is opened when none exists). */
  record(input: InjectionInput): Promise<LedgerInjection>;
  /** Injections of a session, oldest first; only window `window` when given. */
  injections(session: string, options?: { window?: number; target?: InjectionTarget }): Promise<LedgerInjection[]>;
  windows(session: string): Promise<LedgerWindow[]>;
  /** Sessions with injections, most recent first. */
  sessions(options?: { limit?: number; project?: string | null }): Promise<Array<{ session: string; project: string | null; lastAt: number }>>;
  /** Record which items of an injection the agent used afterwards (learn-from-use); the others count as not used. */
  markUsed(injectionId: number, used: string[], at: number): Promise<void>;
  /** Totals per item id (all items when `ids` is omitted), within a project when given. */
  itemStats(options?: { ids?: string[]; project?: string | null }): Promise<Map<string, LedgerItemStats>>;
  /** Store what learn-from-use saw after a window, replacing an earlier measurement of it. */
  recordOutcome(outcome: LedgerOutcome): Promise<void>;
  /** Measured windows, oldest first: one session's, one project's (null: project unknown), or all. */
  outcomes(options?: OutcomeQuery): Promise<LedgerOutcome[]>;
  /**
   * Drop what is no longer worth keeping (`cairn maintain`): the windows, injections and items of
   * sessions with nothing recorded since `sessionsBefore` (a session still in use keeps its whole
   * ledger, so its window numbers never restart), and outcomes measured before `outcomesBefore`.
   * With `dryRun`, count only.
   */
  prune(options: LedgerPruneOptions): Promise<LedgerPruneCounts>;
}

export interface LedgerPruneOptions {
  sessionsBefore: number;
  outcomesBefore: number;
  dryRun?: boolean;
}

/** What {@link LedgerStore.prune} dropped (or would drop). */
export interface LedgerPruneCounts {
  sessions: number;
  windows: number;
  injections: number;
  items: number;
  outcomes: number;
}

/** What a model switch has built so far: the model and how many memories have its vector. */
export interface StagedVectors {
  model: EmbedderIdentity;
  vectors: number;
}

/**
 * The vectors of the model an index is switching to, kept apart from the index (another table)
 * so no search ever mixes two models. Filled batch by batch like the index itself; `commit`
 * replaces the index with them in one transaction once every memory has one.
 */
export interface VectorStaging {
  /** The model being staged and its vectors so far, or null when no switch is under way. */
  staged(): Promise<StagedVectors | null>;
  /** Start staging `model`, or continue when it is already staged; another staged model is dropped. */
  begin(model: EmbedderIdentity): Promise<void>;
  /** Memories without a staged vector, oldest first. `EMBEDDER_MISMATCH` when `model` is not the staged one. */
  missing(model: EmbedderIdentity, limit: number): Promise<Memory[]>;
  /** Write staged vectors (`NOT_FOUND` for an unknown memory, `EMBEDDER_MISMATCH` when `model` is not staged). */
  put(model: EmbedderIdentity, items: Array<{ id: string; vector: Float32Array }>): Promise<void>;
  /**
   * In one transaction: when every memory has a staged vector, make them the index (model,
   * dimension and vectors at once) and end the staging. False, changing nothing, while some
   * memory still lacks one (a writer added it since the last batch).
   */
  commit(model: EmbedderIdentity): Promise<boolean>;
  /** End a switch without applying it (the configured model is the index's again). */
  drop(): Promise<void>;
}

/**
 * The storage contract. Every backend (SQLite, PostgreSQL, …) implements it and passes the
 * conformance suite in test/store/conformance.ts. Each method is atomic on its own.
 */
export interface Store {
  /** Backend name, e.g. `sqlite`. */
  readonly name: string;
  readonly capabilities: StoreCapabilities;
  /** Where the data lives, for `status` (a path or a redacted URL). */
  readonly location: string;
  /** The session substrate, when `capabilities.substrate` is true. */
  readonly substrate?: SubstrateStore;
  /** Persistent embeddings by (model, content hash), the layer under the in-process LRU (`withCache`). */
  readonly embeddingCache?: EmbeddingCacheStore;
  /** The injection ledger (what hooks and tools gave the agent, per session and context window). */
  readonly ledger?: LedgerStore;
  /**
   * Another model's vectors built beside the index (the background model switch), when the
   * backend supports it: recall keeps searching the current index until the switch commits.
   */
  readonly vectorStaging?: VectorStaging;

  /** Create or migrate the schema; refuse a schema newer than this code knows. */
  open(): Promise<void>;
  close(): Promise<void>;

  /**
   * Insert a memory with its events (and vector, and closing of a superseded row) atomically.
   * When an active memory with the same project and content hash already exists, nothing is
   * inserted and that memory is returned with `inserted: false`.
   */
  writeMemory(write: MemoryWrite): Promise<{ memory: Memory; inserted: boolean }>;
  /**
   * Optional: several writes atomically in one transaction, in order, each as `writeMemory` does
   * it (a later write sees the earlier ones); with `touchDuplicatesAt`, each write that found its
   * memory already stored bumps that memory's access as `touch(ids, at, false)` does. `cairn
   * import` commits a chunk of lines at a time through it; without it, it writes them one by one.
   */
  writeMemories?(writes: MemoryWrite[], options?: { touchDuplicatesAt?: number }): Promise<Array<{ memory: Memory; inserted: boolean }>>;
  patchMemory(id: string, patch: MemoryPatch, event: MemoryEvent): Promise<Memory>;
  getMemory(id: string): Promise<Memory | null>;
  getMemories(ids: string[]): Promise<Memory[]>;
  /**
   * Optional: id, text and kind of the memories with these ids, in `ids` order (unknown ids left
   * out): what remember's near-duplicate check reads of its candidates, without decoding every
   * column as `getMemories` does (20 candidates at 10K: ~0.5 ms → ~0.1). Without it, callers use
   * `getMemories`.
   */
  getMemoryTexts?(ids: string[]): Promise<MemoryText[]>;
  /**
   * Optional: candidates of a near-duplicate check from an index kept with every write (SQLite:
   * MinHash LSH bands, src/store/sqlite/memory-bands.ts): active memories of `project` (and the
   * user scope) likely to share half their index terms with `text`, at most `limit`. Null while
   * the index is incomplete (a store written before it existed, being filled); callers then use
   * full-text search. With `vectorModel`, each candidate carries its stored vector when the store
   * holds that model's (read with the row instead of by a second lookup of every id).
   */
  nearDuplicateCandidates?(text: string, project: string | null, limit: number, vectorModel?: EmbedderIdentity): Promise<MemoryText[] | null>;
  /**
   * Optional: fill that index for memories written before it existed, `chunk` a transaction, at
   * most `maxChunks` chunks (default: until complete); resumable after a crash.
   */
  fillNearDuplicateIndex?(options?: { chunk?: number; maxChunks?: number }): Promise<{ filled: number; complete: boolean }>;
  /**
   * Optional: fill a full-text index of the store's own (SQLite: migration 013's BM25 postings)
   * for memories written before it existed, at most `maxBatches` checkpointed batches (default:
   * until complete); resumable after a crash. Searches stay correct either way, only slower.
   */
  fillTextSearchIndex?(options?: { maxBatches?: number }): Promise<{ filled: number; complete: boolean }>;
  findByContentHash(contentHash: string, project: string | null): Promise<Memory | null>;
  listMemories(options: ListOptions): Promise<Memory[]>;
  countMemories(filter: MemoryFilter): Promise<number>;
  /** Every version chained to `id` through `supersedes`, oldest first. */
  versions(id: string): Promise<Memory[]>;

  /** BM25-ranked ids for a free-text query (the backend applies the code-aware tokenizer). */
  searchText(query: string, options: TextSearchOptions): Promise<ScoredId[]>;
  /** Cosine-ranked ids. Throws `EMBEDDER_MISMATCH` when `model` differs from the stored index. */
  searchVector(vector: Float32Array, model: EmbedderIdentity, options: VectorSearchOptions): Promise<ScoredId[]>;
  /** With `signature`, the memory's token signature for `model` is written in the same transaction. */
  putVectors(model: EmbedderIdentity, items: Array<{ id: string; vector: Float32Array; signature?: Uint8Array }>): Promise<void>;
  getVectors(ids: string[], model: EmbedderIdentity): Promise<Map<string, Float32Array>>;
  /**
   * Token signatures (recall's rerank): the stored signatures of `ids` made by `model` (id and
   * dimension); memories without one, or with another model's, are absent. Stores without them
   * leave these out and recall is not reranked.
   */
  getSignatures?(ids: string[], model: EmbedderIdentity): Promise<Map<string, Uint8Array>>;
  /** Write token signatures alone (memories that have `model`'s vector but no signature yet). */
  putSignatures?(model: EmbedderIdentity, items: Array<{ id: string; signature: Uint8Array }>): Promise<void>;
  /** Memories with `model`'s vector and without its token signature, oldest first. */
  missingSignatures?(model: EmbedderIdentity, limit: number): Promise<Memory[]>;
  /** How many memories {@link missingSignatures} would give without a limit. */
  countMissingSignatures?(model: EmbedderIdentity): Promise<number>;
  /** The embedder identity the vector index was built with, or null when empty. */
  vectorModel(): Promise<EmbedderIdentity | null>;
  /** Ids of memories without a vector for `model` (for reindex), oldest first. */
  missingVectors(model: EmbedderIdentity, limit: number): Promise<Memory[]>;
  /**
   * Drop every vector (before a reindex with another model). With `claim`, the index is recorded
   * as built with that model in the same transaction, so a process still on the old embedder
   * gets `EMBEDDER_MISMATCH` instead of writing an old-model vector (or re-claiming the index)
   * between the clear and the reindex's first write.
   */
  clearVectors(claim?: EmbedderIdentity): Promise<void>;

  /** Bump access counters; `recalled` also sets lastRecalledAt. */
  touch(ids: string[], at: number, recalled: boolean): Promise<void>;

  appendEvents(events: MemoryEvent[]): Promise<void>;
  listEvents(options: { memoryId?: string; since?: number; limit?: number; types?: EventType[] }): Promise<MemoryEvent[]>;

  createSnapshot(snapshot: Snapshot, filter: MemoryFilter): Promise<Snapshot>;
  listSnapshots(): Promise<Snapshot[]>;
  getSnapshot(idOrLabel: string): Promise<Snapshot | null>;
  snapshotMemberIds(snapshotId: string): Promise<Set<string>>;

  /** Small key/value state (cursors, budgets, settings). */
  getState(key: string): Promise<string | null>;
  setState(key: string, value: string): Promise<void>;
  /**
   * Read-modify-write one state key atomically against every other writer, in this process or
   * another: `update` gets the current value (null when absent) and returns the new one (null
   * deletes the key). It runs inside the write transaction, so it must be synchronous and may run
   * more than once (on a retried transaction); an error it throws aborts the write. Returns the
   * value stored.
   *
   * @example
   * await store.updateState('counter', (raw) => String(Number(raw ?? 0) + 1));
   */
  updateState(key: string, update: (current: string | null) => string | null): Promise<string | null>;

  stats(): Promise<StoreStats>;

  /** Queue review items; one whose `key` was queued before (open or resolved) is skipped. Returns how many were added. */
  queueReview(items: ReviewItem[]): Promise<number>;
  /** Review items, oldest first. */
  listReview(filter: ReviewFilter): Promise<ReviewItem[]>;
  countReview(filter: Omit<ReviewFilter, 'limit' | 'offset'>): Promise<number>;
  getReview(id: string): Promise<ReviewItem | null>;
  /** Record how an item was resolved (again, e.g. `undone`, when it already was); NOT_FOUND for an unknown id. */
  resolveReview(id: string, resolution: string, at: number): Promise<ReviewItem>;
  /** Reclaim free space (SQLite: VACUUM and a WAL checkpoint). Sizes in bytes when known. */
  vacuum(): Promise<{ beforeBytes: number | null; afterBytes: number | null }>;
  /** Backend self-check for `cairn doctor` (optional): each problem found, empty when healthy. */
  integrityCheck?(): Promise<Array<{ check: string; problem: string; advice: string }>>;
}

/** What a review item asks a person to decide about. */
export const REVIEW_KINDS = ['near-duplicate', 'contradiction', 'stale'] as const;
export type ReviewKind = (typeof REVIEW_KINDS)[number];

/**
 * Something for a person to decide: memories that repeat or contradict each other, or a memory
 * whose files changed. Queued by distillation and `maintain`, resolved in `cairn review`.
 */
export interface ReviewItem {
  id: string;
  kind: ReviewKind;
  /** Stable key (e.g. `dup:<a>:<b>`): the same finding is queued once, even after it was resolved. */
  key: string;
  project: string | null;
  memoryIds: string[];
  /** One line saying what to decide. */
  reason: string;
  data: Record<string, unknown>;
  createdAt: number;
  resolvedAt: number | null;
  /** How it was resolved: `kept:<id>`, `merged:<id>`, `dismissed`, `superseded`, `obsolete`, `undone` … */
  resolution: string | null;
}

export interface ReviewFilter {
  /** Only open (true) or only resolved (false) items; absent: both. */
  open?: boolean;
  /** That project's items and user-scope ones (project null); null: user-scope only. */
  project?: string | null;
  kinds?: ReviewKind[];
  limit?: number;
  offset?: number;
}

export interface Clock {
  now(): number;
}

export interface IdSource {
  /** A new sortable unique id (ULID). */
  next(at?: number): string;
}

export interface Logger {
  debug(message: string, data?: Record<string, unknown>): void;
  info(message: string, data?: Record<string, unknown>): void;
  warn(message: string, data?: Record<string, unknown>): void;
  error(message: string, data?: Record<string, unknown>): void;
}

/* ------------------------------------------------------------------------------------------ */
/* Session substrate: what transcript readers produce and the store keeps.                     */
/* ------------------------------------------------------------------------------------------ */

export const AGENTS = ['claude-code', 'codex', 'gemini', 'aider', 'cursor', 'generic'] as const;
export type Agent = (typeof AGENTS)[number];

export const TURN_ROLES = ['user', 'assistant', 'tool_call', 'tool_result', 'system', 'summary'] as const;
export type TurnRole = (typeof TURN_ROLES)[number];

export interface SessionRecord {
  /** Stable id: the agent's own session id when it has one. */
  id: string;
  agent: Agent;
  project: string | null;
  cwd: string | null;
  branch: string | null;
  /** Parent session for subagent / sidechain sessions. */
  parentId: string | null;
  startedAt: number | null;
  endedAt: number | null;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
  compactions: number;
  /** Transcript file(s) it was read from. */
  sourcePath: string;
  title: string | null;
}

export interface TurnRecord {
  /** Stable id: `${sessionId}:${sourceUuid ?? line}` so re-ingest is idempotent. */
  id: string;
  sessionId: string;
  /** Order within the session. */
  seq: number;
  role: TurnRole;
  text: string;
  toolName: string | null;
  /** Bounded summary of the tool input (tool_call) or output (tool_result). */
  toolInput: string | null;
  toolUseId: string | null;
  isError: boolean;
  /** Flags: interrupt, rejection, queued, slash-command, meta, sidechain, compact-summary, headless (a user turn of a `claude -p` / `codex exec` run). */
  flags: string[];
  at: number | null;
  sourceUuid: string | null;
  sourceLine: number;
  /**
   * The turn's full-text index terms, computed ahead of the write (ingest workers do it so the
   * writing thread does not tokenize). Only ever set to the store's own analysis of this record
   * (SQLite: `turnIndexText`); stores that index differently ignore it. Never read back.
   */
  terms?: string;
}

export interface CompactionRecord {
  id: string;
  sessionId: string;
  trigger: 'manual' | 'auto' | null;
  preTokens: number | null;
  summary: string | null;
  at: number | null;
  /** seq of the boundary turn. */
  seq: number;
  sourceLine: number;
}

export interface CorrectionRecord {
  id: string;
  sessionId: string;
  /** The assistant turn the user pushed back on (may be null when none precedes). */
  premiseTurnId: string | null;
  correctionTurnId: string;
  kind: 'interrupt' | 'rejection' | 'pushback';
  /** Language code of the matched pattern, e.g. `en`, `ru`. */
  lang: string | null;
  text: string;
  at: number | null;
}

/**
 * The kinds of session facts: exact details a developer needs again, extracted at ingest from the
 * full text of every turn (before it is bounded for storage).
 * - `path`: a file path as written, or `path:line` (then `path` and `line` are set)
 * - `symbol`: a function, method, class or type the session defined or edited (`note`: its signature)
 * - `command`: a shell command, whole (`note`: `exit N` and the first error line it produced)
 * - `error`: an error line from a tool's output (`TypeError: …`, `error TS2345: …`, a failed assertion)
 * - `test`: a test name (`note`: `failed` or `passed` when the output says)
 * - `config`: a setting, `KEY=value` or `key: value` (environment assignments, config-file edits)
 * - `version`: a package or tool with its version (`react@18.2.0`, `node v20.11.1`)
 * - `url`: a URL
 * - `id`: an identifier the user typed (issue or ticket number, commit hash, UUID)
 * - `call`: a function or method the code the session read or wrote calls (`text`: `name` or
 *   `obj.method`; `path`/`line`: where it was first seen)
 */
export const FACT_KINDS = ['path', 'symbol', 'command', 'error', 'test', 'config', 'version', 'url', 'id', 'call'] as const;
export type FactKind = (typeof FACT_KINDS)[number];

/** One occurrence of a fact in a turn, as ingest produces it (written with `SubstrateBatch.facts`). */
export interface FactRecord {
  /** Stable short id of the fact: the same detail in the same session has the same id (see `factId`). */
  id: string;
  sessionId: string;
  kind: FactKind;
  /** The detail exactly as written (redacted like every stored text). */
  text: string;
  path: string | null;
  line: number | null;
  /** What this occurrence adds: a command's exit status and error line, a symbol's signature, a test's outcome. */
  note: string | null;
  /** The turn it occurs in. */
  turnId: string;
  seq: number;
  role: TurnRole;
  toolName: string | null;
  at: number | null;
  /**
   * The fact text's full-text index terms, computed ahead of the write (ingest workers do it, as
   * for {@link TurnRecord.terms}). Only ever set to the store's own analysis of `text` (SQLite:
   * `indexText(factIndexSource(fact))`); stores that index differently ignore it. Never read back.
   */
  terms?: string;
}

/** Where a fact occurred. */
export interface FactSource {
  turnId: string;
  seq: number;
  role: TurnRole;
  toolName: string | null;
  at: number | null;
  note: string | null;
}

/** A fact of a session with its occurrences summed up (over the occurrences a query selected). */
export interface SessionFact {
  id: string;
  sessionId: string;
  kind: FactKind;
  text: string;
  path: string | null;
  line: number | null;
  /** The latest non-empty note among the selected occurrences. */
  note: string | null;
  /** Turns it occurs in (among the selected occurrences). */
  occurrences: number;
  first: FactSource;
  last: FactSource;
  /** True when a user turn holds it (the user named it). */
  byUser: boolean;
}

/** A fact with every occurrence, oldest first (`SubstrateStore.getFact`). */
export interface SessionFactDetail extends SessionFact {
  sources: FactSource[];
}

export interface FactListOptions {
  kinds?: FactKind[];
  /** Only occurrences with seq ≥ this. */
  fromSeq?: number;
  /** Only occurrences with seq < this (e.g. the facts known before a compaction at seq N: `beforeSeq: N`). */
  beforeSeq?: number;
  /** Only facts occurring within `window` turns of this seq (see `window`). */
  nearSeq?: number;
  /** Half-width of the `nearSeq` window, in turns. @default 20 */
  window?: number;
  /** Most recent first (by last occurrence); default order. @default 500 */
  limit?: number;
}

export interface FactSearchOptions {
  sessionId?: string;
  project?: string;
  kinds?: FactKind[];
  limit: number;
}

export interface FactHit {
  fact: SessionFact;
  session: SessionRecord;
  score: number;
}

/** Per-file reading position so ingest is incremental and idempotent. */
export interface IngestCursor {
  path: string;
  size: number;
  mtimeMs: number;
  /** Bytes consumed (always at a line boundary). */
  offset: number;
  /** sha256 of the first min(size, 4096) bytes, to detect a rewritten or replaced file. */
  headHash: string;
  /** Reader-specific state needed to continue (e.g. seq counters, open message ids). */
  state: Record<string, unknown>;
  updatedAt: number;
}

export interface TurnSearchOptions {
  project?: string;
  sessionId?: string;
  agent?: Agent;
  roles?: TurnRole[];
  since?: number;
  limit: number;
}

export interface TurnHit {
  turn: TurnRecord;
  session: SessionRecord;
  score: number;
  /** A short excerpt around the match. */
  snippet: string;
}

/** One reader pass's output, written atomically together with the file's new cursor. */
export interface SubstrateBatch {
  sessions: SessionRecord[];
  turns: TurnRecord[];
  compactions: CompactionRecord[];
  corrections: CorrectionRecord[];
  /** Fact occurrences found in this batch's turns (optional: absent means none). */
  facts?: FactRecord[];
  cursor: IngestCursor | null;
}

/** The session substrate part of a store (capabilities.substrate). */
export interface SubstrateStore {
  /** Upsert sessions (token totals and end time merged), insert turns/compactions/corrections
   * ignoring ones already present, and save the cursor — all in one transaction. */
  writeSubstrate(batch: SubstrateBatch): Promise<{ turnsAdded: number }>;
  getCursor(path: string): Promise<IngestCursor | null>;
  getSession(id: string): Promise<SessionRecord | null>;
  listSessions(options: { project?: string; agent?: Agent; limit?: number; offset?: number }): Promise<SessionRecord[]>;
  getTurns(sessionId: string, options?: { fromSeq?: number; limit?: number }): Promise<TurnRecord[]>;
  getCompactions(sessionId: string): Promise<CompactionRecord[]>;
  getCorrections(options: { sessionId?: string; limit?: number }): Promise<CorrectionRecord[]>;
  searchTurns(query: string, options: TurnSearchOptions): Promise<TurnHit[]>;
  /** A session's facts, most recently seen first, summed over the occurrences the options select. */
  listFacts(sessionId: string, options?: FactListOptions): Promise<SessionFact[]>;
  /** Full-text search over fact texts and notes (paths, commands, symbols, errors …), best first. */
  searchFacts(query: string, options: FactSearchOptions): Promise<FactHit[]>;
  /** One fact by its id with every occurrence; null when unknown. */
  getFact(id: string): Promise<SessionFactDetail | null>;
  substrateStats(): Promise<{ sessions: number; turns: number; compactions: number; corrections: number; files: number; lastIngestAt: number | null }>;
}
