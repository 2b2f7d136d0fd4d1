/**
 * Turns and facts leave the readers sealed, so the store's write boundary (privacy/guard.ts) does
 * not scan again what the readers already sanitized. The boundary's one pass stays the one pass:
 * a turn's `text` and `toolInput` are outputs of the sanitizer itself (see `BatchBuilder.clean`)
 * and its index terms are derived from its text alone; every other string of a turn, and every
 * string of a fact, is sanitized here exactly as the boundary would (in the reader's thread, with
 * short repeated strings remembered). Sessions, compactions, corrections and the cursor are not
 * sealed: the boundary scans them as before.
 *
 * Across threads a seal is lost (structured clone), so the pool adopts the seals of its own
 * workers when they redact with the same ruleset ({@link RULESET_ID}).
 */
import { adoptSealed, sanitizeField, sanitizeFields, sealSanitized } from '../privacy/guard.js';
import { RULESET_ID } from '../privacy/ruleset.js';
import type { FactRecord, SubstrateBatch } from '../types.js';

/** Turn fields that hold the sanitizer's own output (or text derived from it only). */
const TURN_SANITIZED: ReadonlySet<string> = new Set(['text', 'toolInput', 'terms']);
const NONE: ReadonlySet<string> = new Set();
/** Fact fields that hold the sanitizer's own output once `text` is cleaned first (see sealReadBatch). */
const FACT_SANITIZED: ReadonlySet<string> = new Set(['text', 'terms']);

/** The ruleset the seals of this thread are made with. */
export const SEAL_RULESET = RULESET_ID;

/**
 * Seal the turns and facts of a batch a reader of this package just built (in place). Only for
 * batches from `readTranscript`: a turn's `text` and `toolInput` are trusted to be sanitized.
 * With `factTerms` (a function of a fact's text alone), each fact also gets its index terms
 * (`FactRecord.terms`) from its text as the boundary would store it: the text is cleaned first,
 * exactly as sealing cleans it, so the writing thread only inserts. Only a fact's first record in the batch gets them (see below).
 * With `posted` (a reader worker, whose batch is cloned to the writing thread right away), the
 * records are sanitized exactly so but neither frozen nor sealed: a clone keeps neither, and the
 * writing thread adopts them ({@link adoptReadBatch}).
 */
export function sealReadBatch(batch: Pick<SubstrateBatch, 'turns' | 'facts'>, factTerms?: (fact: FactRecord) => string, posted = false): void {
  const seal = posted ? sanitizeFields : sealSanitized;
  for (const turn of batch.turns) seal(turn, TURN_SANITIZED);
  if (factTerms === undefined) {
    for (const fact of batch.facts ?? []) seal(fact, NONE);
    return;
  }
  // The store writes a fact's row (and its index terms) from its first record in the batch only;
  // the others are occurrences, so they carry no terms (less to tokenize and to post).
  const first = new Set<string>();
  for (const fact of batch.facts ?? []) {
    fact.text = sanitizeField('text', fact.text);
    if (!first.has(fact.id)) {
      first.add(fact.id);
      fact.terms = termsOf(fact, factTerms);
    }
    seal(fact, FACT_SANITIZED);
  }
}

/** Fact texts remembered with their index terms, at most (cleared when full). */
const TERMS_MEMO_ENTRIES = 20_000;
/** Only texts up to this long are remembered (a fact's text is short: a path, a command, a name). */
const TERMS_MEMO_MAX_LENGTH = 256;
let termsMemo = new Map<string, string>();
let termsMemoOf: ((fact: FactRecord) => string) | null = null;

/**
 * `factTerms(fact)`, remembered by the fact's text: the same path or command is a fact of many
 * sessions (other ids, the same text: over ../shared's transcripts 11,322 facts get terms, of
 * 6,176 texts). The terms are a function of the text alone (`factIndexSource`), so the memo
 * changes no terms; it is kept for one `factTerms` function only.
 */
function termsOf(fact: FactRecord, factTerms: (fact: FactRecord) => string): string {
  const text = fact.text;
  if (text.length > TERMS_MEMO_MAX_LENGTH) return factTerms(fact);
  if (termsMemoOf !== factTerms) {
    termsMemo = new Map();
    termsMemoOf = factTerms;
  }
  let terms = termsMemo.get(text);
  if (terms === undefined) {
    terms = factTerms(fact);
    if (termsMemo.size >= TERMS_MEMO_ENTRIES) termsMemo.clear();
    termsMemo.set(text, terms);
  }
  return terms;
}

/**
 * Seal again, without scanning, the turns and facts of a batch that {@link sealReadBatch} sealed
 * in a worker whose ruleset is `ruleset`; a batch from a worker of another ruleset is left
 * unsealed, and the write boundary scans it whole.
 */
export function adoptReadBatch(batch: Pick<SubstrateBatch, 'turns' | 'facts'>, ruleset: string | null): void {
  if (ruleset !== SEAL_RULESET) return;
  for (const turn of batch.turns) adoptSealed(turn);
  for (const fact of batch.facts ?? []) adoptSealed(fact);
}
