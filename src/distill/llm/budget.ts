/**
 * The LLM distiller's hard token budget, per day (UTC) and per session, and the spend ledger it
 * is checked against (kept in the store's key/value state, so `cairn status` can show it).
 * A call is refused before it is made when its estimate would cross either limit.
 */
import type { Deps } from '../../deps.js';

export interface Spend {
  inputTokens: number;
  outputTokens: number;
  calls: number;
}

export interface LlmBudget {
  /** Tokens (input + output) allowed per UTC day across all sessions. @default 200000 */
  dailyTokens: number;
  /** Tokens allowed per agent session. @default 20000 */
  sessionTokens: number;
}

export const DEFAULT_BUDGET: LlmBudget = { dailyTokens: 200_000, sessionTokens: 20_000 };

const ZERO: Spend = { inputTokens: 0, outputTokens: 0, calls: 0 };

function dayOf(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

function key(scope: 'day' | 'session', at: number, sessionId?: string): string {
  return scope === 'day' ? `llm:spend:day:${dayOf(at)}` : `llm:spend:session:${sessionId ?? ''}`;
}

function parse(raw: string | null): Spend {
  if (raw === null) return { ...ZERO };
  try {
    const v = JSON.parse(raw) as Partial<Spend>;
    return { inputTokens: Number(v.inputTokens) || 0, outputTokens: Number(v.outputTokens) || 0, calls: Number(v.calls) || 0 };
  } catch {
    return { ...ZERO };
  }
}

export async function readSpend(deps: Deps, scope: 'day' | 'session', at: number, sessionId?: string): Promise<Spend> {
  return parse(await deps.store.getState(key(scope, at, sessionId)));
}

/**
 * Add one call's usage to today's and the session's ledger. Each addition is one atomic
 * read-modify-write (`Store.updateState`), so concurrent distill runs never overwrite each
 * other's spend.
 */
export async function recordSpend(deps: Deps, at: number, sessionId: string | null, usage: { inputTokens: number; outputTokens: number }): Promise<void> {
  const scopes: Array<['day' | 'session', string | undefined]> = [['day', undefined]];
  if (sessionId !== null) scopes.push(['session', sessionId]);
  for (const [scope, id] of scopes) {
    await deps.store.updateState(key(scope, at, id), (raw) => {
      const spend = parse(raw);
      spend.inputTokens += usage.inputTokens;
      spend.outputTokens += usage.outputTokens;
      spend.calls += 1;
      return JSON.stringify(spend);
    });
  }
}

/** Why a call of `estimate` tokens may not be made now, or null when it may. */
export async function overBudget(deps: Deps, budget: LlmBudget, at: number, sessionId: string | null, estimate: number): Promise<string | null> {
  const day = await readSpend(deps, 'day', at);
  const dayUsed = day.inputTokens + day.outputTokens;
  if (dayUsed + estimate > budget.dailyTokens) return `daily LLM budget reached (${dayUsed} of ${budget.dailyTokens} tokens used today)`;
  if (sessionId !== null) {
    const session = await readSpend(deps, 'session', at, sessionId);
    const used = session.inputTokens + session.outputTokens;
    if (used + estimate > budget.sessionTokens) return `session LLM budget reached for ${sessionId} (${used} of ${budget.sessionTokens} tokens)`;
  }
  return null;
}

