import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCairn, type Cairn } from '../../src/cairn.js';
import { createMcpServer } from '../../src/mcp/server.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';

type ToolResult = { isError?: boolean; content: Array<{ type: string; text: string }>; structuredContent?: Record<string, unknown> };

describe('MCP server', () => {
  let cairn: Cairn;
  let client: Client;

  beforeEach(async () => {
    cairn = createCairn({ store: await openSqliteStore(':memory:'), project: 'p', actor: 'mcp' });
    const server = createMcpServer(cairn, { version: 'test', budget: { tokens: 200, calls: 3 } });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    client = new Client({ name: 'test', version: '1' });
    await client.connect(b);
  });
  afterEach(async () => {
    await client.close();
    await cairn.close();
  });

  const call = async (name: string, args: Record<string, unknown>): Promise<ToolResult> =>
    (await client.callTool({ name, arguments: args })) as ToolResult;

  it('lists the tools with titles, descriptions, schemas and annotations', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['context', 'forget', 'get', 'history', 'recall', 'remember', 'revise', 'snapshot', 'status']);
    for (const tool of tools) {
      expect(tool.title, tool.name).toBeTruthy();
      expect(tool.description?.length, tool.name).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.annotations, tool.name).toBeDefined();
      expect(tool.outputSchema, tool.name).toBeDefined();
    }
    expect(tools.find((t) => t.name === 'recall')?.annotations?.readOnlyHint).toBe(true);
  });

  it('remembers with a context: recall finds the memory by what it answers and shows the text alone', async () => {
    const r = await call('remember', { text: 'Five years already, since the summer of 2019.', context: 'How long have you and your husband been married?' });
    expect(r.isError).toBeFalsy();
    const id = r.structuredContent?.id as string;
    const hits = await call('recall', { query: 'married husband how long' });
    const structured = hits.structuredContent as { hits: Array<{ id: string; text: string }> };
    expect(structured.hits[0]?.id).toBe(id);
    expect(structured.hits[0]?.text).toBe('Five years already, since the summer of 2019.');
    expect((await cairn.get(id)).memory.context).toBe('How long have you and your husband been married?');
  });

  it('remembers, recalls with structured output, revises, forgets, snapshots', async () => {
    const r = await call('remember', { text: 'run the suite with npm test -- --runInBand', kind: 'procedure', tags: ['test'] });
    expect(r.isError).toBeFalsy();
    const id = r.structuredContent?.id as string;
    const hits = await call('recall', { query: 'how to run tests runInBand' });
    expect(hits.content[0]?.text).toContain(id);
    const structured = hits.structuredContent as { hits: Array<{ id: string; text: string; why: string }> };
    expect(structured.hits[0]?.id).toBe(id);
    expect(structured.hits[0]?.text).toBe('run the suite with npm test -- --runInBand');
    expect(structured.hits[0]?.why).toMatch(/query words/);
    const revised = await call('revise', { id, text: 'run the suite with npm test -- --runInBand --silent' });
    const newId = revised.structuredContent?.id as string;
    expect(newId).not.toBe(id);
    expect((await call('snapshot', { label: 's1' })).structuredContent).toMatchObject({ label: 's1', memoryCount: 1 });
    expect((await call('forget', { ids: [newId] })).structuredContent).toMatchObject({ forgotten: [newId] });
    expect((await call('status', {})).content[0]?.text).toContain('1 forgotten');
  });

  it('answers bad arguments with isError naming the field, and keeps serving', async () => {
    const bad = await call('remember', { text: 42 });
    expect(bad.isError).toBe(true);
    expect(bad.content[0]?.text).toMatch(/text/);
    const badKind = await call('remember', { text: 'x', kind: 'bogus' });
    expect(badKind.isError).toBe(true);
    expect(badKind.content[0]?.text).toMatch(/kind/);
    const missing = await call('forget', { ids: ['nope'] });
    expect(missing.isError).toBe(true);
    expect(missing.content[0]?.text).toMatch(/NOT_FOUND.*field: id/);
    const huge = await call('recall', { query: '' });
    expect(huge.isError).toBe(true);
    expect(huge.content[0]?.text).toMatch(/query/);
    expect((await call('status', {})).isError).toBeFalsy();
  });

  it('appends the retrieval budget hint past the limit, listing ids', async () => {
    const r = await call('remember', { text: 'the retry budget is five attempts' });
    const id = r.structuredContent?.id as string;
    const texts: string[] = [];
    for (let i = 0; i < 4; i++) texts.push((await call('recall', { query: 'retry budget' })).content[0]?.text ?? '');
    expect(texts[0]).not.toContain('already returned');
    expect(texts[3]).toContain('already returned stays retrievable by id');
    expect(texts[3]).toContain(id);
  });
});
