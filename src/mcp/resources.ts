/**
 * cairn's MCP resources and prompts: core memory, the session's working set, memories and session
 * facts by id (`cairn://memory/{id}`, `cairn://fact/{id}`), and two prompts a user can run from the
 * client (catch up on a task; save this session's findings).
 */
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { Cairn } from '../cairn.js';
import { readCore } from '../context/core.js';
import { workingSetLines, workingSetOf } from '../context/working-set.js';
import { expandIds } from './expand.js';
import { factForModel, memoryForModel } from './format.js';
import type { McpServerOptions } from './server.js';

const MARKDOWN = 'text/markdown';

/** The working set's lines for a session, within a generous budget. */
async function workingSetText(cairn: Cairn, session: string | null): Promise<string> {
  if (!session) return '(no session id: the client did not say which session this is)';
  const substrate = cairn.deps.store.substrate;
  if (!substrate) return '(this store keeps no session history)';
  const lines = workingSetLines(workingSetOf(await substrate.getTurns(session, { limit: 50_000 })), 4000);
  return lines.length > 0 ? lines.join('\n') : '(nothing recorded for this session yet: its transcript is read at session start, compaction and stop)';
}

export function registerResources(server: McpServer, cairn: Cairn, options: McpServerOptions): void {
  for (const which of ['project', 'user'] as const) {
    server.registerResource(
      `core-${which}`,
      `cairn://core/${which}`,
      {
        title: `Core memory (${which})`,
        description: `The ${which} core memory file: short rules and facts always given first (edit with \`cairn core edit${which === 'user' ? ' --user' : ''}\`).`,
        mimeType: MARKDOWN,
      },
      async (uri) => {
        const path = cairn.deps.core[which];
        const core = path ? readCore(which, path) : null;
        const text = core?.exists ? core.text : `(no ${which} core memory${path ? ` at ${path}` : ''})`;
        return { contents: [{ uri: uri.href, mimeType: MARKDOWN, text }] };
      },
    );
  }

  server.registerResource(
    'working-set',
    'cairn://session/working-set',
    {
      title: 'This session’s working set',
      description: 'Files this session edited and read, and commands that ran without error, verbatim from its transcript.',
      mimeType: 'text/plain',
    },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: await workingSetText(cairn, options.session ?? null) }] }),
  );

  const byId = (kind: 'memory' | 'fact') =>
    async (uri: URL, variables: Record<string, string | string[]>) => {
      const id = String(Array.isArray(variables.id) ? variables.id[0] : variables.id);
      const [item] = await expandIds(cairn, [id]);
      const value =
        !item || item.type === 'missing'
          ? { id, error: `no ${kind === 'memory' ? 'memory' : 'session fact'} has id ${id}` }
          : item.type === 'memory'
            ? memoryForModel(item.detail.memory, item.stale)
            : factForModel(item.fact);
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(value, null, 1) }] };
    };
  server.registerResource(
    'memory',
    new ResourceTemplate('cairn://memory/{id}', { list: undefined }),
    { title: 'A memory by id', description: 'One memory, whole (text, kind, files, status).', mimeType: 'application/json' },
    byId('memory'),
  );
  server.registerResource(
    'session-fact',
    new ResourceTemplate('cairn://fact/{id}', { list: undefined }),
    { title: 'A session fact by id', description: 'One session fact (f…), with the turns it occurs in.', mimeType: 'application/json' },
    byId('fact'),
  );

  server.registerPrompt(
    'catch-up',
    {
      title: 'Catch up from memory',
      description: 'What cairn knows that matters for a task: the memories, core memory and this session’s working set, packed into a budget.',
      argsSchema: { task: z.string().max(2000).optional().describe('What you are about to work on') },
    },
    async ({ task }) => {
      const result = await cairn.context({ budget: 2000, ...(task ? { query: task } : {}), ...(options.session ? { favorSession: options.session } : {}) });
      const body = result.markdown || 'cairn has no memories for this project yet.';
      return {
        description: 'cairn memory for the task',
        messages: [{ role: 'user', content: { type: 'text', text: `${task ? `I am about to work on: ${task}\n\n` : ''}What cairn remembers (ids expand with the get tool):\n\n${body}` } }],
      };
    },
  );

  server.registerPrompt(
    'save-findings',
    {
      title: 'Save this session’s findings',
      description: 'Ask the agent to store what this session established (signatures, path:line, commands, decisions, corrections) with remember.',
    },
    async () => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text:
              'Before we move on: store the exact findings of this session that a later session would need, with the cairn remember tool — one finding per call: ' +
              'signatures with their file:line, commands that worked, invariants, decisions and my corrections. Recall first and revise a memory instead of duplicating it. Skip what is already stored.',
          },
        },
      ],
    }),
  );
}
