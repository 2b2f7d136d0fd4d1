/**
 * What `cairn status` shows about distillation: the open review queue and, when the LLM
 * distiller was used, today's spend against its budget.
 */
import type { Deps } from '../deps.js';
import { readSpend, type Spend } from './llm/budget.js';
import { countOpenReview } from './review.js';

export interface DistillStatus {
  /** Open review items (this project's and the user's). */
  reviewOpen: number;
  /** LLM distiller tokens spent today (UTC), all sessions. */
  llmToday: Spend;
}

export async function distillStatus(deps: Deps): Promise<DistillStatus> {
  return { reviewOpen: await countOpenReview(deps), llmToday: await readSpend(deps, 'day', deps.clock.now()) };
}

/** One line for `cairn status`. */
export function distillStatusLine(status: DistillStatus): string {
  const review = status.reviewOpen > 0 ? `${status.reviewOpen} open (cairn review)` : 'nothing to review';
  const spend = status.llmToday.calls > 0 ? `LLM distiller today: ${status.llmToday.inputTokens + status.llmToday.outputTokens} tokens in ${status.llmToday.calls} calls` : 'LLM distiller: not used today (off by default)';
  return `review       ${review} · ${spend}`;
}
