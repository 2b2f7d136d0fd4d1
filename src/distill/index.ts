/**
 * Distillation: from session history to checked, scoped memories — heuristics by default (no
 * network), an LLM optionally. Every export here is public API.
 *
 * - {@link distill}: distil sessions with new turns (ingest runs it for what it added).
 * - {@link maintain}: decay, usage-based importance, pruning, review queue rebuild, VACUUM.
 * - {@link listReview} / {@link resolveReview} / {@link undoReview}: the review queue.
 */
export { distill, pendingSessions, LOOKBACK_TURNS } from './distill.js';
export type { DistillOptions } from './distill.js';
export { maintain, targetImportance, isOperational, usageBoost } from './maintain.js';
export type { MaintainOptions, MaintainReport, MaintainChange } from './maintain.js';
export { listReview, resolveReview, undoReview, countOpenReview } from './review.js';
export type { ReviewAction, ReviewEntry, ReviewListInput, ReviewResolution } from './review.js';
export { gateReason, GATE_LIMITS } from './gate.js';
export { assignScope, isGeneralStyle } from './scope.js';
export { SessionView } from './session.js';
export { extractAll, EXTRACTOR_CHAIN } from './extract/index.js';
export { EXTRACTORS, emptySummary } from './types.js';
export type { Candidate, DistillSummary, ExtractorName, Outcome, RejectReason, Subject } from './types.js';
