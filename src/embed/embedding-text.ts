/**
 * What a memory's vector is computed from. Lives with the embedders (which may not import the
 * memory layer); `src/memory/context.ts` explains why a memory carries a context.
 */
import type { Memory } from '../types.js';

/** What a memory's vector is computed from: its text, then the words it answers (`Memory.context`). */
export function embeddingText(memory: Pick<Memory, 'text' | 'context'>): string {
  return memory.context ? `${memory.text} (in reply to: ${memory.context})` : memory.text;
}
