import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCairn, type Cairn } from '../../src/cairn.js';
import { confinePath, createMemoryTool, type MemoryTool } from '../../src/memorytool/memory-tool.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';

describe('Anthropic memory tool backend (memory_20250818)', () => {
  let cairn: Cairn;
  let tool: MemoryTool;
  beforeEach(async () => {
    cairn = createCairn({ store: await openSqliteStore(':memory:'), project: 'p' });
    tool = createMemoryTool(cairn);
  });
  afterEach(() => cairn.close());

  it('creates, views with line numbers, edits, inserts, renames and deletes', async () => {
    expect(await tool.execute({ command: 'create', path: '/memories/notes/api.md', file_text: 'port: 8080\nretries: 3' })).toContain('created');
    expect(await tool.execute({ command: 'view', path: '/memories/notes/api.md' })).toMatch(/\s+1\tport: 8080\n\s+2\tretries: 3/);
    expect(await tool.execute({ command: 'view', path: '/memories' })).toContain('/memories/notes/api.md');
    await tool.execute({ command: 'str_replace', path: '/memories/notes/api.md', old_str: 'port: 8080', new_str: 'port: 9090' });
    await tool.execute({ command: 'insert', path: '/memories/notes/api.md', insert_line: 1, insert_text: 'host: localhost' });
    expect(await tool.execute({ command: 'view', path: '/memories/notes/api.md', view_range: [1, 2] })).toMatch(/1\tport: 9090\n\s+2\thost: localhost$/);
    await tool.execute({ command: 'rename', old_path: '/memories/notes/api.md', new_path: '/memories/api.md' });
    expect((await tool.handle({ command: 'view', path: '/memories/notes/api.md' })).is_error).toBe(true);
    // every edit is a revision: the history is kept and recall finds the current text
    const hit = (await cairn.recall({ query: 'port 9090' })).hits[0];
    expect(hit?.memory.meta.memoryToolPath).toBe('/memories/api.md');
    expect((await cairn.get(hit!.memory.id)).versions.length).toBe(4);
    expect(await tool.execute({ command: 'delete', path: '/memories/api.md' })).toContain('deleted');
    expect((await cairn.list({ onlyDeleted: true })).length).toBe(1);
    expect((await tool.handle({ command: 'view', path: '/memories/api.md' })).is_error).toBe(true);
  });

  it('confines every path to /memories', () => {
    for (const bad of ['/etc/passwd', '/memories/../etc/passwd', '/memories/%2e%2e/secret', '..', '/memories\\..\\x', '/memoriesX/a', '/memories/a\0b', '']) {
      expect(() => confinePath(bad), bad).toThrow();
    }
    expect(confinePath('/memories//a/./b.md')).toBe('/memories/a/b.md');
  });

  it('reports bad commands as tool errors, never throwing out', async () => {
    expect(await tool.handle({ command: 'explode' })).toMatchObject({ is_error: true });
    expect(await tool.handle({ command: 'create', path: '/tmp/x', file_text: 'x' })).toMatchObject({ is_error: true, content: expect.stringContaining('outside /memories') });
    await tool.execute({ command: 'create', path: '/memories/a.md', file_text: 'same same' });
    expect((await tool.handle({ command: 'str_replace', path: '/memories/a.md', old_str: 'same', new_str: 'x' })).content).toMatch(/appears 2 times/);
    expect((await tool.handle({ command: 'str_replace', path: '/memories/a.md', old_str: 'absent', new_str: 'x' })).content).toMatch(/did not appear/);
    expect((await tool.handle({ command: 'insert', path: '/memories/a.md', insert_line: 99, insert_text: 'x' })).content).toMatch(/past the end/);
  });
});
