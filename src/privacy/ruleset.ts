/**
 * The identity of the redaction ruleset: a fingerprint of every rule table (the shapes' and
 * prefixed tokens' patterns, the assignment words and limits) and a revision number for changes
 * to the code around them. Two threads with the same {@link RULESET_ID} redact alike, so a record
 * one sanitized need not be scanned again by the other (see `adoptSealed` in guard.ts).
 */
import { createHash } from 'node:crypto';
import { ASSIGNMENT_RULES } from './assignment.js';
import { DETECTOR_RULES } from './detectors.js';
import { PREFIX_RULES } from './rules.js';

/**
 * Bump when redaction code changes in a way the tables do not show (a probe, a merge rule, a
 * check on a match): workers of a different revision are then not trusted, and their records are
 * scanned again at the write boundary.
 */
export const RULESET_REVISION = 1;

/** A fingerprint of the ruleset this thread redacts with (16 hex digits). */
export const RULESET_ID: string = createHash('sha256')
  .update(
    JSON.stringify([
      RULESET_REVISION,
      DETECTOR_RULES,
      PREFIX_RULES.map((r) => [r.kind, r.prefix, r.pattern.source, r.glued === true, r.back ?? 0, r.accept !== undefined]),
      ASSIGNMENT_RULES,
    ]),
  )
  .digest('hex')
  .slice(0, 16);
