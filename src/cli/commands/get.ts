import type { Command } from 'commander';
import { estimateTokens } from '../../tokens.js';
import { expandIds, MAX_EXPAND_IDS } from '../../mcp/expand.js';
import { sessionFromEnv } from '../../mcp/stdio.js';
import { invalid } from '../../errors.js';
import { when } from '../format.js';
import type { Run } from './memory.js';

/** `cairn get ID…`: memories and session facts by id, whole (the ids the context shows in brackets). */
export function registerGetCommand(program: Command, run: Run): void {
  run(
    program
      .command('get')
      .summary('memories and session facts by id, whole')
      .description(
        'Expand the ids the context shows in brackets: memory ids (26 characters) and session fact ids (f + 11 characters), whole — ' +
          'text, kind, files, status, and for a fact every turn it occurs in. With --json: each memory with its versions and history, each fact with its sources. ' +
          'Exits 1 when an id is not found (the others are still shown).',
      )
      .argument('<ids...>', 'memory or session fact ids'),
    async (ctx, ids: string[]) => {
      if (ids.length > MAX_EXPAND_IDS) throw invalid(`at most ${MAX_EXPAND_IDS} ids at once (got ${ids.length})`, 'ids');
      const cairn = await ctx.cairn();
      const expanded = await expandIds(cairn, ids);
      if (expanded.some((e) => e.type === 'missing')) ctx.exitCode = 1;
      // Run by an agent inside a session (Claude Code passes its session id to commands): the ledger records it.
      const session = sessionFromEnv(ctx.io.env);
      const memories = expanded.filter((e) => e.type === 'memory').map((e) => e.id);
      const facts = expanded.filter((e) => e.type === 'session-fact').map((e) => e.id);
      const lines: string[] = [];
      for (const e of expanded) {
        if (e.type === 'missing') {
          lines.push(`${e.id}: ${e.error}`);
          continue;
        }
        if (e.type === 'memory') {
          const m = e.detail.memory;
          lines.push(`[${m.id}] (${m.kind} · ${m.scope}) ${m.text}`);
          const status = m.deletedAt !== null ? 'forgotten' : m.validTo !== null ? 'superseded' : 'active';
          lines.push(`  ${status} · updated ${when(m.updatedAt)}${m.tags.length ? ` · tags ${m.tags.join(', ')}` : ''}${m.project ? ` · project ${m.project}` : ''}`);
          for (const f of m.files) lines.push(`  file ${f.path}${f.line ? `:${f.line}` : ''}`);
          if (e.stale) lines.push(`  STALE: ${e.stale}`);
          continue;
        }
        const f = e.fact;
        lines.push(`[${f.id}] (session fact · ${f.kind}) ${f.text}`);
        lines.push(`  session ${f.sessionId}${f.path ? ` · ${f.path}${f.line ? `:${f.line}` : ''}` : ''}${f.note ? ` · ${f.note}` : ''}`);
        for (const s of f.sources) lines.push(`  turn ${s.seq} ${s.role}${s.toolName ? ` ${s.toolName}` : ''}${s.at ? ` ${when(s.at)}` : ''}${s.note ? `: ${s.note}` : ''}`);
      }
      if (session && cairn.ledger && memories.length + facts.length > 0) {
        await cairn.ledger.record({ session, via: 'cli', name: 'get', memories, facts, tokens: estimateTokens(lines.join('\n')) });
      }
      if (ctx.json) {
        return ctx.printJson(
          expanded.map((e) =>
            e.type === 'memory'
              ? { id: e.id, type: e.type, memory: e.detail.memory, versions: e.detail.versions, events: e.detail.events, stale: e.stale }
              : e.type === 'session-fact'
                ? { id: e.id, type: e.type, fact: e.fact }
                : { id: e.id, type: e.type, error: e.error },
          ),
        );
      }
      for (const line of lines) ctx.out(line);
    },
  );
}
