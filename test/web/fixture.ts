/**
 * A small, realistic cairn for the browser's tests: a workspace with files (one edited after it
 * was remembered, so a memory is stale), memories of every kind across two projects, a revision,
 * a forgotten memory, a memory whose text is a script tag, a Claude Code session with a
 * correction and a compaction that two memories were distilled from, and two snapshots.
 */
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCairn, type Cairn } from '../../src/cairn.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Clock, SessionRecord, TurnRecord } from '../../src/types.js';

export const PROJECT = 'github.com/acme/app';
export const OTHER_PROJECT = 'github.com/acme/infra';
export const SESSION_ID = 'sess-7f3a';
export const XSS = '<script>alert(1)</script> never render memory text as HTML';
const DAY = 86_400_000;

export class FakeClock implements Clock {
  constructor(public t = Date.UTC(2026, 2, 2, 9)) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

export interface Fixture {
  cairn: Cairn;
  clock: FakeClock;
  root: string;
  ids: Record<'parseConfig' | 'lock' | 'pnpm' | 'xss' | 'retry' | 'forgotten' | 'revised' | 'corrected' | 'infra' | 'stale', string>;
  correctionTurnId: string;
  close(): Promise<void>;
}

function turn(seq: number, role: TurnRecord['role'], text: string, extra: Partial<TurnRecord> = {}): TurnRecord {
  const uuid = `u${String(seq).padStart(3, '0')}`;
  return {
    id: `${SESSION_ID}:${uuid}`,
    sessionId: SESSION_ID,
    seq,
    role,
    text,
    toolName: null,
    toolInput: null,
    toolUseId: null,
    isError: false,
    flags: [],
    at: Date.UTC(2026, 2, 1, 14, 0, seq * 20),
    sourceUuid: uuid,
    sourceLine: seq + 1,
    ...extra,
  };
}

export async function createFixture(options: { extraMemories?: number } = {}): Promise<Fixture> {
  const root = mkdtempSync(join(tmpdir(), 'cairn-web-'));
  mkdirSync(join(root, 'src'), { recursive: true });
  writeFileSync(join(root, 'src/config.py'), Array.from({ length: 60 }, (_, i) => (i === 41 ? 'def parse_config(path: Path, *, strict: bool = False) -> Config:' : `# line ${i + 1}`)).join('\n'));
  writeFileSync(join(root, 'src/ws.rs'), Array.from({ length: 300 }, (_, i) => (i === 213 ? 'fn acquire_lock(&self) -> Guard {' : `// ${i + 1}`)).join('\n'));
  writeFileSync(join(root, 'src/sync.rs'), 'pub fn sync() {}\n');
  const clock = new FakeClock(Date.UTC(2026, 1, 20, 9));
  const store = await openSqliteStore(join(root, 'cairn.db'));
  const cairn = createCairn({ store, clock, project: PROJECT, workspaceRoot: root, actor: 'test' });
  const add = async (text: string, extra: Parameters<Cairn['remember']>[0] extends infer I ? Partial<I> : never = {}) => {
    clock.advance(DAY / 3);
    return (await cairn.remember({ text, ...extra })).memory.id;
  };

  // The session the distilled memories come from.
  const session: SessionRecord = {
    id: SESSION_ID,
    agent: 'claude-code',
    project: PROJECT,
    cwd: root,
    branch: 'main',
    parentId: null,
    startedAt: Date.UTC(2026, 2, 1, 14),
    endedAt: Date.UTC(2026, 2, 1, 15),
    inputTokens: 12000,
    outputTokens: 3400,
    cacheReadTokens: 80000,
    cacheCreationTokens: 5000,
    compactions: 1,
    sourcePath: '/home/dev/.claude/projects/-work-app/sess-7f3a.jsonl',
    title: 'Fix the flaky workspace lock test',
  };
  const turns: TurnRecord[] = [
    turn(0, 'user', 'The workspace test is flaky again, can you look at src/ws.rs?'),
    turn(1, 'assistant', 'I will add a retry with a sleep around the lock acquisition in the test.'),
    turn(2, 'user', "No, don't add retries — the race is in acquire_lock(), fix it there.", { flags: [] }),
    turn(3, 'assistant', 'Understood. acquire_lock() must run before touching workspace metadata; moving the call up.'),
    turn(4, 'tool_call', '', { toolName: 'Edit', toolInput: '{"file_path":"src/ws.rs","old_string":"…"}', toolUseId: 't1' }),
    turn(5, 'tool_result', 'The file src/ws.rs has been updated.', { toolUseId: 't1' }),
    turn(6, 'summary', 'Summary: fixed the lock ordering in src/ws.rs:214; tests pass.', { flags: ['compact-summary'] }),
    turn(7, 'user', 'Great. Also run cargo test -p ws to be sure.'),
    turn(8, 'assistant', 'cargo test -p ws: 48 passed, 0 failed.'),
  ];
  const substrate = store.substrate;
  await substrate.writeSubstrate({
    sessions: [session],
    turns,
    compactions: [{ id: `${SESSION_ID}:c1`, sessionId: SESSION_ID, trigger: 'manual', preTokens: 91000, summary: 'Summary: fixed the lock ordering in src/ws.rs:214; tests pass.', at: turns[6]?.at ?? null, seq: 6, sourceLine: 7 }],
    corrections: [
      { id: `${SESSION_ID}:k1`, sessionId: SESSION_ID, premiseTurnId: `${SESSION_ID}:u001`, correctionTurnId: `${SESSION_ID}:u002`, kind: 'pushback', lang: 'en', text: "No, don't add retries — the race is in acquire_lock(), fix it there.", at: turns[2]?.at ?? null },
    ],
    cursor: null,
  });
  await substrate.writeSubstrate({
    sessions: [{ ...session, id: 'sess-infra-1', project: OTHER_PROJECT, agent: 'codex', title: 'Terraform state bucket', sourcePath: '/home/dev/.codex/sessions/rollout-1.jsonl', compactions: 0 }],
    turns: [],
    compactions: [],
    corrections: [],
    cursor: null,
  });

  const ids = {} as Fixture['ids'];
  ids.parseConfig = await add('parse_config(path: Path, *, strict: bool = False) -> Config lives in src/config.py:42', { kind: 'fact', tags: ['config', 'python'], priority: 'high' });
  ids.lock = await add('acquire_lock() must run before touching workspace metadata (watcher race) — src/ws.rs:214', {
    kind: 'fact',
    tags: ['workspace', 'concurrency'],
    source: 'distill',
    provenance: { transcript: session.sourcePath, line: 4, sessionId: SESSION_ID, turnId: `${SESSION_ID}:u003` },
  });
  ids.corrected = await add("Don't paper over the workspace race with retries in tests; fix acquire_lock() ordering instead", {
    kind: 'correction',
    tags: ['workspace', 'testing'],
    source: 'distill',
    provenance: { transcript: session.sourcePath, line: 3, sessionId: SESSION_ID, turnId: `${SESSION_ID}:u002` },
  });
  ids.pnpm = await add('Use pnpm, never npm, in this repository', { kind: 'preference', scope: 'user', tags: ['tooling'] });
  ids.retry = await add('cargo test -p ws runs the workspace tests (48 tests, ~3 s)', { kind: 'procedure', tags: ['testing'] });
  ids.xss = await add(XSS, { kind: 'note', tags: ['security'] });
  ids.forgotten = await add('The staging database is on port 5433', { kind: 'fact', tags: ['db'] });
  ids.stale = await add('Config defaults are set in src/config.py:42 (parse_config)', { kind: 'fact', tags: ['config'] });
  const first = await add('Deploys go through the release branch, never main', { kind: 'decision', tags: ['deploy'] });
  ids.infra = await add('Terraform state lives in the acme-tf-state bucket (eu-west-1)', { kind: 'fact', project: OTHER_PROJECT, tags: ['terraform'] });

  await cairn.snapshot('before-cleanup');
  clock.advance(DAY);
  await cairn.forget([ids.forgotten], 'moved to 5434');
  ids.revised = (await cairn.revise(first, 'Deploys go through release/* branches, tagged vX.Y.Z; never from main')).memory.id;
  await add('Continue: port the lock fix to the sync worker (next: src/sync.rs)', { kind: 'continuation', tags: ['workspace'] });
  for (let i = 0; i < (options.extraMemories ?? 0); i++) {
    clock.advance(60_000);
    await cairn.remember({ text: `filler memory number ${i} about module m${i % 17} and helper h${i}`, kind: i % 3 === 0 ? 'fact' : 'note', tags: [`t${i % 5}`] });
  }
  clock.advance(DAY);
  await cairn.snapshot('after-cleanup');
  // The file changed after the memories about it were written: they are now stale.
  writeFileSync(join(root, 'src/config.py'), ['# rewritten', 'def load(path):', '    return {}'].join('\n'));
  clock.advance(DAY);

  return {
    cairn,
    clock,
    root,
    ids,
    correctionTurnId: `${SESSION_ID}:u002`,
    async close() {
      await cairn.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
