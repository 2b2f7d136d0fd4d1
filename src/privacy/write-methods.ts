/**
 * Which Store and SubstrateStore methods write text (SPEC §7): the table the write boundary
 * (`redactingStore`, boundary.ts) consults on every call. Kept apart from the redaction code
 * (guard.ts) so a process that only reads never loads the redaction rules.
 *
 * Bypassing it is a compile error: {@link STORE_METHODS} and {@link SUBSTRATE_METHODS} must name
 * every method of `Store` and `SubstrateStore` and say whether it writes text.
 */
import type { Store, SubstrateStore } from '../types.js';

/** How a method is treated: `write` sanitizes every string argument; `pass` forwards as is. */
export type Treatment = 'write' | 'pass';

type MethodsOf<T> = { [K in keyof T]-?: NonNullable<T[K]> extends (...args: never[]) => unknown ? K : never }[keyof T];

/**
 * Every Store method. `pass`: reads, ids and vectors only, or internal bookkeeping whose values
 * cairn writes itself (ingest cursors, token hashes, undo state built from stored memories).
 */
export const STORE_METHODS: Record<MethodsOf<Store>, Treatment> = {
  open: 'pass',
  close: 'pass',
  writeMemory: 'write',
  writeMemories: 'write',
  patchMemory: 'write',
  getMemory: 'pass',
  getMemories: 'pass',
  getMemoryTexts: 'pass',
  nearDuplicateCandidates: 'pass',
  fillNearDuplicateIndex: 'pass',
  fillTextSearchIndex: 'pass',
  findByContentHash: 'pass',
  listMemories: 'pass',
  countMemories: 'pass',
  versions: 'pass',
  searchText: 'pass',
  searchVector: 'pass',
  putVectors: 'pass',
  getVectors: 'pass',
  vectorModel: 'pass',
  missingVectors: 'pass',
  getSignatures: 'pass',
  putSignatures: 'pass',
  missingSignatures: 'pass',
  countMissingSignatures: 'pass',
  clearVectors: 'pass',
  touch: 'pass',
  appendEvents: 'write',
  listEvents: 'pass',
  createSnapshot: 'write',
  listSnapshots: 'pass',
  getSnapshot: 'pass',
  snapshotMemberIds: 'pass',
  getState: 'pass',
  setState: 'pass',
  updateState: 'pass',
  stats: 'pass',
  queueReview: 'write',
  listReview: 'pass',
  countReview: 'pass',
  getReview: 'pass',
  resolveReview: 'write',
  vacuum: 'pass',
  integrityCheck: 'pass',
};

/** Every SubstrateStore method: the batch of sessions, turns, compactions and corrections is text. */
export const SUBSTRATE_METHODS: Record<MethodsOf<SubstrateStore>, Treatment> = {
  writeSubstrate: 'write',
  getCursor: 'pass',
  getSession: 'pass',
  listSessions: 'pass',
  getTurns: 'pass',
  getCompactions: 'pass',
  getCorrections: 'pass',
  searchTurns: 'pass',
  substrateStats: 'pass',
  listFacts: 'pass',
  searchFacts: 'pass',
  getFact: 'pass',
};
