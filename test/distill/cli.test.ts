import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DistillSummary } from '../../src/distill/types.js';
import type { MaintainReport } from '../../src/distill/maintain.js';
import type { ReviewEntry } from '../../src/distill/review.js';
import { runCli, tempDirs } from '../helpers/cli.js';
import { TranscriptWriter } from '../hooks/transcript.js';

/** Every directory made here is removed after this file's tests. */
const dir = tempDirs();

function repo(): string {
  const r = dir('cairn-distill-repo-');
  mkdirSync(join(r, '.git'));
  writeFileSync(join(r, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  return r;
}

describe('cairn ingest / distill / maintain / review', () => {
  it('ingest distils what it added; distill and ingest again add nothing; status shows the queue', async () => {
    const home = dir('cairn-distill-home-');
    const cwd = repo();
    const transcripts = dir('cairn-distill-claude-');
    const t = new TranscriptWriter('sess-a', cwd)
      .user('Make the sync tests pass.')
      .tool('Bash', { command: 'npm test 2>&1 | tail -5' }, 'Tests: 2 failed, 10 passed', true)
      .tool('Edit', { file_path: join(cwd, 'src/sync.ts'), old_string: 'retries = 1', new_string: 'retries = 3' }, 'ok')
      .tool('Bash', { command: 'npm test' }, 'Tests: 12 passed')
      .assistant('I will mock the HTTP client in sync.test.ts.')
      .user("no, don't mock the HTTP client — use the fake server in test/fake-server.ts")
      .user("let's use SQLite for the outbox");
    writeFileSync(join(transcripts, 'sess-a.jsonl'), t.text());

    const ingest = await runCli(['ingest', transcripts, '--json'], { home, cwd });
    expect(ingest.code).toBe(0);
    const distilled = ingest.json<{ distilled: DistillSummary }>().distilled;
    expect(distilled).toMatchObject({ sessions: 1, continuations: 1, errors: [] });
    expect(distilled.byKind).toMatchObject({ correction: 1, procedure: 2, decision: 1 });

    const recall = await runCli(['recall', 'mock the HTTP client', '--json'], { home, cwd });
    expect(recall.stdout).toContain("don't mock the HTTP client");

    const again = await runCli(['distill', '--json'], { home, cwd });
    expect(again.json<DistillSummary>()).toMatchObject({ sessions: 0, added: 0 });
    const text = await runCli(['distill', '--full'], { home, cwd });
    expect(text.stdout).toMatch(/distilled 1 sessions .*0 added · 0 merged/);

    t.user("let's go with Postgres for the outbox");
    writeFileSync(join(transcripts, 'sess-a.jsonl'), t.text());
    const second = await runCli(['ingest', transcripts, '--json'], { home, cwd });
    expect(second.json<{ distilled: DistillSummary }>().distilled).toMatchObject({ queued: 1 });
    const status = await runCli(['status'], { home, cwd });
    expect(status.stdout).toMatch(/review\s+1 open \(cairn review\)/);
    const statusJson = await runCli(['status', '--json'], { home, cwd });
    expect(statusJson.json<{ distill: { reviewOpen: number } }>().distill.reviewOpen).toBe(1);

    const review = await runCli(['review', '--json'], { home, cwd });
    const [entry] = review.json<ReviewEntry[]>();
    expect(entry?.item.kind).toBe('contradiction');
    const listed = await runCli(['review'], { home, cwd });
    expect(listed.stdout).toContain(entry!.item.id);
    expect(listed.stdout).toContain('SQLite');

    const bad = await runCli(['review', 'resolve', entry!.item.id], { home, cwd });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/exactly one of --keep/);
    const keep = entry!.memories[1]!.id;
    const resolved = await runCli(['review', 'resolve', entry!.item.id, '--keep', keep], { home, cwd });
    expect(resolved.code).toBe(0);
    expect(resolved.stdout).toMatch(/resolved: kept:/);
    expect((await runCli(['review', '--json'], { home, cwd })).json<unknown[]>()).toEqual([]);
    const undo = await runCli(['review', 'undo', entry!.item.id], { home, cwd });
    expect(undo.stdout).toMatch(/undone · restored/);
    expect((await runCli(['review', 'nope'], { home, cwd })).code).toBe(1);
  });

  it('maintain --dry-run changes nothing and maintain does the work, both with --json', async () => {
    const home = dir('cairn-maintain-home-');
    const cwd = repo();
    await runCli(['remember', 'Tests run with `npm test` from the app folder (passed).', '--kind', 'procedure'], { home, cwd });
    await runCli(['remember', 'Tests run with `npm test` from the app folder (they passed).', '--kind', 'procedure'], { home, cwd });
    const dry = await runCli(['maintain', '--dry-run', '--json'], { home, cwd });
    expect(dry.json<MaintainReport>()).toMatchObject({ dryRun: true, scanned: 2, vacuum: null, review: { queued: { 'near-duplicate': 1 } } });
    expect((await runCli(['review', '--json'], { home, cwd })).json<unknown[]>()).toEqual([]);
    const human = await runCli(['maintain', '--dry-run'], { home, cwd });
    expect(human.stdout).toMatch(/dry run: nothing changed/);
    const real = await runCli(['maintain'], { home, cwd });
    expect(real.stdout).toMatch(/queued 1 near-duplicates/);
    expect(real.stdout).toMatch(/vacuum:/);
    expect((await runCli(['review', '--json'], { home, cwd })).json<unknown[]>()).toHaveLength(1);
    expect((await runCli(['maintain', '--floor', '2'], { home, cwd })).code).toBe(1);
  });
});
