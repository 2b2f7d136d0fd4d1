import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCairn, type Cairn } from '../../src/cairn.js';
import { NEIGHBOUR_SHARE, neighbourLifts, turnPosition } from '../../src/recall/neighbours.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Memory, Provenance } from '../../src/types.js';

const at = (id: string, provenance: Provenance | null, relevance: number): { memory: Pick<Memory, 'id' | 'provenance'>; relevance: number } => ({
  memory: { id, provenance },
  relevance,
});

describe('conversation neighbours', () => {
  it('places a memory by its provenance session and line, or nowhere', () => {
    expect(turnPosition({ provenance: { sessionId: 's1', line: 4 } })).toEqual({ session: 's1', line: 4 });
    expect(turnPosition({ provenance: { sessionId: 's1' } })).toBeNull();
    expect(turnPosition({ provenance: { line: 4 } })).toBeNull();
    expect(turnPosition({ provenance: null })).toBeNull();
  });

  it('lends the better of the next and previous turns’ relevance, within one session only', () => {
    const lifts = neighbourLifts([
      at('question', { sessionId: 's1', line: 3 }, 0.8),
      at('reply', { sessionId: 's1', line: 4 }, 0.1),
      at('after', { sessionId: 's1', line: 5 }, 0.2),
      at('other-session', { sessionId: 's2', line: 4 }, 0.9),
      at('far', { sessionId: 's1', line: 9 }, 0.5),
      at('no-provenance', null, 0.7),
    ]);
    // The reply gains from the question before it (0.8) rather than the turn after it (0.2).
    expect(lifts.get('reply')).toBeCloseTo(NEIGHBOUR_SHARE.previous * 0.8, 12);
    // The question gains from its reply (the next turn); the turn after from the reply before it.
    expect(lifts.get('question')).toBeCloseTo(NEIGHBOUR_SHARE.next * 0.1, 12);
    expect(lifts.get('after')).toBeCloseTo(NEIGHBOUR_SHARE.previous * 0.1, 12);
    // No neighbour among the candidates, another session, or no provenance: nothing.
    for (const id of ['other-session', 'far', 'no-provenance']) expect(lifts.has(id)).toBe(false);
  });
});

describe('recall with conversation neighbours', () => {
  let cairn: Cairn | null = null;
  let root = '';
  afterEach(async () => {
    await cairn?.close();
    cairn = null;
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('ranks a reply that shares no word with the query above an unrelated turn, through the question it answers', async () => {
    root = mkdtempSync(join(tmpdir(), 'cairn-neighbours-'));
    cairn = createCairn({ store: await openSqliteStore(join(root, 'cairn.db')), embedder: null, clock: { now: () => Date.UTC(2026, 0, 1) } });
    const turn = (text: string, line: number, sessionId = 'chat-1'): Promise<unknown> =>
      cairn!.remember({ text, project: 'p', provenance: { sessionId, line } });
    await turn('Mel: How long have you been married to your husband?', 1);
    await turn('Caroline: Five years already, best decision ever.', 2);
    // The query's words twice, so BM25 ranks it above the reply; no question before it lends relevance.
    await turn('Caroline: Five years at the studio, five years already!', 1, 'chat-2');
    for (const [line, filler] of ['the weather turned cold', 'a new recipe for soup', 'the train was late again', 'painting the fence blue', 'a film about the sea'].entries()) {
      await turn(`Mel: ${filler}`, line + 1, 'chat-3');
    }
    const result = await cairn.recall({ query: 'married husband five years', project: 'p', k: 3, touch: false, checkFiles: false });
    const texts = result.hits.map((h) => h.memory.text);
    expect(texts[0]).toMatch(/married/);
    const reply = result.hits.find((h) => h.memory.text.startsWith('Caroline: Five years already, best'))!;
    const studio = result.hits.find((h) => h.memory.text.includes('studio'))!;
    expect(texts.indexOf(reply.memory.text)).toBeLessThan(texts.indexOf(studio.memory.text));
    expect(reply.why.neighbour).toBeGreaterThan(0);
    expect(studio.why.neighbour).toBe(0);
  });
});
