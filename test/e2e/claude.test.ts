import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, openCairn } from '../../src/config.js';
import { learnKey } from '../../src/context/learn.js';
import { startFakeModel, type FakeModel, type RecordedRequest, type Script } from './fake-model.js';
import { baseEnv, cairn, CLAUDE, linkCairnBin, occurrences, ROOT, run, sandbox, SCORING_INTERNALS, skipReason, type Sandbox } from './harness.js';
import { oneCpuHeavyFileAtATime } from '../helpers/cpu-heavy.js';

await oneCpuHeavyFileAtATime(); // test/helpers/cpu-heavy.ts

// The real Claude Code (from the npm registry, installed by .ci/run) runs non-interactively
// against the fake model server, with cairn wired in by `cairn install claude`, as a plugin from
// this repository, and as a plugin installed from a marketplace added from a git clone. The fake
// model records exactly what the model would read.

const reason = skipReason('Claude Code', CLAUDE);
if (reason) console.warn(`[e2e] Claude Code tests skipped: ${reason}`);

/** A memory stored before the session: it must come back at session start, once. */
const M1 = 'The release checklist lives in docs/RELEASING.md: run make verify before tagging (ALPHA-7731).';
/** A memory stored during the session (by another agent): only a recall can bring it. */
const M2 = 'Deploy with scripts/ship.sh --prod from the repository root (BRAVO-5512).';

/** Details earlier sessions of the project needed after their compactions (as the ledger keeps them: hashes). */
const LEARNED = ['docs/RELEASING.md', 'make verify', 'scripts/ship.sh', 'release/v2'];

/** Record 200 measured compactions of earlier sessions of the sandbox's project (the most learning reads). */
async function seedLearningHistory(box: Sandbox): Promise<void> {
  const { cairn: lib } = await openCairn(loadConfig({ home: box.cairnHome, env: {} }), { cwd: box.project, actor: 'e2e' });
  try {
    for (let j = 0; j < 200; j++) {
      await lib.deps.store.ledger!.recordOutcome({ session: `earlier-${j}`, window: 1, project: lib.deps.project, reason: 'compact', measuredAt: Date.now() - (200 - j) * 60_000, turnsAfter: 10, injected: 8, used: 3, needed: LEARNED.length, missed: 1, missedFacts: [], kinds: { path: { injected: 5, used: 2, left: 4, missed: 1 } }, learned: LEARNED.map(learnKey) });
    }
  } finally {
    await lib.close();
  }
}

interface AnthropicBody {
  system?: unknown;
  tools?: Array<{ name: string; description?: string }>;
  messages?: Array<{ role: string; content: string | Array<{ type: string; text?: string; content?: unknown; tool_use_id?: string }> }>;
}
const bodyOf = (r: RecordedRequest): AnthropicBody => (r.body ?? {}) as AnthropicBody;
const toolNames = (r: RecordedRequest): string[] => (bodyOf(r).tools ?? []).map((t) => t.name);
const recallTool = (r: RecordedRequest): string | undefined => toolNames(r).find((n) => /cairn.*__recall$/.test(n));

/** The text of every tool_result the client sent back to the model. */
function toolResults(r: RecordedRequest): string[] {
  const out: string[] = [];
  for (const message of bodyOf(r).messages ?? []) {
    if (typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (block.type !== 'tool_result') continue;
      const content = block.content;
      if (typeof content === 'string') out.push(content);
      else if (Array.isArray(content)) out.push(content.map((c: { text?: string }) => c.text ?? '').join('\n'));
    }
  }
  return out;
}
/** What the model reads: system prompt and messages (not the tool schemas). */
const readable = (r: RecordedRequest): string => JSON.stringify({ system: bodyOf(r).system, messages: bodyOf(r).messages });

/** Call recall once — after storing M2 mid-session — then finish. */
function recallOnce(box: Sandbox): Script {
  let stored = false;
  return (request) => {
    const tool = recallTool(request);
    if (!tool || toolResults(request).length > 0) return { text: 'done' };
    if (!stored) {
      cairn(box, ['remember', M2]);
      stored = true;
    }
    return { tool, input: { query: 'deploy ship script prod' } };
  };
}

function claudeEnv(box: Sandbox, fake: FakeModel, extra: Record<string, string> = {}): Record<string, string> {
  return baseEnv(box, {
    ANTHROPIC_BASE_URL: fake.url,
    ANTHROPIC_API_KEY: 'sk-ant-fake-e2e',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    // -p sends its first request without waiting for MCP servers unless told to wait.
    MCP_CONNECTION_NONBLOCKING: '0',
    ...extra,
  });
}

function claude(box: Sandbox, fake: FakeModel, args: string[], extra: Record<string, string> = {}) {
  // -p cannot ask for permission: cairn's tools (as installed, or as the plugin's) are allowed up front.
  return run(CLAUDE!, ['-p', '--allowedTools=mcp__cairn,mcp__plugin_cairn_cairn', ...args], { cwd: box.project, env: claudeEnv(box, fake, extra), timeoutMs: 90_000 });
}

/** What a working setup shows, whatever wired cairn in (issue #16 items 1 and 7). */
function expectMemoryWorks(requests: RecordedRequest[], label: string): void {
  const main = requests.filter((r) => (bodyOf(r).tools ?? []).length > 0);
  expect(main.length, `${label}: requests with tools`).toBeGreaterThanOrEqual(2);
  const first = main[0]!;
  expect(readable(first), `${label}: session-start context reaches the model`).toContain('ALPHA-7731');
  // recall and get (what the context tells the agent to use) are loaded; the others may be
  // deferred behind ToolSearch (Claude Code 2.1.2xx on), named in a system message until loaded.
  expect(toolNames(first).filter((n) => n.includes('cairn')), `${label}: cairn's loaded tools`).toEqual(
    expect.arrayContaining([expect.stringMatching(/__recall$/), expect.stringMatching(/__get$/)]),
  );
  for (const name of ['remember', 'context']) {
    const reachable = toolNames(first).some((n) => n.includes('cairn') && n.endsWith(`__${name}`)) || new RegExp(`mcp__[a-z_]*cairn__${name}\\b`).test(readable(first));
    expect(reachable, `${label}: cairn's ${name} tool is loaded or listed as deferred`).toBe(true);
  }
  expect(toolResults(main[main.length - 1]!).join('\n'), `${label}: recall returns the memory's text`).toContain(M2);
}

/** What the model reads from cairn carries no scoring internals (issue #16 item 2). */
function expectNoScoringInternals(requests: RecordedRequest[], label: string): void {
  const results = requests.flatMap(toolResults).join('\n');
  expect(results.length, `${label}: tool results were sent`).toBeGreaterThan(0);
  for (const key of SCORING_INTERNALS) expect(results, `${label}: no scoring internals (${key}) in tool results`).not.toContain(key);
}

/** Never the same memory twice in one request, across hooks and tools (issue #16 item 2). */
function expectNoRepeats(requests: RecordedRequest[], label: string): void {
  expect(requests.length).toBeGreaterThan(0);
  for (const request of requests) {
    for (const marker of ['ALPHA-7731', 'BRAVO-5512']) {
      expect(occurrences(readable(request), marker), `${label}: ${marker} at most once in one request`).toBeLessThanOrEqual(1);
    }
  }
}

describe.skipIf(reason !== null)('Claude Code (real client) with cairn', () => {
  let fake: FakeModel;
  const boxes: Sandbox[] = [];
  /** Every request of each run, by run. */
  const sessions: Record<string, RecordedRequest[]> = {};
  beforeAll(async () => {
    fake = await startFakeModel();
  });
  afterAll(async () => {
    await fake.close();
    boxes.forEach((b) => b.cleanup());
  });
  const fresh = (prefix: string): Sandbox => {
    const box = sandbox(prefix);
    boxes.push(box);
    fake.requests.length = 0;
    cairn(box, ['remember', M1]);
    return box;
  };
  const record = (name: string): RecordedRequest[] => (sessions[name] = fake.modelRequests());
  const PROMPT = 'What does the release checklist in docs/RELEASING.md say? Then find how to deploy.';

  it('cairn install claude: context at session start, cairn’s tools, recall’s text back', { timeout: 120_000 }, async () => {
    const box = fresh('cairn-e2e-claude-');
    cairn(box, ['install', 'claude']);
    fake.setScript(recallOnce(box));
    const result = await claude(box, fake, [PROMPT]);
    expect(result.code, result.stderr).toBe(0);
    expectMemoryWorks(record('install'), 'install claude');
  });

  it('PreCompact guidance reaches the compaction request; the post-compact context arrives after it', { timeout: 180_000 }, async () => {
    const box = fresh('cairn-e2e-compact-');
    cairn(box, ['install', 'claude']);
    fake.setScript(() => ({ text: 'Noted.' }));
    const session = '4d9e2f55-1b7a-4c1e-9a53-6f0c7e2b8a10';
    expect((await claude(box, fake, ['--session-id', session, 'Remember we are preparing the release.'])).code).toBe(0);
    // Claude Code compacts only a conversation with a few turns in it.
    for (const prompt of ['Which branch do we tag from?', 'And who signs the release?']) expect((await claude(box, fake, ['--resume', session, prompt])).code).toBe(0);
    // A long-used project: 200 measured compactions of earlier sessions, whose needed details the
    // post-compact context reads (learning from use); the real client's hooks go through it.
    await seedLearningHistory(box);
    const before = fake.requests.length;
    const compact = await claude(box, fake, ['--resume', session, '/compact']);
    expect(compact.code, compact.stderr).toBe(0);
    const compaction = fake.requests.slice(before).find((r) => /provide your summary/i.test(JSON.stringify(bodyOf(r).messages ?? [])));
    expect(compaction, 'a compaction request was sent').toBeDefined();
    expect(readable(compaction!)).toContain('Keep these exact details verbatim');
    expect(readable(compaction!)).toContain('ALPHA-7731');
    // The start after it did not ingest first: what the client had written past PreCompact's ingest
    // by then is lines ingest stores nothing from (the boundary and summary come after the hook:
    // test/hooks/fixtures/claude-code-2.1.197-compact), so they are left to the next ingest
    // ("next"); a client that wrote the compaction first would have it read here and ingested by a
    // detached child ("deferred").
    const starts = readFileSync(join(box.cairnHome, 'logs', 'hooks.log'), 'utf8').split('\n').filter((l) => l.includes('"event":"session-start"') && l.includes('"source":"compact"') && !l.includes('"part":'));
    expect(starts, 'one session-start after /compact').toHaveLength(1);
    expect(starts[0], 'no ingest before the output').toMatch(/"ingest":"(?:next|deferred)"/);
    const afterCompact = fake.requests.length;
    expect((await claude(box, fake, ['--resume', session, 'Carry on with the release.'])).code).toBe(0);
    const next = fake.requests.slice(afterCompact).find((r) => r.api === 'anthropic' && (bodyOf(r).tools ?? []).length > 0);
    expect(next, 'a request after /compact').toBeDefined();
    expect(readable(next!)).toContain('the conversation was just compacted');
    expect(readable(next!)).toContain('ALPHA-7731');
    // `cairn status` counts what the project's earlier sessions needed again.
    const use = (JSON.parse(cairn(box, ['status', '--json'])) as { use: Array<{ learned: { details: number } }> }).use;
    expect(use.map((u) => u.learned.details)).toContain(LEARNED.length);
    sessions.compact = [next!];
  });

  it('a session-start context longer than the client’s 10,000 characters a hook reaches the model whole, in parts', { timeout: 120_000 }, async () => {
    const box = fresh('cairn-e2e-parts-');
    // ~20,000 characters of project memories: more than one hook's text may hold.
    const facts = Array.from(
      { length: 90 },
      (_, i) => `Module m${i} keeps its retry budget in src/m${i}/retry.ts:${40 + i} as RETRY_${i}_MAX; never raise it above ${i + 3} (PART-${String(i).padStart(3, '0')}).`,
    );
    for (const fact of facts) cairn(box, ['remember', fact]);
    cairn(box, ['install', 'claude']);
    fake.setScript(() => ({ text: 'done' }));
    const result = await claude(box, fake, ['hello']);
    expect(result.code, result.stderr).toBe(0);
    const first = fake.modelRequests().find((r) => (bodyOf(r).tools ?? []).length > 0);
    expect(first, 'a request with tools').toBeDefined();
    const text = readable(first!);
    // Without parts Claude Code would save the text to a file and show the model a 2,000-character preview.
    expect(text).not.toMatch(/Output too large|persisted-output/);
    expect(text).toContain('cairn memory, continued (part 2 of');
    const markers = new Set(text.match(/PART-\d{3}/g) ?? []);
    const delivered = facts.filter((f) => markers.has(/PART-\d{3}/.exec(f)![0]));
    // Memories past the first part's 9,500 characters reached the model too.
    expect(text.slice(text.indexOf('cairn memory, continued (part 2 of')), 'memories in the second part').toMatch(/PART-\d{3}/);
    expect(delivered.reduce((n, f) => n + f.length, 0), 'characters of memories that reached the model').toBeGreaterThan(8_000);
    for (const marker of markers) expect(occurrences(text, marker), `${marker} once`).toBe(1);
  });

  it('loads as a plugin from this repository (--plugin-dir) without errors, hooks and MCP working', { timeout: 120_000 }, async () => {
    const box = fresh('cairn-e2e-plugin-');
    fake.setScript(recallOnce(box));
    const debug = join(box.dir, 'debug.log');
    const result = await claude(box, fake, ['--plugin-dir', ROOT, '--debug-file', debug, PROMPT]);
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(debug, 'utf8')).not.toMatch(/Duplicate hooks file|hook-load-failed|Plugin loading errors/);
    const requests = record('plugin');
    expect(toolNames(requests[0]!)).toContain('mcp__plugin_cairn_cairn__recall');
    expectMemoryWorks(requests, 'plugin dir');
  });

  it('installs from a marketplace added from a git clone and works; unbuilt, it says so instead of failing silently', { timeout: 240_000 }, async () => {
    const box = fresh('cairn-e2e-market-');
    const clone = join(box.dir, 'clone');
    execFileSync('git', ['clone', '-q', ROOT, clone]);
    // Claude Code runs `npm ci --ignore-scripts` in a plugin with a lock file: point it at a
    // registry that refuses at once, so the test downloads nothing.
    const offline = { npm_config_registry: 'http://127.0.0.1:9/', npm_config_fetch_retries: '0', npm_config_fetch_timeout: '2000' };
    const env = claudeEnv(box, fake, offline);
    const add = await run(CLAUDE!, ['plugin', 'marketplace', 'add', clone], { cwd: box.project, env });
    expect(add.code, add.stderr + add.stdout).toBe(0);
    const install = await run(CLAUDE!, ['plugin', 'install', 'cairn@cairn'], { cwd: box.project, env, timeoutMs: 120_000 });
    expect(install.code, install.stderr + install.stdout).toBe(0);

    // After the README's install (`npm install -g cairn-memory` puts a built `cairn` on PATH) it works.
    linkCairnBin(box);
    fake.setScript(recallOnce(box));
    const result = await claude(box, fake, [PROMPT], offline);
    expect(result.code, result.stderr).toBe(0);
    expectMemoryWorks(record('marketplace'), 'marketplace plugin');

    // A git clone has no dist/: with no installed cairn (and the first-run build turned off, it
    // would download) the hooks say so, to the user and the model, instead of failing silently.
    rmSync(join(box.bin, 'cairn'));
    fake.requests.length = 0;
    fake.setScript(() => ({ text: 'done' }));
    const debug = join(box.dir, 'unbuilt.log');
    const unbuilt = await claude(box, fake, ['--debug-file', debug, 'hello'], { ...offline, CAIRN_PLUGIN_SETUP: '0' });
    expect(unbuilt.code, unbuilt.stderr).toBe(0);
    expect(readable(fake.modelRequests()[0]!)).toContain('cairn memory is unavailable in this session');
    expect(readFileSync(debug, 'utf8')).toMatch(/"systemMessage":"cairn is not built in [^"]*: run cd/);
  });

  it('a tool the client defers is loaded through its ToolSearch and works', { timeout: 120_000 }, async () => {
    const box = fresh('cairn-e2e-deferred-');
    cairn(box, ['install', 'claude']);
    const M3 = 'Migrations are numbered by the next free number at landing (CHARLIE-9043).';
    let searched = false;
    fake.setScript((request) => {
      if (toolResults(request).some((r) => r.includes('"created":true') || r.includes('remembered '))) return { text: 'done' };
      const loaded = toolNames(request).find((n) => /cairn__remember$/.test(n));
      if (loaded) return { tool: loaded, input: { text: M3 } };
      const listed = /mcp__[a-z_]*cairn__remember\b/.exec(readable(request))?.[0];
      if (!searched && listed && toolNames(request).includes('ToolSearch')) {
        searched = true;
        return { tool: 'ToolSearch', input: { query: `select:${listed}` } };
      }
      return { text: 'remember is not reachable' };
    });
    const result = await claude(box, fake, ['Remember how migrations are numbered.']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('done');
    expect(cairn(box, ['recall', 'CHARLIE-9043'])).toContain('CHARLIE-9043');
  });

  // Issue #16 item 2: what the model reads from cairn's tools, and no repeats across hooks and tools.
  it('tool results carry no scoring internals (issue #16 item 2)', () => {
    for (const name of ['install', 'plugin', 'marketplace']) expectNoScoringInternals(sessions[name] ?? [], name);
  });

  it('no memory is repeated within a request, at session start, per prompt or after /compact (issue #16 item 2)', () => {
    for (const name of ['install', 'plugin', 'marketplace', 'compact']) expectNoRepeats(sessions[name] ?? [], name);
  });
});
