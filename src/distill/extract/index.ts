/**
 * The heuristic extractors (no network, no cost), in the order their candidates are written:
 * corrections first (they matter most after /compact), continuation last (it summarises the rest).
 */
import type { SessionView } from '../session.js';
import type { Candidate } from '../types.js';
import { extractCommands } from './commands.js';
import type { Extractor } from './common.js';
import { extractContinuation } from './continuation.js';
import { extractCorrections } from './corrections.js';
import { extractInvariants } from './invariants.js';
import { extractLocations } from './locations.js';
import { extractSettings } from './settings.js';
import { extractSignatures } from './signatures.js';
import { extractStatements } from './statements.js';

export const EXTRACTOR_CHAIN: ReadonlyArray<[string, Extractor]> = [
  ['corrections', extractCorrections],
  ['statements', extractStatements],
  ['commands', extractCommands],
  ['settings', extractSettings],
  ['signatures', extractSignatures],
  ['locations', extractLocations],
  ['invariants', extractInvariants],
  ['continuation', extractContinuation],
];

/** Every candidate the heuristic extractors find in a session view's new turns. */
export function extractAll(view: SessionView): Candidate[] {
  const out: Candidate[] = [];
  for (const [, extract] of EXTRACTOR_CHAIN) out.push(...extract(view));
  return out;
}

export { classifyCommand, shellOutcome } from './commands.js';
export { findSignatures } from './signatures.js';
export { phraseRule } from './corrections.js';
export { preferenceSubject, hasDecisionCue, hasPreferenceCue } from './statements.js';
