import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Cairn } from '../cairn.js';
import { isCairnError } from '../errors.js';
import { RetrievalBudget, type BudgetLimits } from '../recall/budget.js';
import type { Logger } from '../types.js';
import { registerResources } from './resources.js';
import { registerTools } from './tools.js';

export interface McpServerOptions {
  /** Package version reported to clients. */
  version: string;
  /** Retrieval budget per connection (SPEC §4). @default 40K tokens or 20 calls */
  budget?: BudgetLimits;
  logger?: Logger;
  /**
   * The agent session this server serves (Claude Code passes CLAUDE_CODE_SESSION_ID to its MCP
   * servers): with it, tools leave out what the session's context window already holds (the
   * injection ledger) and record what they give. @default null (no de-duplication)
   */
  session?: string | null;
  /** Scoring internals in recall's structured output (`cairn mcp --debug`, CAIRN_MCP_DEBUG=1). @default false */
  debug?: boolean;
  /** Extra tools registered by later features. */
  extend?: (server: McpServer, helpers: ToolHelpers) => void;
}

/** What a tool handler returns before the guard turns it into a tool result. */
export interface ToolOutput {
  text: string;
  structured: Record<string, unknown>;
  /** Memories returned, for the retrieval budget hint. */
  items?: Array<{ id: string; label: string }>;
}

export interface ToolHelpers {
  budget: RetrievalBudget;
  /** Wrap a handler: map errors to `isError` results, count retrieval output, append the hint. */
  guard<A>(retrieval: boolean, handler: (args: A) => Promise<ToolOutput>): (args: A) => Promise<CallToolResult>;
  /**
   * Register a tool: listed with its schemas by the SDK, called through cairn's own dispatcher, which
   * answers bad arguments with an `isError` result of one line naming each field.
   */
  tool<S extends z.ZodRawShape>(
    name: string,
    config: { title: string; description: string; inputSchema: S; outputSchema?: z.ZodRawShape; annotations?: Record<string, boolean>; _meta?: Record<string, unknown> },
    handler: (args: z.infer<z.ZodObject<S>>) => Promise<CallToolResult>,
  ): void;
  options: McpServerOptions;
}

/** How cairn's tools are meant to be used, sent to the client at initialization (MCP `instructions`). */
export const INSTRUCTIONS = [
  'cairn is the long-term memory of this user’s coding work: exact findings (signatures, file:line locations, commands that worked, invariants, decisions, the user’s corrections) kept across /compact and across sessions, per project.',
  'At session start and after a compaction the relevant memories are already in your context, each with an id in brackets; they are never repeated in one context window, and tools mark what you already have instead of repeating it.',
  '- recall: search memories before re-reading files or asking the user again.',
  '- get: expand ids from the context or recall, whole (memories and session facts `f…`).',
  '- remember: store one exact finding the moment you establish it (one per call); revise or forget what turns out wrong.',
  '- context: the best memories for a task, packed into a token budget; history: what was said and tried in past sessions.',
  'Resources: cairn://core/project and cairn://core/user (core memory), cairn://session/working-set (this session’s files and commands), cairn://memory/{id}.',
].join('\n');

/** One line for a zod failure: each field and what is wrong with it. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'arguments'}: ${issue.message.replace(/\s+/g, ' ')}`)
    .join('; ');
}

/**
 * The MCP server over a cairn instance: tools (remember, recall, get, forget, revise, snapshot,
 * context, history, status), resources (core memory, the session's working set, memories by id)
 * and prompts, with server instructions. What the model reads carries no scoring internals; bad
 * arguments come back as one-line `isError` results; the server never dies on input.
 */
export function createMcpServer(cairn: Cairn, options: McpServerOptions): McpServer {
  const server = new McpServer({ name: 'cairn', title: 'cairn memory', version: options.version }, { instructions: INSTRUCTIONS });
  const budget = new RetrievalBudget(options.budget);
  const dispatch = new Map<string, { schema: z.ZodObject; handler: (args: never) => Promise<CallToolResult> }>();

  const guard: ToolHelpers['guard'] =
    <A,>(retrieval: boolean, handler: (args: A) => Promise<ToolOutput>) =>
    async (args: A): Promise<CallToolResult> => {
      try {
        const output = await handler(args);
        let text = output.text;
        const structured = { ...output.structured };
        if (retrieval) {
          budget.record(text, output.items);
          const hint = budget.hint();
          if (hint) {
            text = `${text}\n\n${hint}`;
            structured.hint = hint;
          }
        }
        return { content: [{ type: 'text', text }], structuredContent: structured };
      } catch (error) {
        if (isCairnError(error)) {
          const field = error.field ? ` (field: ${error.field})` : '';
          return { isError: true, content: [{ type: 'text', text: `${error.code}: ${error.message}${field}` }] };
        }
        options.logger?.error('mcp tool failed', { error: error instanceof Error ? error.message : String(error) });
        return { isError: true, content: [{ type: 'text', text: `internal error: ${error instanceof Error ? error.message : String(error)}` }] };
      }
    };

  const tool: ToolHelpers['tool'] = (name, config, handler) => {
    server.registerTool(name, config, handler as never);
    dispatch.set(name, { schema: z.object(config.inputSchema), handler: handler as (args: never) => Promise<CallToolResult> });
  };

  const helpers: ToolHelpers = { budget, guard, tool, options };
  registerTools(cairn, helpers);
  registerResources(server, cairn, options);
  options.extend?.(server, helpers);

  // cairn's own dispatcher replaces the SDK's: its validation error is a raw zod dump.
  server.server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name } = request.params;
    const entry = dispatch.get(name);
    if (!entry) throw new McpError(ErrorCode.InvalidParams, `unknown tool "${name}"; cairn's tools are ${[...dispatch.keys()].join(', ')}`);
    const parsed = entry.schema.safeParse(request.params.arguments ?? {});
    if (!parsed.success) return { isError: true, content: [{ type: 'text', text: `invalid arguments for ${name}: ${describeIssues(parsed.error)}` }] };
    return entry.handler(parsed.data as never);
  });
  return server;
}
