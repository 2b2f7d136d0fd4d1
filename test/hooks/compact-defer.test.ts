import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { Cairn } from '../../src/cairn.js';
import { loadConfig, openCairn } from '../../src/config.js';
import { compactTail, COMPACT_TAIL_MAX_BYTES, type CompactTail } from '../../src/hooks/compact-tail.js';
import { DEFAULT_HOOK_SETTINGS, preCompact } from '../../src/hooks/events.js';
import { ingestTranscript, runHook } from '../../src/hooks/run.js';
import { silentLogger } from '../../src/runtime.js';
import type { TurnRecord } from '../../src/types.js';
import { tempDirs } from '../helpers/cli.js';
import { TranscriptWriter } from './transcript.js';

// SessionStart(compact) after a PreCompact that ingested the transcript: the boundary and summary
// Claude Code appended are read from the transcript (no ingest in the hook), the context is built
// with them — the same text a synchronous ingest gives — and their ingest is left to a detached
// child. Anything else past the cursor, or a tail that does not read cleanly, is ingested first.

const dir = tempDirs();
const ROOT = resolve(import.meta.dirname, '..', '..');
const ENTRY = join(ROOT, 'bin', 'cairn-hook.cjs');
const BUNDLE = join(ROOT, 'dist', 'hooks-bundle', 'hook.cjs');

function repoDir(remote: string): string {
  const repo = dir('cairn-cd-repo-');
  mkdirSync(join(repo, '.git'));
  writeFileSync(join(repo, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(repo, '.git', 'config'), `[remote "origin"]\n\turl = https://${remote}.git\n`);
  return repo;
}

const SUMMARY = 'The user asked to fix the limiter. `src/limiter.ts` refill does not cap; `npx vitest run test/limiter.test.ts` fails with expected 12 to be 10. Token sk-ant-api03-' + 'x'.repeat(90);

/** A store and a transcript ingested as the pre-compact hook leaves them; the summary not yet appended. */
async function beforeCompaction(session: string): Promise<{ home: string; repo: string; transcript: string; t: TranscriptWriter }> {
  const home = dir('cairn-cd-home-');
  const repo = repoDir('github.com/acme/limiter');
  const transcript = join(dir('cairn-cd-claude-'), `${session}.jsonl`);
  const t = new TranscriptWriter(session, repo, Date.UTC(2026, 2, 1, 9, 0, 0));
  const { cairn } = await openCairn(loadConfig({ home, env: {} }), { cwd: repo, actor: 'test', session });
  try {
    mkdirSync(join(repo, 'src'), { recursive: true });
    writeFileSync(join(repo, 'src', 'limiter.ts'), 'export function refill() {}\n'.repeat(20));
    await cairn.remember({ text: 'The limiter refill lives at src/limiter.ts:3 and must cap at capacity', kind: 'fact', files: ['src/limiter.ts:3'] });
    await cairn.remember({ text: 'Deploys go through `make release`, not npm publish', kind: 'procedure' });
    t.user('The limiter drops requests under load. Find out why and fix it.');
    t.tool('Read', { file_path: join(repo, 'src', 'limiter.ts') }, 'export function refill() {}');
    t.tool('Bash', { command: 'npx vitest run test/limiter.test.ts' }, 'FAIL test/limiter.test.ts > refill caps at capacity\nAssertionError: expected 12 to be 10', true);
    t.tool('Edit', { file_path: join(repo, 'src', 'limiter.ts'), old_string: 'refill', new_string: 'refillCapped' }, 'ok');
    t.assistant('The refill in `src/limiter.ts` does not cap at `bucket.capacity`; `refillBucket(bucket, now)` needs a `Math.min`.');
    writeFileSync(transcript, t.text());
    await ingestTranscript(cairn, { transcript_path: transcript }, silentLogger, false);
    await preCompact(cairn, { session_id: session, transcript_path: transcript, trigger: 'auto' }, DEFAULT_HOOK_SETTINGS);
  } finally {
    await cairn.close();
  }
  return { home, repo, transcript, t };
}

/** The compaction lines, `pauseMs` after the last turn (in a later minute the summary's ingest rewrites the session's continuation memory). */
function appendSummary(transcript: string, t: TranscriptWriter, pauseMs = 0): void {
  const before = t.lines.length;
  t.pause(pauseMs).compact(SUMMARY, 'auto');
  appendFileSync(transcript, `${t.lines.slice(before).join('\n')}\n`);
}

function copyHome(home: string): string {
  const home2 = dir('cairn-cd-home2-');
  for (const suffix of ['', '-wal']) if (existsSync(join(home, `cairn.db${suffix}`))) copyFileSync(join(home, `cairn.db${suffix}`), join(home2, `cairn.db${suffix}`));
  return home2;
}

async function withCairn<T>(home: string, repo: string, session: string, use: (cairn: Cairn) => Promise<T>): Promise<T> {
  const { cairn } = await openCairn(loadConfig({ home, env: {} }), { cwd: repo, actor: 'test', session });
  try {
    return await use(cairn);
  } finally {
    await cairn.close();
  }
}

const turnsOf = (home: string, repo: string, session: string): Promise<TurnRecord[]> => withCairn(home, repo, session, async (c) => c.deps.store.substrate!.getTurns(session, { limit: 10_000 }));

async function startCompact(home: string, repo: string, input: Record<string, unknown>, env: NodeJS.ProcessEnv): Promise<string> {
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  expect(await runHook('session-start', { stdin: Readable.from(['']), stdout, readInput: async () => JSON.stringify(input), env, cwd: repo, home })).toBe(0);
  return out;
}

/** The turns of a tail read whole (failing the test with the reason when it was not). */
function tailTurns(tail: CompactTail | string): CompactTail['turns'] {
  if (typeof tail === 'string') throw new Error(`tail not read: ${tail}`);
  return tail.turns;
}

const hookLog = (home: string): string => readFileSync(join(home, 'logs', 'hooks.log'), 'utf8');

describe('SessionStart(compact) after a PreCompact ingest', () => {
  it('reads the summary from the transcript, gives the text a synchronous ingest gives, and ingests it after', async () => {
    const { home, repo, transcript, t } = await beforeCompaction('sess-a');
    appendSummary(transcript, t);
    const sync = copyHome(home);
    const input = { session_id: 'sess-a', cwd: repo, transcript_path: transcript, source: 'compact' };
    const deferred = await startCompact(home, repo, input, { CAIRN_HOOK_INLINE: '1' });
    const synchronous = await startCompact(sync, repo, input, { CAIRN_HOOK_INLINE: '1', CAIRN_COMPACT_DEFER: '0' });
    expect(hookLog(home)).toContain('"ingest":"deferred"');
    expect(hookLog(sync)).not.toContain('"ingest":"deferred"');
    expect(deferred).toContain('the conversation was just compacted');
    expect(deferred).toBe(synchronous);
    // Ingested after the output (inline here): the same turns as the synchronous path stored.
    const stored = await turnsOf(home, repo, 'sess-a');
    expect(stored.map((x) => [x.seq, x.role, x.text, x.flags])).toEqual((await turnsOf(sync, repo, 'sess-a')).map((x) => [x.seq, x.role, x.text, x.flags]));
    expect(stored.filter((x) => x.flags.includes('compact-summary'))).toHaveLength(1);
  });

  it('a summary written in a later minute leaves the continuation memory as it was: the same text both ways, no memory written', async () => {
    const { home, repo, transcript, t } = await beforeCompaction('sess-m');
    appendSummary(transcript, t, 90_000);
    const sync = copyHome(home);
    const input = { session_id: 'sess-m', cwd: repo, transcript_path: transcript, source: 'compact' };
    const memories = async (h: string) => withCairn(h, repo, 'sess-m', async (c) => (await c.deps.store.listMemories({ limit: 1000 })).map((m) => `${m.id} ${m.text}`).sort());
    const before = await memories(sync);
    const deferred = await startCompact(home, repo, input, { CAIRN_HOOK_INLINE: '1' });
    const synchronous = await startCompact(sync, repo, input, { CAIRN_HOOK_INLINE: '1', CAIRN_COMPACT_DEFER: '0' });
    expect(hookLog(home)).toContain('"ingest":"deferred"');
    // The summary is in a later minute than the last turn; the continuation carries the last turn's.
    const minute = (line: string | undefined) => (JSON.parse(line ?? '{}') as { timestamp: string }).timestamp.slice(0, 16).replace('T', ' ');
    expect(minute(t.lines.at(-1))).not.toBe(minute(t.lines.at(-3)));
    expect(deferred).toContain(`· ${minute(t.lines.at(-3))} [`);
    expect(deferred).toBe(synchronous);
    // The summary's ingest (synchronous, and the deferred one run inline after the output) rewrote no memory.
    expect(await memories(sync)).toEqual(before);
    expect(await memories(home)).toEqual(before);
  });

  it('reads the tail as ingest stores it: redacted, the boundary’s trigger and size', async () => {
    const { home, repo, transcript, t } = await beforeCompaction('sess-b');
    appendSummary(transcript, t);
    const tail = tailTurns(await withCairn(home, repo, 'sess-b', (c) => compactTail(c, transcript, 'sess-b')));
    expect(tail.map((x) => x.role)).toEqual(['system', 'summary']);
    await withCairn(home, repo, 'sess-b', (c) => ingestTranscript(c, { transcript_path: transcript }, silentLogger, false));
    const stored = (await turnsOf(home, repo, 'sess-b')).slice(-2);
    expect(tail).toEqual(stored.map((x) => ({ role: x.role, text: x.text, flags: x.flags, at: x.at })));
    expect(tail[1]?.text).not.toContain('x'.repeat(90));
  });

  it('ingests first when PreCompact did not ingest, when other lines came, or when the tail does not read cleanly', async () => {
    const { home: pristine, repo, transcript, t } = await beforeCompaction('sess-c');
    const ingested = readFileSync(transcript);
    appendSummary(transcript, t);
    const summaryLines = `${t.lines.slice(-2).join('\n')}\n`;
    const tailOf = (home: string, path: string, session = 'sess-c') => withCairn(home, repo, 'sess-c', (c) => compactTail(c, path, session));
    expect(typeof (await tailOf(pristine, transcript))).toBe('object');
    // Another session's lines; no cursor (a copy never ingested).
    expect(await tailOf(pristine, transcript, 'other')).toMatch(/another session/);
    const fresh = join(dir('cairn-cd-fresh-'), 'fresh.jsonl');
    writeFileSync(fresh, readFileSync(transcript));
    expect(await tailOf(pristine, fresh)).toBe('transcript never ingested');
    const line = (value: Record<string, unknown>): string => `${JSON.stringify({ sessionId: 'sess-c', timestamp: '2026-03-01T09:30:00.000Z', ...value })}\n`;
    // A line kind the reader does not read (one a newer client adds, 2.1.332's `atis-latch`): ingest
    // stores nothing from it, so the tail passes it over and still reads the summary.
    for (const kind of ['brand-new-kind', 'atis-latch']) {
      writeFileSync(transcript, ingested);
      appendFileSync(transcript, `${summaryLines}${line({ type: kind })}`);
      expect(tailTurns(await tailOf(copyHome(pristine), transcript)).map((x) => x.role), kind).toEqual(['system', 'summary']);
    }
    const cases: Array<[string, string | Buffer, RegExp]> = [
      ['an assistant turn after the summary', `${summaryLines}${line({ type: 'assistant', message: { role: 'assistant', content: 'Continuing.' } })}`, /assistant/],
      ['the /compact command’s output (ingest takes facts from it)', `${summaryLines}${line({ type: 'user', message: { role: 'user', content: '<local-command-stdout>Compacted. See docs/RELEASING.md</local-command-stdout>' } })}`, /user message/],
      ['a prompt taken from the queue', `${summaryLines}${line({ type: 'queue-operation', operation: 'remove' })}`, /queue operation remove/],
      ['a system line ingest stores', `${summaryLines}${line({ type: 'system', subtype: 'local_command', content: '<command-name>/model</command-name>' })}`, /system local_command/],
      ['a user message with a reminder', `${summaryLines}${line({ type: 'user', message: { role: 'user', content: '<system-reminder>x</system-reminder><command-name>/compact</command-name>' } })}`, /user message/],
      ['a sidechain’s caveat', `${summaryLines}${line({ type: 'user', isSidechain: true, message: { role: 'user', content: '<local-command-caveat>Caveat</local-command-caveat>' } })}`, /sidechain/],
      ['truncated JSON', `${summaryLines}{"type":"user","sessionId":"sess-c","mess\n`, /not JSON/],
      ['a line not finished', summaryLines.slice(0, -10), /not finished/],
      ['non-UTF-8 bytes', Buffer.concat([Buffer.from(summaryLines), Buffer.from([0xff, 0xfe, 0x0a])]), /UTF-8/],
      ['a huge line', `${summaryLines}${JSON.stringify({ type: 'user', sessionId: 'sess-c', isCompactSummary: true, message: { content: 'y '.repeat(COMPACT_TAIL_MAX_BYTES / 2) } })}\n`, /4 MB/],
    ];
    for (const [name, extra, reason] of cases) {
      const home = copyHome(pristine);
      writeFileSync(transcript, ingested);
      appendFileSync(transcript, extra);
      expect(await tailOf(home, transcript), name).toMatch(reason);
      // The hook still answers, through the synchronous path, and never crashes.
      const out = await startCompact(home, repo, { session_id: 'sess-c', cwd: repo, transcript_path: transcript, source: 'compact' }, { CAIRN_HOOK_INLINE: '1' });
      expect(out, name).toContain('src/limiter.ts:3');
      const last = hookLog(home).split('\n').filter((l) => l.includes('"event":"session-start"')).at(-1);
      expect(last, name).toContain('"source":"compact"');
      expect(last, name).not.toContain('deferred');
      expect(last, name).toContain('"tail":"');
    }
  }, 60_000);

  it.skipIf(!existsSync(BUNDLE))('loads no ingest in the hook process; its detached child stores the summary', async () => {
    const { home, repo, transcript, t } = await beforeCompaction('sess-d');
    appendSummary(transcript, t);
    const sync = copyHome(home);
    const report = join(home, 'modules.cjs');
    writeFileSync(report, "const before = new Set(process.moduleLoadList);\nprocess.on('exit', () => require('node:fs').writeFileSync(process.env.MODULES_OUT, process.moduleLoadList.filter((m) => !before.has(m)).join('\\n')));\n");
    const input = JSON.stringify({ session_id: 'sess-d', cwd: repo, transcript_path: transcript, source: 'compact' });
    const run = (h: string, env: NodeJS.ProcessEnv): string[] => {
      const out = join(h, 'modules.txt');
      const child = spawnSync(process.execPath, ['-r', report, ENTRY, 'session-start'], { input, env: { ...process.env, CAIRN_HOME: h, MODULES_OUT: out, ...env }, encoding: 'utf8' });
      expect(child.status).toBe(0);
      expect(child.stdout).toContain('src/limiter.ts:3');
      return readFileSync(out, 'utf8').split('\n');
    };
    // Ingest hashes the transcript's head (node:crypto): the synchronous path loads it, the deferred one does not.
    expect(run(sync, { CAIRN_COMPACT_DEFER: '0' })).toContain('NativeModule crypto');
    expect(run(home, {})).not.toContain('NativeModule crypto');
    const deadline = Date.now() + 60_000;
    let summaries = 0;
    while (Date.now() < deadline) {
      summaries = (await turnsOf(home, repo, 'sess-d')).filter((x) => x.flags.includes('compact-summary')).length;
      if (summaries > 0) break;
      await new Promise((done) => setTimeout(done, 200));
    }
    expect(summaries).toBe(1);
  }, 90_000);

  it('a killed ingest child leaves the store consistent, and the next ingest completes it', async () => {
    const { home, repo, transcript, t } = await beforeCompaction('sess-e');
    appendSummary(transcript, t);
    const reference = copyHome(home);
    await withCairn(reference, repo, 'sess-e', (c) => ingestTranscript(c, { transcript_path: transcript }, silentLogger, false));
    const expected = (await turnsOf(reference, repo, 'sess-e')).map((x) => [x.seq, x.role, x.text]);
    for (const afterMs of [30, 150, 400]) {
      const h = copyHome(home);
      const child = spawn(process.execPath, [join(ROOT, 'bin', 'cairn.js'), '--home', h, 'ingest', '--fill-seconds', '0', transcript], { stdio: 'ignore' });
      // Listened for from the start: a child that ends before the kill has already emitted it.
      const exited = new Promise((done) => child.once('exit', done));
      await new Promise((done) => setTimeout(done, afterMs));
      child.kill('SIGKILL');
      await exited;
      await withCairn(h, repo, 'sess-e', async (c) => {
        const db = new Database(join(h, 'cairn.db'));
        try {
          expect(db.pragma('integrity_check')).toEqual([{ integrity_check: 'ok' }]);
        } finally {
          db.close();
        }
        await ingestTranscript(c, { transcript_path: transcript }, silentLogger, false);
      });
      expect((await turnsOf(h, repo, 'sess-e')).map((x) => [x.seq, x.role, x.text]), `killed after ${afterMs} ms`).toEqual(expected);
    }
  }, 120_000);
});
