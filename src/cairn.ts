import { buildContext, type ContextDeps, type ContextInput, type ContextResult } from './context/build.js';
import type { CorePaths } from './context/core.js';
import { RankerRegistry, type Ranker } from './context/rankers.js';
import type { FusionWeights } from './deps.js';
import type { DistillOptions } from './distill/distill.js';
import type { MaintainOptions, MaintainReport } from './distill/maintain.js';
import type {
  ReviewAction,
  ReviewEntry,
  ReviewListInput,
  ReviewResolution,
} from './distill/review.js';
import type { DistillSummary } from './distill/types.js';
import type { FactSearchInput, SessionFactsInput } from './history/facts.js';
import type { HistoryInput, IngestOptions, IngestReport, SessionsInput } from './history/history.js';
import type { ForgetResult, MemoryDetail, ReviseOptions, SnapshotDiff, UpdateInput } from './memory/lifecycle.js';
import type { RememberInput, RememberResult } from './memory/remember.js';
import { toExportLine, toMarkdown } from './memory/export.js';
import type { LineTooLong } from './memory/bounded-lines.js';
import type { ImportResult } from './memory/transfer.js';
import { createLedger, type Ledger } from './ledger/ledger.js';
import { redactingStore } from './privacy/boundary.js';
import { recall, type RecallInput, type RecallResult } from './recall/recall.js';
import { silentLogger, systemClock, ulidSource } from './runtime.js';
import type { Clock, Embedder, EmbedderIdentity, FactHit, IdSource, ListOptions, Logger, Memory, SessionFact, SessionFactDetail, SessionRecord, Snapshot, Store, StoreStats, TurnHit } from './types.js';

export interface CairnOptions {
  /** Where memories live (e.g. `await openSqliteStore(path)`). */
  store: Store;
  /** Semantic embedder; without one recall runs on BM25 alone. @default null */
  embedder?: Embedder | null;
  /**
   * An embedder for the model the vector index holds when it is not `embedder`'s (a model switch
   * under way), so recall keeps searching the old vectors; null when it cannot be loaded.
   * @default none: recall runs on BM25 until the switch completes
   */
  indexEmbedder?: (index: EmbedderIdentity) => Promise<Embedder | null>;
  /**
   * Write memories without a vector and leave them to the background fill (src/embed/fill.ts):
   * short-lived processes then never load a model to write. Recall still embeds its query.
   * @default false
   */
  deferVectors?: boolean;
  /** @default the system clock */
  clock?: Clock;
  /** @default monotonic ULIDs */
  ids?: IdSource;
  /** @default a silent logger (library code never writes to stdout) */
  logger?: Logger;
  /** Project identity for writes and recall (see `resolveProject`). @default null (user scope only) */
  project?: string | null;
  /** Folder file references resolve against, for staleness. @default null (no file checks) */
  workspaceRoot?: string | null;
  /** Agent session id, for session-scoped memories. @default null */
  session?: string | null;
  /** Who is acting, recorded in the event log. @default 'library' */
  actor?: string;
  /** Core memory files injected first by `context`. @default none */
  core?: Partial<CorePaths>;
  /** Hybrid fusion weights instead of the measured defaults (benchmarks tune with this). */
  fusion?: Partial<FusionWeights>;
  /** Extra context rankers by name (the built-ins are composite, recency, importance, bm25, cosine, random). */
  rankers?: Record<string, Ranker>;
}

export interface CairnStatus {
  store: { name: string; location: string };
  project: string | null;
  /**
   * The configured embedder; `unavailable` is one line naming the bad model file and the fix when
   * its files are missing or damaged (recall then runs on BM25).
   */
  embedder: { model: string; dimension: number; unavailable?: string } | null;
  /** `hybrid` with a working embedder and a vector index, else `bm25`. */
  recallMode: 'hybrid' | 'bm25';
  stats: StoreStats;
}

/** The typed operations every surface (CLI, MCP, hooks, browser) is a thin layer over. */
export interface Cairn {
  readonly deps: ContextDeps;
  /** The injection ledger (what hooks and tools gave the agent, per session and window); undefined when the store has none. */
  readonly ledger?: Ledger;
  remember(input: RememberInput): Promise<RememberResult>;
  recall(input: RecallInput): Promise<RecallResult>;
  forget(ids: string[], reason?: string): Promise<ForgetResult>;
  restore(id: string): Promise<Memory>;
  revise(id: string, text: string, options?: ReviseOptions): Promise<RememberResult>;
  update(id: string, input: UpdateInput): Promise<Memory>;
  get(id: string): Promise<MemoryDetail>;
  /** Memories of the current project (and the user's), or of every project with `allProjects`. */
  list(options?: ListOptions & { allProjects?: boolean }): Promise<Memory[]>;
  snapshot(label: string): Promise<Snapshot>;
  snapshots(): Promise<Snapshot[]>;
  diff(from: string, to: string): Promise<SnapshotDiff>;
  /** Lines over 1 MiB (or reported as {@link LineTooLong} by `boundedLines`) fail with their line number. */
  importJsonl(lines: AsyncIterable<string | LineTooLong> | Iterable<string | LineTooLong>, onProgress?: (line: number) => void): Promise<ImportResult>;
  exportJsonl(options?: ListOptions & { allProjects?: boolean }): AsyncGenerator<string>;
  exportMarkdown(options?: ListOptions & { allProjects?: boolean }): Promise<string>;
  /** Read agent transcripts under `paths` into session history, incrementally, and distil what was added. */
  ingest(paths: string[], options?: IngestOptions): Promise<IngestReport>;
  /** Distil session history into memories (sessions with new turns, or the ones given). */
  distill(options?: DistillOptions): Promise<DistillSummary>;
  /** Housekeeping: decay, usage-based importance, pruning below a floor, review queue rebuild, VACUUM. */
  maintain(options?: MaintainOptions): Promise<MaintainReport>;
  /** The review queue (near-duplicates, contradictions, stale file references). */
  review(input?: ReviewListInput): Promise<ReviewEntry[]>;
  resolveReview(id: string, action: ReviewAction): Promise<ReviewResolution>;
  /** Undo a review resolution, or an automatic supersede made by distillation. */
  undoReview(id: string): Promise<ReviewResolution>;
  sessions(input?: SessionsInput): Promise<SessionRecord[]>;
  /** Search raw transcript turns. */
  history(input: HistoryInput): Promise<TurnHit[]>;
  /** A session's facts (paths, commands with their outcome, errors, symbols …), most recently seen first. */
  sessionFacts(input: SessionFactsInput): Promise<SessionFact[]>;
  /** Search session facts (the current project's by default). */
  searchFacts(input: FactSearchInput): Promise<FactHit[]>;
  /** One session fact by id (`f` + 11 characters), with every turn it occurs in. */
  getFact(id: string): Promise<SessionFactDetail>;
  /** The Markdown injected into an agent, packed into a token budget. */
  context(input?: ContextInput): Promise<ContextResult>;
  /** Add or replace a context ranker. */
  registerRanker(name: string, ranker: Ranker): void;
  /** Counts, paths and the embedder's state (`verify` also checks model checksums: slower). */
  status(options?: { verify?: boolean }): Promise<CairnStatus>;
  close(): Promise<void>;
}

/** Wire a store and an embedder into the operations. */
export function createCairn(options: CairnOptions): Cairn {
  const rankers = new RankerRegistry();
  for (const [name, ranker] of Object.entries(options.rankers ?? {})) rankers.register(name, ranker);
  const deps: ContextDeps = {
    // The one redaction pass: every write of every surface goes through it.
    store: redactingStore(options.store),
    embedder: options.embedder ?? null,
    deferVectors: options.deferVectors ?? false,
    ...(options.indexEmbedder ? { indexEmbedder: options.indexEmbedder } : {}),
    clock: options.clock ?? systemClock,
    ids: options.ids ?? ulidSource(),
    logger: options.logger ?? silentLogger,
    project: options.project ?? null,
    workspaceRoot: options.workspaceRoot ?? null,
    session: options.session ?? null,
    actor: options.actor ?? 'library',
    core: { project: options.core?.project ?? null, user: options.core?.user ?? null },
    rankers,
    ...(options.fusion ? { fusion: options.fusion } : {}),
  };
  const scoped = ({ allProjects, ...list }: ListOptions & { allProjects?: boolean } = {}): ListOptions =>
    !allProjects && list.project === undefined && deps.project !== null ? { ...list, project: deps.project } : list;
  const ledger = deps.store.ledger ? createLedger(deps.store.ledger, deps.clock, deps.project) : undefined;
  return {
    deps,
    ...(ledger ? { ledger } : {}),
    // Writing and the lifecycle load on first use (with the redaction rules remember needs): most
    // hooks only read (docs/BENCHMARKS.md, hooks notes).
    remember: async (input) => (await import('./memory/remember.js')).remember(deps, input),
    recall: (input) => recall(deps, input),
    forget: async (ids, reason) => (await import('./memory/lifecycle.js')).forget(deps, ids, reason),
    restore: async (id) => (await import('./memory/lifecycle.js')).restore(deps, id),
    revise: async (id, text, opts) => (await import('./memory/lifecycle.js')).revise(deps, id, text, opts),
    update: async (id, input) => (await import('./memory/lifecycle.js')).update(deps, id, input),
    get: async (id) => (await import('./memory/lifecycle.js')).getDetail(deps, id),
    list: (list) => deps.store.listMemories(scoped(list)),
    snapshot: async (label) => (await import('./memory/lifecycle.js')).snapshot(deps, label),
    snapshots: () => deps.store.listSnapshots(),
    diff: async (from, to) => (await import('./memory/lifecycle.js')).diff(deps, from, to),
    // zod loads in ~75 ms; only imports need it, so hooks and recall never pay for it.
    importJsonl: async (lines, onProgress) => {
      // Start iterating before the await: a readline interface drops lines nobody is reading yet.
      type Line = string | LineTooLong;
      const source: AsyncIterator<Line> | Iterator<Line> =
        Symbol.asyncIterator in lines ? (lines as AsyncIterable<Line>)[Symbol.asyncIterator]() : (lines as Iterable<Line>)[Symbol.iterator]();
      const { importJsonl } = await import('./memory/transfer.js');
      return importJsonl(deps, { [Symbol.asyncIterator]: () => source as AsyncIterator<Line> }, onProgress);
    },
    async *exportJsonl(list: ListOptions & { allProjects?: boolean } = {}) {
      const pageSize = 1000;
      for (let offset = 0; ; offset += pageSize) {
        const page = await deps.store.listMemories({ ...scoped(list), order: 'created-asc', limit: pageSize, offset });
        for (const memory of page) yield JSON.stringify(toExportLine(memory));
        if (page.length < pageSize) return;
      }
    },
    async exportMarkdown(list: ListOptions & { allProjects?: boolean } = {}) {
      const memories = await deps.store.listMemories({ ...scoped(list), order: 'created-asc', limit: list.limit ?? 1_000_000 });
      return toMarkdown(memories, deps.project ? `cairn memories — ${deps.project}` : 'cairn memories');
    },
    // Ingest, distillation and history load on first use: the MCP server and the prompt hook
    // rarely need them, and they are a large part of cairn's code (memory held all session).
    ingest: async (paths, opts) => (await import('./history/history.js')).ingest(deps, paths, opts),
    distill: async (opts) => (await import('./distill/distill.js')).distill(deps, opts),
    maintain: async (opts) => (await import('./distill/maintain.js')).maintain(deps, opts),
    review: async (input) => (await import('./distill/review.js')).listReview(deps, input),
    resolveReview: async (id, action) => (await import('./distill/review.js')).resolveReview(deps, id, action),
    undoReview: async (id) => (await import('./distill/review.js')).undoReview(deps, id),
    sessions: async (input) => (await import('./history/history.js')).sessions(deps, input),
    history: async (input) => (await import('./history/history.js')).history(deps, input),
    sessionFacts: async (input) => (await import('./history/facts.js')).sessionFacts(deps, input),
    searchFacts: async (input) => (await import('./history/facts.js')).searchFacts(deps, input),
    getFact: async (id) => (await import('./history/facts.js')).getFact(deps, id),
    context: (input) => buildContext(deps, input),
    registerRanker: (name, ranker) => rankers.register(name, ranker),
    async status(options?: { verify?: boolean }) {
      const stats = await deps.store.stats();
      const health = deps.embedder?.availability ? await deps.embedder.availability(options) : { ok: true as const };
      const embedder = deps.embedder ? { model: deps.embedder.model, dimension: deps.embedder.dimension, ...(health.ok ? {} : { unavailable: health.reason }) } : null;
      return {
        store: { name: deps.store.name, location: deps.store.location },
        project: deps.project,
        embedder,
        recallMode: deps.embedder && health.ok && deps.store.capabilities.vectors ? 'hybrid' : 'bm25',
        stats,
      };
    },
    close: async () => {
      await deps.embedder?.close?.();
      await deps.store.close();
    },
  };
}
