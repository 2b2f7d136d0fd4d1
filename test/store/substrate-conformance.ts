/**
 * The substrate conformance suite: every store with `capabilities.substrate` runs it unchanged
 * (SQLite in substrate.test.ts, PostgreSQL in postgres-substrate.test.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { factId } from '../../src/ingest/facts/id.js';
import type { CompactionRecord, CorrectionRecord, FactRecord, IngestCursor, SessionRecord, SubstrateBatch, SubstrateStore, TurnRecord } from '../../src/types.js';

export function session(id: string, extra: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id,
    agent: 'claude-code',
    project: '/repo',
    cwd: '/repo',
    branch: 'main',
    parentId: null,
    startedAt: 1_000,
    endedAt: 2_000,
    inputTokens: 10,
    outputTokens: 20,
    cacheReadTokens: 30,
    cacheCreationTokens: 40,
    compactions: 0,
    sourcePath: `/t/${id}.jsonl`,
    title: null,
    ...extra,
  };
}

let seq = 0;
export function turn(sessionId: string, key: string, role: TurnRecord['role'], text: string, extra: Partial<TurnRecord> = {}): TurnRecord {
  return {
    id: `${sessionId}:${key}`,
    sessionId,
    seq: seq++,
    role,
    text,
    toolName: null,
    toolInput: null,
    toolUseId: null,
    isError: false,
    flags: [],
    at: 1_000 + seq,
    sourceUuid: key,
    sourceLine: seq,
    ...extra,
  };
}

export function cursor(path: string, offset: number, extra: Partial<IngestCursor> = {}): IngestCursor {
  return { path, size: offset, mtimeMs: 123.5, offset, headHash: 'h', state: { format: 'claude-code', line: 3 }, updatedAt: 99, ...extra };
}

/** A fact occurrence in the turn `turnRef` (a {@link turn} of the same session). */
export function fact(turnRef: TurnRecord, kind: FactRecord['kind'], text: string, extra: Partial<FactRecord> = {}): FactRecord {
  return {
    id: factId(turnRef.sessionId, kind, text),
    sessionId: turnRef.sessionId,
    kind,
    text,
    path: null,
    line: null,
    note: null,
    turnId: turnRef.id,
    seq: turnRef.seq,
    role: turnRef.role,
    toolName: turnRef.toolName,
    at: turnRef.at,
    ...extra,
  };
}

export function batch(parts: Partial<SubstrateBatch>): SubstrateBatch {
  return { sessions: [], turns: [], compactions: [], corrections: [], cursor: null, ...parts };
}

export interface OpenedSubstrate {
  substrate: SubstrateStore;
  close(): void | Promise<void>;
}

export function substrateConformance(name: string, open: () => OpenedSubstrate | Promise<OpenedSubstrate>): void {
  describe(`Substrate conformance: ${name}`, () => {
    seq = 0; // the fixtures below number their turns from 0 in every suite
    let substrate: SubstrateStore;
    let close: () => void | Promise<void>;
    beforeEach(async () => {
      ({ substrate, close } = await open());
      seq = 0;
    });
    afterEach(() => close());

    const turns = [
      turn('s1', 'u1', 'user', 'Why does processWorkspaceChanges drop events?'),
      turn('s1', 'a1', 'assistant', 'The debounce in src/watch/resolver.rs:214 swallows the last event.'),
      turn('s1', 'c1', 'tool_call', 'Bash: cargo test watch', { toolName: 'Bash', toolInput: '{"command":"cargo test watch"}', toolUseId: 't1' }),
      turn('s1', 'r1', 'tool_result', 'test watch::debounce ... FAILED', { toolName: 'Bash', toolInput: 'test watch::debounce ... FAILED', toolUseId: 't1', isError: true }),
      turn('s1', 'u2', 'user', 'no, the debounce is fine; the channel is bounded', { flags: ['queued'] }),
    ];
    const compaction: CompactionRecord = { id: 's1:cb', sessionId: 's1', trigger: 'auto', preTokens: 150_000, summary: null, at: 5_000, seq: 9, sourceLine: 40 };
    const correction: CorrectionRecord = { id: 's1:u2:correction', sessionId: 's1', premiseTurnId: 's1:a1', correctionTurnId: 's1:u2', kind: 'pushback', lang: 'en', text: 'no, the debounce is fine', at: 1_005 };
    const first = () => batch({ sessions: [session('s1')], turns, compactions: [compaction], corrections: [correction], cursor: cursor('/t/s1.jsonl', 500) });

    it('stores a batch and reads every part back', async () => {
      expect(await substrate.writeSubstrate(first())).toEqual({ turnsAdded: 5 });
      expect(await substrate.getSession('s1')).toEqual(session('s1', { compactions: 1 }));
      expect(await substrate.getTurns('s1')).toEqual(turns);
      expect(await substrate.getTurns('s1', { fromSeq: 2, limit: 2 })).toEqual(turns.slice(2, 4));
      expect(await substrate.getCompactions('s1')).toEqual([compaction]);
      expect(await substrate.getCorrections({ sessionId: 's1' })).toEqual([correction]);
      expect(await substrate.getCursor('/t/s1.jsonl')).toEqual(cursor('/t/s1.jsonl', 500));
      expect(await substrate.getCursor('/nope')).toBeNull();
      expect(await substrate.substrateStats()).toEqual({ sessions: 1, turns: 5, compactions: 1, corrections: 1, files: 1, lastIngestAt: 99 });
    });

    it('is idempotent: the same batch twice stores nothing new', async () => {
      await substrate.writeSubstrate(first());
      expect(await substrate.writeSubstrate(first())).toEqual({ turnsAdded: 0 });
      expect(await substrate.substrateStats()).toMatchObject({ sessions: 1, turns: 5, compactions: 1, corrections: 1 });
      expect(await substrate.getSession('s1')).toMatchObject({ inputTokens: 10, outputTokens: 20, compactions: 1 });
      expect(await substrate.searchTurns('debounce', { limit: 10 })).toHaveLength(3);
    });

    it('keeps token totals per transcript file: a re-read replaces its share, another file adds', async () => {
      await substrate.writeSubstrate(batch({ sessions: [session('s1', { inputTokens: 10, outputTokens: 5 })] }));
      await substrate.writeSubstrate(batch({ sessions: [session('s1', { inputTokens: 25, outputTokens: 7 })] }));
      expect(await substrate.getSession('s1')).toMatchObject({ inputTokens: 25, outputTokens: 7 });
      await substrate.writeSubstrate(batch({ sessions: [session('s1', { sourcePath: '/t/other.jsonl', inputTokens: 100, outputTokens: 1 })] }));
      expect(await substrate.getSession('s1')).toMatchObject({ inputTokens: 125, outputTokens: 8, sourcePath: '/t/s1.jsonl' });
    });

    it('merges session fields: widest time span, first cwd, latest branch/title/project', async () => {
      await substrate.writeSubstrate(batch({ sessions: [session('s1', { startedAt: null, endedAt: 2_000, title: 'first prompt' })] }));
      await substrate.writeSubstrate(
        batch({ sessions: [session('s1', { startedAt: 500, endedAt: 1_500, cwd: '/elsewhere', branch: 'feature', title: null, project: null })] }),
      );
      await substrate.writeSubstrate(batch({ sessions: [session('s1', { startedAt: 700, endedAt: 9_000, branch: null, title: 'Summary title' })] }));
      expect(await substrate.getSession('s1')).toMatchObject({ startedAt: 500, endedAt: 9_000, cwd: '/repo', branch: 'feature', title: 'Summary title', project: '/repo' });
    });

    it('updates a turn re-emitted with more text (a message that grew between reads), index included', async () => {
      await substrate.writeSubstrate(first());
      const grown = { ...turns[1]!, text: `${turns[1]!.text}\n\nAlso the watcher ignores symlinks.` };
      expect(await substrate.writeSubstrate(batch({ turns: [grown] }))).toEqual({ turnsAdded: 0 });
      expect((await substrate.getTurns('s1'))[1]?.text).toContain('symlinks');
      const hits = await substrate.searchTurns('symlinks', { limit: 5 });
      expect(hits.map((h) => h.turn.id)).toEqual(['s1:a1']);
      expect(await substrate.searchTurns('resolver.rs:214', { limit: 5 })).toHaveLength(1);
    });

    it('fills a compaction summary that arrives in a later pass, without losing the boundary data', async () => {
      await substrate.writeSubstrate(first());
      await substrate.writeSubstrate(batch({ compactions: [{ ...compaction, trigger: null, preTokens: null, summary: 'The user asked…' }] }));
      expect(await substrate.getCompactions('s1')).toEqual([{ ...compaction, summary: 'The user asked…' }]);
      expect((await substrate.getSession('s1'))?.compactions).toBe(1);
    });

    it('writes a batch in one transaction: a failing part leaves nothing behind, cursor included', async () => {
      const broken = { ...turns[0]!, id: 's9:x', sessionId: 's9', text: null as unknown as string };
      await expect(
        substrate.writeSubstrate(batch({ sessions: [session('s9')], turns: [turn('s9', 'ok', 'user', 'fine'), broken], cursor: cursor('/t/s9.jsonl', 10) })),
      ).rejects.toThrow();
      expect(await substrate.getSession('s9')).toBeNull();
      expect(await substrate.getTurns('s9')).toEqual([]);
      expect(await substrate.getCursor('/t/s9.jsonl')).toBeNull();
    });

    describe('searchTurns', () => {
      beforeEach(async () => {
        await substrate.writeSubstrate(first());
        await substrate.writeSubstrate(
          batch({
            sessions: [session('s2', { agent: 'codex', project: '/other', startedAt: 10_000, endedAt: 20_000 })],
            turns: [turn('s2', 'u1', 'user', 'the debounce timer in the watcher is too short', { at: 50_000 })],
          }),
        );
      });

      it('ranks by BM25 with the code-aware tokenizer and returns the session and a snippet', async () => {
        const hits = await substrate.searchTurns('workspace changes', { limit: 5 });
        expect(hits.map((h) => h.turn.id)).toEqual(['s1:u1']);
        expect(hits[0]?.session.id).toBe('s1');
        expect(hits[0]?.snippet).toContain('processWorkspaceChanges');
        expect(hits[0]?.score).toBeGreaterThan(0);
        const ranked = await substrate.searchTurns('debounce channel bounded', { limit: 5 });
        expect(ranked[0]?.turn.id).toBe('s1:u2');
        expect(ranked.map((h) => h.score)).toEqual([...ranked.map((h) => h.score)].sort((a, b) => b - a));
      });

      it('filters by project, session, agent, roles and time', async () => {
        const ids = async (options: Parameters<SubstrateStore['searchTurns']>[1]) => (await substrate.searchTurns('debounce', options)).map((h) => h.turn.id).sort();
        expect(await ids({ limit: 10 })).toEqual(['s1:a1', 's1:r1', 's1:u2', 's2:u1']);
        expect(await ids({ limit: 10, project: '/other' })).toEqual(['s2:u1']);
        expect(await ids({ limit: 10, sessionId: 's1' })).toEqual(['s1:a1', 's1:r1', 's1:u2']);
        expect(await ids({ limit: 10, agent: 'codex' })).toEqual(['s2:u1']);
        expect(await ids({ limit: 10, roles: ['user'] })).toEqual(['s1:u2', 's2:u1']);
        expect(await ids({ limit: 10, roles: ['tool_result', 'assistant'] })).toEqual(['s1:a1', 's1:r1']);
        expect(await ids({ limit: 10, since: 10_000 })).toEqual(['s2:u1']);
        expect(await ids({ limit: 1 })).toHaveLength(1);
      });

      it('finds tool turns by tool name and returns nothing for an empty or punctuation-only query', async () => {
        expect((await substrate.searchTurns('Bash', { limit: 5 })).map((h) => h.turn.role).sort()).toEqual(['tool_call', 'tool_result']);
        expect(await substrate.searchTurns('', { limit: 5 })).toEqual([]);
        expect(await substrate.searchTurns('"*** ()', { limit: 5 })).toEqual([]);
        expect(await substrate.searchTurns('NEAR(" OR AND', { limit: 5 })).toEqual([]);
      });

      it('lists sessions newest first, filtered by project and agent', async () => {
        expect((await substrate.listSessions({})).map((s) => s.id)).toEqual(['s2', 's1']);
        expect((await substrate.listSessions({ agent: 'claude-code' })).map((s) => s.id)).toEqual(['s1']);
        expect((await substrate.listSessions({ project: '/other' })).map((s) => s.id)).toEqual(['s2']);
        expect((await substrate.listSessions({ limit: 1, offset: 1 })).map((s) => s.id)).toEqual(['s1']);
      });
    });

    it('lists corrections newest first across sessions', async () => {
      await substrate.writeSubstrate(first());
      await substrate.writeSubstrate(batch({ corrections: [{ ...correction, id: 's2:x:correction', sessionId: 's2', at: 9_999 }] }));
      expect((await substrate.getCorrections({})).map((c) => c.id)).toEqual(['s2:x:correction', 's1:u2:correction']);
      expect(await substrate.getCorrections({ limit: 1 })).toHaveLength(1);
    });
    describe('session facts', () => {
      const [u1, a1, c1, r1, u2] = turns as [TurnRecord, TurnRecord, TurnRecord, TurnRecord, TurnRecord];
      const facts = (): FactRecord[] => [
        fact(a1, 'path', 'src/watch/resolver.rs:214', { path: 'src/watch/resolver.rs', line: 214 }),
        fact(c1, 'command', 'cargo test watch'),
        fact(r1, 'error', 'test watch::debounce ... FAILED'),
        fact(r1, 'test', 'watch::debounce', { note: 'failed' }),
        fact(u1, 'symbol', 'processWorkspaceChanges'),
        fact(u2, 'path', 'src/watch/resolver.rs:214', { path: 'src/watch/resolver.rs', line: 214 }),
      ];
      const withFacts = () => ({ ...first(), facts: facts() });

      it('stores fact occurrences and sums them per fact, most recently seen first', async () => {
        await substrate.writeSubstrate(withFacts());
        const listed = await substrate.listFacts('s1');
        expect(listed.map((f) => f.text)).toEqual(['src/watch/resolver.rs:214', 'test watch::debounce ... FAILED', 'watch::debounce', 'cargo test watch', 'processWorkspaceChanges']);
        const path = listed[0]!;
        expect(path).toMatchObject({ kind: 'path', path: 'src/watch/resolver.rs', line: 214, occurrences: 2, byUser: true, sessionId: 's1' });
        expect(path.first).toEqual({ turnId: a1.id, seq: a1.seq, role: 'assistant', toolName: null, at: a1.at, note: null });
        expect(path.last.turnId).toBe(u2.id);
        expect(path.id).toMatch(/^f[0-9a-z]{11}$/);
        expect(await substrate.listFacts('nobody')).toEqual([]);
      });

      it('is idempotent and gets a fact by id with every occurrence', async () => {
        await substrate.writeSubstrate(withFacts());
        await substrate.writeSubstrate(withFacts());
        const id = factId('s1', 'path', 'src/watch/resolver.rs:214');
        const detail = await substrate.getFact(id);
        expect(detail?.occurrences).toBe(2);
        expect(detail?.sources.map((s) => s.turnId)).toEqual([a1.id, u2.id]);
        expect(await substrate.getFact('f00000000000')).toBeNull();
      });

      it('filters by kind, by turn range and near a turn', async () => {
        await substrate.writeSubstrate(withFacts());
        expect((await substrate.listFacts('s1', { kinds: ['command', 'test'] })).map((f) => f.kind).sort()).toEqual(['command', 'test']);
        const before = await substrate.listFacts('s1', { beforeSeq: u2.seq });
        expect(before.find((f) => f.kind === 'path')).toMatchObject({ occurrences: 1, byUser: false });
        expect((await substrate.listFacts('s1', { fromSeq: r1.seq })).map((f) => f.text).sort()).toEqual(
          ['src/watch/resolver.rs:214', 'test watch::debounce ... FAILED', 'watch::debounce'].sort(),
        );
        const near = await substrate.listFacts('s1', { nearSeq: u1.seq, window: 0 });
        expect(near.map((f) => f.text)).toEqual(['processWorkspaceChanges']);
        expect(await substrate.listFacts('s1', { limit: 2 })).toHaveLength(2);
      });

      it('keeps the outcome a later pass adds to an occurrence (a command and its exit status)', async () => {
        await substrate.writeSubstrate(withFacts());
        await substrate.writeSubstrate(batch({ facts: [fact(c1, 'command', 'cargo test watch', { note: 'exit 101: test watch::debounce ... FAILED' })] }));
        const command = (await substrate.listFacts('s1', { kinds: ['command'] }))[0];
        expect(command).toMatchObject({ occurrences: 1, note: 'exit 101: test watch::debounce ... FAILED' });
        await substrate.writeSubstrate(batch({ facts: [fact(c1, 'command', 'cargo test watch')] }));
        expect((await substrate.listFacts('s1', { kinds: ['command'] }))[0]?.note).toBe('exit 101: test watch::debounce ... FAILED');
      });

      it('searches facts by their text, filtered by session, project and kind', async () => {
        await substrate.writeSubstrate(withFacts());
        await substrate.writeSubstrate(
          batch({ sessions: [session('s2', { project: '/other' })], turns: [turn('s2', 'x', 'user', 'resolver')], facts: [fact(turn('s2', 'x', 'user', 'resolver'), 'path', 'lib/resolver.py')] }),
        );
        const hits = await substrate.searchFacts('resolver', { limit: 10 });
        expect(hits.map((h) => h.fact.text).sort()).toEqual(['lib/resolver.py', 'src/watch/resolver.rs:214']);
        expect((await substrate.searchFacts('resolver', { limit: 10, project: '/repo' })).map((h) => h.session.id)).toEqual(['s1']);
        expect((await substrate.searchFacts('resolver', { limit: 10, sessionId: 's2' })).map((h) => h.fact.text)).toEqual(['lib/resolver.py']);
        expect(await substrate.searchFacts('resolver', { limit: 10, kinds: ['command'] })).toEqual([]);
        expect((await substrate.searchFacts('cargo test', { limit: 10 }))[0]?.fact).toMatchObject({ kind: 'command', text: 'cargo test watch', occurrences: 1 });
        expect(await substrate.searchFacts('   ', { limit: 10 })).toEqual([]);
      });

      it('writes facts in the batch transaction: a failing batch leaves no fact behind', async () => {
        const broken = { ...turns[0]!, id: 's9:x', sessionId: 's9', text: null as unknown as string };
        await expect(substrate.writeSubstrate(batch({ turns: [broken], facts: [fact(broken, 'url', 'https://example.com/x')] }))).rejects.toThrow();
        expect(await substrate.listFacts('s9')).toEqual([]);
      });
    });
  });
}
