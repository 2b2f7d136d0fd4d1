import { appendFileSync, closeSync, mkdirSync, openSync, read, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig, openCairn } from '../../src/config.js';
import { RUNS_KEY } from '../../src/history/resume.js';
import { INGEST_OPTIMIZER_BYTES, INGEST_RUNS_KEY, ingestNeedsOptimizer, ingestState, ingestWouldBeNoop, readFd0, type FirstRead } from '../../src/hooks/run.js';
import { tempDir } from '../helpers/cli.js';
import { TranscriptWriter } from './transcript.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('hooks skip an ingest that would do nothing', () => {
  it('uses the same state key as ingest for runs waiting to be distilled', () => {
    expect(INGEST_RUNS_KEY).toBe(RUNS_KEY);
  });

  it('is a no-op only while the transcript matches its cursor and no run is pending', async () => {
    const home = tempDir('cairn-noop-home-');
    const repo = tempDir('cairn-noop-repo-');
    dirs.push(home, repo);
    mkdirSync(join(repo, '.git'));
    const transcript = join(home, 'sess.jsonl');
    const t = new TranscriptWriter('sess-noop', repo);
    t.user('Find where the config is loaded and make the timeout configurable.');
    t.tool('Bash', { command: 'npm test' }, 'FAIL test/config.test.ts > reads timeout\nAssertionError: expected 10 to be 30');
    writeFileSync(transcript, t.text());
    const { cairn } = await openCairn(loadConfig({ home, env: {} }), { cwd: repo, actor: 'test' });
    try {
      // Never read: ingest has work to do.
      expect(await ingestWouldBeNoop(cairn, transcript)).toBe(false);
      await cairn.ingest([transcript]);
      expect(await ingestWouldBeNoop(cairn, transcript)).toBe(true);
      // The transcript grew (as it does after /compact): ingest again.
      appendFileSync(transcript, `${JSON.stringify({ type: 'user', sessionId: 'sess-noop', message: { role: 'user', content: 'and the retries too' } })}\n`);
      expect(await ingestWouldBeNoop(cairn, transcript)).toBe(false);
      await cairn.ingest([transcript]);
      expect(await ingestWouldBeNoop(cairn, transcript)).toBe(true);
      // A run that died before distilling: the next ingest must distil its sessions.
      await cairn.deps.store.setState(RUNS_KEY, JSON.stringify([{ id: 'r1', pid: -1, at: 0 }]));
      expect(await ingestWouldBeNoop(cairn, transcript)).toBe(false);
      // A missing file is left to ingest (which reports it).
      expect(await ingestWouldBeNoop(cairn, join(home, 'gone.jsonl'))).toBe(false);
    } finally {
      await cairn.close();
    }
  });

  it('counts the bytes past the cursor, and turns TurboFan on only past INGEST_OPTIMIZER_BYTES or when unknown', async () => {
    const home = tempDir('cairn-noop-home-');
    const repo = tempDir('cairn-noop-repo-');
    dirs.push(home, repo);
    mkdirSync(join(repo, '.git'));
    const transcript = join(home, 'sess.jsonl');
    const t = new TranscriptWriter('sess-bytes', repo);
    t.user('Make the retry count configurable.');
    writeFileSync(transcript, t.text());
    const { cairn } = await openCairn(loadConfig({ home, env: {} }), { cwd: repo, actor: 'test' });
    try {
      // Never read: all of it is pending.
      expect(await ingestState(cairn, transcript)).toEqual({ noop: false, pendingBytes: statSync(transcript).size });
      await cairn.ingest([transcript]);
      const line = `${JSON.stringify({ type: 'user', sessionId: 'sess-bytes', message: { role: 'user', content: 'and the backoff' } })}\n`;
      appendFileSync(transcript, line);
      expect(await ingestState(cairn, transcript)).toEqual({ noop: false, pendingBytes: Buffer.byteLength(line) });
      // Rewritten shorter than the cursor: read again whole.
      writeFileSync(transcript, t.text().slice(0, 20));
      expect(await ingestState(cairn, transcript)).toEqual({ noop: false, pendingBytes: 20 });
      expect(await ingestState(cairn, join(home, 'gone.jsonl'))).toBeNull();
      expect(ingestNeedsOptimizer({ pendingBytes: 200 })).toBe(false);
      expect(ingestNeedsOptimizer({ pendingBytes: INGEST_OPTIMIZER_BYTES })).toBe(false);
      expect(ingestNeedsOptimizer({ pendingBytes: INGEST_OPTIMIZER_BYTES + 1 })).toBe(true);
      expect(ingestNeedsOptimizer(null)).toBe(true);
    } finally {
      await cairn.close();
    }
  });
});

describe('hooks read their input from fd 0 without process.stdin', () => {
  it('reads a file descriptor to its end, and a terminal-like device as empty', async () => {
    const home = tempDir('cairn-fd0-');
    dirs.push(home);
    const file = join(home, 'input.json');
    const input = JSON.stringify({ session_id: 's', prompt: 'é'.repeat(100_000) });
    writeFileSync(file, input);
    const fd = openSync(file, 'r');
    try {
      expect(await readFd0(fd)).toBe(input);
    } finally {
      closeSync(fd);
    }
    // The first chunk read before the hooks loaded (bin/cairn-hook.cjs): the rest follows it.
    const again = openSync(file, 'r');
    try {
      const buffer = Buffer.alloc(64 * 1024);
      const first = new Promise<FirstRead>((done) => read(again, buffer, 0, buffer.length, null, (error, n) => done({ error, n, buffer })));
      expect(await readFd0(again, first)).toBe(input);
    } finally {
      closeSync(again);
    }
    const devNull = openSync('/dev/null', 'r');
    try {
      expect(await readFd0(devNull)).toBe('');
    } finally {
      closeSync(devNull);
    }
  });
});
