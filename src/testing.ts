/**
 * Test support: `cairn-memory/testing`. The internals that cairn's own benchmarks (the `bench/`
 * workspace) and tests build on beyond the public API in `index.ts`: building memories and
 * stores directly, the embedders, the hook runner, configuration loading.
 *
 * Not a stable API: names here may change in any release. Library users import `cairn-memory`.
 */
export { loadConfig, openCairn, cachedEmbedder } from './config.js';
export type { Config } from './config.js';
export type { Deps } from './deps.js';
export { invalid } from './errors.js';
export { processAlive } from './runtime.js';
export { prepareMemory } from './memory/remember.js';
export { KIND_IMPORTANCE } from './memory/normalize.js';
export { createEmbedder, createHashEmbedder, DEFAULT_EMBEDDER_SPEC, KNOWN_ONNX_MODELS, loadOnnxEmbedder } from './embed/index.js';
export { reindex } from './embed/reindex.js';
export { rankingMetrics } from './embed/evaluate.js';
export type { RankingMetrics } from './embed/evaluate.js';
export { loadStaticEmbedder } from './embed/static.js';
export { runHook } from './hooks/run.js';
export { HOOK_TEXT_MAX, SESSION_START_PARTS } from './hooks/parts.js';
export { DEFAULT_HOOK_SETTINGS } from './hooks/events.js';
export { expandTranscriptPaths } from './ingest/index.js';
export { toolClass } from './ingest/facts/extract.js';
export { extractFileRefs } from './workspace/files.js';
export { carries, coverage, extractDetails, neededDetails } from './ledger/used-details.js';
export { HnswVectorIndex, loadUsearch } from './store/ann-index.js';
export type { UsearchModule } from './store/ann-index.js';
export { loadMigrations } from './store/sqlite/database.js';
export { VectorFiles } from './store/sqlite/vector-files.js';
export type { SqliteVectorIndexOptions } from './store/sqlite/vectors.js';
export { memoryValues } from './store/postgres/store.js';
export { PgDatabase } from './store/postgres/driver.js';
export { contextHeader, gatherCandidates } from './context/build.js';
export { sessionCandidates, packDetails } from './context/session-context.js';
export type { Detail, DetailKind } from './context/details.js';
export { adjusted, FEATURES, FIT_OPTIONS, fitValueModel, learnStep, valueOf } from './context/value-model.js';
export { GLOBAL_USE_RATES, LEARN_DEFAULTS, learnedCount, learnedDelta, learnedDetails, learnKey, markLearned, sumKinds, type Learned } from './context/learn.js';
export type { LearnOptions } from './context/learn.js';
export type { Example, Feature } from './context/value-model.js';
export { forEachPiece, pieceCost, PIECE_COSTS, PIECE_KINDS, PIECE_TABLE_LENGTH, loadTokenCounter } from './tokens.js';
export type { PieceCosts, PieceKind } from './tokens.js';
export { HOOK_NODE_FLAGS, MCP_NODE_FLAGS } from './install/targets.js';
