import { appendFileSync, chmodSync, cpSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultTranscriptRoots, readTranscript } from '../../src/ingest/index.js';
import type { SqliteSubstrate } from '../../src/store/sqlite/substrate.js';
import type { TurnRecord } from '../../src/types.js';
import { CLAUDE_SESSION, claudeMain, fixtures, ingest, openSubstrate, readAll, tempDir } from './helpers.js';

/** Everything stored, in a form two databases can be compared by. */
async function snapshot(substrate: SqliteSubstrate) {
  const sessions = await substrate.listSessions({ limit: 10_000 });
  const turns: TurnRecord[] = [];
  const compactions = [];
  for (const session of sessions) {
    turns.push(...(await substrate.getTurns(session.id)));
    compactions.push(...(await substrate.getCompactions(session.id)));
  }
  const corrections = await substrate.getCorrections({});
  return {
    sessions: sessions.map((s) => ({ ...s, sourcePath: s.sourcePath.split('/').pop() })).sort((a, b) => a.id.localeCompare(b.id)),
    turns: turns.map((t) => `${t.id}|${t.seq}|${t.role}|${t.flags.join(',')}|${t.isError}|${t.text}`).sort(),
    compactions: compactions.sort((a, b) => a.id.localeCompare(b.id)),
    corrections: corrections.sort((a, b) => a.id.localeCompare(b.id)),
  };
}

describe('ingest runner', () => {
  let dir: string;
  let substrate: SqliteSubstrate;
  let close: () => void;
  beforeEach(() => {
    dir = tempDir();
    ({ substrate, close } = openSubstrate());
  });
  afterEach(() => {
    close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ingests every fixture, then re-ingesting the unchanged set adds nothing', async () => {
    const first = await ingest([fixtures], substrate);
    expect(first).toMatchObject({ files: 11, filesChanged: 11, skipped: 0, badLines: 4, unknownTypes: { 'brand-new-line-type': 1, 'event_msg/shiny_new_event': 1, 'message/mystery': 1, 'role/critic': 1 } });
    expect(first.turns).toBeGreaterThan(60);
    expect(first.badLineSamples.map((b) => `${b.path.split('/').pop()?.slice(0, 12)}:${b.line}`).sort()).toEqual([
      '11111111-222:34',
      '11111111-222:35',
      'agent-log.js:7',
      'rollout-2026:24',
    ]);
    const stats = await substrate.substrateStats();
    expect(stats.turns).toBe(first.turns);

    const second = await ingest([fixtures], substrate);
    expect(second).toMatchObject({ files: 11, filesChanged: 0, turns: 0, sessions: 0, bytes: 0, badLines: 0, corrections: 0 });
    expect(await substrate.substrateStats()).toEqual(stats);
  });

  it('reads an appended file incrementally with the same result as one read, at every line boundary', async () => {
    const whole = readFileSync(claudeMain, 'utf8');
    const reference = openSubstrate();
    const path = join(dir, 'projects/-home-dev-my-app', `${CLAUDE_SESSION}.jsonl`);
    mkdirSync(join(dir, 'projects/-home-dev-my-app'), { recursive: true });
    writeFileSync(path, whole);
    await ingest([path], reference.substrate);
    const expected = await snapshot(reference.substrate);
    reference.close();

    const lines = whole.split('\n');
    for (let k = 1; k < lines.length - 1; k++) {
      const run = openSubstrate();
      writeFileSync(path, `${lines.slice(0, k).join('\n')}\n`);
      await ingest([path], run.substrate);
      appendFileSync(path, `${lines.slice(k).join('\n')}`);
      await ingest([path], run.substrate);
      expect(await snapshot(run.substrate), `split after line ${k}`).toEqual(expected);
      run.close();
    }
  });

  it('leaves a partial last line for the next run', async () => {
    const path = join(dir, 'log.jsonl');
    writeFileSync(path, '{"turn":1,"role":"user","content":"first question"}\n{"turn":1,"role":"assistant","content":"half an ans');
    const first = await ingest([path], substrate);
    expect(first).toMatchObject({ turns: 1, badLines: 0 });
    expect((await substrate.getCursor(path))?.offset).toBe(Buffer.byteLength('{"turn":1,"role":"user","content":"first question"}\n'));
    appendFileSync(path, 'wer"}\n');
    const second = await ingest([path], substrate);
    expect(second).toMatchObject({ turns: 1, badLines: 0 });
    expect((await substrate.getTurns('log')).map((t) => t.text)).toEqual(['first question', 'half an answer']);
  });

  it('reads a rewritten or truncated file again from the start, keeping what it already stored', async () => {
    const path = join(dir, 'log.jsonl');
    writeFileSync(path, '{"turn":1,"role":"user","content":"original question about caching"}\n');
    await ingest([path], substrate);
    // Replaced by another file at the same path (different head): read from byte 0.
    writeFileSync(path, '{"turn":1,"role":"user","content":"a different log, longer than the first one was"}\n{"turn":1,"role":"assistant","content":"ok"}\n');
    const rewritten = await ingest([path], substrate);
    expect(rewritten.turns).toBe(1); // line 1 has a new text but the same id: kept; line 2 is new
    expect((await substrate.getTurns('log')).map((t) => t.text)).toEqual(['a different log, longer than the first one was', 'ok']);
    // Truncated below the cursor's offset: read from byte 0 again, nothing lost.
    writeFileSync(path, '{"turn":1,"role":"user","content":"a"}\n');
    expect((await ingest([path], substrate)).filesChanged).toBe(1);
    expect(await substrate.getTurns('log')).toHaveLength(2);
  });

  it('reads a file again from its start when its saved cursor state cannot be continued from', async () => {
    const path = join(dir, 'log.jsonl');
    writeFileSync(path, '{"turn":1,"role":"user","content":"first"}\n');
    await ingest([path], substrate);
    const saved = await substrate.getCursor(path);
    await substrate.writeSubstrate({
      sessions: [],
      turns: [],
      compactions: [],
      corrections: [],
      cursor: { ...saved!, state: { format: 'generic', line: 1, builder: { sessions: { log: 5 }, lastAgent: {} } } },
    });
    appendFileSync(path, '{"turn":1,"role":"assistant","content":"second"}\n');
    const summary = await ingest([path], substrate);
    expect(summary).toMatchObject({ filesChanged: 1, skipped: 0, turns: 1 });
    expect((await substrate.getTurns('log')).map((t) => t.text)).toEqual(['first', 'second']);
  });

  it('keeps the history of a transcript deleted from disk', async () => {
    const copy = join(dir, 'copy');
    cpSync(join(fixtures, 'codex'), copy, { recursive: true });
    await ingest([copy], substrate);
    const before = await substrate.substrateStats();
    rmSync(copy, { recursive: true });
    const after = await ingest([copy], substrate);
    expect(after).toMatchObject({ files: 0, skipped: 1 });
    expect(after.skippedSamples[0]?.reason).toMatch(/ENOENT/);
    expect(await substrate.substrateStats()).toEqual(before);
    expect(await substrate.searchTurns('REDIS_URL', { limit: 5 })).not.toHaveLength(0);
  });

  it('counts bad lines with file and line number — truncated, binary junk, a 50 MB line — and keeps the good ones', async () => {
    const path = join(dir, 'bad.jsonl');
    const junk = Buffer.alloc(50 * 1024 * 1024, 0x41);
    writeFileSync(path, '{"turn":1,"role":"user","content":"keep me"}\n');
    appendFileSync(path, '{"turn":2,"role":"assistant","content":"trunc\n');
    appendFileSync(path, Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x0a]));
    appendFileSync(path, junk);
    appendFileSync(path, '\n{"turn":3,"role":"assistant","content":"kept too"}\n\n   \n');
    const summary = await ingest([path], substrate);
    expect(summary.badLines).toBe(3);
    expect(summary.badLineSamples.map((b) => [b.line, b.reason])).toEqual([
      [2, 'invalid or truncated JSON'],
      [3, 'not JSON'],
      [4, 'not JSON'],
    ]);
    expect((await substrate.getTurns('bad')).map((t) => t.text)).toEqual(['keep me', 'kept too']);
    // A line beyond the reader's line limit is passed over without being held in memory.
    const small = await ingest([path], openSubstrate().substrate, { read: { maxLineBytes: 1024 * 1024 } });
    expect(small.badLineSamples.find((b) => b.line === 4)?.reason).toMatch(/exceeds the 1048576 byte limit/);
  });

  it('keeps a 50 MB valid line, bounding the tool output it holds', async () => {
    const path = join(dir, 'big.jsonl');
    const huge = 'x'.repeat(50 * 1024 * 1024);
    writeFileSync(path, `${JSON.stringify({ turn: 1, role: 'tool_result', tool: 'cat', content: `head ${huge} tail` })}\n`);
    const summary = await ingest([path], substrate);
    expect(summary).toMatchObject({ turns: 1, badLines: 0 });
    const [turn] = await substrate.getTurns('big');
    expect(turn?.text.length).toBeLessThan(2_100);
    expect(turn?.text).toMatch(/^head\n…\[\d+ chars omitted\]…\ntail$/);
  });

  it('passes over unreadable paths with a reason and goes on', async () => {
    const good = join(dir, 'good.jsonl');
    writeFileSync(good, '{"turn":1,"role":"user","content":"fine"}\n');
    mkdirSync(join(dir, 'a-folder.jsonl'));
    symlinkSync(join(dir, 'missing-target.jsonl'), join(dir, 'dangling.jsonl'));
    const locked = join(dir, 'locked.jsonl');
    writeFileSync(locked, '{"turn":1,"role":"user","content":"secret"}\n');
    chmodSync(locked, 0o000);
    const root = process.getuid?.() === 0; // root reads it anyway
    const summary = await ingest([dir, join(dir, 'nope.jsonl')], substrate);
    chmodSync(locked, 0o600);
    const reasons = summary.skippedSamples.map((s) => [s.path.split('/').pop(), s.reason.split(':')[0]]);
    expect(reasons).toContainEqual(['dangling.jsonl', 'cannot stat']);
    expect(reasons).toContainEqual(['nope.jsonl', 'cannot stat']);
    if (!root) expect(reasons).toContainEqual(['locked.jsonl', 'cannot open']);
    expect(await substrate.getTurns('good')).toHaveLength(1);
  });

  it('takes in a file that grows while it is being read', async () => {
    const path = join(dir, 'grow.jsonl');
    const line = (n: number) => `${JSON.stringify({ turn: n, role: n % 2 ? 'user' : 'assistant', content: `message number ${n} `.repeat(20) })}\n`;
    writeFileSync(path, Array.from({ length: 50 }, (_, i) => line(i + 1)).join(''));
    let calls = 0;
    // The clock is asked once per reader pass: append between passes, mid-line once.
    const clock = {
      now() {
        calls++;
        if (calls === 3) appendFileSync(path, line(51) + line(52).slice(0, 30));
        if (calls === 5) appendFileSync(path, line(52).slice(30));
        return 0;
      },
    };
    await ingest([path], substrate, { clock, read: { maxBytes: 2_000 } });
    await ingest([path], substrate);
    const turns = await substrate.getTurns('grow');
    expect(turns).toHaveLength(52);
    expect(turns.map((t) => t.seq)).toEqual(turns.map((_, i) => i));
  });

  it('handles thousands of tiny files, and re-checks them by their stat alone', async () => {
    const many = join(dir, 'many');
    mkdirSync(many);
    for (let i = 0; i < 2_000; i++) writeFileSync(join(many, `s${i}.jsonl`), `{"turn":1,"role":"user","content":"tiny ${i}"}\n`);
    const first = await ingest([many], substrate);
    expect(first).toMatchObject({ files: 2_000, filesChanged: 2_000, sessions: 2_000, turns: 2_000 });
    const progress: number[] = [];
    const second = await ingest([many], substrate, { onProgress: (p) => progress.push(p.filesDone) });
    expect(second).toMatchObject({ files: 2_000, filesChanged: 0, turns: 0 });
    expect(progress).toEqual([]);
    console.info(`re-ingest of 2,000 unchanged files: ${(second.seconds * 1000).toFixed(1)} ms`);
  });

  it('reports progress and resolves projects from working directories', async () => {
    const progress: Array<[number, number]> = [];
    const summary = await ingest([join(fixtures, 'codex'), join(fixtures, 'generic')], substrate, {
      onProgress: (p) => progress.push([p.filesDone, p.filesTotal]),
      resolveProject: (cwd) => `project:${cwd}`,
    });
    expect(progress).toEqual([
      [1, 2],
      [2, 2],
    ]);
    expect(summary.bytes).toBeGreaterThan(0);
    expect((await substrate.getSession('deploy-42'))?.project).toBe('project:/home/dev/ops');
    expect((await substrate.listSessions({ project: 'project:/home/dev/svc' })).map((s) => s.agent)).toEqual(['codex']);
  });

  it('reads several files at once through an asynchronous reader (a worker pool), with the same result', async () => {
    let inFlight = 0;
    let most = 0;
    const reader = async (path: string, cursor: Parameters<typeof readTranscript>[1], options: Parameters<typeof readTranscript>[2]) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((r) => setTimeout(r, 2));
      inFlight--;
      return readTranscript(path, cursor, options);
    };
    const parallel = await ingest([fixtures], substrate, { reader, concurrency: 4, read: { maxBytes: 1_500 } });
    expect(most).toBe(4);
    const run = openSubstrate();
    const sequential = await ingest([fixtures], run.substrate);
    expect(await snapshot(substrate)).toEqual(await snapshot(run.substrate));
    expect({ ...parallel, seconds: 0, mbPerSecond: 0, badLineSamples: [] }).toEqual({ ...sequential, seconds: 0, mbPerSecond: 0, badLineSamples: [] });
    run.close();
  });

  it('gives the same result when a file is read in many small passes', async () => {
    const reference = readAll(claudeMain);
    const pieces = readAll(claudeMain, { maxBytes: 700 });
    expect(pieces.batches.length).toBeGreaterThan(10);
    expect(pieces.cursor?.offset).toBe(reference.cursor?.offset);
    const small = await ingest([claudeMain], substrate, { read: { maxBytes: 700 } });
    const run = openSubstrate();
    const whole = await ingest([claudeMain], run.substrate);
    expect(await snapshot(substrate)).toEqual(await snapshot(run.substrate));
    expect(small.turns).toBe(whole.turns);
    run.close();
  });

  it('redacts before storing: no secret reaches the database file', async () => {
    await ingest([claudeMain], substrate);
    const db = readFileSync(join((substrate as unknown as { db: { name: string } }).db.name));
    expect(db.includes('sk-proj-4f8Kq2mX9vL3nR7tY1wZ6bC5dH0jP8sA')).toBe(false);
    expect(db.includes('hunter2')).toBe(false);
  });
});

describe('defaultTranscriptRoots', () => {
  it('lists the standard folders that exist, honouring CLAUDE_CONFIG_DIR and CODEX_HOME', () => {
    const home = tempDir();
    mkdirSync(join(home, '.claude/projects'), { recursive: true });
    mkdirSync(join(home, '.gemini/tmp'), { recursive: true });
    expect(defaultTranscriptRoots({}, home)).toEqual([join(home, '.claude/projects'), join(home, '.gemini/tmp')]);
    mkdirSync(join(home, 'cfg/projects'), { recursive: true });
    mkdirSync(join(home, 'cx/sessions'), { recursive: true });
    expect(defaultTranscriptRoots({ CLAUDE_CONFIG_DIR: join(home, 'cfg'), CODEX_HOME: join(home, 'cx') }, home)).toEqual([
      join(home, 'cfg/projects'),
      join(home, 'cx/sessions'),
      join(home, '.gemini/tmp'),
    ]);
    rmSync(home, { recursive: true, force: true });
  });
});

describe('readTranscript', () => {
  it('never throws for a path that is missing or a folder', () => {
    expect(readTranscript('/definitely/not/here.jsonl', null).skipped).toMatch(/cannot open: ENOENT/);
    expect(readTranscript(fixtures, null).skipped).toMatch(/not a regular file|cannot read/);
  });
});
