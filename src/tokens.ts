/**
 * Token estimate used everywhere (budgets, hints, benchmarks): characters / 4, rounded up.
 * One estimate for every surface keeps budgets comparable.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
