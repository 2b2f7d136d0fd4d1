/**
 * Transcript ingest: readers for each agent's session files, the incremental runner and the
 * correction finder. Every export here is public API (the CLI `ingest` / `sessions` / `history`
 * commands and the MCP `history` tool build on it).
 *
 * - {@link ingestPaths}: read everything under some paths into a `SubstrateStore`, incrementally.
 * - {@link defaultTranscriptRoots}: the agents' standard folders that exist on this machine.
 * - {@link readTranscript}: one file from its cursor → a `SubstrateBatch` (pure; worker-safe).
 * - {@link detectFormat}: which transcript format a file holds.
 * - {@link detectPushback} / {@link findCorrections}: correction pairs from turns.
 */
export { ingestPaths, defaultTranscriptRoots, expandTranscriptPaths } from './runner.js';
export type { IngestDeps, IngestProgress, IngestSummary, TranscriptFile, TranscriptReader } from './runner.js';
export { readTranscript, HEAD_BYTES } from './read.js';
export { detectFormat } from './detect.js';
export type { Detection } from './detect.js';
export { detectPushback, guessLanguage, CORRECTION_LANGS } from './corrections.js';
export type { CorrectionLang, PushbackMatch } from './corrections.js';
export { findCorrections } from './correction-finder.js';
export type { CorrectionCarry, PendingUser } from './correction-finder.js';
export { TRANSCRIPT_FORMATS, FORMAT_AGENT, outcomeTotal } from './types.js';
export type { BadLine, LineOutcomes, ReadOptions, ReadResult, ReaderStats, TranscriptFormat } from './types.js';
export { readConversation, splitConversation } from './conversation.js';
export type { Conversation, ConversationCompaction, ConversationSplit, ConversationTurn } from './conversation.js';
