import { estimateTokens } from '../tokens.js';

export interface BudgetLimits {
  /** Tokens returned in one agent session before the hint appears. @default 40000 */
  tokens: number;
  /** Calls in one agent session before the hint appears. @default 20 */
  calls: number;
}

export const DEFAULT_BUDGET: BudgetLimits = { tokens: 40_000, calls: 20 };

/**
 * Counts what cairn returned to one agent session (an MCP connection). Past the limits it
 * produces a hint listing what can be fetched again by id, so the agent stops re-reading; it
 * frees nothing (SPEC §4).
 */
export class RetrievalBudget {
  private tokens = 0;
  private calls = 0;
  private readonly returned = new Map<string, string>();
  constructor(private readonly limits: BudgetLimits = DEFAULT_BUDGET) {}

  /** Record one response; `items` are the memories it carried (id and a short label). */
  record(text: string, items: Array<{ id: string; label: string }> = []): void {
    this.tokens += estimateTokens(text);
    this.calls += 1;
    for (const item of items) this.returned.set(item.id, item.label);
  }

  get usage(): { tokens: number; calls: number; limits: BudgetLimits } {
    return { tokens: this.tokens, calls: this.calls, limits: this.limits };
  }

  get exceeded(): boolean {
    return this.tokens >= this.limits.tokens || this.calls >= this.limits.calls;
  }

  /** The hint to append, or null while under the limits. */
  hint(maxItems = 20): string | null {
    if (!this.exceeded) return null;
    const items = [...this.returned.entries()].slice(-maxItems);
    const lines = items.map(([id, label]) => `- ${id}: ${label}`);
    return [
      `cairn: this session has retrieved ~${this.tokens} tokens in ${this.calls} calls. ` +
        'What was already returned stays retrievable by id (the get tool, or `cairn get ID`), so there is no need to re-read it:',
      ...lines,
    ].join('\n');
  }
}
