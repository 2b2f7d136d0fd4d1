/**
 * Learn from use (src/context/use.ts): a real-shaped Claude Code transcript with a /compact, the
 * ledger rows the session-start hook would have written, then ingest of the rest of the session.
 * The injected items the agent used afterwards are marked used, the needed detail nothing
 * injected carried is a miss with its session fact, and ingesting again changes nothing.
 */
import { appendFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig, openCairn } from '../../src/config.js';
import { learnKey } from '../../src/context/learn.js';
import { measureUse, measureWindow } from '../../src/context/use.js';
import { carries, extractDetails, neededDetails } from '../../src/ledger/used-details.js';
import { runCli } from '../helpers/cli.js';
import { TranscriptWriter } from '../hooks/transcript.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function workDir(): string {
  const dir = join(tmpdir(), `cairn-use-${process.pid}-${Math.random().toString(36).slice(2)}`);
  mkdirSync(dir, { recursive: true });
  dirs.push(dir);
  return dir;
}

const SESSION = '6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b';

/** The session started an hour ago (the transcript's times and cairn's clock agree, as in real use). */
function sessionBefore(cwd: string): TranscriptWriter {
  return new TranscriptWriter(SESSION, cwd, Date.now() - 3_600_000)
    .user('The config loader drops the port: fix it in src/config/load.ts')
    .tool('Read', { file_path: `${cwd}/src/config/load.ts` }, 'export function parsePort(raw: string): number {\n  return Number(raw);\n}')
    .tool('Read', { file_path: `${cwd}/src/server/listen.ts` }, 'import { parsePort } from "../config/load.js";')
    .tool('Bash', { command: 'npx vitest run test/config.test.ts' }, 'FAIL test/config.test.ts > parses the port\nTypeError: cannot read port', true)
    .tool('Edit', { file_path: `${cwd}/src/config/load.ts`, old_string: 'return Number(raw);', new_string: 'return parsePort(raw.trim());' }, 'ok')
    .assistant('parsePort( now trims its input; src/server/listen.ts calls it at startup. Also see docs/CONFIG.md for the env names.');
}

describe('learn from use', () => {
  it('the matcher is the fidelity bench’s: details used after and known before, carried verbatim', () => {
    expect([...extractDetails('ran parsePort( in src/config/load.ts:12', ['npm run build'])].sort()).toEqual(['npm run build', 'parsePort(', 'src/config/load.ts', 'src/config/load.ts:12']);
    expect(neededDetails('src/a.ts and src/b.ts', 'edit src/a.ts then src/c.ts')).toEqual(['src/a.ts']);
    expect(carries('- `src/a.ts` — edited', ['src/a.ts'])).toBe(true);
    expect(carries('- `src/b.ts`', ['src/a.ts'])).toBe(false);
  });

  it('marks what the agent used after a compaction, records the misses, and is idempotent on re-ingest', async () => {
    const work = workDir();
    const home = join(work, 'home');
    const cwd = join(work, 'repo');
    mkdirSync(home);
    mkdirSync(cwd);
    const transcript = join(work, `${SESSION}.jsonl`);
    const writer = sessionBefore(cwd).compact('We fixed the port parsing in the config loader.');
    writeFileSync(transcript, writer.text());
    const { cairn } = await openCairn(loadConfig({ home, env: {} }), { cwd, actor: 'test', session: SESSION });
    try {
      await cairn.ingest([transcript], { measureUse: true });
      const deps = cairn.deps;
      const ledger = deps.store.ledger!;
      const facts = await deps.store.substrate!.listFacts(SESSION, { limit: 500 });
      const fact = (text: string) => {
        const found = facts.find((f) => f.text === text || f.text.endsWith(text));
        if (!found) throw new Error(`no fact ${text} among ${facts.map((f) => f.text).join(', ')}`);
        return found;
      };
      const load = fact('src/config/load.ts');
      const test = fact('npx vitest run test/config.test.ts');
      const docs = fact('docs/CONFIG.md');
      const memory = await cairn.remember({ text: 'The server reads PORT through parsePort( in the config loader.', kind: 'fact' });

      // What the session-start hook (source "compact") wrote when the session resumed.
      const boundaryAt = Date.parse(JSON.parse(writer.lines.at(-2)!).timestamp as string);
      await ledger.openWindow(SESSION, 'startup', boundaryAt - 200_000, { project: deps.project });
      await ledger.openWindow(SESSION, 'compact', boundaryAt + 500, { project: deps.project });
      const injection = await ledger.record({
        session: SESSION,
        project: deps.project,
        via: 'hook',
        name: 'session-start',
        target: 'context',
        memories: [memory.memory.id],
        facts: [load.id, docs.id],
        blocks: ['core:project', 'call:parsePort', 'call:loadConfig'],
        tokens: 200,
        at: boundaryAt + 600,
      });

      // Nothing after the compaction yet: nothing to measure.
      expect((await cairn.ingest([transcript], { measureUse: true })).use).toBeUndefined();

      // The session goes on: the agent uses load.ts and parsePort(, and reruns the failing test (never injected).
      const after = new TranscriptWriter(SESSION, cwd, boundaryAt + 60_000)
        .user('continue')
        .tool('Read', { file_path: `${cwd}/src/config/load.ts` }, 'export function parsePort(raw: string): number {');
      appendFileSync(transcript, after.text().replace(/"u-(\d+)"/g, '"v-$1"'));
      // The hooks' inline ingests do not measure (they would re-read the transcript in the hook's time).
      expect((await cairn.ingest([transcript])).use).toBeUndefined();
      expect((await ledger.injections(SESSION, { window: 1 }))[0]?.used).toBeUndefined();
      const more = new TranscriptWriter(SESSION, cwd, boundaryAt + 200_000)
        .tool('Bash', { command: 'npx vitest run test/config.test.ts' }, 'PASS test/config.test.ts')
        .assistant('The test passes now: parsePort( trims the value.');
      appendFileSync(transcript, more.text().replace(/"u-(\d+)"/g, '"w-$1"'));
      const report = await cairn.ingest([transcript], { measureUse: true });
      expect(report.use).toMatchObject({ windows: 1, injected: 5 });

      const [measured] = await ledger.injections(SESSION, { window: 1 });
      expect(measured?.id).toBe(injection.id);
      expect(new Set(measured?.used)).toEqual(new Set([load.id, memory.memory.id, 'call:parsePort']));
      const outcomes = await cairn.ledger!.outcomes({ session: SESSION });
      expect(outcomes).toHaveLength(1);
      const outcome = outcomes[0]!;
      expect(outcome).toMatchObject({ window: 1, reason: 'compact', injected: 5, used: 3, project: deps.project });
      // Call lines are judged too (core memory never).
      expect(outcome.kinds.call).toMatchObject({ injected: 2, used: 1 });
      expect(outcome.missed).toBeGreaterThanOrEqual(1);
      expect(outcome.missedFacts).toContain(test.id);
      expect(outcome.kinds.command).toMatchObject({ injected: 0, left: 1, missed: 1 });
      expect(outcome.kinds.path).toMatchObject({ injected: 2, used: 1 });
      const stats = await ledger.itemStats({ ids: [load.id, docs.id] });
      expect(stats.get(load.id)).toMatchObject({ measured: 1, used: 1 });
      expect(stats.get(docs.id)).toMatchObject({ measured: 1, used: 0 });

      // Ingest again (nothing new): the same marks, one outcome, nothing re-measured.
      const again = await cairn.ingest([transcript], { measureUse: true });
      expect(again.use).toBeUndefined();
      expect(await cairn.ledger!.outcomes({ session: SESSION })).toEqual(outcomes);
      expect((await ledger.injections(SESSION, { window: 1 }))[0]?.used?.sort()).toEqual(measured?.used?.sort());

      // The open window measured moments ago waits (the Stop hook ingests after every turn); later it is measured again.
      appendFileSync(transcript, new TranscriptWriter(SESSION, cwd, Date.now()).assistant('Done: src/config/load.ts is fixed.').text().replace(/"u-(\d+)"/g, '"x-$1"'));
      await cairn.ingest([transcript]);
      expect(await measureUse(deps, [SESSION])).toMatchObject({ windows: 0 });
      expect(await measureUse(deps, [SESSION], { remeasureAfterMs: 0 })).toMatchObject({ windows: 1 });
      const remeasured = (await cairn.ledger!.outcomes({ session: SESSION }))[0]!;
      expect(remeasured.turnsAfter).toBe(outcome.turnsAfter + 1);

      // `cairn status` says it per project, in words and in JSON.
      const json = JSON.parse((await runCli(['status', '--json'], { home, cwd })).stdout) as { use: Array<Record<string, unknown>> };
      expect(json.use).toEqual([expect.objectContaining({ project: deps.project, compactions: 1, injected: 5, used: 3, usedShare: 0.6, missed: remeasured.missed })]);
      const text = (await runCli(['status'], { home, cwd })).stdout;
      expect(text).toContain(`used after   ${deps.project}: 1 compaction · 5 items injected · 60% used afterwards · ${remeasured.missed} of ${remeasured.needed} needed details missed`);
      expect(text).toContain(`learned: ${remeasured.needed} details its sessions needed again after a compaction (ranked up in later sessions); kind weights start once 2 compactions are measured`);
      expect(json.use[0]?.learned).toEqual({ compactions: 1, weights: {}, details: remeasured.needed });

      // What later sessions learn: the details needed after the compaction, as hashes (no text).
      expect(remeasured.learned).toHaveLength(remeasured.needed);
      expect(remeasured.learned).toEqual(expect.arrayContaining([learnKey('src/config/load.ts'), learnKey(`${cwd}/src/config/load.ts`), learnKey('test/config.test.ts'), learnKey('parsePort(')]));
      expect(remeasured.learned).not.toContain(learnKey('docs/CONFIG.md'));

      // A later session of the project: the details the first one needed after its compaction are
      // marked `usedBefore` among its candidates; what it never needed again is not.
      const second = '7b2e1d3f-4c5e-4f60-9a1b-1d2e3f4a5b6c';
      const later = join(work, `${second}.jsonl`);
      writeFileSync(
        later,
        new TranscriptWriter(second, cwd, Date.now() - 60_000)
          .user('The port is still wrong in production')
          .tool('Read', { file_path: `${cwd}/src/config/load.ts` }, 'export function parsePort(raw: string): number {')
          .tool('Read', { file_path: `${cwd}/docs/CONFIG.md` }, 'PORT: the port to listen on')
          .tool('Bash', { command: 'npx vitest run test/config.test.ts' }, 'PASS test/config.test.ts')
          .text(),
      );
      await cairn.ingest([later]);
      const { cairn: next } = await openCairn(loadConfig({ home, env: {} }), { cwd, actor: 'test', session: second });
      try {
        // The model's value of each line as packed, with learning from use and without.
        const values = async (learnFromUse: boolean) => {
          const built = await next.context({ budget: 4000, favorSession: second, learnFromUse });
          const of = (text: string) => built.details?.find((d) => d.factId !== null && d.line.includes(`\`${text}\``))?.value;
          return { load: of(`${cwd}/src/config/load.ts`), test: of('test/config.test.ts'), docs: of(`${cwd}/docs/CONFIG.md`) };
        };
        const learned = await values(true);
        const shipped = await values(false);
        expect(learned.load).toBeGreaterThan((shipped.load as number) + 0.05);
        expect(learned.test).toBeGreaterThan((shipped.test as number) + 0.1);
        expect(learned.docs).toBe(shipped.docs);
      } finally {
        await next.close();
      }
    } finally {
      await cairn.close();
    }
  });

  it('`cairn status` shows what learning changed per project: the kinds the agent used more, or less, than usual', async () => {
    const work = workDir();
    const home = join(work, 'home');
    const cwd = join(work, 'repo');
    mkdirSync(home);
    mkdirSync(cwd);
    const { cairn } = await openCairn(loadConfig({ home, env: {} }), { cwd, actor: 'test', session: SESSION });
    try {
      const project = cairn.deps.project;
      // Two measured compactions: every injected symbol used afterwards, hardly any path.
      for (const window of [1, 2]) {
        await cairn.deps.store.ledger!.recordOutcome({
          session: `s-${window}`,
          window,
          project,
          reason: 'compact',
          measuredAt: 1_700_000_000_000 + window,
          turnsAfter: 10,
          injected: 40,
          used: 21,
          needed: 30,
          missed: 4,
          missedFacts: [],
          kinds: { symbol: { injected: 20, used: 20, missed: 0 }, path: { injected: 20, used: 1, missed: 4 } },
        });
      }
    } finally {
      await cairn.close();
    }
    const json = JSON.parse((await runCli(['status', '--json'], { home, cwd })).stdout) as { use: Array<{ learned: { compactions: number; weights: Record<string, number> } }> };
    const learned = json.use[0]!.learned;
    expect(learned.compactions).toBe(2);
    expect(learned.weights.symbol).toBeGreaterThan(0);
    expect(learned.weights.path).toBeLessThan(0);
    const text = (await runCli(['status'], { home, cwd })).stdout;
    expect(text).toMatch(/learned: (?:symbol \+0\.\d\d · path −0\.\d\d|path −0\.\d\d · symbol \+0\.\d\d) \(from 2 compactions; weights of the post-compact ranking\)/);
  });

  it('a window opened by a session start counts what was used after it (no misses without a compaction)', () => {
    const turn = (seq: number, role: 'user' | 'assistant', text: string) => ({ id: `t${seq}`, sessionId: 's', seq, role, text, toolName: null, toolInput: null, flags: [], at: seq * 1000, line: seq });
    const memory = { id: 'm1', text: 'Deploys go through scripts/deploy.sh --canary' } as never;
    const { outcome, used } = measureWindow({
      session: 's',
      project: 'p',
      window: { window: 0, at: 0, reason: 'startup' },
      injections: [{ id: 7, session: 's', project: 'p', window: 0, at: 0, via: 'hook', name: 'session-start', target: 'context', memories: ['m1', 'm2'], facts: [], blocks: [], tokens: 20 }],
      before: [],
      after: [turn(1, 'user', 'deploy it'), turn(2, 'assistant', 'Running scripts/deploy.sh --canary now.')],
      facts: new Map(),
      memories: new Map([['m1', memory], ['m2', { id: 'm2', text: 'Prefer tabs', kind: 'preference' } as never]]),
      startSeq: 1,
      at: 5,
    });
    expect(used.get(7)).toEqual(['m1']);
    expect(outcome).toMatchObject({ injected: 2, used: 1, needed: 0, missed: 0, kinds: { fact: { injected: 1, used: 1, missed: 0 }, rule: { injected: 1, used: 0, missed: 0 } } });
    // Only compactions teach later sessions.
    expect(outcome.learned).toEqual([]);
  });
});
