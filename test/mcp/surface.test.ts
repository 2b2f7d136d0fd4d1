/**
 * What the model reads from cairn's MCP server (issue #16 item 2, #15 item 7): instructions,
 * results without scoring internals, the context's memories in its structured output, get by id
 * (memories and session facts), the injection ledger across hooks and tools, resources, prompts.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createCairn, type Cairn } from '../../src/cairn.js';
import { createMcpServer, type McpServerOptions } from '../../src/mcp/server.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { TranscriptWriter } from '../hooks/transcript.js';

type ToolResult = { isError?: boolean; content: Array<{ type: string; text: string }>; structuredContent?: Record<string, unknown> };

/** Keys of recall's scoring internals (as in test/e2e/harness.ts). */
const INTERNALS = ['bm25', 'bm25Rank', 'rrf', 'recency', 'recentlyRecalledPenalty', 'scopeFactor', 'tagBoost', 'halfLifeDays', 'relevance', 'score'];

let opened: Array<{ client: Client; cairn: Cairn }> = [];
afterEach(async () => {
  for (const { client, cairn } of opened) {
    await client.close();
    await cairn.close();
  }
  opened = [];
});

async function connect(options: Partial<McpServerOptions> = {}, cairnOptions: { core?: { project: string } } = {}): Promise<{ cairn: Cairn; client: Client; call: (name: string, args: Record<string, unknown>) => Promise<ToolResult> }> {
  const cairn = createCairn({ store: await openSqliteStore(':memory:'), project: 'p', actor: 'mcp', ...cairnOptions });
  const server = createMcpServer(cairn, { version: 'test', ...options });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(b);
  opened.push({ client, cairn });
  return { cairn, client, call: async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult };
}

const DEPLOY = 'Deploy with scripts/ship.sh --prod from the repository root (BRAVO-5512).';

describe('MCP: what the model reads', () => {
  it('sends server instructions that say cairn is memory and name the tools', async () => {
    const { client } = await connect();
    const instructions = client.getInstructions() ?? '';
    expect(instructions).toMatch(/long-term memory/);
    for (const tool of ['recall', 'get', 'remember', 'context']) expect(instructions).toContain(tool);
  });

  it('recall: id, kind, text and a short why, no scoring internals, at most ~400 characters for one hit', async () => {
    const { call } = await connect();
    await call('remember', { text: DEPLOY, kind: 'procedure' });
    const result = await call('recall', { query: 'how do we deploy to prod' });
    const json = JSON.stringify(result.structuredContent);
    const hit = (result.structuredContent as { hits: Array<Record<string, unknown>> }).hits[0]!;
    expect(hit).toMatchObject({ kind: 'procedure', text: DEPLOY });
    expect(hit.why).toEqual(expect.any(String));
    expect(json.length).toBeLessThanOrEqual(400);
    for (const key of INTERNALS) expect(json).not.toContain(`"${key}"`);
    expect(result.content[0]?.text).toContain(DEPLOY);
    expect(result.content[0]?.text).not.toMatch(/score/);
  });

  it('recall: scoring internals only with the debug flag', async () => {
    const { call } = await connect({ debug: true });
    await call('remember', { text: DEPLOY });
    const json = JSON.stringify((await call('recall', { query: 'deploy prod' })).structuredContent);
    expect(json).toContain('"rrf"');
    expect(json).toContain('"score"');
  });

  it('context: the structured output holds the memories with their ids, and the core memory', async () => {
    const dir = tempDir('cairn-mcp-core-');
    const core = join(dir, 'MEMORY.md');
    writeFileSync(core, '# Core\n- Always run make verify before tagging.\n');
    const { call } = await connect({}, { core: { project: core } });
    const id = (await call('remember', { text: DEPLOY, kind: 'procedure' })).structuredContent?.id as string;
    const result = await call('context', { query: 'deploy' });
    const structured = result.structuredContent as { sections: Array<{ title: string; items?: Array<{ id: string; text: string }>; text?: string }>; tokens: number };
    expect(structured.sections.flatMap((s) => s.items ?? [])).toContainEqual({ id, text: DEPLOY });
    expect(structured.sections.find((s) => s.title.startsWith('Core memory'))?.text).toContain('make verify');
    expect(structured.tokens).toBeGreaterThan(0);
  });
});

describe('MCP: get by id (memories and session facts, whole)', () => {
  it('expands memories and session facts; an unknown id says so without failing the rest', async () => {
    const { cairn, call } = await connect();
    const long = `${'The flaky watcher test needs the sqlite fixture from tests/conftest.py. '.repeat(20)}END-MARK`;
    const id = (await call('remember', { text: long, kind: 'decision', tags: ['tests'], files: ['tests/conftest.py:12'] })).structuredContent?.id as string;
    const dir = tempDir('cairn-mcp-facts-');
    const transcript = join(dir, 's1.jsonl');
    const t = new TranscriptWriter('s1', dir);
    t.user('run the watcher tests');
    t.tool('Bash', { command: 'pytest tests/test_watcher.py -x -q' }, '5 passed in 0.42s');
    writeFileSync(transcript, `${t.lines.join('\n')}\n`);
    await cairn.ingest([transcript]);
    const facts = await cairn.sessionFacts({ sessionId: 's1' });
    expect(facts.length).toBeGreaterThan(0);
    const fact = facts[0]!;

    const result = await call('get', { ids: [`[${id}]`, fact.id, '01ZZZZZZZZZZZZZZZZZZZZZZZZ'] });
    expect(result.isError).toBeFalsy();
    const items = (result.structuredContent as { items: Array<Record<string, unknown>> }).items;
    expect(items[0]).toMatchObject({ id, type: 'memory', kind: 'decision', text: long, tags: ['tests'], files: expect.arrayContaining(['tests/conftest.py:12']) });
    expect(items[1]).toMatchObject({ id: fact.id, type: 'session-fact', text: fact.text, session: 's1' });
    expect(items[2]).toMatchObject({ id: '01ZZZZZZZZZZZZZZZZZZZZZZZZ', error: expect.stringMatching(/no memory or session fact/) });
    expect(result.content[0]?.text).toContain('END-MARK');
  });

  it('cairn get ID… prints them whole, --json with versions and history; exit 1 for an unknown id', async () => {
    const home = tempDir('cairn-get-home-');
    const cwd = tempDir('cairn-get-cwd-');
    mkdirSync(join(cwd, '.git'));
    const remembered = await runCli(['remember', DEPLOY, '--json'], { home, cwd });
    const id = remembered.json<{ memory: { id: string } }>().memory.id;
    const shown = await runCli(['get', id], { home, cwd });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`[${id}]`);
    expect(shown.stdout).toContain(DEPLOY);
    const json = await runCli(['get', id, '--json'], { home, cwd });
    expect(json.json<Array<{ id: string; type: string; memory: { text: string }; events: unknown[] }>>()[0]).toMatchObject({ id, type: 'memory', memory: { text: DEPLOY } });
    const missing = await runCli(['get', id, 'fzzzzzzzzzzz'], { home, cwd });
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain(DEPLOY);
    expect(missing.stdout).toContain('no memory or session fact has id fzzzzzzzzzzz');
  });
});

describe('MCP: never the same memory twice in one context window', () => {
  it('recall marks what the session-start context already gave; context leaves it out; both are recorded', async () => {
    const { cairn, call } = await connect({ session: 'sess-9' });
    const deploy = (await call('remember', { text: DEPLOY, kind: 'procedure' })).structuredContent?.id as string;
    const other = (await call('remember', { text: 'Prod deploys need the release tag pushed first (CHARLIE-1).', kind: 'procedure' })).structuredContent?.id as string;
    // What the SessionStart hook gave this window.
    await cairn.ledger!.startWindow('sess-9', 'startup');
    await cairn.ledger!.record({ session: 'sess-9', via: 'hook', name: 'session-start', memories: [deploy], tokens: 40 });

    const recall = await call('recall', { query: 'deploy prod' });
    const json = JSON.stringify(recall.structuredContent);
    expect(json).not.toContain('BRAVO-5512');
    expect(json).toContain('CHARLIE-1');
    const hits = (recall.structuredContent as { hits: Array<{ id: string; note?: string }> }).hits;
    expect(hits.find((h) => h.id === deploy)?.note).toMatch(/already in your context/);

    const context = await call('context', { query: 'deploy prod' });
    expect(JSON.stringify(context.structuredContent)).not.toContain('BRAVO-5512');
    expect(JSON.stringify(context.structuredContent)).not.toContain('CHARLIE-1');
    expect(context.structuredContent?.alreadyInContext).toBe(2);

    const injections = await cairn.ledger!.injections('sess-9');
    expect(injections.map((i) => [i.via, i.name, i.memories])).toEqual([
      ['hook', 'session-start', [deploy]],
      ['mcp', 'recall', [other]],
    ]);
    // After a compaction the window is new: recall gives the text again.
    await cairn.ledger!.startWindow('sess-9', 'compact');
    expect(JSON.stringify((await call('recall', { query: 'deploy prod' })).structuredContent)).toContain('BRAVO-5512');
  });

  it('without a session id nothing is left out', async () => {
    const { call } = await connect();
    await call('remember', { text: DEPLOY });
    expect(JSON.stringify((await call('recall', { query: 'deploy prod' })).structuredContent)).toContain('BRAVO-5512');
    expect(JSON.stringify((await call('recall', { query: 'deploy prod' })).structuredContent)).toContain('BRAVO-5512');
  });
});

describe('MCP: resources and prompts', () => {
  it('lists core memory, the working set and memories by id; reads them', async () => {
    const dir = tempDir('cairn-mcp-res-');
    const core = join(dir, 'MEMORY.md');
    writeFileSync(core, '# Core\n- never force-push main\n');
    const { client, call } = await connect({ session: 's-res' }, { core: { project: core } });
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(expect.arrayContaining(['cairn://core/project', 'cairn://core/user', 'cairn://session/working-set']));
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(expect.arrayContaining(['cairn://memory/{id}', 'cairn://fact/{id}']));
    const read = await client.readResource({ uri: 'cairn://core/project' });
    expect((read.contents[0] as { text: string }).text).toContain('never force-push main');
    const id = (await call('remember', { text: DEPLOY })).structuredContent?.id as string;
    const memory = await client.readResource({ uri: `cairn://memory/${id}` });
    expect(JSON.parse((memory.contents[0] as { text: string }).text)).toMatchObject({ id, text: DEPLOY });
    const ws = await client.readResource({ uri: 'cairn://session/working-set' });
    expect((ws.contents[0] as { text: string }).text).toMatch(/nothing recorded for this session yet/);
  });

  it('offers the catch-up and save-findings prompts', async () => {
    const { client, call } = await connect();
    await call('remember', { text: DEPLOY });
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual(['catch-up', 'save-findings']);
    const catchUp = await client.getPrompt({ name: 'catch-up', arguments: { task: 'deploy to prod' } });
    expect(JSON.stringify(catchUp.messages)).toContain('BRAVO-5512');
    const save = await client.getPrompt({ name: 'save-findings' });
    expect(JSON.stringify(save.messages)).toMatch(/remember tool/);
  });
});
