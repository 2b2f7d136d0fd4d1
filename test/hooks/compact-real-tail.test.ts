import { appendFileSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Cairn } from '../../src/cairn.js';
import { loadConfig, openCairn } from '../../src/config.js';
import { compactTail } from '../../src/hooks/compact-tail.js';
import { DEFAULT_HOOK_SETTINGS, preCompact } from '../../src/hooks/events.js';
import { ingestTranscript, runHook } from '../../src/hooks/run.js';
import { silentLogger } from '../../src/runtime.js';
import type { TurnRecord } from '../../src/types.js';
import { tempDirs } from '../helpers/cli.js';

// SessionStart(compact) on the transcripts real clients write: what Claude Code 2.1.197 and 2.1.332 have written
// past PreCompact's ingest when the hook runs (test/hooks/fixtures/claude-code-VERSION-compact: a
// `mode` line, and from 2.1.332 an `atis-latch` one; the compaction comes after the hook), and the compactions in ../shared/data's
// Claude Code transcripts. Deferred or not, the hook injects the same bytes, and the detached
// ingest stores the turns the synchronous one stores.

const dir = tempDirs();
const ROOT = resolve(import.meta.dirname, '..', '..');
/** Transcripts of a real /compact, by client version (test/hooks/fixtures/claude-code-VERSION-compact). */
const VERSIONS = ['2.1.197', '2.1.332'];
const fixtureDir = (version: string): string => join(import.meta.dirname, 'fixtures', `claude-code-${version}-compact`);
const FIXTURE_SESSION = '4d9e2f55-1b7a-4c1e-9a53-6f0c7e2b8a10';
const SHARED = resolve(ROOT, '../shared/data/transcripts/claude-code');

function repoDir(remote: string): string {
  const repo = dir('cairn-crt-repo-');
  mkdirSync(join(repo, '.git'));
  writeFileSync(join(repo, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(repo, '.git', 'config'), `[remote "origin"]\n\turl = https://${remote}.git\n`);
  return repo;
}

/**
 * A fixture part with its placeholders filled in (as JSON string contents), its lines marked as an
 * interactive session writes them (`claude -p` marks them `sdk-cli`: a headless run, which distill
 * leaves without a continuation note).
 */
function fixturePart(version: string, name: string, values: { cwd: string; transcript: string }): string {
  const inJson = (text: string): string => JSON.stringify(text).slice(1, -1);
  return readFileSync(join(fixtureDir(version), name), 'utf8')
    .replaceAll('@CWD@', inJson(values.cwd))
    .replaceAll('@TRANSCRIPT@', inJson(values.transcript))
    .replaceAll('@CAIRN@', inJson(ROOT))
    .replaceAll('"entrypoint":"sdk-cli"', '"entrypoint":"cli"');
}

function copyHome(home: string): string {
  const home2 = dir('cairn-crt-home2-');
  for (const suffix of ['', '-wal']) if (existsSync(join(home, `cairn.db${suffix}`))) copyFileSync(join(home, `cairn.db${suffix}`), join(home2, `cairn.db${suffix}`));
  return home2;
}

async function withCairn<T>(home: string, cwd: string, session: string, use: (cairn: Cairn) => Promise<T>): Promise<T> {
  const { cairn } = await openCairn(loadConfig({ home, env: {} }), { cwd, actor: 'test', session });
  try {
    return await use(cairn);
  } finally {
    await cairn.close();
  }
}

const turnsOf = (home: string, cwd: string, session: string): Promise<TurnRecord[]> => withCairn(home, cwd, session, async (c) => c.deps.store.substrate!.getTurns(session, { limit: 50_000 }));
const rows = (turns: TurnRecord[]) => turns.map((x) => [x.seq, x.role, x.text, x.flags, x.at]);
/** What a store holds besides turns, without the ids and times each write draws: memories' kind and text, the session's facts. */
const storedRest = (home: string, cwd: string, session: string) =>
  withCairn(home, cwd, session, async (c) => ({
    memories: (await c.deps.store.listMemories({ limit: 10_000 })).map((m) => `${m.kind} ${m.text}`).sort(),
    facts: (await c.deps.store.substrate!.listFacts(session)).map((f) => `${f.kind} ${f.text}`).sort(),
  }));

async function hook(event: string, home: string, cwd: string, input: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  expect(await runHook(event, { stdin: Readable.from(['']), stdout, readInput: async () => JSON.stringify(input), env: { CAIRN_HOOK_INLINE: '1', ...env }, cwd, home })).toBe(0);
  return out;
}

const lastStart = (home: string): string =>
  readFileSync(join(home, 'logs', 'hooks.log'), 'utf8')
    .split('\n')
    .filter((l) => l.includes('"event":"session-start"'))
    .at(-1) ?? '';

/** Session-start(compact) on `home` and on a copy of it with the deferral off: both outputs, after checking the first deferred and the copy not. */
async function bothWays(home: string, cwd: string, input: Record<string, unknown>, ingest: 'deferred' | 'next' = 'deferred'): Promise<{ deferred: string; synchronous: string; sync: string }> {
  const sync = copyHome(home);
  const deferred = await hook('session-start', home, cwd, input);
  const synchronous = await hook('session-start', sync, cwd, input, { CAIRN_COMPACT_DEFER: '0' });
  expect(lastStart(home)).toContain(`"ingest":"${ingest}"`);
  expect(lastStart(sync)).not.toContain('"ingest":"');
  return { deferred, synchronous, sync };
}

describe.each(VERSIONS)('SessionStart(compact) on the tail Claude Code %s writes', (version) => {
  async function beforeStart(): Promise<{ home: string; repo: string; transcript: string; input: Record<string, unknown> }> {
    const home = dir('cairn-crt-home-');
    const repo = repoDir('github.com/acme/release');
    const transcript = join(dir('cairn-crt-claude-'), `${FIXTURE_SESSION}.jsonl`);
    await withCairn(home, repo, FIXTURE_SESSION, async (c) => {
      await c.remember({ text: 'The release checklist lives in docs/RELEASING.md: run make verify before tagging (ALPHA-7731).', kind: 'fact' });
      await c.remember({ text: 'Release tags are cut from the main branch by the on-call maintainer', kind: 'decision' });
    });
    writeFileSync(transcript, fixturePart(version, 'pre-compact.jsonl', { cwd: repo, transcript }));
    const input = { session_id: FIXTURE_SESSION, cwd: repo, transcript_path: transcript };
    await hook('pre-compact', home, repo, { ...input, trigger: 'manual' });
    appendFileSync(transcript, fixturePart(version, 'before-start.jsonl', { cwd: repo, transcript }));
    return { home, repo, transcript, input: { ...input, source: 'compact' } };
  }

  it('leaves what is new when the hook runs (a mode line) to the next ingest, injecting what the synchronous path injects', async () => {
    const { home, repo, transcript, input } = await beforeStart();
    const { deferred, synchronous, sync } = await bothWays(home, repo, input, 'next');
    expect(deferred).toContain('the conversation was just compacted');
    expect(deferred).toBe(synchronous);
    // The client then writes the compaction (here three minutes later); the next ingest (the Stop
    // hook's) stores the same turns either way, and rewrites no memory: the continuation's minute is
    // the last turn's before the compaction (boundary, summary, /compact and its output).
    const later = (line: string): string => line.replace(/"timestamp":"([^"]*)"/, (_m, at: string) => `"timestamp":"${new Date(Date.parse(at) + 180_000).toISOString()}"`);
    appendFileSync(transcript, fixturePart(version, 'after-start.jsonl', { cwd: repo, transcript }).split('\n').map(later).join('\n'));
    const memories = (h: string) => withCairn(h, repo, FIXTURE_SESSION, async (c) => (await c.deps.store.listMemories({ limit: 1000 })).map((m) => `${m.id} ${m.text}`).sort());
    const before = await memories(sync);
    for (const h of [home, sync]) await withCairn(h, repo, FIXTURE_SESSION, (c) => ingestTranscript(c, { transcript_path: transcript }, silentLogger, false));
    expect(before.some((m) => m.includes('Session: ' + FIXTURE_SESSION)), 'a continuation note').toBe(true);
    expect(await memories(sync)).toEqual(before);
    const stored = await turnsOf(home, repo, FIXTURE_SESSION);
    expect(rows(stored)).toEqual(rows(await turnsOf(sync, repo, FIXTURE_SESSION)));
    expect(await storedRest(home, repo, FIXTURE_SESSION)).toEqual(await storedRest(sync, repo, FIXTURE_SESSION));
    expect(stored.filter((t) => t.flags.includes('compact-summary'))).toHaveLength(1);
    expect(stored.some((t) => t.text === '/compact' && t.flags.includes('slash-command'))).toBe(true);
  });

  it('reads the compaction when the client writes it first: boundary, summary, caveat and /compact as ingest stores them; its output is left to ingest', async () => {
    const { home, repo, transcript, input } = await beforeStart();
    const after = fixturePart(version, 'after-start.jsonl', { cwd: repo, transcript }).split('\n');
    // The boundary, the summary, the caveat (isMeta) and the /compact command.
    appendFileSync(transcript, `${after.slice(0, 4).join('\n')}\n`);
    const tail = await withCairn(home, repo, FIXTURE_SESSION, (c) => compactTail(c, transcript, FIXTURE_SESSION));
    if (typeof tail === 'string') throw new Error(tail);
    expect(tail.turns.map((t) => [t.role, t.flags])).toEqual([
      ['system', ['compact-boundary']],
      ['summary', ['compact-summary']],
      ['user', ['slash-command']],
    ]);
    const { deferred, synchronous, sync } = await bothWays(home, repo, input);
    expect(deferred).toBe(synchronous);
    // The detached ingest (inline here) stored what the synchronous one did, and what was read.
    const stored = await turnsOf(home, repo, FIXTURE_SESSION);
    expect(rows(stored)).toEqual(rows(await turnsOf(sync, repo, FIXTURE_SESSION)));
    expect(stored.slice(-3).map((t) => ({ role: t.role, text: t.text, flags: t.flags, at: t.at }))).toEqual(tail.turns);
    // The command's output (ingest takes facts from it) is not read here.
    const withOutput = copyHome(sync);
    appendFileSync(transcript, `${after[4]}\n`);
    expect(await withCairn(withOutput, repo, FIXTURE_SESSION, (c) => compactTail(c, transcript, FIXTURE_SESSION))).toBe('a user message');
  });
});

/** The Claude Code transcripts under `root` that hold a compaction. */
function compactedTranscripts(root: string): string[] {
  if (!existsSync(root)) return [];
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.jsonl') && readFileSync(path, 'utf8').includes('"subtype":"compact_boundary"')) out.push(path);
    }
  };
  walk(root);
  return out.sort();
}

const shared = compactedTranscripts(SHARED);
if (shared.length === 0) console.info(`compact-tail shared-data tests skipped: no compacted Claude Code transcripts in ${SHARED}`);

describe.skipIf(shared.length === 0)('SessionStart(compact) on the compactions in ../shared/data', () => {
  it.each(shared.map((p) => [p.slice(SHARED.length + 1), p]))('%s: the longest tail read after PreCompact gives the synchronous path’s text and turns', async (_name, path) => {
    const lines = readFileSync(path, 'utf8').split('\n').filter((l) => l.trim().length > 0);
    const at = lines.findIndex((l) => l.includes('"subtype":"compact_boundary"'));
    const boundary = JSON.parse(lines[at] as string) as { sessionId: string; cwd?: string };
    const session = boundary.sessionId;
    const cwd = boundary.cwd ?? dir('cairn-crt-cwd-');
    const home = dir('cairn-crt-home-');
    const transcript = join(dir('cairn-crt-claude-'), `${session}.jsonl`);
    writeFileSync(transcript, `${lines.slice(0, at).join('\n')}\n`);
    await withCairn(home, cwd, session, async (c) => {
      await ingestTranscript(c, { transcript_path: transcript }, silentLogger, false);
      await preCompact(c, { session_id: session, transcript_path: transcript, trigger: 'auto' }, DEFAULT_HOOK_SETTINGS);
    });
    // The lines from the boundary on while the tail still reads (what a client writing its compaction before the hook would leave).
    let taken = 0;
    await withCairn(home, cwd, session, async (c) => {
      for (let k = at; k < lines.length; k++) {
        appendFileSync(transcript, `${lines[k]}\n`);
        if (typeof (await compactTail(c, transcript, session)) === 'string') break;
        taken++;
      }
    });
    expect(taken, 'the boundary and summary read').toBeGreaterThanOrEqual(2);
    writeFileSync(transcript, `${lines.slice(0, at + taken).join('\n')}\n`);
    const input = { session_id: session, cwd, transcript_path: transcript, source: 'compact' };
    const { deferred, synchronous, sync } = await bothWays(home, cwd, input);
    expect(deferred.length).toBeGreaterThan(0);
    expect(deferred).toBe(synchronous);
    expect(rows(await turnsOf(home, cwd, session))).toEqual(rows(await turnsOf(sync, cwd, session)));
    expect(await storedRest(home, cwd, session)).toEqual(await storedRest(sync, cwd, session));
  }, 120_000);
});
