/**
 * Regression: `cairn token create` rewrote one list of token hashes in state (read, append,
 * write), so a create by another process between that read and write was lost, and two creates
 * with one name could both pass the name check. Two SQLite stores on one file (two connections,
 * as two processes); the other writer's operation is placed before every state call of ours.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TokenStore, hashToken, type TokenRecord } from '../../src/auth/tokens.js';
import { systemClock, ulidSource } from '../../src/runtime.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Store } from '../../src/types.js';
import { tempDir } from '../helpers/cli.js';
import { everyInterleaving } from '../helpers/interleave.js';

const dir = tempDir('cairn-token-races-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const options = { clock: systemClock, ids: ulidSource() };
const tokensOf = (store: Store): TokenStore => new TokenStore(store, options);
let n = 0;

/** Two stores on one new database file, with `existing` tokens created first. */
async function openPair(existing: string[] = []): Promise<[Store, Store]> {
  const path = join(dir, `cairn-${++n}.db`);
  const a = await openSqliteStore(path);
  for (const name of existing) await tokensOf(a).create({ name, projects: ['*'], role: 'read' });
  return [a, await openSqliteStore(path)];
}

const names = async (store: Store): Promise<string[]> => (await tokensOf(store).list()).map((t) => t.name).sort();

describe('token registry with two writers on one database', () => {
  it('a create by another process at any point inside a create loses neither token', async () => {
    const secrets: string[] = [];
    const steps = await everyInterleaving({
      open: () => openPair(['earlier']),
      a: async (store) => secrets.push((await tokensOf(store).create({ name: 'mine', projects: ['*'], role: 'read' })).token),
      b: async (store) => secrets.push((await tokensOf(store).create({ name: 'theirs', projects: ['p'], role: 'write' })).token),
      check: async (a, b, step) => {
        expect(await names(a), `B's create before A's state call ${step}`).toEqual(['earlier', 'mine', 'theirs']);
        for (const secret of secrets.splice(0)) expect(await tokensOf(b).verify(secret)).not.toBeNull();
      },
    });
    expect(steps).toBeGreaterThan(0);
  });

  it('two creates of one name at once: exactly one succeeds, the other is a CONFLICT', async () => {
    const create = (store: Store, role: 'read' | 'admin') =>
      tokensOf(store)
        .create({ name: 'same', projects: ['*'], role })
        .catch((error: unknown) => expect(error).toMatchObject({ code: 'CONFLICT' }));
    const steps = await everyInterleaving({
      open: () => openPair(['earlier']),
      a: (store) => create(store, 'read'),
      b: (store) => create(store, 'admin'),
      check: async (a, _b, step) => {
        const live = (await tokensOf(a).list()).filter((t) => t.name === 'same' && t.revokedAt === null);
        expect(live, `B's create before A's state call ${step}`).toHaveLength(1);
      },
    });
    expect(steps).toBeGreaterThan(0);
  });

  it('a revoke interleaved with a create keeps both the new token and the revocation', async () => {
    const steps = await everyInterleaving({
      open: () => openPair(['old']),
      a: (store) => tokensOf(store).revoke('old'),
      b: (store) => tokensOf(store).create({ name: 'new', projects: ['*'], role: 'read' }),
      check: async (a, _b, step) => {
        const byName = new Map((await tokensOf(a).list()).map((t) => [t.name, t]));
        expect(byName.get('old')?.revokedAt, `old revoked (B before A's state call ${step})`).toEqual(expect.any(Number));
        expect(byName.get('new')?.revokedAt, `new kept (B before A's state call ${step})`).toBeNull();
      },
    });
    expect(steps).toBeGreaterThan(0);
  });

  it('reads tokens stored in the earlier layout and carries them into the registry on the next write', async () => {
    const [storeA, storeB] = await openPair();
    try {
      const legacy: TokenRecord = { id: 'T0', name: 'legacy', projects: ['p'], role: 'write', hash: hashToken('cairn_legacy-secret'), createdAt: 1, revokedAt: null };
      await storeA.setState('auth.tokens', JSON.stringify([legacy.hash]));
      await storeA.setState(`auth.token.${legacy.hash}`, JSON.stringify(legacy));
      const tokens = tokensOf(storeA);
      expect((await tokens.list()).map((t) => t.name)).toEqual(['legacy']);
      expect(await tokens.verify('cairn_legacy-secret')).toMatchObject({ id: 'T0' });
      const fresh = await tokens.create({ name: 'fresh', projects: ['*'], role: 'read' });
      await expect(tokens.create({ name: 'legacy', projects: ['*'], role: 'read' })).rejects.toMatchObject({ code: 'CONFLICT' });
      expect((await tokensOf(storeB).list()).map((t) => t.name)).toEqual(['legacy', 'fresh']);
      expect(await tokensOf(storeB).verify(fresh.token)).not.toBeNull();
      await tokens.revoke('legacy');
      expect(await tokens.verify('cairn_legacy-secret')).toBeNull();
      // An older cairn on the same database verifies through the legacy record: it is revoked there too.
      expect(JSON.parse((await storeA.getState(`auth.token.${legacy.hash}`)) ?? '{}')).toMatchObject({ revokedAt: expect.any(Number) });
    } finally {
      await storeA.close();
      await storeB.close();
    }
  });
});
