/**
 * `cairn status` counts the memories whose vector waits for a token signature (recall does not
 * rerank them until the fill or `cairn reindex` signs them).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CairnStatus } from '../../src/cairn.js';
import { embedderLines, vectorStatus } from '../../src/cli/commands/status-embedder.js';
import type { Config } from '../../src/config.js';
import { reindex } from '../../src/embed/reindex.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Embedder } from '../../src/types.js';
import { tempDir } from '../helpers/cli.js';
import { fillMemories } from '../helpers/kill-embedding.js';

const dir = tempDir('cairn-status-signatures-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An encoder's identity without its model run: vectors written, no signatures (as an older cairn wrote them). */
function unsignedEncoder(model: string): Embedder {
  return { model, dimension: 4, embed: async (texts) => texts.map((_, i) => Float32Array.from([1, i % 3, 0.5, 0.25])) };
}

function lines(embedder: { model: string; dimension: number }, vectors: Awaited<ReturnType<typeof vectorStatus>>): string[] {
  const status = { embedder, recallMode: 'hybrid' } as CairnStatus;
  return embedderLines(status, { embedderSource: 'config' } as Config, vectors);
}

describe('cairn status: token signatures waiting', () => {
  it('counts the vectors without a signature, and drops the line once every one is signed', async () => {
    const store = await openSqliteStore(join(dir, 'encoder.db'));
    await fillMemories(store, 5);
    const embedder = unsignedEncoder('onnx:status-test');
    await reindex(store, embedder);
    const identity = { model: embedder.model, dimension: embedder.dimension };

    const before = await vectorStatus(store, identity);
    expect(before).toMatchObject({ present: 5, waiting: 0, signaturesWaiting: 5 });
    expect(lines(identity, before).find((line) => line.startsWith('signatures'))).toMatch(/^signatures {3}5 of 5 vectors wait for a token signature/);

    const ids = (await store.listMemories({ limit: 10 } as never)).map((m) => m.id);
    await store.putSignatures(identity, ids.slice(0, 3).map((id) => ({ id, signature: new Uint8Array(8) })));
    expect((await vectorStatus(store, identity)).signaturesWaiting).toBe(2);

    await store.putSignatures(identity, ids.slice(3).map((id) => ({ id, signature: new Uint8Array(8) })));
    const after = await vectorStatus(store, identity);
    expect(after.signaturesWaiting).toBe(0);
    expect(lines(identity, after).some((line) => line.startsWith('signatures'))).toBe(false);
    await store.close();
  });

  it('says nothing of signatures for an embedder that makes none', async () => {
    const store = await openSqliteStore(join(dir, 'hash.db'));
    await fillMemories(store, 3);
    const embedder = unsignedEncoder('hash:v1:4');
    await reindex(store, embedder);
    const vectors = await vectorStatus(store, { model: embedder.model, dimension: embedder.dimension });
    expect(vectors).toMatchObject({ present: 3, signaturesWaiting: null });
    expect(lines({ model: embedder.model, dimension: 4 }, vectors).some((line) => line.startsWith('signatures'))).toBe(false);
    await store.close();
  });
});
