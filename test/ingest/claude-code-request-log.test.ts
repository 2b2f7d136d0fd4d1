import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTranscript } from '../../src/ingest/index.js';
import { REQUEST_LOG_TYPES } from '../../src/ingest/readers/claude-code-lines.js';
import { tempDirs } from '../helpers/cli.js';

// Claude Code 2.1.3xx writes its API request log, cost and latches into the transcript beside the
// conversation (test/hooks/fixtures/claude-code-2.1.332-compact). They are bookkeeping: passed over,
// not reported as unknown types, and the conversation is read as before.

const dir = tempDirs();
const FIXTURE = join(import.meta.dirname, '..', 'hooks', 'fixtures', 'claude-code-2.1.332-compact');
const parts = ['pre-compact.jsonl', 'before-start.jsonl', 'after-start.jsonl'];

describe('Claude Code 2.1.332 transcript', () => {
  const path = join(dir('cairn-cc332-'), '4d9e2f55-1b7a-4c1e-9a53-6f0c7e2b8a10.jsonl');
  const text = parts.map((p) => readFileSync(join(FIXTURE, p), 'utf8')).join('');
  writeFileSync(path, text);
  const lines = text.split('\n').filter((l) => l.length > 0);
  const { batch, stats, format } = readTranscript(path, null, { now: 1 });

  it('passes the request log over as bookkeeping, not as unknown types', () => {
    expect(format).toBe('claude-code');
    const logLines = lines.filter((l) => REQUEST_LOG_TYPES.includes((JSON.parse(l) as { type: string }).type)).length;
    expect(logLines, 'the fixture holds request-log lines').toBeGreaterThan(10);
    for (const type of REQUEST_LOG_TYPES) expect(stats.unknownTypes[type], type).toBeUndefined();
    // `mode` and `last-prompt` stay counted as unknown, as before 2.1.3xx.
    expect(Object.keys(stats.unknownTypes).sort()).toEqual(['last-prompt', 'mode']);
    expect(stats.outcomes.passed['bookkeeping line']).toBeGreaterThanOrEqual(logLines);
  });

  it('reads the conversation and the compaction as before', () => {
    const users = batch.turns.filter((t) => t.role === 'user').map((t) => t.text);
    expect(users).toEqual(expect.arrayContaining(['Remember we are preparing the release.', 'Which branch do we tag from?', 'And who signs the release?', '/compact']));
    expect(batch.turns.filter((t) => t.role === 'summary')).toHaveLength(1);
    expect(batch.compactions).toHaveLength(1);
    expect(stats.badLines).toEqual([]);
  });
});
