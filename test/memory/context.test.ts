/**
 * Memory.context: a conversation turn stored with the turn it answers. The import gives each turn
 * of a conversation (one memory per turn, provenance session + line) the turn before it; full text
 * and vectors see the context, the memory's text stays the turn; export and re-import keep it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCairn, type Cairn } from '../../src/cairn.js';
import { ConversationContext, MAX_CONTEXT_CHARS, embeddingText, normalizeContext } from '../../src/memory/context.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Embedder } from '../../src/types.js';
import { PLANTED } from '../privacy/corpus.js';

const dirs: string[] = [];
const open: Cairn[] = [];
afterEach(async () => {
  for (const cairn of open.splice(0)) await cairn.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function fresh(embedder: Embedder | null = null): Promise<Cairn> {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-context-'));
  dirs.push(dir);
  const cairn = createCairn({ store: await openSqliteStore(join(dir, 'cairn.db')), embedder, project: 'chat', actor: 'test' });
  open.push(cairn);
  return cairn;
}

const line = (text: string, sessionId: string, at: number, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ text, provenance: { sessionId, line: at }, ...extra });

describe('memory context', () => {
  it('gives a turn the turn just before it in its session, and nothing across sessions or gaps', () => {
    const conversation = new ConversationContext();
    expect(conversation.next({ sessionId: 's1', line: 1 }, 'How long have you been married?')).toBeNull();
    expect(conversation.next({ sessionId: 's2', line: 1 }, 'another chat')).toBeNull();
    expect(conversation.next({ sessionId: 's1', line: 2 }, 'Five years already!')).toBe('How long have you been married?');
    expect(conversation.next({ sessionId: 's1', line: 4 }, 'a turn after a gap')).toBeNull();
    expect(conversation.next({ sessionId: 's1' }, 'no place')).toBeNull();
    expect(conversation.next(null, 'no provenance')).toBeNull();
  });

  it('embeds the text then the context; trims and cuts the context', () => {
    expect(embeddingText({ text: 'Five years!', context: 'How long?' })).toBe('Five years! (in reply to: How long?)');
    expect(embeddingText({ text: 'alone', context: null })).toBe('alone');
    expect(normalizeContext('  ')).toBeNull();
    expect(normalizeContext('x'.repeat(MAX_CONTEXT_CHARS + 50))).toHaveLength(MAX_CONTEXT_CHARS);
  });

  it('imports a conversation one memory per turn with each reply’s question as context, and recall finds the reply by it', async () => {
    const cairn = await fresh();
    const result = await cairn.importJsonl([
      line('Mel: Wow, what an amazing family pic! How long have you been married?', 'chat-7', 1),
      line('Caroline: 5 years already! Time flies.', 'chat-7', 2),
      line('Mel: I went hiking on Sunday.', 'chat-8', 1),
      line('Caroline: Nice, where did you go?', 'chat-8', 2, { context: null }),
    ]);
    expect(result).toMatchObject({ imported: 4, failed: [] });
    const memories = await cairn.list({});
    const reply = memories.find((m) => m.text.startsWith('Caroline: 5 years'))!;
    expect(reply.context).toBe('Mel: Wow, what an amazing family pic! How long have you been married?');
    // An explicit null keeps a turn alone; a session's first turn answers nothing.
    expect(memories.find((m) => m.text.startsWith('Caroline: Nice'))!.context).toBeNull();
    expect(memories.find((m) => m.text.startsWith('Mel: Wow'))!.context).toBeNull();
    // The reply holds no word of the question; its context does.
    const hits = (await cairn.recall({ query: 'how long married', k: 2, touch: false })).hits.map((h) => h.memory.text);
    expect(hits).toContain(reply.text);
    // Export writes the context; a re-import into another store keeps it.
    const exported: string[] = [];
    for await (const row of cairn.exportJsonl({})) exported.push(row);
    const again = await fresh();
    await again.importJsonl(exported);
    expect((await again.list({})).find((m) => m.text === reply.text)?.context).toBe(reply.context);
  });

  it('redacts secrets in the context like the text, and the same words answering something else are another memory', async () => {
    const cairn = await fresh();
    const secret = PLANTED[0]!.text;
    const a = await cairn.remember({ text: 'Yes!', context: `Is this still valid: ${secret}` });
    expect(a.memory.context).not.toContain(secret);
    expect(Object.values(a.redacted).reduce((n, c) => n + c, 0)).toBeGreaterThan(0);
    const b = await cairn.remember({ text: 'Yes!', context: 'Shall we ship today?' });
    expect(b.created).toBe(true);
    expect(b.memory.id).not.toBe(a.memory.id);
    expect((await cairn.remember({ text: 'Yes!', context: 'Shall we ship today?' })).created).toBe(false);
  });

  it('embeds text and context together when remembering', async () => {
    const seen: string[] = [];
    const embedder: Embedder = {
      model: 'test:capture',
      dimension: 2,
      async embed(texts) {
        seen.push(...texts);
        return texts.map(() => new Float32Array([1, 0]));
      },
    };
    const cairn = await fresh(embedder);
    await cairn.remember({ text: 'Five years already!', context: 'How long have you been married?' });
    expect(seen).toContain('Five years already! (in reply to: How long have you been married?)');
  });
});
