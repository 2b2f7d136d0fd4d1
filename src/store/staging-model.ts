/**
 * What the SQLite and PostgreSQL vector staging (a model switch under way) share: when a staged
 * model is the one a caller writes for, and the error when it is not.
 */
import { CairnError } from '../errors.js';
import type { EmbedderIdentity } from '../types.js';

/** Same model id and dimension: vectors from one may go where the other's are staged. */
export const sameModel = (a: EmbedderIdentity, b: EmbedderIdentity): boolean => a.model === b.model && a.dimension === b.dimension;

/** The one-line error for a staged write or swap by a model the switch under way does not build. */
export function stagingMismatch(staged: EmbedderIdentity | null, model: EmbedderIdentity): CairnError {
  return new CairnError(
    'EMBEDDER_MISMATCH',
    staged
      ? `the model switch under way builds ${staged.model} (${staged.dimension} dims), not ${model.model} (${model.dimension} dims)`
      : `no model switch to ${model.model} is under way`,
  );
}
