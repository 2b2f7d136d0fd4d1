/**
 * The distiller's own contracts: a candidate memory as an extractor proposes it, the subject a
 * candidate makes a claim about (for contradictions), and what a distillation run reports.
 */
import type { Kind, Provenance, Scope } from '../types.js';

/** Which extractor proposed a candidate (kept in `meta.extractor` of the stored memory). */
export const EXTRACTORS = [
  'correction',
  'command',
  'error-fix',
  'signature',
  'location',
  'invariant',
  'decision',
  'preference',
  'setting',
  'version',
  'port',
  'continuation',
  'llm',
] as const;
export type ExtractorName = (typeof EXTRACTORS)[number];

/**
 * What a candidate makes a claim about, so that a later claim about the same thing can be
 * recognised: the same file + symbol, the same setting key, the same preference target.
 */
export interface Subject {
  /** Stable key, e.g. `sig:src/a.ts#parse`, `setting:config/dev.exs#port`, `pref:package-manager`. */
  key: string;
  /** The claimed value; two claims conflict when their values differ. */
  value: string;
  /**
   * What to do when an active memory about the same subject says something else:
   * - `supersede`: strong evidence (a later read of the file, a later edit of the setting, the user
   *   restating a preference) — the newer claim replaces the older one (history kept);
   * - `review`: weak evidence — both are kept and a review item is queued;
   * - `merge`: claims that do not exclude each other (two test commands of one tool) — merged.
   */
  onConflict: 'supersede' | 'review' | 'merge';
}

/** A memory an extractor proposes, before the quality gate, scope assignment and dedup. */
export interface Candidate {
  text: string;
  kind: Kind;
  /** Set by the extractor when it knows; else assigned by scope.ts. No scope → dropped. */
  scope: Scope | null;
  tags: string[];
  importance: number;
  /** Where it came from: transcript path, line, uuid, session and turn. */
  provenance: Provenance;
  /** Files the memory is about: `path` or `path:line`. */
  files: string[];
  subject: Subject | null;
  extractor: ExtractorName;
  /** When the evidence was seen (the turn's time), epoch ms; null when unknown. */
  at: number | null;
  /** seq of the turn the candidate is anchored on (incremental distillation emits each once). */
  seq: number;
}

/** Why the gate turned a candidate away. */
export type RejectReason = 'too-short' | 'too-long' | 'not-specific' | 'filler' | 'injected' | 'no-scope';

/** What happened to one candidate on the write path. */
export type Outcome =
  | { action: 'added'; id: string; scope: Scope }
  | { action: 'merged'; id: string; how: 'exact' | 'near' | 'subject' }
  | { action: 'superseded'; id: string; replaced: string; scope: Scope }
  | { action: 'queued'; id: string; reviewId: string; scope: Scope }
  | { action: 'replaced'; id: string; replaced: string | null }
  | { action: 'unchanged'; id: string }
  | { action: 'outdated'; id: string }
  | { action: 'rejected'; reason: RejectReason };

/** Counts of one distillation run. */
export interface DistillSummary {
  /** Sessions that had new turns to distil. */
  sessions: number;
  /** Turns read (new ones; earlier turns are read again only as context). */
  turns: number;
  candidates: number;
  added: number;
  merged: number;
  superseded: number;
  /** Contradictions left to the user (review items queued). */
  queued: number;
  /** Continuation memories written or replaced. */
  continuations: number;
  rejected: Partial<Record<RejectReason, number>>;
  /** Added memories by kind and by scope. */
  byKind: Partial<Record<Kind, number>>;
  byScope: Partial<Record<Scope, number>>;
  /** Sessions that failed (the rest went on), with the error. */
  errors: Array<{ sessionId: string; error: string }>;
  /** True when nothing was written (dry run). */
  dryRun: boolean;
}

export function emptySummary(dryRun = false): DistillSummary {
  return {
    sessions: 0,
    turns: 0,
    candidates: 0,
    added: 0,
    merged: 0,
    superseded: 0,
    queued: 0,
    continuations: 0,
    rejected: {},
    byKind: {},
    byScope: {},
    errors: [],
    dryRun,
  };
}
