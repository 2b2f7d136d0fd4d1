import { describe, expect, it } from 'vitest';
import { createHashEmbedder } from '../../src/embed/hash.js';
import type { Memory } from '../../src/types.js';
import { DAY, T0, Turns, sessionRecord, testCairn } from './helpers.js';

const active = async (t: Awaited<ReturnType<typeof testCairn>>): Promise<Memory[]> => t.cairn.list({ allProjects: true, limit: 1000, order: 'created-asc' });

function buildSession(id: string, at = T0): Turns {
  return new Turns(sessionRecord(id), at)
    .user('Fix the flaky watcher tests.')
    .tool('Bash', { command: 'npm test' }, 'Tests: 12 passed')
    .assistant('The race is in src/ws/resolver.ts:214 where the watcher reads metadata before the lock is taken.')
    .assistant('I will mock the database in the watcher tests.')
    .user("no, don't mock the database in the watcher tests, use the sqlite fixture from test/fixtures.ts");
}

describe('distillation write path', () => {
  it('stores scoped memories with provenance, and re-running adds nothing', async () => {
    const t = await testCairn();
    const s = buildSession('s1');
    await t.write(s);
    const first = await t.cairn.distill();
    expect(first).toMatchObject({ sessions: 1, added: 3, continuations: 1, merged: 0, errors: [] });
    const memories = await active(t);
    expect(memories.map((m) => [m.kind, m.scope])).toEqual([
      ['procedure', 'project'],
      ['fact', 'project'],
      ['correction', 'project'],
      ['continuation', 'session'],
    ]);
    for (const m of memories) {
      expect(m).toMatchObject({ source: 'distill', session: 's1', project: 'github.com/acme/app' });
      expect(m.provenance).toMatchObject({ transcript: s.session.sourcePath, sessionId: 's1' });
      expect(typeof m.provenance?.line).toBe('number');
      expect(m.provenance?.turnId).toMatch(/^s1:u\d+$/);
    }
    expect(memories[1]?.files).toEqual([{ path: 'src/ws/resolver.ts', line: 214 }]);
    // The creation time is the turn's, not the run's.
    expect(memories[0]?.createdAt).toBe(T0 + 2 * 60_000);

    expect(await t.cairn.distill()).toMatchObject({ sessions: 0, added: 0, merged: 0 });
    const full = await t.cairn.distill({ full: true });
    expect(full).toMatchObject({ added: 0, merged: 0, superseded: 0, continuations: 0 });
    expect((await active(t)).map((m) => m.id)).toEqual(memories.map((m) => m.id));
    expect((await active(t)).map((m) => m.importance)).toEqual(memories.map((m) => m.importance));
  });

  it('distils only new turns, and replaces the continuation instead of piling it up', async () => {
    const t = await testCairn();
    const s = buildSession('s1');
    await t.write(s);
    await t.cairn.distill();
    const before = (await active(t)).find((m) => m.kind === 'continuation') as Memory;
    s.user('Now add retries to src/http.ts.').tool('Edit', { file_path: '/home/dev/app/src/http.ts', old_string: 'a', new_string: 'b' }, 'ok');
    await t.write(s);
    const second = await t.cairn.distill();
    expect(second).toMatchObject({ sessions: 1, turns: 3, continuations: 1, added: 0 });
    const continuations = (await active(t)).filter((m) => m.kind === 'continuation');
    expect(continuations).toHaveLength(1);
    expect(continuations[0]?.text).toMatch(/^Task: Now add retries to src\/http\.ts\.\nFiles being edited: src\/http\.ts/);
    expect(continuations[0]?.supersedes).toBe(before.id);
    const versions = await t.cairn.deps.store.versions(continuations[0]!.id);
    expect(versions.map((v) => v.id)).toEqual([before.id, continuations[0]!.id]);
  });

  it('merges the same finding from another session: importance, usage and provenance go up', async () => {
    const t = await testCairn();
    await t.write(buildSession('s1'));
    await t.cairn.distill();
    const [command] = await active(t);
    await t.write(buildSession('s2', T0 + DAY));
    const second = await t.cairn.distill();
    expect(second).toMatchObject({ added: 0, merged: 3 });
    const merged = (await t.cairn.deps.store.getMemory(command!.id)) as Memory;
    expect(merged.importance).toBeGreaterThan(command!.importance);
    expect(merged.accessCount).toBe(1);
    expect(merged.provenance?.sessionId).toBe('s1');
    expect(merged.provenance?.also?.map((p) => p.sessionId)).toEqual(['s2']);
    expect(merged.meta.seen).toBe(2);
    // The correction seen twice has become a standing rule.
    const rules = (await active(t)).filter((m) => m.text.toLowerCase().startsWith("don't mock the database"));
    expect(rules.map((m) => m.kind)).toEqual(['procedure']);
    expect(rules[0]?.tags).toContain('repeated-correction');
    const events = await t.cairn.deps.store.listEvents({ memoryId: rules[0]!.id, types: ['merge'] });
    expect(events[0]?.data).toMatchObject({ kind: { from: 'correction', to: 'procedure' } });
    expect((await active(t)).filter((m) => m.kind === 'continuation')).toHaveLength(2);
  });

  it('merges near-duplicates (shingles, or cosine with an embedder)', async () => {
    for (const embedder of [undefined, createHashEmbedder({ dimension: 64 })]) {
      const t = await testCairn(embedder ? { embedder } : {});
      await t.write(new Turns(sessionRecord('s1')).assistant('The race is in src/ws/resolver.ts:214 where the watcher reads metadata before the lock is taken.'));
      await t.write(new Turns(sessionRecord('s2'), T0 + DAY).assistant('The race is in src/ws/resolver.ts:214, where the watcher reads the metadata before the lock is taken.'));
      const summary = await t.cairn.distill();
      expect(summary).toMatchObject({ added: 1, merged: 1 });
      expect(await active(t)).toHaveLength(1);
    }
  });

  it('supersedes an older value of the same setting (strong evidence), keeps history, and can undo it', async () => {
    const t = await testCairn();
    const edit = (id: string, at: number, from: string, to: string): Turns =>
      new Turns(sessionRecord(id), at).tool('Edit', { file_path: '/home/dev/app/config/dev.yaml', old_string: `port: ${from}`, new_string: `port: ${to}` }, 'ok');
    await t.write(edit('s1', T0, '3000', '4000'));
    await t.cairn.distill();
    await t.write(edit('s2', T0 + DAY, '4000', '5000'));
    expect(await t.cairn.distill()).toMatchObject({ superseded: 1, added: 0, queued: 0 });
    const now = await active(t);
    expect(now.map((m) => m.text)).toEqual(['Setting `port` = `5000` in config/dev.yaml.']);
    const versions = await t.cairn.deps.store.versions(now[0]!.id);
    expect(versions.map((v) => v.text)).toEqual(['Setting `port` = `4000` in config/dev.yaml.', 'Setting `port` = `5000` in config/dev.yaml.']);
    // The automatic supersede is on record, resolved, and undoable.
    const [item] = await t.cairn.review({ all: true });
    expect(item?.item).toMatchObject({ kind: 'contradiction', resolution: 'auto-superseded', memoryIds: [versions[0]!.id, versions[1]!.id] });
    expect(await t.cairn.review()).toEqual([]);
    const undone = await t.cairn.undoReview(item!.item.id);
    expect(undone).toMatchObject({ restored: [versions[0]!.id], forgotten: [versions[1]!.id] });
    expect((await active(t)).map((m) => m.text)).toEqual(['Setting `port` = `4000` in config/dev.yaml.']);
    // An older session read later does not override a newer claim.
    await t.write(edit('s0', T0 - DAY, '2000', '3000'));
    const late = await t.cairn.distill();
    expect(late).toMatchObject({ added: 0, superseded: 0 });
  });

  it('queues weak contradictions for review and shows the count', async () => {
    const t = await testCairn();
    await t.write(new Turns(sessionRecord('s1')).user("let's use SQLite for the job queue storage"));
    await t.write(new Turns(sessionRecord('s2'), T0 + DAY).user("let's go with Postgres for the job queue storage"));
    await t.write(new Turns(sessionRecord('s3'), T0 + 2 * DAY).user('Always mock the HTTP client in unit tests of `sync()`.'));
    await t.write(new Turns(sessionRecord('s4'), T0 + 3 * DAY).user('Never mock the HTTP client in unit tests of `sync()`.'));
    const summary = await t.cairn.distill({ sessionIds: ['s1', 's2', 's3', 's4'] });
    expect(summary).toMatchObject({ added: 2, queued: 2, superseded: 0 });
    const open = await t.cairn.review();
    expect(open.map((e) => [e.item.kind, e.memories.length])).toEqual([
      ['contradiction', 2],
      ['contradiction', 2],
    ]);
    expect(open[0]?.item.reason).toMatch(/pref:database/);
    const facts = async (): Promise<Memory[]> => (await active(t)).filter((m) => m.kind !== 'continuation');
    expect(await facts()).toHaveLength(4);
    // Keep one: the other is forgotten (restorable) and the item resolved; undo brings it back.
    const keep = open[0]!.memories[1]!.id;
    const resolved = await t.cairn.resolveReview(open[0]!.item.id, { keep });
    expect(resolved.forgotten).toEqual([open[0]!.memories[0]!.id]);
    expect(await t.cairn.review()).toHaveLength(1);
    await expect(t.cairn.resolveReview(open[0]!.item.id, { dismiss: true })).rejects.toMatchObject({ code: 'CONFLICT' });
    await t.cairn.undoReview(open[0]!.item.id);
    expect(await facts()).toHaveLength(4);
  });

  it('leaves forgotten claims forgotten, and explicit remember only reports similar memories', async () => {
    const t = await testCairn();
    const edit = (id: string, at: number): Turns =>
      new Turns(sessionRecord(id), at).tool('Edit', { file_path: '/home/dev/app/config/dev.yaml', old_string: 'port: 3000', new_string: 'port: 4000' }, 'ok');
    await t.write(edit('s1', T0));
    await t.cairn.distill();
    const [setting] = await active(t);
    await t.cairn.forget([setting!.id]);
    await t.write(edit('s2', T0 + DAY));
    expect(await t.cairn.distill()).toMatchObject({ added: 0, merged: 0 });
    expect(await active(t)).toEqual([]);

    const remembered = await t.cairn.remember({ text: 'Tests run with `npm test` in the app folder (passed).', kind: 'procedure' });
    const again = await t.cairn.remember({ text: 'Tests run with `npm test` in the app folder (they passed).', kind: 'procedure' });
    expect(again.created).toBe(true);
    expect(again.similar.map((s) => s.id)).toEqual([remembered.memory.id]);
  });

  it('changes nothing on a dry run', async () => {
    const t = await testCairn();
    await t.write(buildSession('s1'));
    const dry = await t.cairn.distill({ dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, added: 3, continuations: 1 });
    expect(await active(t)).toEqual([]);
    expect(await t.cairn.distill()).toMatchObject({ added: 3 });
  });

  it('drops project facts of a session outside any project but keeps the user’s rules', async () => {
    const t = await testCairn({ project: null });
    await t.write(
      new Turns(sessionRecord('s1', { project: null, cwd: null }))
        .assistant('The race is in src/ws/resolver.ts:214 where the watcher reads metadata before the lock is taken.')
        .assistant('Done with that.')
        .user('never use emoji in commit messages'),
    );
    const summary = await t.cairn.distill();
    expect(summary.rejected).toEqual({ 'no-scope': 1 });
    expect((await active(t)).map((m) => [m.kind, m.scope, m.project])).toEqual([
      ['correction', 'user', null],
      ['continuation', 'session', null],
    ]);
  });
});

describe('two processes distilling one session', () => {
  it('replaces the continuation once when another process superseded it in between', async () => {
    const t = await testCairn();
    const s = new Turns(sessionRecord('s1')).user('Ship the release notes for v2.');
    await t.write(s);
    await t.cairn.distill();
    s.user('Now tag the release as v2.0.1 in git.');
    await t.write(s);
    // Two runs at once (interleaved at every await): both see the old continuation.
    const [a, b] = await Promise.all([t.cairn.distill({ sessionIds: ['s1'] }), t.cairn.distill({ sessionIds: ['s1'] })]);
    expect([...a.errors, ...b.errors]).toEqual([]);
    const continuations = (await t.cairn.list({ allProjects: true, limit: 100 })).filter((m) => m.kind === 'continuation');
    expect(continuations).toHaveLength(1);
    expect(continuations[0]?.text).toMatch(/^Task: Now tag the release as v2\.0\.1 in git\./);
  });
});
