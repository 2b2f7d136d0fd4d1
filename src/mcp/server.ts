import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Cairn } from '../cairn.js';
import { isCairnError } from '../errors.js';
import { RetrievalBudget, type BudgetLimits } from '../recall/budget.js';
import type { RecallHit } from '../recall/recall.js';
import type { Logger, Memory } from '../types.js';
import { contextInput, forgetInput, historyInput, recallInput, rememberInput, reviseInput, snapshotInput, statusInput } from './schemas.js';

export interface McpServerOptions {
  /** Package version reported to clients. */
  version: string;
  /** Retrieval budget per connection (SPEC §4). @default 40K tokens or 20 calls */
  budget?: BudgetLimits;
  logger?: Logger;
  /** Extra tools registered by later features (context, history …). */
  extend?: (server: McpServer, helpers: ToolHelpers) => void;
}

export interface ToolHelpers {
  budget: RetrievalBudget;
  /** Wrap a handler: map errors to `isError` results, count retrieval output, append the hint. */
  guard<A>(retrieval: boolean, handler: (args: A) => Promise<ToolOutput>): (args: A) => Promise<CallToolResult>;
}

export interface ToolOutput {
  text: string;
  structured: Record<string, unknown>;
  /** Memories returned, for the retrieval budget hint. */
  items?: Array<{ id: string; label: string }>;
}

const loose = z.object({}).passthrough();

function label(memory: Memory): string {
  const flat = memory.text.replace(/\s+/g, ' ');
  return flat.length > 80 ? `${flat.slice(0, 79)}…` : flat;
}

function hitText(hit: RecallHit): string {
  const stale = hit.staleness.stale ? `; STALE: ${hit.staleness.reasons.join(', ')}` : '';
  const files = hit.staleness.files
    .filter((f) => f.status === 'line-moved' && f.movedTo)
    .map((f) => ` (${f.path}:${f.line} moved to line ${f.movedTo})`)
    .join('');
  return `- [${hit.memory.id}] (${hit.memory.kind} · score ${hit.score.toFixed(2)}${stale}) ${hit.memory.text}${files}`;
}

/**
 * The MCP server over a cairn instance: remember, recall, forget, revise, snapshot, status.
 * Bad arguments come back as `isError` results naming the field; the server never dies on input.
 */
export function createMcpServer(cairn: Cairn, options: McpServerOptions): McpServer {
  const server = new McpServer({ name: 'cairn', version: options.version });
  const budget = new RetrievalBudget(options.budget);

  const guard: ToolHelpers['guard'] =
    <A,>(retrieval: boolean, handler: (args: A) => Promise<ToolOutput>) =>
    async (args: A): Promise<CallToolResult> => {
      try {
        const output = await handler(args);
        let text = output.text;
        if (retrieval) {
          budget.record(text, output.items);
          const hint = budget.hint();
          if (hint) text = `${text}\n\n${hint}`;
        }
        return { content: [{ type: 'text', text }], structuredContent: output.structured };
      } catch (error) {
        if (isCairnError(error)) {
          const field = error.field ? ` (field: ${error.field})` : '';
          return { isError: true, content: [{ type: 'text', text: `${error.code}: ${error.message}${field}` }] };
        }
        options.logger?.error('mcp tool failed', { error: error instanceof Error ? error.message : String(error) });
        return { isError: true, content: [{ type: 'text', text: `internal error: ${error instanceof Error ? error.message : String(error)}` }] };
      }
    };

  server.registerTool(
    'remember',
    {
      title: 'Remember a finding',
      description:
        'Store one exact finding so it survives /compact and new sessions: a signature, a path:line, an invariant, a command that worked, a decision, or a correction the user gave. ' +
        'Keep it short and specific. Returns the id, or the existing id if already stored, plus similar memories (revise or forget them if this replaces one).',
      inputSchema: rememberInput,
      outputSchema: loose,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    guard(false, async (args) => {
      const result = await cairn.remember({ ...args, source: 'manual' });
      const lines = [result.created ? `remembered ${result.memory.id}` : `already stored as ${result.memory.id}`];
      for (const s of result.similar) lines.push(`similar: [${s.id}] ${label({ text: s.text } as Memory)}`);
      return { text: lines.join('\n'), structured: { id: result.memory.id, created: result.created, similar: result.similar, redacted: result.redacted } };
    }),
  );

  server.registerTool(
    'recall',
    {
      title: 'Recall memories',
      description:
        'Search what was learned before (this project and the user): exact signatures, file:line locations, invariants, commands, decisions, corrections. ' +
        'Call it before re-reading files or asking the user again. Results are ranked, each with an id; STALE marks a memory whose file changed.',
      inputSchema: recallInput,
      outputSchema: loose,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guard(true, async (args) => {
      const result = await cairn.recall({ ...args, k: args.k ?? 8 });
      const text = result.hits.length === 0 ? `no memories match "${args.query}"` : result.hits.map(hitText).join('\n');
      return {
        text,
        structured: {
          mode: result.mode,
          hits: result.hits.map((h) => ({ id: h.memory.id, text: h.memory.text, kind: h.memory.kind, scope: h.memory.scope, tags: h.memory.tags, score: h.score, why: h.why, staleness: h.staleness })),
        },
        items: result.hits.map((h) => ({ id: h.memory.id, label: label(h.memory) })),
      };
    }),
  );

  server.registerTool(
    'forget',
    {
      title: 'Forget memories',
      description: 'Soft-delete memories that are wrong or obsolete (restorable with `cairn restore`). Give the ids from recall.',
      inputSchema: forgetInput,
      outputSchema: loose,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    guard(false, async (args) => {
      const result = await cairn.forget(args.ids, args.reason);
      return { text: `forgot ${result.forgotten.length} (already forgotten: ${result.unchanged.length})`, structured: { ...result } };
    }),
  );

  server.registerTool(
    'revise',
    {
      title: 'Revise a memory',
      description: 'Replace a memory with corrected text. The old version is kept in history and stops being recalled.',
      inputSchema: reviseInput,
      outputSchema: loose,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    guard(false, async (args) => {
      const result = await cairn.revise(args.id, args.text);
      return { text: `revised ${args.id} → ${result.memory.id}`, structured: { id: result.memory.id, supersedes: args.id } };
    }),
  );

  server.registerTool(
    'snapshot',
    {
      title: 'Snapshot memory',
      description: 'Seal the current memory set under a label (before a risky change), so it can be recalled as-of or diffed later.',
      inputSchema: snapshotInput,
      outputSchema: loose,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    guard(false, async (args) => {
      const snap = await cairn.snapshot(args.label);
      return { text: `snapshot ${snap.label}: ${snap.memoryCount} memories`, structured: { ...snap } };
    }),
  );

  server.registerTool(
    'context',
    {
      title: 'Memory context',
      description:
        'The best memories for what you are doing, packed into a token budget as Markdown: core memory, where the work left off, the user’s corrections and rules, then exact facts. ' +
        'Use it at the start of a task or after /compact instead of re-reading files.',
      inputSchema: contextInput,
      outputSchema: loose,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guard(true, async (args) => {
      const result = await cairn.context({ budget: args.budget ?? 1500, ...(args.query ? { query: args.query } : {}), ...(args.ranker ? { ranker: args.ranker } : {}) });
      const ids = result.sections.flatMap((s) => s.ids);
      return {
        text: result.markdown || 'no memories stored yet',
        structured: { tokens: result.tokens, budget: result.budget, sections: result.sections, omitted: result.omitted.length, warnings: result.warnings },
        items: ids.map((id) => ({ id, label: 'from context' })),
      };
    }),
  );

  server.registerTool(
    'history',
    {
      title: 'Search past sessions',
      description:
        'Search the raw turns of past agent sessions (what was tried, what failed, what the user said), e.g. "what did we try for the flaky test". ' +
        'Use recall first for distilled findings; use history for the conversation itself.',
      inputSchema: historyInput,
      outputSchema: loose,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guard(true, async (args) => {
      const project = args.allProjects ? undefined : (cairn.deps.project ?? undefined);
      const hits = await cairn.history({
        query: args.query,
        limit: args.limit ?? 10,
        ...(project ? { project } : {}),
        ...(args.sessionId ? { sessionId: args.sessionId } : {}),
        ...(args.roles ? { roles: args.roles } : {}),
        ...(args.sinceDays !== undefined ? { since: cairn.deps.clock.now() - args.sinceDays * 86_400_000 } : {}),
      });
      const text =
        hits.length === 0
          ? `no past turns match "${args.query}"`
          : hits
              .map((h) => `- ${h.turn.at ? new Date(h.turn.at).toISOString().slice(0, 16) : '?'} ${h.session.id.slice(0, 8)} #${h.turn.seq} ${h.turn.role}: ${h.snippet.replace(/\s+/g, ' ')}`)
              .join('\n');
      return {
        text,
        structured: { hits: hits.map((h) => ({ sessionId: h.session.id, seq: h.turn.seq, role: h.turn.role, at: h.turn.at, snippet: h.snippet, score: h.score })) },
      };
    }),
  );

  server.registerTool(
    'status',
    {
      title: 'Memory status',
      description: 'Counts of stored memories by kind and scope, the embedder, and this session’s retrieval usage.',
      inputSchema: statusInput,
      outputSchema: loose,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guard(false, async () => {
      const status = await cairn.status();
      const s = status.stats;
      const text = [
        `project: ${status.project ?? '(none)'}`,
        `memories: ${s.active} active, ${s.superseded} superseded, ${s.forgotten} forgotten`,
        `by kind: ${Object.entries(s.byKind).map(([k, n]) => `${k} ${n}`).join(', ') || '–'}`,
        `recall: ${status.recallMode}${status.embedder ? ` (${status.embedder.model})` : ''}`,
        `this session retrieved ~${budget.usage.tokens} tokens in ${budget.usage.calls} calls`,
      ].join('\n');
      return { text, structured: { ...status, retrieval: budget.usage } };
    }),
  );

  options.extend?.(server, { budget, guard });
  return server;
}
