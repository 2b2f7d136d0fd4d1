/**
 * A view of a shared store confined to one project, for `cairn serve`: every filter is pinned to
 * the project (user-scope memories, project null, excluded), reads of other projects' rows come
 * back as "not found", writes outside the project are FORBIDDEN, and state keys are namespaced.
 * With it, a token for project A cannot see or change project B through any cairn operation.
 */
import { CairnError, notFound } from '../errors.js';
import type {
  Agent,
  CompactionRecord,
  CorrectionRecord,
  EmbedderIdentity,
  EventType,
  IngestCursor,
  ListOptions,
  Memory,
  MemoryEvent,
  MemoryFilter,
  MemoryPatch,
  MemoryWrite,
  ReviewFilter,
  ReviewItem,
  ScoredId,
  SessionRecord,
  Snapshot,
  Store,
  StoreStats,
  SubstrateBatch,
  FactHit,
  FactListOptions,
  FactSearchOptions,
  SessionFact,
  SessionFactDetail,
  SubstrateStore,
  TextSearchOptions,
  TurnHit,
  TurnRecord,
  TurnSearchOptions,
  VectorSearchOptions,
} from '../types.js';

function forbidden(what: string): CairnError {
  return new CairnError('FORBIDDEN', what);
}

export class ProjectScopedStore implements Store {
  readonly name: string;
  readonly capabilities: Store['capabilities'];
  readonly location: string;
  readonly substrate?: SubstrateStore;

  constructor(
    private readonly inner: Store,
    readonly project: string,
  ) {
    this.name = inner.name;
    this.capabilities = inner.capabilities;
    this.location = inner.location;
    if (inner.substrate) this.substrate = new ScopedSubstrate(inner.substrate, project);
  }

  private pin<F extends MemoryFilter>(filter: F): F {
    return { ...filter, project: this.project, includeUserScope: false };
  }

  private owns(memory: Memory | null): memory is Memory {
    return memory !== null && memory.project === this.project;
  }

  private async ownedIds(ids: string[]): Promise<string[]> {
    return (await this.inner.getMemories(ids)).filter((m) => this.owns(m)).map((m) => m.id);
  }

  private stateKey(key: string): string {
    return `project:${this.project}:${key}`;
  }

  /** The shared store is opened and closed by the server, not per request. */
  async open(): Promise<void> {}
  async close(): Promise<void> {}

  async writeMemory(write: MemoryWrite): Promise<{ memory: Memory; inserted: boolean }> {
    if (write.memory.project !== this.project) {
      throw forbidden(`this token may only write memories of project ${this.project} (not ${write.memory.project === null ? 'user-scope memories' : write.memory.project})`);
    }
    if (write.closes && !this.owns(await this.inner.getMemory(write.closes.id))) throw notFound(`memory ${write.closes.id}`);
    return this.inner.writeMemory(write);
  }

  async patchMemory(id: string, patch: MemoryPatch, event: MemoryEvent): Promise<Memory> {
    if (!this.owns(await this.inner.getMemory(id))) throw notFound(`memory ${id}`);
    return this.inner.patchMemory(id, patch, event);
  }

  async getMemory(id: string): Promise<Memory | null> {
    const memory = await this.inner.getMemory(id);
    return this.owns(memory) ? memory : null;
  }

  async getMemories(ids: string[]): Promise<Memory[]> {
    return (await this.inner.getMemories(ids)).filter((m) => this.owns(m));
  }

  async findByContentHash(contentHash: string, project: string | null): Promise<Memory | null> {
    return project === this.project ? this.inner.findByContentHash(contentHash, project) : null;
  }

  listMemories(options: ListOptions): Promise<Memory[]> {
    return this.inner.listMemories(this.pin(options));
  }

  countMemories(filter: MemoryFilter): Promise<number> {
    return this.inner.countMemories(this.pin(filter));
  }

  async versions(id: string): Promise<Memory[]> {
    return (await this.inner.versions(id)).filter((m) => this.owns(m));
  }

  searchText(query: string, options: TextSearchOptions): Promise<ScoredId[]> {
    return this.inner.searchText(query, this.pin(options));
  }

  searchVector(vector: Float32Array, model: EmbedderIdentity, options: VectorSearchOptions): Promise<ScoredId[]> {
    return this.inner.searchVector(vector, model, this.pin(options));
  }

  async putVectors(model: EmbedderIdentity, items: Array<{ id: string; vector: Float32Array }>): Promise<void> {
    const owned = new Set(await this.ownedIds(items.map((i) => i.id)));
    const foreign = items.find((i) => !owned.has(i.id));
    if (foreign) throw notFound(`memory ${foreign.id}`);
    return this.inner.putVectors(model, items);
  }

  async getVectors(ids: string[], model: EmbedderIdentity): Promise<Map<string, Float32Array>> {
    return this.inner.getVectors(await this.ownedIds(ids), model);
  }

  vectorModel(): Promise<EmbedderIdentity | null> {
    return this.inner.vectorModel();
  }

  async missingVectors(model: EmbedderIdentity, limit: number): Promise<Memory[]> {
    return (await this.inner.missingVectors(model, limit)).filter((m) => this.owns(m));
  }

  async clearVectors(): Promise<void> {
    throw forbidden('clearing the vector index affects every project; run `cairn reindex` against the database directly');
  }

  async touch(ids: string[], at: number, recalled: boolean): Promise<void> {
    return this.inner.touch(await this.ownedIds(ids), at, recalled);
  }

  async appendEvents(events: MemoryEvent[]): Promise<void> {
    const owned = new Set(await this.ownedIds([...new Set(events.map((e) => e.memoryId))]));
    const foreign = events.find((e) => !owned.has(e.memoryId));
    if (foreign) throw notFound(`memory ${foreign.memoryId}`);
    return this.inner.appendEvents(events);
  }

  async listEvents(options: { memoryId?: string; since?: number; limit?: number; types?: EventType[] }): Promise<MemoryEvent[]> {
    if (options.memoryId !== undefined) {
      return (await this.getMemory(options.memoryId)) ? this.inner.listEvents(options) : [];
    }
    // The event log is shared: read pages and keep this project's events until the limit is met.
    const limit = options.limit ?? 100;
    const out: MemoryEvent[] = [];
    let page = Math.max(limit * 2, 200);
    for (;;) {
      const events = await this.inner.listEvents({ ...options, limit: page });
      const owned = new Set(await this.ownedIds([...new Set(events.map((e) => e.memoryId))]));
      out.length = 0;
      for (const e of events) if (owned.has(e.memoryId) && out.length < limit) out.push(e);
      if (out.length >= limit || events.length < page) return out;
      page *= 4;
    }
  }

  async createSnapshot(snapshot: Snapshot, filter: MemoryFilter): Promise<Snapshot> {
    const sealed = await this.inner.createSnapshot(snapshot, this.pin(filter));
    await this.inner.setState(`snapshot.project.${sealed.id}`, this.project);
    return sealed;
  }

  private async ownsSnapshot(snapshot: Snapshot | null): Promise<boolean> {
    return snapshot !== null && (await this.inner.getState(`snapshot.project.${snapshot.id}`)) === this.project;
  }

  async listSnapshots(): Promise<Snapshot[]> {
    const out: Snapshot[] = [];
    for (const s of await this.inner.listSnapshots()) if (await this.ownsSnapshot(s)) out.push(s);
    return out;
  }

  async getSnapshot(idOrLabel: string): Promise<Snapshot | null> {
    const snapshot = await this.inner.getSnapshot(idOrLabel);
    return (await this.ownsSnapshot(snapshot)) ? snapshot : null;
  }

  async snapshotMemberIds(snapshotId: string): Promise<Set<string>> {
    if (!(await this.ownsSnapshot(await this.inner.getSnapshot(snapshotId)))) return new Set();
    return this.inner.snapshotMemberIds(snapshotId);
  }

  getState(key: string): Promise<string | null> {
    return this.inner.getState(this.stateKey(key));
  }

  setState(key: string, value: string): Promise<void> {
    return this.inner.setState(this.stateKey(key), value);
  }

  updateState(key: string, update: (current: string | null) => string | null): Promise<string | null> {
    return this.inner.updateState(this.stateKey(key), update);
  }

  /** Counts of this project's memories only (the database's totals would describe other projects). */
  async stats(): Promise<StoreStats> {
    const all = await this.inner.stats();
    const count = (filter: MemoryFilter): Promise<number> => this.countMemories(filter);
    const active = await count({});
    const everything = await count({ includeSuperseded: true, includeDeleted: true });
    const byKind: Record<string, number> = {};
    for (const kind of Object.keys(all.byKind)) {
      const n = await count({ kinds: [kind as Memory['kind']] });
      if (n > 0) byKind[kind] = n;
    }
    const byScope: Record<string, number> = {};
    for (const scope of Object.keys(all.byScope)) {
      const n = await count({ scopes: [scope as Memory['scope']] });
      if (n > 0) byScope[scope] = n;
    }
    return {
      ...all,
      memories: everything,
      active,
      superseded: everything - (await count({ includeDeleted: true })),
      forgotten: await count({ onlyDeleted: true, includeSuperseded: true }),
      events: 0,
      snapshots: (await this.listSnapshots()).length,
      vectors: 0,
      byKind,
      byScope,
      sizeBytes: null,
    };
  }

  queueReview(items: ReviewItem[]): Promise<number> {
    const foreign = items.find((i) => i.project !== this.project);
    if (foreign) throw forbidden(`review items must belong to project ${this.project}`);
    return this.inner.queueReview(items);
  }

  async listReview(filter: ReviewFilter): Promise<ReviewItem[]> {
    return (await this.inner.listReview({ ...filter, project: this.project })).filter((i) => i.project === this.project);
  }

  countReview(filter: Omit<ReviewFilter, 'limit' | 'offset'>): Promise<number> {
    return this.listReview({ ...filter, limit: 100_000 }).then((items) => items.length);
  }

  async getReview(id: string): Promise<ReviewItem | null> {
    const item = await this.inner.getReview(id);
    return item && item.project === this.project ? item : null;
  }

  async resolveReview(id: string, resolution: string, at: number): Promise<ReviewItem> {
    if (!(await this.getReview(id))) throw notFound(`review item ${id}`);
    return this.inner.resolveReview(id, resolution, at);
  }

  async vacuum(): Promise<{ beforeBytes: number | null; afterBytes: number | null }> {
    throw forbidden('vacuum affects the whole database; run `cairn maintain` against it directly');
  }
}

/** The substrate confined to one project's sessions; ingest (writes) does not go through the server. */
class ScopedSubstrate implements SubstrateStore {
  constructor(
    private readonly inner: SubstrateStore,
    private readonly project: string,
  ) {}

  private async ownsSession(id: string): Promise<boolean> {
    return (await this.inner.getSession(id))?.project === this.project;
  }

  async writeSubstrate(_batch: SubstrateBatch): Promise<{ turnsAdded: number }> {
    throw forbidden('transcripts are ingested with `cairn ingest --store …`, not through the server');
  }

  async getCursor(_path: string): Promise<IngestCursor | null> {
    return null;
  }

  async getSession(id: string): Promise<SessionRecord | null> {
    const session = await this.inner.getSession(id);
    return session?.project === this.project ? session : null;
  }

  listSessions(options: { project?: string; agent?: Agent; limit?: number; offset?: number }): Promise<SessionRecord[]> {
    return this.inner.listSessions({ ...options, project: this.project });
  }

  async getTurns(sessionId: string, options?: { fromSeq?: number; limit?: number }): Promise<TurnRecord[]> {
    return (await this.ownsSession(sessionId)) ? this.inner.getTurns(sessionId, options) : [];
  }

  async getCompactions(sessionId: string): Promise<CompactionRecord[]> {
    return (await this.ownsSession(sessionId)) ? this.inner.getCompactions(sessionId) : [];
  }

  async getCorrections(options: { sessionId?: string; limit?: number }): Promise<CorrectionRecord[]> {
    if (options.sessionId !== undefined) return (await this.ownsSession(options.sessionId)) ? this.inner.getCorrections(options) : [];
    const sessions = new Set((await this.inner.listSessions({ project: this.project, limit: 100_000 })).map((s) => s.id));
    const all = await this.inner.getCorrections({});
    const mine = all.filter((c) => sessions.has(c.sessionId));
    return options.limit === undefined || options.limit < 0 ? mine : mine.slice(0, options.limit);
  }

  searchTurns(query: string, options: TurnSearchOptions): Promise<TurnHit[]> {
    return this.inner.searchTurns(query, { ...options, project: this.project });
  }

  async listFacts(sessionId: string, options?: FactListOptions): Promise<SessionFact[]> {
    return (await this.ownsSession(sessionId)) ? this.inner.listFacts(sessionId, options) : [];
  }

  searchFacts(query: string, options: FactSearchOptions): Promise<FactHit[]> {
    return this.inner.searchFacts(query, { ...options, project: this.project });
  }

  async getFact(id: string): Promise<SessionFactDetail | null> {
    const fact = await this.inner.getFact(id);
    return fact !== null && (await this.ownsSession(fact.sessionId)) ? fact : null;
  }

  async substrateStats(): Promise<{ sessions: number; turns: number; compactions: number; corrections: number; files: number; lastIngestAt: number | null }> {
    const sessions = await this.inner.listSessions({ project: this.project, limit: 100_000 });
    return { sessions: sessions.length, turns: 0, compactions: 0, corrections: 0, files: 0, lastIngestAt: null };
  }
}
