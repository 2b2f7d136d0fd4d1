import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, openCairn } from '../../src/config.js';
import { prepareNoQueryContext } from '../../src/context/build.js';
import { contextCachePath, RecordingFileReader } from '../../src/context/cache.js';
import { DEFAULT_HOOK_SETTINGS, refreshStartupContext, sessionStart, type HookOutput } from '../../src/hooks/events.js';
import { REFRESH_EVENT, runHook, startupCache } from '../../src/hooks/run.js';
import { PassThrough, Readable } from 'node:stream';
import type { Cairn } from '../../src/cairn.js';
import { tempDirs } from '../helpers/cli.js';

/** Every directory made here is removed after this file's tests. */
const dir = tempDirs();
function repoDir(remote: string): string {
  const repo = dir('cairn-cc-repo-');
  mkdirSync(join(repo, '.git'));
  writeFileSync(join(repo, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(repo, '.git', 'config'), `[remote "origin"]\n\turl = https://${remote}.git\n`);
  return repo;
}
const textOf = (out: HookOutput): string => (out.kind === 'json' ? String((out.value.hookSpecificOutput as { additionalContext: string }).additionalContext) : '');

async function seed(cairn: Cairn, repo: string): Promise<void> {
  mkdirSync(join(repo, 'src'), { recursive: true });
  writeFileSync(join(repo, 'src', 'limiter.ts'), 'export function refill() {}\n'.repeat(20));
  await cairn.remember({ text: 'The limiter refill lives at src/limiter.ts:3 and must cap at capacity', kind: 'fact', files: ['src/limiter.ts:3'] });
  await cairn.remember({ text: 'Never mock the database in the watcher tests; use the sqlite fixture', kind: 'correction' });
  await cairn.remember({ text: 'Deploys go through `make release`, not npm publish', kind: 'procedure' });
}

describe('the precomputed session-start context', () => {
  it('is served to a new session exactly as a fresh build would give it, and never after a write', async () => {
    const home = dir('cairn-cc-home-');
    const repo = repoDir('github.com/acme/limiter');
    const config = loadConfig({ home, env: {} });
    const { cairn } = await openCairn(config, { cwd: repo, actor: 'test' });
    const outcomes: string[] = [];
    const cache = startupCache(config, {}, (o) => outcomes.push(o));
    expect(cache).toBeDefined();
    try {
      await seed(cairn, repo);
      // Nothing precomputed yet: built fresh.
      await sessionStart(cairn, { session_id: 'first', source: 'startup' }, DEFAULT_HOOK_SETTINGS, cache);
      expect(outcomes.pop()).toBe('miss: no entry');

      // A memory recalled a moment ago (its recently-recalled penalty runs while ranking at serve time).
      await cairn.recall({ query: 'sqlite fixture watcher tests' });
      expect(await refreshStartupContext(cairn, DEFAULT_HOOK_SETTINGS, cache!)).toBe(true);
      // A copy of the store as it is now, to build the same context fresh.
      const home2 = dir('cairn-cc-home2-');
      for (const suffix of ['', '-wal']) if (existsSync(join(home, `cairn.db${suffix}`))) copyFileSync(join(home, `cairn.db${suffix}`), join(home2, `cairn.db${suffix}`));
      const served = await sessionStart(cairn, { session_id: 'second', source: 'startup' }, DEFAULT_HOOK_SETTINGS, cache);
      expect(outcomes.pop()).toBe('hit');
      const { cairn: copy } = await openCairn(loadConfig({ home: home2, env: {} }), { cwd: repo, actor: 'test' });
      try {
        const fresh = await sessionStart(copy, { session_id: 'second', source: 'startup' }, DEFAULT_HOOK_SETTINGS);
        expect(textOf(served)).toBe(textOf(fresh));
        expect(textOf(served)).toContain('src/limiter.ts:3');
        // The ledger holds the same injection either way.
        expect((await cairn.ledger!.seen('second')).memories).toEqual((await copy.ledger!.seen('second')).memories);
      } finally {
        await copy.close();
      }

      // Serving touched what it injected: the store changed, so the next start builds fresh.
      await sessionStart(cairn, { session_id: 'third', source: 'startup' }, DEFAULT_HOOK_SETTINGS, cache);
      expect(outcomes.pop()).toBe('miss: store changed');

      // A new memory after the precompute: never served stale.
      await refreshStartupContext(cairn, DEFAULT_HOOK_SETTINGS, cache!);
      await cairn.remember({ text: 'The rate limiter bucket size is 250 requests per key', kind: 'fact' });
      const after = await sessionStart(cairn, { session_id: 'fourth', source: 'startup' }, DEFAULT_HOOK_SETTINGS, cache);
      expect(outcomes.pop()).toBe('miss: store changed');
      expect(textOf(after)).toContain('250 requests per key');

      // A file a memory points at changed: built fresh (its staleness note may differ).
      await refreshStartupContext(cairn, DEFAULT_HOOK_SETTINGS, cache!);
      writeFileSync(join(repo, 'src', 'limiter.ts'), 'export function refillFaster() {}\n'.repeat(20));
      await sessionStart(cairn, { session_id: 'fifth', source: 'startup' }, DEFAULT_HOOK_SETTINGS, cache);
      expect(outcomes.pop()).toBe('miss: file changed');

      // An absolute reference that is not there is looked up under the workspace root too: a file appearing there is a change.
      await cairn.remember({ text: 'The bucket config is read from /config/bucket.json at start', kind: 'fact', files: ['/config/bucket.json'] });
      await refreshStartupContext(cairn, DEFAULT_HOOK_SETTINGS, cache!);
      mkdirSync(join(repo, 'config'));
      writeFileSync(join(repo, 'config', 'bucket.json'), '{"size": 250}\n');
      await sessionStart(cairn, { session_id: 'fifth-b', source: 'startup' }, DEFAULT_HOOK_SETTINGS, cache);
      expect(outcomes.pop()).toBe('miss: file changed');

      // A session with a history of its own is never served the startup context.
      await cairn.remember({ text: 'Session note: the bucket test flakes under load', kind: 'fact', session: 'sixth' });
      await refreshStartupContext(cairn, DEFAULT_HOOK_SETTINGS, cache!);
      await sessionStart(cairn, { session_id: 'sixth', source: 'startup' }, DEFAULT_HOOK_SETTINGS, cache);
      expect(outcomes.pop()).toBe('miss: session has a history');

      // Unreadable: built fresh, no crash.
      await refreshStartupContext(cairn, DEFAULT_HOOK_SETTINGS, cache!);
      const key = { kind: 'startup' as const, project: cairn.deps.project, workspaceRoot: cairn.deps.workspaceRoot, budget: DEFAULT_HOOK_SETTINGS.sessionStartBudget, code: cache!.code };
      const path = contextCachePath(home, key);
      writeFileSync(path, readFileSync(path, 'utf8').slice(0, -20));
      const broken = await sessionStart(cairn, { session_id: 'eighth', source: 'startup' }, DEFAULT_HOOK_SETTINGS, cache);
      expect(outcomes.pop()).toBe('miss: unreadable entry');
      expect(textOf(broken)).toContain('make release');
    } finally {
      await cairn.close();
    }
  });

  it('ranks and packs prepared candidates exactly as a fresh build, at any budget', async () => {
    const home = dir('cairn-cc-home-');
    const repo = repoDir('github.com/acme/packing');
    mkdirSync(join(repo, 'src'), { recursive: true });
    for (let f = 0; f < 5; f++) writeFileSync(join(repo, 'src', `m${f}.ts`), `export const v${f} = ${f};\n`.repeat(30));
    const { cairn } = await openCairn(loadConfig({ home, env: {} }), { cwd: repo, actor: 'test' });
    try {
      const kinds = ['fact', 'decision', 'correction', 'procedure', 'preference', 'note', 'continuation'] as const;
      for (let i = 0; i < 160; i++) {
        const kind = kinds[i % kinds.length]!;
        const files = i % 4 === 0 ? [`src/m${i % 7}.ts:${(i % 30) + 1}`] : [];
        await cairn.remember({ text: `Memory ${i} about module m${i % 9}: ${'the limiter refill caps tokens at capacity '.repeat(1 + (i % 5))}(${kind} ${i * 7919})`, kind, files, importance: ((i * 37) % 100) / 100 });
      }
      await cairn.recall({ query: 'limiter refill module m3' });
      // A referenced file changed after it was remembered: its lines carry a note.
      writeFileSync(join(repo, 'src', 'm2.ts'), 'changed\n'.repeat(40));
      const prepared = await prepareNoQueryContext(cairn.deps, new RecordingFileReader());
      for (const budget of [200, 900, 2500, 4000, 12000]) {
        const fresh = await cairn.context({ budget });
        const fromPrepared = await cairn.context({ budget, prepared });
        expect(fromPrepared.markdown).toBe(fresh.markdown);
        expect(fromPrepared.sections).toEqual(fresh.sections);
      }
    } finally {
      await cairn.close();
    }
  });

  it("never serves another project's context", async () => {
    const home = dir('cairn-cc-home-');
    const repoA = repoDir('github.com/acme/alpha');
    const repoB = repoDir('github.com/acme/beta');
    const config = loadConfig({ home, env: {} });
    const outcomes: string[] = [];
    const cache = startupCache(config, {}, (o) => outcomes.push(o))!;
    const { cairn: a } = await openCairn(config, { cwd: repoA, actor: 'test' });
    const { cairn: b } = await openCairn(config, { cwd: repoB, actor: 'test' });
    try {
      await a.remember({ text: 'Alpha secret: the staging host is alpha-staging.internal', kind: 'fact' });
      await b.remember({ text: 'Beta uses pnpm workspaces', kind: 'fact' });
      expect(await refreshStartupContext(a, DEFAULT_HOOK_SETTINGS, cache)).toBe(true);
      const out = await sessionStart(b, { session_id: 'b-1', source: 'startup' }, DEFAULT_HOOK_SETTINGS, cache);
      expect(outcomes.pop()).toBe('miss: no entry');
      expect(textOf(out)).not.toContain('alpha-staging');
      expect(textOf(out)).toContain('pnpm workspaces');
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('is prepared by `cairn hook refresh-context`, the detached child of the stop hooks', async () => {
    const home = dir('cairn-cc-home-');
    const repo = repoDir('github.com/acme/refresh');
    const config = loadConfig({ home, env: {} });
    const { cairn } = await openCairn(config, { cwd: repo, actor: 'test' });
    await cairn.remember({ text: 'Releases are tagged vX.Y.Z from main only', kind: 'procedure' });
    const key = { kind: 'startup' as const, project: cairn.deps.project, workspaceRoot: cairn.deps.workspaceRoot, budget: DEFAULT_HOOK_SETTINGS.sessionStartBudget, code: startupCache(config, {})!.code };
    await cairn.close();
    const code = await runHook(REFRESH_EVENT, { stdin: Readable.from(['']), stdout: new PassThrough(), readInput: async () => JSON.stringify({ cwd: repo }), env: {}, cwd: repo, home });
    expect(code).toBe(0);
    const [head, body] = readFileSync(contextCachePath(home, key), 'utf8').split('\n');
    expect(JSON.parse(head!)).toMatchObject({ key: { project: 'github.com/acme/refresh' } });
    expect(body).toContain('Releases are tagged vX.Y.Z');
  });

  it('is off for stores without a generation and with CAIRN_CONTEXT_CACHE=0', () => {
    const home = dir('cairn-cc-home-');
    expect(startupCache(loadConfig({ home, env: { CAIRN_STORE: 'postgres://u@localhost/db' } }), {})).toBeUndefined();
    expect(startupCache(loadConfig({ home, env: {} }), { CAIRN_CONTEXT_CACHE: '0' })).toBeUndefined();
  });
});
