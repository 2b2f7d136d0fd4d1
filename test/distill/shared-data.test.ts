/**
 * Distillation over the real transcripts in ../shared/data/transcripts: the corrections the users
 * typed in the codemie-code sessions must come out as correction memories, every memory traces
 * back to its turn, nothing injected is kept, and a second run adds nothing.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCairn, type Cairn } from '../../src/cairn.js';
import type { DistillSummary } from '../../src/distill/types.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { CorrectionRecord, Memory } from '../../src/types.js';

const repoRoot = resolve(import.meta.dirname, '../..');
const transcripts = resolve(repoRoot, '../shared/data/transcripts');
const present = existsSync(join(transcripts, 'claude-code'));
if (!present) console.info(`shared-data distillation tests skipped: ${transcripts} is absent`);

describe.skipIf(!present)('distillation of real transcripts (../shared/data)', () => {
  let dir: string;
  let cairn: Cairn;
  let first: DistillSummary | undefined;
  let memories: Memory[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-distill-shared-'));
    cairn = createCairn({ store: await openSqliteStore(join(dir, 'cairn.db')), actor: 'test' });
    const summary = await cairn.ingest([join(transcripts, 'claude-code'), join(transcripts, 'codex'), join(transcripts, 'gemini'), join(transcripts, 'cursor')]);
    first = summary.distilled;
    memories = await cairn.list({ allProjects: true, limit: 100_000, order: 'created-asc' });
  });
  afterAll(async () => {
    await cairn.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('distils every session without errors', () => {
    expect(first?.errors).toEqual([]);
    expect(first?.sessions).toBeGreaterThan(40);
    expect(first?.added).toBeGreaterThan(100);
  });

  it('keeps every correction the users typed in the codemie-code sessions as a correction memory', async () => {
    const substrate = cairn.deps.store.substrate!;
    const sessions = await substrate.listSessions({ limit: 1000 });
    const codemie = sessions.filter((s) => s.sourcePath.includes('/claude-code/codemie-code/') && s.parentId === null);
    const typed: CorrectionRecord[] = [];
    for (const s of codemie) typed.push(...(await substrate.getCorrections({ sessionId: s.id })).filter((c) => c.kind === 'pushback'));
    // 18 of the 20 corrections hand-labelled in test/fixtures/corrections are found, and every one
    // found is labelled a correction or constraint there.
    expect(typed.length).toBeGreaterThanOrEqual(18);
    const labelled = readFileSync(resolve(repoRoot, 'test/fixtures/corrections/user-messages.jsonl'), 'utf8')
      .split('\n')
      .filter((line) => line.includes('codemie-code'))
      .map((line) => JSON.parse(line) as { text: string; label: string });
    const labelOf = (text: string): string | undefined => labelled.find((row) => row.text === text.trim() || (row.text.endsWith(text.trim().slice(-60)) && row.text.startsWith(text.trim().slice(0, 60))))?.label;
    expect(typed.map((c) => [c.text.slice(0, 60), labelOf(c.text)]).filter(([, label]) => label !== 'correction' && label !== 'constraint')).toEqual([]);
    const byTurn = new Map<string, Memory>();
    for (const m of memories) {
      for (const p of [m.provenance, ...(m.provenance?.also ?? [])]) if (p?.turnId) byTurn.set(p.turnId, m);
    }
    const missing = typed.filter((c) => {
      const m = byTurn.get(c.correctionTurnId);
      return !m || (m.kind !== 'correction' && m.kind !== 'procedure');
    });
    expect(missing.map((c) => c.text)).toEqual([]);
    // Phrased as the user's rule, with what the agent had done.
    const rule = memories.find((m) => m.text.startsWith("don't produce code, design solution first"));
    expect(rule?.text).toMatch(/\n\(Correction of the agent, which had said: “.+”\)$/);
  });

  it('traces every memory to its transcript turn, with a scope and the session', () => {
    for (const m of memories) {
      expect(m.source).toBe('distill');
      expect(m.provenance).toMatchObject({ transcript: expect.stringContaining('/transcripts/'), sessionId: m.session });
      expect(typeof m.provenance?.line).toBe('number');
      expect(m.provenance?.turnId).toBeTruthy();
      expect(['session', 'project', 'user']).toContain(m.scope);
      if (m.scope === 'project') expect(m.project).not.toBeNull();
    }
  });

  it('keeps no injected context and one continuation per session', () => {
    for (const m of memories) expect(m.text).not.toMatch(/<system-reminder>|# cairn memory|This session is being continued/);
    const continuations = memories.filter((m) => m.kind === 'continuation');
    expect(new Set(continuations.map((m) => m.session)).size).toBe(continuations.length);
  });

  it('adds nothing when run again, from the first turn or by a second ingest', async () => {
    const again = await cairn.distill({ full: true });
    expect(again).toMatchObject({ added: 0, merged: 0, superseded: 0, queued: 0, continuations: 0 });
    const reingest = await cairn.ingest([join(transcripts, 'claude-code')]);
    expect(reingest.distilled).toMatchObject({ sessions: 0, added: 0 });
    expect((await cairn.list({ allProjects: true, limit: 100_000 })).length).toBe(memories.length);
  });
});
