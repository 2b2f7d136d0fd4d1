import { spawn } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Cairn } from '../../src/cairn.js';
import { loadConfig, openCairn } from '../../src/config.js';
import { contextCachePath, type ContextCacheKey } from '../../src/context/cache.js';
import { DEFAULT_HOOK_SETTINGS, prepareCompactContext, preCompact, sessionStart, type HookOutput, type SessionStartCache } from '../../src/hooks/events.js';
import { ingestTranscript, PREPARE_COMPACT_EVENT, runHook, startupCache } from '../../src/hooks/run.js';
import { silentLogger } from '../../src/runtime.js';
import { tempDirs } from '../helpers/cli.js';
import { TranscriptWriter } from './transcript.js';

// After /compact, SessionStart(compact) may use the candidate pool the PreCompact hook's detached
// child gathered (`cairn hook prepare-compact`): only for that session and project, only when the
// store is as the child left it when the hook starts and the hook's own ingest of the compaction
// summary wrote no memory — and then its context is the one a build without it gives.

const dir = tempDirs();
const ROOT = resolve(import.meta.dirname, '..', '..');
const BUNDLE = join(ROOT, 'dist', 'hooks-bundle', 'hook.cjs');

function repoDir(remote: string): string {
  const repo = dir('cairn-pc-repo-');
  mkdirSync(join(repo, '.git'));
  writeFileSync(join(repo, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(repo, '.git', 'config'), `[remote "origin"]\n\turl = https://${remote}.git\n`);
  return repo;
}
const textOf = (out: HookOutput): string => (out.kind === 'json' ? String((out.value.hookSpecificOutput as { additionalContext: string }).additionalContext) : '');

/** A session's transcript up to its compaction, ingested as the pre-compact hook does, with its guidance recorded. */
async function beforeCompaction(cairn: Cairn, repo: string, session: string): Promise<{ transcript: string; t: TranscriptWriter }> {
  mkdirSync(join(repo, 'src'), { recursive: true });
  writeFileSync(join(repo, 'src', 'limiter.ts'), 'export function refill() {}\n'.repeat(20));
  await cairn.remember({ text: 'The limiter refill lives at src/limiter.ts:3 and must cap at capacity', kind: 'fact', files: ['src/limiter.ts:3'] });
  await cairn.remember({ text: 'Never mock the database in the watcher tests; use the sqlite fixture', kind: 'correction' });
  await cairn.remember({ text: 'Deploys go through `make release`, not npm publish', kind: 'procedure' });
  const transcript = join(dir('cairn-pc-claude-'), `${session}.jsonl`);
  // The compaction summary lands in the same minute as the last turn (see `compacted`).
  const t = new TranscriptWriter(session, repo, Date.UTC(2026, 2, 1, 9, 0, 30));
  t.user('The limiter drops requests under load. Find out why and fix it.');
  t.tool('Read', { file_path: join(repo, 'src', 'limiter.ts') }, 'export function refill() {}');
  t.tool('Bash', { command: 'npx vitest run test/limiter.test.ts' }, 'FAIL test/limiter.test.ts > refill caps at capacity\nAssertionError: expected 12 to be 10', true);
  t.assistant('The refill in `src/limiter.ts` does not cap at `bucket.capacity`; `refillBucket(bucket, now)` needs a `Math.min`.');
  writeFileSync(transcript, t.text());
  expect(await ingestTranscript(cairn, { transcript_path: transcript }, silentLogger, false)).toBeTypeOf('boolean');
  await preCompact(cairn, { session_id: session, transcript_path: transcript, trigger: 'auto' }, DEFAULT_HOOK_SETTINGS);
  return { transcript, t };
}

/**
 * The compaction summary the client writes after PreCompact, appended as it does, `pauseMs` after
 * the last turn. The session's continuation memory carries the minute of its last turn, so a
 * summary in a later minute makes the ingest replace it (a memory write).
 */
function compacted(transcript: string, t: TranscriptWriter, pauseMs = 0): void {
  const before = t.lines.length;
  t.pause(pauseMs).compact('The user asked to fix the limiter. `src/limiter.ts` refill does not cap; the test fails with expected 12 to be 10.');
  appendFileSync(transcript, `${t.lines.slice(before).join('\n')}\n`);
}

/** A copy of the store files as they are now (a build without the prepared pool on the same data). */
async function copyOf(home: string, repo: string, session: string): Promise<Cairn> {
  const home2 = dir('cairn-pc-home2-');
  for (const suffix of ['', '-wal']) if (existsSync(join(home, `cairn.db${suffix}`))) copyFileSync(join(home, `cairn.db${suffix}`), join(home2, `cairn.db${suffix}`));
  return (await openCairn(loadConfig({ home: home2, env: {} }), { cwd: repo, actor: 'test', session })).cairn;
}

function compactKeyOf(cairn: Cairn, cache: SessionStartCache, session: string): ContextCacheKey {
  return { kind: 'compact', session, project: cairn.deps.project, workspaceRoot: cairn.deps.workspaceRoot, budget: DEFAULT_HOOK_SETTINGS.compactBudget, code: cache.code };
}

describe('the post-compact context prepared at PreCompact', () => {
  it('is served after the compaction summary is ingested, exactly as a build without it', async () => {
    const home = dir('cairn-pc-home-');
    const repo = repoDir('github.com/acme/limiter');
    const config = loadConfig({ home, env: {} });
    const outcomes: string[] = [];
    const cache = startupCache(config, {}, (o) => outcomes.push(o))!;
    const { cairn } = await openCairn(config, { cwd: repo, actor: 'test', session: 'sess-c' });
    try {
      const { transcript, t } = await beforeCompaction(cairn, repo, 'sess-c');
      expect(await prepareCompactContext(cairn, DEFAULT_HOOK_SETTINGS, cache, 'sess-c')).toBe(true);
      compacted(transcript, t);
      const generation = cache.generation();
      // The summary's turns and session facts go in; no memory is written by them.
      expect(await ingestTranscript(cairn, { transcript_path: transcript }, silentLogger, false)).toBe(false);
      const copy = await copyOf(home, repo, 'sess-c');
      try {
        const input = { session_id: 'sess-c', transcript_path: transcript, source: 'compact' };
        const served = await sessionStart(cairn, input, DEFAULT_HOOK_SETTINGS, cache, { generation });
        expect(outcomes.pop()).toBe('hit');
        const fresh = await sessionStart(copy, input, DEFAULT_HOOK_SETTINGS);
        expect(textOf(served)).toContain('the conversation was just compacted');
        expect(textOf(served)).toContain('src/limiter.ts:3');
        expect(textOf(served)).toBe(textOf(fresh));
        expect((await cairn.ledger!.seen('sess-c')).memories).toEqual((await copy.ledger!.seen('sess-c')).memories);
      } finally {
        await copy.close();
      }
    } finally {
      await cairn.close();
    }
  });

  it('is rebuilt when the store changed, when the ingest wrote memories, and for a torn entry', async () => {
    const home = dir('cairn-pc-home-');
    const repo = repoDir('github.com/acme/limiter');
    const config = loadConfig({ home, env: {} });
    const outcomes: string[] = [];
    const cache = startupCache(config, {}, (o) => outcomes.push(o))!;
    const { cairn } = await openCairn(config, { cwd: repo, actor: 'test', session: 'sess-d' });
    try {
      const { transcript, t } = await beforeCompaction(cairn, repo, 'sess-d');
      const input = { session_id: 'sess-d', transcript_path: transcript, source: 'compact' };
      // A write after the child finished (another session's memory): built fresh, with it.
      await prepareCompactContext(cairn, DEFAULT_HOOK_SETTINGS, cache, 'sess-d');
      await cairn.remember({ text: 'The rate limiter bucket size is 250 requests per key', kind: 'fact' });
      const changed = await sessionStart(cairn, input, DEFAULT_HOOK_SETTINGS, cache, { generation: cache.generation() });
      expect(outcomes.pop()).toBe('miss: store changed');
      expect(textOf(changed)).toContain('250 requests per key');

      // The hook's own ingest wrote a memory: the pool is not used.
      await prepareCompactContext(cairn, DEFAULT_HOOK_SETTINGS, cache, 'sess-d');
      await sessionStart(cairn, input, DEFAULT_HOOK_SETTINGS, cache, { generation: null, reason: 'ingest wrote memories' });
      expect(outcomes.pop()).toBe('miss: ingest wrote memories');

      // A torn entry (cut short): built fresh, no crash.
      await prepareCompactContext(cairn, DEFAULT_HOOK_SETTINGS, cache, 'sess-d');
      const path = contextCachePath(home, compactKeyOf(cairn, cache, 'sess-d'));
      writeFileSync(path, readFileSync(path, 'utf8').slice(0, -30));
      compacted(transcript, t);
      const generation = cache.generation();
      await ingestTranscript(cairn, { transcript_path: transcript }, silentLogger, false);
      const torn = await sessionStart(cairn, input, DEFAULT_HOOK_SETTINGS, cache, { generation });
      expect(outcomes.pop()).toBe('miss: unreadable entry');
      expect(textOf(torn)).toContain('src/limiter.ts:3');
    } finally {
      await cairn.close();
    }
  });

  it('says when the ingest of new lines wrote memories', async () => {
    const home = dir('cairn-pc-home-');
    const repo = repoDir('github.com/acme/limiter');
    const { cairn } = await openCairn(loadConfig({ home, env: {} }), { cwd: repo, actor: 'test', session: 'sess-w' });
    const texts = async (): Promise<string> => (await cairn.deps.store.listMemories({ limit: 1000 })).map((m) => `${m.id} ${m.text}`).sort().join('\n');
    try {
      const { transcript, t } = await beforeCompaction(cairn, repo, 'sess-w');
      // Nothing new: nothing written.
      expect(await ingestTranscript(cairn, { transcript_path: transcript }, silentLogger, false)).toBe(false);
      // A compaction in the same minute: turns and facts only.
      let before = await texts();
      compacted(transcript, t);
      expect(await ingestTranscript(cairn, { transcript_path: transcript }, silentLogger, false)).toBe(false);
      expect(await texts()).toBe(before);
      // A compaction two minutes later: still nothing (the continuation keeps its last turn's minute).
      compacted(transcript, t, 120_000);
      expect(await ingestTranscript(cairn, { transcript_path: transcript }, silentLogger, false)).toBe(false);
      expect(await texts()).toBe(before);
      // A new request two minutes later: the continuation memory is replaced.
      const n = t.lines.length;
      t.pause(120_000).user('Now also cap the burst size at twice the capacity.');
      appendFileSync(transcript, `${t.lines.slice(n).join('\n')}\n`);
      expect(await ingestTranscript(cairn, { transcript_path: transcript }, silentLogger, false)).toBe(true);
      expect(await texts()).not.toBe(before);
    } finally {
      await cairn.close();
    }
  });

  it('is never served to another session or another project', async () => {
    const home = dir('cairn-pc-home-');
    const repoA = repoDir('github.com/acme/alpha');
    const repoB = repoDir('github.com/acme/beta');
    const config = loadConfig({ home, env: {} });
    const outcomes: string[] = [];
    const cache = startupCache(config, {}, (o) => outcomes.push(o))!;
    const { cairn: a } = await openCairn(config, { cwd: repoA, actor: 'test', session: 'sess-a' });
    const { cairn: b } = await openCairn(config, { cwd: repoB, actor: 'test', session: 'sess-a' });
    try {
      await a.remember({ text: 'Alpha secret: the staging host is alpha-staging.internal', kind: 'fact', session: 'sess-a' });
      await b.remember({ text: 'Beta uses pnpm workspaces', kind: 'fact' });
      await b.remember({ text: 'Beta session note: the queue test flakes', kind: 'fact', session: 'sess-b' });
      expect(await prepareCompactContext(a, DEFAULT_HOOK_SETTINGS, cache, 'sess-a')).toBe(true);
      const generation = cache.generation();
      // Same project, another session: its key differs.
      await sessionStart(a, { session_id: 'sess-other', source: 'compact' }, DEFAULT_HOOK_SETTINGS, cache, { generation });
      expect(outcomes.pop()).toBe('miss: other key');
      // Same session id in another project: another entry (none).
      const out = await sessionStart(b, { session_id: 'sess-a', source: 'compact' }, DEFAULT_HOOK_SETTINGS, cache, { generation: cache.generation() });
      expect(outcomes.pop()).toBe('miss: no entry');
      expect(textOf(out)).not.toContain('alpha-staging');
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('is written by the pre-compact hook (inline here) and by `cairn hook prepare-compact`', async () => {
    const home = dir('cairn-pc-home-');
    const repo = repoDir('github.com/acme/refresh');
    const config = loadConfig({ home, env: {} });
    const { cairn } = await openCairn(config, { cwd: repo, actor: 'test', session: 'sess-h' });
    await cairn.remember({ text: 'Releases are tagged vX.Y.Z from main only', kind: 'procedure', session: 'sess-h' });
    const path = contextCachePath(home, compactKeyOf(cairn, startupCache(config, {})!, 'sess-h'));
    await cairn.close();
    const stdout = new PassThrough();
    const run = (event: string, input: unknown, env: NodeJS.ProcessEnv) => runHook(event, { stdin: Readable.from(['']), stdout, readInput: async () => JSON.stringify(input), env, cwd: repo, home });
    expect(await run('pre-compact', { session_id: 'sess-h', cwd: repo, trigger: 'auto' }, { CAIRN_HOOK_INLINE: '1' })).toBe(0);
    const [head, body] = readFileSync(path, 'utf8').split('\n');
    expect(JSON.parse(head!)).toMatchObject({ key: { kind: 'compact', session: 'sess-h', project: 'github.com/acme/refresh' } });
    expect(body).toContain('Releases are tagged vX.Y.Z');
    writeFileSync(path, '');
    expect(await run(PREPARE_COMPACT_EVENT, { session_id: 'sess-h', cwd: repo }, {})).toBe(0);
    expect(readFileSync(path, 'utf8')).toContain('Releases are tagged vX.Y.Z');
    // Off with CAIRN_CONTEXT_CACHE=0, and nothing without a session.
    writeFileSync(path, '');
    expect(await run(PREPARE_COMPACT_EVENT, { session_id: 'sess-h', cwd: repo }, { CAIRN_CONTEXT_CACHE: '0' })).toBe(0);
    expect(await run(PREPARE_COMPACT_EVENT, { cwd: repo }, {})).toBe(0);
    expect(readFileSync(path, 'utf8')).toBe('');
  });

  it.skipIf(!existsSync(BUNDLE))('a preparer killed at any point leaves no entry that is served wrong', async () => {
    const home = dir('cairn-pc-home-');
    const repo = repoDir('github.com/acme/limiter');
    const config = loadConfig({ home, env: {} });
    const outcomes: string[] = [];
    const cache = startupCache(config, {}, (o) => outcomes.push(o))!;
    const { cairn } = await openCairn(config, { cwd: repo, actor: 'test', session: 'sess-k' });
    try {
      const { transcript } = await beforeCompaction(cairn, repo, 'sess-k');
      for (let i = 0; i < 60; i++) await cairn.remember({ text: `Limiter finding ${i}: bucket ${i} refills at ${i * 7} tokens per second`, kind: 'fact', session: i % 2 === 0 ? 'sess-k' : null });
      const input = { session_id: 'sess-k', transcript_path: transcript, source: 'compact' };
      const reference = textOf(await sessionStart(await copyOf(home, repo, 'sess-k'), input, DEFAULT_HOOK_SETTINGS));
      const path = contextCachePath(home, compactKeyOf(cairn, cache, 'sess-k'));
      const prepare = () => spawn(process.execPath, [join(ROOT, 'bin', 'cairn-hook.cjs'), PREPARE_COMPACT_EVENT, JSON.stringify({ session_id: 'sess-k', cwd: repo })], { env: { ...process.env, CAIRN_HOME: home, CAIRN_HOOK_CODE_CACHE: '0' }, stdio: 'ignore' });
      // A whole run first: the bundle's code identity (its file stamps) is in the key it writes.
      const began = Date.now();
      const whole = prepare();
      await new Promise((done) => whole.once('exit', done));
      const wholeMs = Date.now() - began;
      const code = (JSON.parse(readFileSync(path, 'utf8').split('\n')[0]!) as { key: ContextCacheKey }).key.code;
      const bundled = { ...cache, code };
      const seen = new Set<string>();
      // Kills spread over a whole run's time (however loaded the machine), the last one after it ended.
      for (const share of [0.02, 0.1, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 3]) {
        const delayMs = Math.round(share * wholeMs);
        rmSync(path, { force: true });
        const child = prepare();
        const exited = new Promise((done) => child.once('exit', done));
        await new Promise((done) => setTimeout(done, delayMs));
        child.kill('SIGKILL');
        await exited;
        const copy = await copyOf(home, repo, 'sess-k');
        try {
          // The served context (when the entry is whole and current) is the reference; anything else is a miss and built fresh.
          const out = await sessionStart(copy, input, DEFAULT_HOOK_SETTINGS, bundled, { generation: cache.generation() });
          const outcome = outcomes.pop()!;
          seen.add(outcome);
          expect(['hit', 'miss: no entry']).toContain(outcome);
          expect(textOf(out)).toBe(reference);
        } finally {
          await copy.close();
        }
      }
      // Both ends were reached: killed before its entry was in place, and after.
      expect(seen).toEqual(new Set(['hit', 'miss: no entry']));
      // Half-written files are left only under a temporary name, never as the entry.
      for (const name of readdirSync(join(home, 'cache', 'context'))) expect(name.endsWith('.json') || name.endsWith('.tmp')).toBe(true);
    } finally {
      await cairn.close();
    }
  });
});
