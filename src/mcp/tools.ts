/**
 * cairn's MCP tools. Each result's `structuredContent` (what Claude Code and Codex hand the model)
 * holds what an agent should read, and its `content` text says the same for clients without
 * structured content. Retrieval tools consult the injection ledger when the session is known: a
 * memory the context window already holds is marked, not repeated.
 */
import { z } from 'zod';
import type { Cairn } from '../cairn.js';
import { estimateTokens } from '../tokens.js';
import { contextItems } from '../hooks/events.js';
import type { WindowContents } from '../ledger/ledger.js';
import { expandIds, MAX_EXPAND_IDS } from './expand.js';
import { contextSections, factForModel, hitForModel, hitLine, memoryForModel } from './format.js';
import { contextInput, forgetInput, historyInput, recallInput, rememberInput, reviseInput, snapshotInput, statusInput } from './schemas.js';
import type { ToolHelpers } from './server.js';

const loose: z.ZodRawShape = {};

/**
 * Claude Code (2.1.2xx on) defers MCP tools behind its ToolSearch tool: the model sees only their
 * names until it loads a schema, one extra turn. The two tools the injected context tells the agent
 * to use — `recall`, and `get` to expand an id — ask to stay loaded (the client's per-tool
 * `anthropic/alwaysLoad`); the rest stay deferred. Other clients ignore `_meta`.
 */
const ALWAYS_LOAD = { 'anthropic/alwaysLoad': true } as const;

const hitOutput = z.object({
  id: z.string(),
  kind: z.string(),
  text: z.string().optional(),
  why: z.string().optional(),
  stale: z.string().optional(),
  note: z.string().optional(),
  debug: z.record(z.string(), z.unknown()).optional(),
});

export const getInput = {
  ids: z.array(z.string().min(1).max(100)).min(1).max(MAX_EXPAND_IDS).describe('Ids to expand, as shown in brackets: memory ids (26 characters) or session fact ids (f + 11 characters)'),
};

function label(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > 80 ? `${flat.slice(0, 79)}…` : flat;
}

export function registerTools(cairn: Cairn, { guard, tool, options, budget }: ToolHelpers): void {
  const session = options.session ?? null;
  const ledger = session ? cairn.ledger : undefined;
  const seen = async (): Promise<WindowContents | null> => (ledger && session ? ledger.seen(session) : null);
  const record = async (name: string, memories: string[], facts: string[], text: string): Promise<void> => {
    if (!ledger || !session || memories.length + facts.length === 0) return;
    await ledger.record({ session, via: 'mcp', name, memories, facts, tokens: estimateTokens(text) });
  };

  tool(
    'remember',
    {
      title: 'Remember a finding',
      description:
        'Store one exact finding so it survives /compact and new sessions: a signature, a path:line, an invariant, a command that worked, a decision, or a correction the user gave. ' +
        'Keep it short and specific. Returns the id, or the existing id if already stored, plus similar memories (revise or forget them if this replaces one).',
      inputSchema: rememberInput,
      outputSchema: { id: z.string(), created: z.boolean(), similar: z.array(z.object({ id: z.string(), text: z.string() })).optional(), redacted: z.record(z.string(), z.number()).optional() },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    guard(false, async (args) => {
      const result = await cairn.remember({ ...args, source: 'manual' });
      const lines = [result.created ? `remembered ${result.memory.id}` : `already stored as ${result.memory.id}`];
      for (const s of result.similar) lines.push(`similar: [${s.id}] ${label(s.text)}`);
      const structured: Record<string, unknown> = { id: result.memory.id, created: result.created };
      if (result.similar.length > 0) structured.similar = result.similar.map((s) => ({ id: s.id, text: label(s.text) }));
      if (Object.keys(result.redacted).length > 0) structured.redacted = result.redacted;
      return { text: lines.join('\n'), structured };
    }),
  );

  tool(
    'recall',
    {
      title: 'Recall memories',
      description:
        'Search what was learned before (this project and the user): exact signatures, file:line locations, invariants, commands, decisions, corrections. ' +
        'Call it before re-reading files or asking the user again. Each hit has an id, its text, and a short why; `stale` marks a memory whose file changed. ' +
        'A memory already in your context is marked as such instead of repeated.',
      inputSchema: recallInput,
      outputSchema: { hits: z.array(hitOutput), hint: z.string().optional(), reranked: z.boolean().optional(), rerankNote: z.string().optional() },
      annotations: { readOnlyHint: true, openWorldHint: false },
      _meta: ALWAYS_LOAD,
    },
    guard(true, async (args) => {
      const [result, window] = await Promise.all([cairn.recall({ ...args, k: args.k ?? 8 }), seen()]);
      const now = cairn.deps.clock.now();
      const hits = result.hits.map((h) => hitForModel(h, now, { inContext: window?.memories.has(h.memory.id) ?? false, debug: options.debug ?? false }));
      const listed = hits.length === 0 ? `no memories match "${args.query}"` : hits.map(hitLine).join('\n');
      // Say when the order is recall's own although a rerank was on (and why), or only partly reranked.
      const rerankLine = hits.length > 0 && result.reranked !== undefined && result.rerankNote ? `\n(${result.reranked ? 'partly reranked' : 'not reranked'}: ${result.rerankNote})` : '';
      const text = listed + rerankLine;
      const given = hits.filter((h) => h.text !== undefined).map((h) => h.id);
      await record('recall', given, [], text);
      return {
        text,
        structured: { hits, ...(result.reranked !== undefined ? { reranked: result.reranked } : {}), ...(result.rerankNote ? { rerankNote: result.rerankNote } : {}) },
        items: result.hits.filter((h) => given.includes(h.memory.id)).map((h) => ({ id: h.memory.id, label: label(h.memory.text) })),
      };
    }),
  );

  tool(
    'get',
    {
      title: 'Expand ids',
      description:
        'Expand ids whole — memory ids and session fact ids (f…) as shown in brackets in the context, recall or history — with their kind, files, status and where they came from. ' +
        'Use it when a context line or hit is not enough.',
      inputSchema: getInput,
      outputSchema: { items: z.array(z.record(z.string(), z.unknown())) },
      annotations: { readOnlyHint: true, openWorldHint: false },
      _meta: ALWAYS_LOAD,
    },
    guard(true, async (args) => {
      const expanded = await expandIds(cairn, args.ids);
      const items = expanded.map((e) => (e.type === 'memory' ? memoryForModel(e.detail.memory, e.stale) : e.type === 'session-fact' ? factForModel(e.fact) : { id: e.id, error: e.error }));
      const text = expanded
        .map((e) =>
          e.type === 'memory'
            ? `[${e.id}] (${e.detail.memory.kind}) ${e.detail.memory.text}${e.stale ? ` — STALE: ${e.stale}` : ''}`
            : e.type === 'session-fact'
              ? `[${e.id}] (session fact · ${e.fact.kind}) ${e.fact.text}${e.fact.note ? ` — ${e.fact.note}` : ''}`
              : `[${e.id}] ${e.error}`,
        )
        .join('\n');
      const memories = expanded.filter((e) => e.type === 'memory').map((e) => e.id);
      const facts = expanded.filter((e) => e.type === 'session-fact').map((e) => e.id);
      await record('get', memories, facts, text);
      return { text, structured: { items }, items: expanded.filter((e) => e.type === 'memory').map((e) => ({ id: e.id, label: label(e.detail.memory.text) })) };
    }),
  );

  tool(
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

  tool(
    'revise',
    {
      title: 'Revise a memory',
      description: 'Replace a memory with corrected text. The old version is kept in history and stops being recalled.',
      inputSchema: reviseInput,
      outputSchema: { id: z.string(), supersedes: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    guard(false, async (args) => {
      const result = await cairn.revise(args.id, args.text);
      return { text: `revised ${args.id} → ${result.memory.id}`, structured: { id: result.memory.id, supersedes: args.id } };
    }),
  );

  tool(
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

  tool(
    'context',
    {
      title: 'Memory context',
      description:
        'The best memories for what you are doing, packed into a token budget: core memory, where the work left off, the user’s corrections and rules, then exact facts, each with its id. ' +
        'Use it at the start of a task or after /compact instead of re-reading files. What your context already holds is left out.',
      inputSchema: contextInput,
      outputSchema: {
        sections: z.array(z.object({ title: z.string(), items: z.array(z.object({ id: z.string(), text: z.string() })).optional(), text: z.string().optional() })),
        tokens: z.number(),
        alreadyInContext: z.number().optional(),
        warnings: z.array(z.string()).optional(),
        hint: z.string().optional(),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guard(true, async (args) => {
      const window = await seen();
      const result = await cairn.context({
        budget: args.budget ?? 1500,
        ...(args.query ? { query: args.query } : {}),
        ...(args.ranker ? { ranker: args.ranker } : {}),
        ...(session ? { favorSession: session } : {}),
        ...(window ? { exclude: window.memories, excludeFacts: window.facts, core: ![...window.blocks].some((b) => b.startsWith('core:')), workingSet: !window.blocks.has('working-set') } : {}),
      });
      const given = contextItems(result);
      const ids = given.memories;
      const skipped = window?.memories.size ?? 0;
      const note = skipped > 0 ? `\n(${skipped} memories already in your context are left out)` : '';
      const text = (result.markdown || 'no memories to add') + note;
      if (ledger && session && ids.length + given.facts.length + given.blocks.length > 0) {
        await ledger.record({ session, via: 'mcp', name: 'context', ...given, tokens: result.tokens });
      }
      const structured: Record<string, unknown> = { sections: contextSections(result.markdown), tokens: result.tokens };
      if (skipped > 0) structured.alreadyInContext = skipped;
      if (result.warnings.length > 0) structured.warnings = result.warnings;
      return { text, structured, items: ids.map((id) => ({ id, label: 'from context' })) };
    }),
  );

  tool(
    'history',
    {
      title: 'Search past sessions',
      description:
        'Search the raw turns of past agent sessions (what was tried, what failed, what the user said), e.g. "what did we try for the flaky test". ' +
        'Use recall first for distilled findings; use history for the conversation itself.',
      inputSchema: historyInput,
      outputSchema: { hits: z.array(z.object({ session: z.string(), turn: z.number(), role: z.string(), at: z.string().nullable(), text: z.string() })), hint: z.string().optional() },
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
      const at = (ms: number | null): string | null => (ms ? new Date(ms).toISOString().slice(0, 16) : null);
      const text =
        hits.length === 0
          ? `no past turns match "${args.query}"`
          : hits.map((h) => `- ${at(h.turn.at) ?? '?'} ${h.session.id.slice(0, 8)} #${h.turn.seq} ${h.turn.role}: ${h.snippet.replace(/\s+/g, ' ')}`).join('\n');
      return {
        text,
        structured: { hits: hits.map((h) => ({ session: h.session.id, turn: h.turn.seq, role: h.turn.role, at: at(h.turn.at), text: h.snippet.replace(/\s+/g, ' ') })) },
      };
    }),
  );

  tool(
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
      return { text, structured: { project: status.project, memories: { active: s.active, superseded: s.superseded, forgotten: s.forgotten }, byKind: s.byKind, recall: status.recallMode } };
    }),
  );
}
