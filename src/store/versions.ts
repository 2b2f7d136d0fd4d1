import type { Memory } from '../types.js';

/**
 * Every version chained to `id`, oldest first: back through `supersedes`, then forward through the
 * first memory that supersedes the newest. Shared by the stores; each supplies the two lookups.
 */
export async function versionChain(
  id: string,
  getMemory: (id: string) => Promise<Memory | null>,
  successorOf: (id: string) => Promise<Memory | null>,
): Promise<Memory[]> {
  const chain: Memory[] = [];
  const seen = new Set<string>();
  let current = await getMemory(id);
  while (current && !seen.has(current.id)) {
    seen.add(current.id);
    chain.unshift(current);
    current = current.supersedes ? await getMemory(current.supersedes) : null;
  }
  if (chain.length === 0) return [];
  for (let next = await successorOf(chain[chain.length - 1]!.id); next && !seen.has(next.id); next = await successorOf(next.id)) {
    seen.add(next.id);
    chain.push(next);
  }
  return chain;
}
