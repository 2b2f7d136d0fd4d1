import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase, schemaVersion } from '../../src/store/sqlite/database.js';
import { createSqliteSubstrate } from '../../src/store/sqlite/substrate.js';
import { snippetFor } from '../../src/store/substrate-rows.js';
import { openSubstrate, tempDir } from '../ingest/helpers.js';
import { batch, session, substrateConformance, turn } from './substrate-conformance.js';

substrateConformance('sqlite', () => openSubstrate());

describe('SQLite substrate', () => {
  it('makes a snippet around the first matching term', () => {
    const text = `${'lorem ipsum '.repeat(30)}the processWorkspaceChanges function ${'dolor sit '.repeat(30)}`;
    const snippet = snippetFor(text, ['processworkspacechanges']);
    expect(snippet).toContain('processWorkspaceChanges');
    expect(snippet.startsWith('…')).toBe(true);
    expect(snippet.length).toBeLessThan(220);
  });

  it('migrates alongside the core schema (001 then 002) through the store migration runner', async () => {
    const dir = tempDir();
    const db = openDatabase(join(dir, 'cairn.db'));
    try {
      expect(schemaVersion(db)).toBeGreaterThanOrEqual(2);
      const store = createSqliteSubstrate(db);
      await store.writeSubstrate(batch({ sessions: [session('m1')], turns: [turn('m1', 'u', 'user', 'hello migrations')] }));
      expect(await store.substrateStats()).toMatchObject({ sessions: 1, turns: 1 });
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
