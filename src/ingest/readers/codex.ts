/**
 * Codex CLI rollouts: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`, lines of
 * `{timestamp, type, payload}` (session_meta, turn_context, response_item, event_msg, compacted),
 * and the older envelope-less lines (`{type:'message', role, content}`).
 *
 * User and assistant words are written twice (a `response_item` message and an `event_msg`);
 * the second copy is dropped. Token counts are cumulative (`total_token_usage`), so the latest
 * one is the file's total. `turn_aborted` (interrupted) is an interrupt; `compacted` a compaction.
 */
import type { BatchBuilder, SessionAcc } from '../builder.js';
import {
  compactJson,
  contentText,
  describeToolCall,
  isObject,
  num,
  obj,
  shortHash,
  stem,
  str,
  toTime,
  type JsonObject,
} from '../text.js';
import { boundedEntries, entriesOf, parseJsonLine, stateObject, type LineParser } from './shared.js';

/** Injected context Codex writes as a "user" message. */
const INJECTED = ['<environment_context>', '<user_instructions>', '# AGENTS.md', '<permissions', '<user_shell_command>', '<turn_aborted>', '<INSTRUCTIONS>'];

const PASSED_OVER_EVENTS = new Set([
  'token_count',
  'agent_reasoning',
  'agent_reasoning_raw_content',
  'task_started',
  'task_complete',
  'exec_command_begin',
  'exec_command_end',
  'patch_apply_begin',
  'patch_apply_end',
  'mcp_tool_call_begin',
  'mcp_tool_call_end',
  'web_search_begin',
  'web_search_end',
  'context_compacted',
  'thread_settings_applied',
  'thread_name_updated',
  'thread_goal_updated',
  'turn_diff',
  'item_completed',
  'item_started',
  'entered_review_mode',
  'exited_review_mode',
  'sub_agent_activity',
  'collab_agent_spawn_begin',
  'collab_agent_spawn_end',
  'collab_waiting_begin',
  'collab_waiting_end',
  'collab_close_end',
  'collab_agent_interaction_end',
  'guardian_assessment',
  'view_image_tool_call',
  'dynamic_tool_call_request',
  'dynamic_tool_call_response',
  'image_generation_end',
  'undo_completed',
  'plan_update',
  'stream_error',
  'background_event',
  'user_message_image',
]);

const PASSED_OVER_ITEMS = new Set(['reasoning', 'ghost_snapshot', 'image_generation_call', 'agent_message', 'compaction_summary']);
const PASSED_OVER_LINES = new Set(['turn_context', 'world_state', 'inter_agent_communication_metadata', 'state']);

const MAX_TOOLS = 64;

function outputText(output: unknown): { text: string; isError: boolean } {
  let text = '';
  let exit: number | null = null;
  if (typeof output === 'string') {
    text = output;
    const trimmed = output.trimStart();
    if (trimmed.startsWith('{"output"')) {
      try {
        const parsed: unknown = JSON.parse(output);
        if (isObject(parsed)) {
          text = contentText(parsed.output);
          const metadata = obj(parsed.metadata);
          if (typeof metadata?.exit_code === 'number') exit = metadata.exit_code;
        }
      } catch {
        // Keep the raw text.
      }
    }
  } else {
    text = contentText(output);
  }
  if (exit === null && text.startsWith('Exit code: ')) {
    const code = Number.parseInt(text.slice('Exit code: '.length, 'Exit code: '.length + 6), 10);
    if (Number.isFinite(code)) exit = code;
  }
  return { text, isError: exit !== null && exit !== 0 };
}

export function createCodexParser(builder: BatchBuilder, path: string, raw: unknown): LineParser {
  const state = stateObject(raw);
  let sessionId = str(state.session) ?? stem(path, '.jsonl');
  let lastUser = str(state.lastUser);
  let lastAssistant = str(state.lastAssistant);
  const tools = new Map<string, string>(entriesOf<string>(state.tools));
  let metaSeen = state.metaSeen === true;
  /** `codex exec`: a one-shot headless run (its user turns carry the `headless` flag). */
  let headless = state.headless === true;

  function session(): SessionAcc {
    return builder.session(sessionId);
  }

  function sessionMeta(payload: JsonObject): void {
    const id = str(payload.id) ?? str(payload.session_id);
    // A resumed or forked rollout repeats its ancestors' session_meta after its own: the first wins.
    if (metaSeen) return;
    metaSeen = true;
    headless = str(payload.originator) === 'codex_exec' || str(payload.source) === 'exec';
    if (id !== null) sessionId = id;
    const s = session();
    const cwd = str(payload.cwd);
    if (cwd !== null) s.cwd = cwd;
    const git = obj(payload.git);
    const branch = str(git?.branch);
    if (branch !== null && branch.length > 0) s.branch = branch;
    const parent = str(payload.parent_thread_id) ?? str(obj(obj(obj(payload.source)?.subagent)?.thread_spawn)?.parent_thread_id);
    if (parent !== null) s.parentId = parent;
    builder.time(s, toTime(payload.timestamp));
  }

  function userWords(text: string, lineNo: number, at: number | null): void {
    const trimmed = text.trim();
    if (trimmed.length === 0) return;
    if (INJECTED.some((prefix) => trimmed.startsWith(prefix))) {
      builder.meta();
      return;
    }
    // Compared by hash: the cursor state must not hold the user's words (they may hold secrets).
    const hash = shortHash(trimmed);
    if (hash === lastUser) {
      builder.pass('repeated message');
      return;
    }
    lastUser = hash;
    lastAssistant = null;
    const s = session();
    const flags = trimmed.startsWith('/') && !trimmed.includes('\n') && trimmed.length < 200 ? ['slash-command'] : headless ? ['headless'] : [];
    const turn = builder.turn(s, { role: 'user', text: trimmed, uuid: null, line: lineNo, at, flags });
    if (turn !== null && !flags.includes('slash-command')) builder.title(s, turn.text, false);
  }

  function assistantWords(text: string, lineNo: number, at: number | null): void {
    const trimmed = text.trim();
    const hash = shortHash(trimmed);
    if (trimmed.length === 0 || hash === lastAssistant) {
      builder.pass(trimmed.length === 0 ? 'empty text' : 'repeated message');
      return;
    }
    lastAssistant = hash;
    builder.stats.assistantMessages++;
    builder.turn(session(), { role: 'assistant', text: trimmed, uuid: null, line: lineNo, at });
  }

  function toolCall(name: string, input: unknown, callId: string | null, lineNo: number, at: number | null): void {
    if (callId !== null) {
      tools.delete(callId);
      tools.set(callId, name);
      if (tools.size > MAX_TOOLS) tools.delete(tools.keys().next().value as string);
    }
    builder.turn(session(), {
      role: 'tool_call',
      text: describeToolCall(name, input),
      toolName: name,
      toolInput: compactJson(input),
      toolUseId: callId,
      uuid: null,
      line: lineNo,
      at,
    });
  }

  function toolResult(output: unknown, callId: string | null, lineNo: number, at: number | null, name?: string): void {
    const { text, isError } = outputText(output);
    const toolName = callId !== null ? tools.get(callId) : undefined;
    if (callId !== null) tools.delete(callId);
    builder.turn(session(), {
      role: 'tool_result',
      text: text.length > 0 ? text : '(no output)',
      toolName: toolName ?? name ?? null,
      toolInput: text,
      toolUseId: callId,
      isError,
      uuid: null,
      line: lineNo,
      at,
    });
    lastAssistant = null;
  }

  function responseItem(item: JsonObject, lineNo: number, at: number | null): void {
    const type = str(item.type);
    switch (type) {
      case 'message': {
        const role = str(item.role);
        const text = contentText(item.content);
        if (role === 'user') userWords(text, lineNo, at);
        else if (role === 'assistant') assistantWords(text, lineNo, at);
        else builder.meta();
        return;
      }
      case 'function_call':
        toolCall(str(item.name) ?? str(obj(item.function)?.name) ?? 'function', item.arguments, str(item.call_id) ?? str(item.id), lineNo, at);
        return;
      case 'custom_tool_call':
        toolCall(str(item.name) ?? 'tool', item.input, str(item.call_id), lineNo, at);
        return;
      case 'local_shell_call':
        toolCall('shell', obj(item.action)?.command ?? item.action, str(item.call_id) ?? str(item.id), lineNo, at);
        return;
      case 'web_search_call':
        toolCall('web_search', obj(item.action) ?? item, str(item.call_id) ?? str(item.id), lineNo, at);
        return;
      case 'tool_search_call':
        toolCall('tool_search', item.arguments, str(item.call_id), lineNo, at);
        return;
      case 'function_call_output':
      case 'custom_tool_call_output':
      case 'local_shell_call_output':
        toolResult(item.output, str(item.call_id), lineNo, at);
        return;
      case 'tool_search_output':
        toolResult(compactJson(item.tools), str(item.call_id), lineNo, at);
        return;
      case 'function_result':
        toolResult(item.result, str(item.call_id), lineNo, at, str(item.name) ?? undefined);
        return;
      default:
        if (type !== null && PASSED_OVER_ITEMS.has(type)) {
          builder.pass('reasoning or snapshot');
          return;
        }
        builder.unknown(`response_item/${type ?? '(no type)'}`);
    }
  }

  function event(payload: JsonObject, lineNo: number, at: number | null): void {
    const type = str(payload.type);
    switch (type) {
      case 'user_message':
        userWords(contentText(payload.message), lineNo, at);
        return;
      case 'agent_message':
        assistantWords(contentText(payload.message), lineNo, at);
        return;
      case 'turn_aborted': {
        const reason = str(payload.reason) ?? 'interrupted';
        builder.turn(session(), {
          role: 'user',
          text: `[turn aborted: ${reason}]`,
          uuid: null,
          line: lineNo,
          at,
          flags: reason === 'interrupted' ? ['interrupt'] : [],
        });
        lastUser = null;
        return;
      }
      case 'error':
        builder.turn(session(), { role: 'system', text: str(payload.message) ?? 'error', uuid: null, line: lineNo, at, flags: ['error'] });
        return;
      default:
        if (type === 'token_count') tokens(payload);
        if (type !== null && PASSED_OVER_EVENTS.has(type)) {
          builder.pass('bookkeeping event');
          return;
        }
        builder.unknown(`event_msg/${type ?? '(no type)'}`);
    }
  }

  function tokens(payload: JsonObject): void {
    const total = obj(obj(payload.info)?.total_token_usage);
    if (total === null) return;
    builder.kept();
    const s = session();
    const cached = num(total.cached_input_tokens);
    // Cumulative: the latest total is the file's total.
    s.inputTokens = Math.max(0, num(total.input_tokens) - cached);
    s.cacheReadTokens = cached;
    s.cacheCreationTokens = num(total.cache_write_input_tokens);
    s.outputTokens = num(total.output_tokens);
  }

  function compacted(payload: JsonObject, lineNo: number, at: number | null): void {
    const s = session();
    const turn = builder.turn(s, { role: 'system', text: 'Conversation compacted', uuid: null, line: lineNo, at, flags: ['compact-boundary'] });
    if (turn === null) return;
    // The summary: `message` (local compaction), else the summary message Codex put at the end of
    // the replacement history (the user messages it kept come before it).
    let summary = str(payload.message);
    if ((summary === null || summary.trim().length === 0) && Array.isArray(payload.replacement_history)) {
      for (let i = payload.replacement_history.length - 1; i >= 0 && (summary === null || summary.trim().length === 0); i--) {
        const item = obj(payload.replacement_history[i]);
        if (item === null || str(item.type) !== 'message' || str(item.role) !== 'user') continue;
        const text = contentText(item.content).trim();
        if (!INJECTED.some((prefix) => text.startsWith(prefix))) summary = text;
      }
    }
    const kept = summary !== null && summary.trim().length > 0 ? summary.trim() : null;
    // Like Claude Code's compact boundary and its summary line: a boundary turn, then the summary.
    if (kept !== null) builder.turn(s, { role: 'summary', text: kept, uuid: null, line: lineNo, at, flags: ['compact-summary'] });
    builder.compaction({ id: turn.id, sessionId: s.id, trigger: null, preTokens: null, summary: kept, at, seq: turn.seq, sourceLine: lineNo });
    lastUser = null;
    lastAssistant = null;
  }

  return {
    line(text, lineNo) {
      const line = parseJsonLine(text, lineNo, builder);
      if (line === null) return;
      const at = toTime(line.timestamp ?? line.created_at);
      const type = str(line.type);
      const payload = obj(line.payload);
      if (payload !== null || type === 'session_meta') {
        const body = payload ?? {};
        switch (type) {
          case 'session_meta':
            sessionMeta(body);
            builder.kept();
            return;
          case 'response_item':
            responseItem(body, lineNo, at);
            builder.time(session(), at);
            return;
          case 'event_msg':
            event(body, lineNo, at);
            builder.time(session(), at);
            return;
          case 'compacted':
            compacted(body, lineNo, at);
            return;
          default:
            if (type !== null && PASSED_OVER_LINES.has(type)) {
              if (type === 'turn_context' && session().cwd === null) session().cwd = str(body.cwd);
              builder.pass('bookkeeping line');
              return;
            }
            builder.unknown(type ?? '(no type)');
            return;
        }
      }
      // Older rollouts: the first line is the session header, then bare response items.
      if (lineNo === 1 && type === null && typeof line.id === 'string' && 'timestamp' in line) {
        sessionMeta(line);
        return;
      }
      if (type === 'message' || type === null) {
        const role = str(line.role);
        if (role === null) {
          if (line.record_type !== undefined) return;
          builder.unknown('(no type)');
          return;
        }
        const content = line.content ?? line.message;
        if (role === 'user') userWords(contentText(content), lineNo, at);
        else if (role === 'assistant') assistantWords(contentText(content), lineNo, at);
        else builder.meta();
        builder.time(session(), at);
        return;
      }
      if (type !== null && PASSED_OVER_LINES.has(type)) {
        builder.pass('bookkeeping line');
        return;
      }
      responseItem(line, lineNo, at);
      builder.time(session(), at);
    },
    end() {
      return {
        state: { session: sessionId, lastUser, lastAssistant, metaSeen, headless, tools: boundedEntries(tools, MAX_TOOLS) },
      };
    },
  };
}
