/**
 * Integration over the real transcripts in ../shared/data/transcripts. The expected figures were
 * computed independently with a Python one-off over the raw JSONL (distinct assistant
 * `message.id`s per session, tool_use / tool_result blocks, compact_boundary lines, usage summed
 * once per message.id + requestId with the largest value seen) and the corrections were checked
 * by reading the sessions.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { expandTranscriptPaths, readTranscript, type ReadResult } from '../../src/ingest/index.js';
import { ingest, openSubstrate, repoRoot } from './helpers.js';

const data = resolve(repoRoot, '../shared/data');
const transcripts = join(data, 'transcripts');
const present = existsSync(transcripts);
if (!present) console.info(`shared-data ingest tests skipped: ${transcripts} is absent`);

function readTree(dir: string): Array<{ path: string; result: ReadResult }> {
  return expandTranscriptPaths([dir]).files.map((file) => ({ path: file.path, result: readTranscript(file.path, null) }));
}

const CODEMIE = join(transcripts, 'claude-code/codemie-code/tests/integration/session/fixtures');

describe.skipIf(!present)('real transcripts (../shared/data)', () => {
  describe('Claude Code', () => {
    let read: Array<{ path: string; result: ReadResult }>;
    beforeAll(() => {
      read = readTree(join(transcripts, 'claude-code'));
    });
    const transcriptsOnly = () => read.filter((r) => r.result.format === 'claude-code');

    it('recognises the 37 transcripts among the other files', () => {
      expect(transcriptsOnly()).toHaveLength(37);
      const skipped = read.filter((r) => r.result.format === null).map((r) => r.path.split('/').pop());
      expect(skipped.sort()).toEqual(['expected-conversation.jsonl', 'expected-conversation.jsonl', 'expected-metrics.jsonl', 'expected-session.json']);
    });

    it('finds 21 sessions and 20 subagent / sidechain sessions', () => {
      const main = new Set<string>();
      const sub = new Set<string>();
      for (const { result } of transcriptsOnly()) for (const s of result.batch.sessions) (s.parentId === null ? main : sub).add(s.id);
      expect(main.size).toBe(21);
      expect(sub.size).toBe(20);
    });

    it('merges split assistant lines into 942 messages (distinct message.ids) with 1,096 tool calls and 1,093 results', () => {
      let messages = 0;
      let calls = 0;
      let results = 0;
      for (const { result } of transcriptsOnly()) {
        messages += result.stats.assistantMessages;
        calls += result.batch.turns.filter((t) => t.role === 'tool_call').length;
        results += result.batch.turns.filter((t) => t.role === 'tool_result').length;
      }
      expect({ messages, calls, results }).toEqual({ messages: 942, calls: 1_096, results: 1_093 });
    });

    it('finds the 4 compactions with their trigger, pre-compaction tokens and summary', () => {
      const compactions = transcriptsOnly().flatMap(({ result }) => result.batch.compactions);
      expect(compactions.map((c) => [c.trigger, c.preTokens]).sort()).toEqual([
        ['auto', 155_979],
        ['auto', 167_094],
        ['auto', 170_251],
        ['manual', 142_431],
      ]);
      for (const c of compactions) expect(c.summary).toMatch(/^This session is being continued from a previous conversation/);
    });

    it('counts token usage once per message.id + requestId', () => {
      const session = (file: string) => readTranscript(file, null).batch.sessions.find((s) => s.parentId === null);
      expect(session(join(CODEMIE, 'session-624a4a58.jsonl'))).toMatchObject({ inputTokens: 642, outputTokens: 69_127, cacheReadTokens: 4_277_174, cacheCreationTokens: 1_629_516 });
      expect(session(join(transcripts, 'claude-code/spotter/test/fixtures/transcripts/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl'))).toMatchObject({
        inputTokens: 242,
        outputTokens: 49_467,
        cacheReadTokens: 16_553_628,
        cacheCreationTokens: 237_121,
      });
    });

    it('finds the corrections the users typed in the codemie sessions', () => {
      const found = (file: string) => readTranscript(join(CODEMIE, file), null).batch.corrections.map((c) => `${c.kind}: ${c.text}`);
      const prefixes = (expected: string[]) => expected.map((prefix) => expect.stringMatching(new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`)));
      expect(found('session-196820da.jsonl')).toEqual(prefixes([
        "pushback: it's good, but the issue is that several p",
        "pushback: we don't control claude code process - it'",
        "pushback: don't produce code, design solution first",
        'pushback: more context: the issue must be address, o',
        'pushback: great, but there is existing logic for sca',
        'pushback: there is no need to track existing session',
        'pushback: not getting about finalizing all sessios, ',
        'pushback: the main idea is fine, however sessionOrch',
        'pushback: great, but keep in mind that new file will',
      ]));
      expect(found('session-624a4a58.jsonl')).toEqual(prefixes([
        "pushback: it's bad idea, since entire converation wi",
        "pushback: don't create separate documents. put into ",
        'interrupt: [Request interrupted by user]',
        "pushback: no, it's not phase 1 there bunch of pahses",
        "pushback: ir's not jsonl file. it's json file with s",
        'pushback: I think that processedRecordIds is exactly',
        'interrupt: [Request interrupted by user]',
        "pushback: don't add notes, looks like there is a nee",
        'interrupt: [Request interrupted by user]',
        'pushback: before providing proposal for phase 4.1 ch',
        // "there are no tracking of failures for metrics. does it make sense to have it combined"
        // ends in a question, so the agent's "You're absolutely right!" is not read as a concession
        // of the statement (a known miss of the classifier, see test/fixtures/corrections).
        "pushback: conversationId is the same as sessionId. l",
        // typed while the agent worked (queue-operation), taken into the running turn
        'pushback: no, add conversationId field, but set valu',
      ]));
      expect(found('session-9eda1058.jsonl')).toEqual(prefixes([
        "rejection: The user doesn't want to proceed with this",
        'interrupt: [Request interrupted by user for tool use]',
      ]));
    });
  });

  describe('other agents', () => {
    it('Codex: tool calls, results and compactions per rollout', () => {
      const counts = (path: string) => {
        const { batch } = readTranscript(path, null);
        return [batch.turns.filter((t) => t.role === 'tool_call').length, batch.turns.filter((t) => t.role === 'tool_result').length, batch.compactions.length];
      };
      const fixtures = join(transcripts, 'codex/codemie-code/src/agents/plugins/codex/__tests__/fixtures');
      expect(counts(join(fixtures, 'rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl'))).toEqual([105, 102, 0]);
      expect(counts(join(fixtures, 'rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl'))).toEqual([38, 38, 0]);
      expect(counts(join(transcripts, 'codex/agtrace/crates/agtrace-providers/tests/samples/codex_session.jsonl'))).toEqual([5, 5, 0]);
      expect(counts(join(transcripts, 'codex/agent-sessions/Resources/Fixtures/stage0/agents/codex/small.jsonl'))).toEqual([7, 6, 6]);
    });

    it('Gemini: model messages and tool calls per chat file', () => {
      const dir = join(transcripts, 'gemini');
      const counts = Object.fromEntries(
        readTree(dir)
          .filter((r) => r.result.format !== null)
          .map(({ path, result }) => [path.split('/').pop(), [result.stats.assistantMessages, result.batch.turns.filter((t) => t.role === 'tool_call').length]]),
      );
      expect(counts).toEqual({
        'large.json': [4, 2],
        'schema_drift.json': [1, 0],
        'small.json': [1, 0],
        'jsonl_v040.jsonl': [2, 1],
        'gemini_session.json': [7, 5],
        'session-2025-12-01T21-45-5b959dae.json': [11, 10],
        'session-2026-01-16T11-01-file-ops-37b7abef.json': [9, 14],
        'timestamp-mismatch-session.json': [1, 0],
      });
    });

    it('Aider: one session per "# aider chat started at" (1,133) plus the history before the first one', () => {
      const { batch, stats } = readTranscript(join(transcripts, 'aider/aider/tests/fixtures/chat-history.md'), null);
      expect(batch.sessions).toHaveLength(1_134);
      expect(stats.badLines).toEqual([]);
      // runs of consecutive "####" lines in the file (one-off count)
      expect(batch.turns.filter((t) => t.role === 'user' && !t.flags.includes('interrupt'))).toHaveLength(1_776);
      const texts = batch.corrections.filter((c) => c.kind === 'pushback').map((c) => c.text);
      expect(texts).toContain("don't use `IgnorantTemporaryDirectory` use GitTemporaryDirectory");
      expect(texts).toContain("no, don't mock completion. mock the httpx library which completion uses to actually make the http request");
    });
  });

  it('ingests everything into the substrate once: a second run adds nothing, history is searchable', async () => {
    const { substrate, close } = openSubstrate();
    try {
      const first = await ingest([transcripts], substrate);
      expect(first.badLines).toBe(5); // the deliberately broken lines of claude-code-log's edge_cases.jsonl
      expect(first.badLineSamples.every((b) => b.path.endsWith('edge_cases.jsonl'))).toBe(true);
      const stats = await substrate.substrateStats();
      const second = await ingest([transcripts], substrate);
      expect(second).toMatchObject({ filesChanged: 0, turns: 0 });
      expect(await substrate.substrateStats()).toEqual(stats);
      const [hit] = await substrate.searchTurns('conversationId sessionId same value', { limit: 3, roles: ['user'] });
      expect(hit?.session.id).toBe('624a4a58-b34c-462d-a70d-13421c8125a8');
      expect(hit?.session.project).toBe('/Users/user/repo');
    } finally {
      close();
    }
  });
});
