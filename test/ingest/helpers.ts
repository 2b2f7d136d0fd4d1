import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { ingestPaths, type IngestDeps, type IngestSummary } from '../../src/ingest/index.js';
import { readTranscript } from '../../src/ingest/read.js';
import { createSqliteSubstrate, type SqliteSubstrate } from '../../src/store/sqlite/substrate.js';
import type { IngestCursor, Logger, SubstrateBatch, TurnRecord } from '../../src/types.js';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const fixtures = join(repoRoot, 'test/fixtures/transcripts');
export const CLAUDE_SESSION = '11111111-2222-4333-8444-555555555555';
export const claudeDir = join(fixtures, 'claude-code/projects/-home-dev-my-app');
export const claudeMain = join(claudeDir, `${CLAUDE_SESSION}.jsonl`);

export function tempDir(prefix = 'cairn-ingest-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A substrate on a fresh WAL database with its migrations (002 substrate, 007 session facts, 011 their one index, 017 occurrences packed) applied directly. */
export function openSubstrate(dir = tempDir()): { db: Database.Database; substrate: SqliteSubstrate; close(): void } {
  const db = new Database(join(dir, 'cairn.db'));
  db.pragma('journal_mode = WAL');
  db.exec(readFileSync(join(repoRoot, 'src/store/sqlite/migrations/002_substrate.sql'), 'utf8'));
  db.exec(readFileSync(join(repoRoot, 'src/store/sqlite/migrations/007_session_facts.sql'), 'utf8'));
  db.exec(readFileSync(join(repoRoot, 'src/store/sqlite/migrations/011_fact_refs_one_index.sql'), 'utf8'));
  db.exec(readFileSync(join(repoRoot, 'src/store/sqlite/migrations/017_fact_refs_packed.sql'), 'utf8'));
  return {
    db,
    substrate: createSqliteSubstrate(db),
    close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

export function ingest(paths: string[], substrate: SqliteSubstrate, extra: Partial<IngestDeps> = {}): Promise<IngestSummary> {
  return ingestPaths(paths, { substrate, clock: { now: () => 1_800_000_000_000 }, logger: silentLogger, ...extra });
}

/** Read a whole file (looping over passes) with a fresh cursor; returns the merged batches. */
export function readAll(path: string, options: { maxBytes?: number } = {}): { batches: SubstrateBatch[]; turns: TurnRecord[]; cursor: IngestCursor | null } {
  const batches: SubstrateBatch[] = [];
  let cursor: IngestCursor | null = null;
  for (let i = 0; i < 10_000; i++) {
    const result = readTranscript(path, cursor, options);
    batches.push(result.batch);
    cursor = result.batch.cursor;
    if (result.done) break;
  }
  return { batches, turns: batches.flatMap((b) => b.turns), cursor };
}

export function byRole(turns: TurnRecord[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const turn of turns) out[turn.role] = (out[turn.role] ?? 0) + 1;
  return out;
}
