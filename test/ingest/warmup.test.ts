import { describe, expect, it } from 'vitest';
import { warmUpReaders } from '../../src/ingest/warmup.js';

describe("a reader worker's warm-up", () => {
  it('reads its made-up session through the whole pipeline (turns, facts, a redaction), so it still takes the branches it is there for', () => {
    const read = warmUpReaders();
    // 3 rounds × 4 prompts × (prompt, reply, tool call, tool result).
    expect(read.turns).toBe(48);
    expect(read.facts).toBeGreaterThan(40);
    expect(read.redactions).toBeGreaterThan(0);
  });
});
