/**
 * A memory's context: the words it answers, stored beside its text (`Memory.context`). A reply
 * such as "5 years already!" shares no word with the question that will look for it ("How long
 * have Mel and her husband been married?"); the turn it answers ("How long have you been
 * married?") does. Full text indexes the context with the text (`memoryIndexSource`) and vectors
 * embed the two together (`embeddingText`), so recall finds the reply by what it answers; the
 * memory's text, what recall shows, stays the turn alone.
 *
 * On LoCoMo (one memory per conversation turn, context = the turn before it in the session) this
 * moved MiniLM hybrid evidence recall@5 from 0.622 to 0.674 (tuning / report halves 0.647 / 0.593
 * → 0.698 / 0.646; docs/EMBEDDINGS.md).
 */
import type { Provenance } from '../types.js';

/**
 * The longest context kept, in characters: enough for a conversation turn or two; the encoders
 * read 256–512 tokens in all, and the memory's own words come first.
 */
export const MAX_CONTEXT_CHARS = 2_000;

export { embeddingText } from '../embed/embedding-text.js';

/** A context as stored: trimmed, cut at MAX_CONTEXT_CHARS, null when nothing is left. */
export function normalizeContext(context: string | null | undefined): string | null {
  if (typeof context !== 'string') return null;
  const trimmed = context.trim();
  if (trimmed.length === 0) return null;
  return trimmed.length > MAX_CONTEXT_CHARS ? trimmed.slice(0, MAX_CONTEXT_CHARS) : trimmed;
}

/**
 * Follows the turns of conversations written one memory per turn, in order, and gives each turn
 * the one it answers: the turn just before it in the same session (`provenance.sessionId`, its
 * place `provenance.line` one less). A turn whose session or place is unknown, or whose previous
 * turn was not seen, gets none. Keeps one turn per session.
 */
export class ConversationContext {
  private readonly last = new Map<string, { line: number; text: string }>();

  /** The context of the turn at `provenance` with `text`, recording it as its session's last turn. */
  next(provenance: Pick<Provenance, 'sessionId' | 'line'> | null | undefined, text: string): string | null {
    const session = provenance?.sessionId;
    const line = provenance?.line;
    if (typeof session !== 'string' || session === '' || typeof line !== 'number' || !Number.isInteger(line)) return null;
    const previous = this.last.get(session);
    this.last.set(session, { line, text });
    return previous !== undefined && previous.line === line - 1 ? normalizeContext(previous.text) : null;
  }
}
