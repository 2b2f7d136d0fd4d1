/**
 * cairn's public library API. Every export here is public; everything else is internal.
 */
export { createCairn } from './cairn.js';
export type { Cairn, CairnOptions, CairnStatus } from './cairn.js';
export { CairnError, isCairnError } from './errors.js';
export type { CairnErrorCode } from './errors.js';
export { SqliteStore, openSqliteStore } from './store/sqlite/store.js';
export { PostgresStore, openPostgresStore } from './store/postgres/store.js';
export { createServeApp } from './serve/app.js';
export type { SqliteStoreOptions } from './store/sqlite/store.js';
export { ExactVectorIndex } from './store/vector-index.js';
export type { VectorIndex, VectorHit } from './store/vector-index.js';
export { indexTerms, queryTerms } from './store/tokenize.js';
export { createMcpServer } from './mcp/server.js';
export { createMemoryTool, confinePath, MEMORY_TOOL_TYPE, memoryToolCommand } from './memorytool/memory-tool.js';
export type { MemoryTool, MemoryToolCommand, MemoryToolOptions } from './memorytool/memory-tool.js';
export type { McpServerOptions } from './mcp/server.js';
export { RetrievalBudget, DEFAULT_BUDGET } from './recall/budget.js';
export { reciprocalRankFusion, RRF_K } from './recall/fusion.js';
export { HALF_LIFE_DAYS, WEIGHTS, compositeScore } from './recall/score.js';
export type { Why } from './recall/score.js';
export type { RecallInput, RecallResult, RecallHit, Staleness, StaleReason } from './recall/recall.js';
export type { RememberInput, RememberResult } from './memory/remember.js';
export type { SnapshotDiff, ForgetResult, MemoryDetail, ReviseOptions, UpdateInput } from './memory/lifecycle.js';
export type { ImportResult } from './memory/transfer.js';
export { MAX_TEXT_CHARS, contentHash } from './memory/normalize.js';
export { ConversationContext, embeddingText, MAX_CONTEXT_CHARS } from './memory/context.js';
export { estimateTokens } from './tokens.js';
export { DEFAULT_VALUE_MODEL } from './context/value-model.js';
export type { ValueModel } from './context/value-model.js';
export { learnedDelta, LEARN_DEFAULTS } from './context/learn.js';
export type { LearnOptions } from './context/learn.js';
export type { LedgerOutcome, OutcomeCounts } from './types.js';
export type { ProjectUse } from './ledger/use-summary.js';
export type { ChosenDetail } from './context/session-context.js';
export type { ContextInput, ContextResult, ContextSection } from './context/build.js';
export { RankerRegistry, RANKER_NAMES } from './context/rankers.js';
export type { Ranker, Candidate, RankContext } from './context/rankers.js';
export { CORE_LINE_BUDGET } from './context/core.js';
export type { HistoryInput, SessionsInput } from './history/history.js';
export type { FactSearchInput, SessionFactsInput } from './history/facts.js';
export { factId, isFactId, FACT_ID } from './ingest/facts/id.js';
export type { IngestSummary } from './ingest/index.js';
export { maintain, listReview, resolveReview, undoReview, EXTRACTORS } from './distill/index.js';
export type { DistillSummary, DistillOptions, MaintainOptions, MaintainReport, ReviewEntry, ReviewResolution } from './distill/index.js';
export { sanitize, redactSecrets, stripPrivate } from './privacy/redact.js';
export { resolveProject } from './workspace/project.js';
export type { ProjectIdentity } from './workspace/project.js';
export { systemClock, silentLogger, streamLogger, ulidSource } from './runtime.js';
export type {
  BenchReport,
  Dataset as BenchDataset,
  Metric as BenchMetric,
  RunEnv as BenchRunEnv,
  SuiteResult as BenchSuiteResult,
  SuiteStatus as BenchSuiteStatus,
  Target as BenchTarget,
} from './bench-report.js';
export * from './types.js';
