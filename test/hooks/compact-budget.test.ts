import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PassThrough, Readable } from 'node:stream';
import { runHook } from '../../src/hooks/run.js';
import { DEFAULT_HOOK_SETTINGS, type HookSettings } from '../../src/hooks/events.js';
import { HOOK_TEXT_MAX, partsCapacity, SESSION_START_PARTS, type PartArgs } from '../../src/hooks/parts.js';
import { estimateTokens } from '../../src/tokens.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { tempDirs } from '../helpers/cli.js';
import { TranscriptWriter } from './transcript.js';

const dir = tempDirs();
const repoOnce = (): string => repo();

async function hook(event: string, input: unknown, home: string, cwd: string, settings: HookSettings = DEFAULT_HOOK_SETTINGS, parts?: PartArgs): Promise<string> {
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const code = await runHook(event, { stdin: Readable.from([JSON.stringify(input)]), stdout, env: { CAIRN_HOOK_INLINE: '1' }, cwd, home, ...(parts ? { parts } : {}) }, settings);
  expect(code).toBe(0);
  return out;
}

/** A session of `steps` edits and test runs, each on its own file, compacted automatically; the post-compact context and the tokens the ledger recorded. */
function repo(): string {
  const root = dir('cairn-budget-repo-');
  mkdirSync(join(root, '.git'));
  writeFileSync(join(root, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  return root;
}

/** Each run in a fresh home; runs compared share `repo` (the paths in the transcript). */
async function compacted(
  steps: number,
  settings: HookSettings = DEFAULT_HOOK_SETTINGS,
  repo: string = repoOnce(),
  parts?: number,
): Promise<{ context: string; tokens: number; recorded: number; printed: string[] }> {
  const home = dir('cairn-budget-home-');
  const transcript = join(dir('cairn-budget-claude-'), 'sess-b.jsonl');
  const t = new TranscriptWriter('sess-b', repo);
  const base = { session_id: 'sess-b', transcript_path: transcript, cwd: repo };
  t.user('Port the billing module to the new ledger API, file by file.');
  for (let i = 0; i < steps; i++) {
    const file = `src/billing/module_${i}/handler_${i}.py`;
    t.tool('Edit', { file_path: join(repo, file), old_string: `def charge_${i}(x):`, new_string: `def charge_${i}(x, ledger: LedgerClient${i}):\n    return ledger.post_entry_${i}(x)` }, 'ok');
    t.tool('Bash', { command: `pytest tests/billing/test_handler_${i}.py -x -q --ledger-url=http://ledger-${i}.internal` }, `FAILED tests/billing/test_handler_${i}.py::test_charge_${i} - KeyError: 'account_${i}'`, true);
  }
  writeFileSync(transcript, t.text());
  await hook('pre-compact', { ...base, hook_event_name: 'PreCompact', trigger: 'auto' }, home, repo, settings);
  t.compact('We are porting the billing module to the ledger API; several handler tests still fail.', 'auto');
  writeFileSync(transcript, t.text());
  const start = { ...base, hook_event_name: 'SessionStart', source: 'compact' };
  const text = (out: string): string => (out.length === 0 ? '' : (JSON.parse(out) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext);
  // As Claude Code runs them when installed: the first part's command, then the others.
  const outputs = [text(await hook('session-start', start, home, repo, settings, parts ? { parts, part: 1 } : undefined))];
  for (let part = 2; parts !== undefined && part <= parts; part++) outputs.push(text(await hook('session-start', start, home, repo, settings, { parts, part })));
  const printed = outputs.filter((t) => t.length > 0).map((t, i) => (i === 0 ? t : t.slice(t.indexOf('\n') + 1))).join('');
  // Memory ids differ from home to home: the texts are compared without them.
  const context = printed.replace(/\[[0-9A-Z]{26}\]/g, '[id]');
  const store = await openSqliteStore(join(home, 'cairn.db'));
  try {
    const injection = (await store.ledger.injections('sess-b', { window: 1 })).find((i) => i.name === 'session-start');
    return { context, tokens: estimateTokens(printed), recorded: injection?.tokens ?? 0, printed: outputs };
  } finally {
    await store.close();
  }
}

describe('session-start after /compact: a budget sized to the session', () => {
  it('a long session gets more than the fixed budget, up to the top; without the rule it keeps the fixed one', async () => {
    const root = repo();
    const long = await compacted(220, DEFAULT_HOOK_SETTINGS, root);
    const { tokens } = long;
    expect(tokens).toBeGreaterThan(DEFAULT_HOOK_SETTINGS.compactBudget + 1000);
    expect(tokens).toBeLessThanOrEqual((DEFAULT_HOOK_SETTINGS.compactSizing?.max ?? 0) + 50);
    expect(long.recorded).toBe(tokens);
    const fixed = await compacted(220, { ...DEFAULT_HOOK_SETTINGS, compactSizing: null }, root);
    expect(fixed.tokens).toBeLessThanOrEqual(DEFAULT_HOOK_SETTINGS.compactBudget + 50);
    // The larger pack holds more of the session's details, the fixed one's among them.
    const files = (text: string): number => (text.match(/handler_\d+\.py/g) ?? []).length;
    expect(files(long.context)).toBeGreaterThan(files(fixed.context));
  }, 120_000);

  it('in parts, as Claude Code is wired: each part within its cap, the whole within the parts’ room, more than one part carries', async () => {
    const root = repo();
    const parted = await compacted(220, DEFAULT_HOOK_SETTINGS, root, SESSION_START_PARTS);
    expect(parted.printed.filter((p) => p.length > 0).length).toBeGreaterThan(1);
    for (const part of parted.printed) expect(part.length).toBeLessThanOrEqual(HOOK_TEXT_MAX);
    expect(parted.printed.join('').length).toBeLessThanOrEqual(partsCapacity(SESSION_START_PARTS) + SESSION_START_PARTS * 60);
    // One command alone (an install from before the parts would print more and be cut by the client): kept within one part.
    const single = await compacted(220, DEFAULT_HOOK_SETTINGS, root, 1);
    expect(single.printed).toHaveLength(1);
    expect(single.printed[0]!.length).toBeLessThanOrEqual(HOOK_TEXT_MAX);
    const files = (text: string): number => (text.match(/handler_\d+\.py/g) ?? []).length;
    expect(files(parted.context)).toBeGreaterThan(files(single.context));
  }, 120_000);

  it('a short session gets the fixed budget: the same text as without the rule', async () => {
    const root = repo();
    const sized = await compacted(12, DEFAULT_HOOK_SETTINGS, root);
    const fixed = await compacted(12, { ...DEFAULT_HOOK_SETTINGS, compactSizing: null }, root);
    expect(sized.context).toBe(fixed.context);
    expect(sized.tokens).toBeLessThanOrEqual(DEFAULT_HOOK_SETTINGS.compactBudget);
  }, 60_000);

  it('a rule that makes no sense falls back to the fixed budget', async () => {
    const root = repo();
    const bad = await compacted(220, { ...DEFAULT_HOOK_SETTINGS, compactSizing: { share: Number.NaN, max: 16_000 } }, root);
    const fixed = await compacted(220, { ...DEFAULT_HOOK_SETTINGS, compactSizing: null }, root);
    expect(bad.context).toBe(fixed.context);
  }, 120_000);
});
