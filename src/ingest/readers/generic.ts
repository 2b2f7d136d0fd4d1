/**
 * The generic JSONL turn log (SPEC §5.4), for agents without a reader of their own:
 * `{"turn":1,"role":"user|assistant|tool_call|tool_result","content":…,"ts":…}`, optionally with
 * `session` / `sessionId`, `cwd`, `tool` / `name`, `tool_use_id`, `is_error`, `id` / `uuid`.
 * Without a session field, the file name is the session id.
 */
import type { TurnRole } from '../../types.js';
import type { BatchBuilder } from '../builder.js';
import { compactJson, contentText, describeToolCall, stem, str, toTime } from '../text.js';
import { parseJsonLine, type LineParser } from './shared.js';

const ROLES: Record<string, TurnRole> = {
  user: 'user',
  human: 'user',
  assistant: 'assistant',
  ai: 'assistant',
  tool_call: 'tool_call',
  tool_use: 'tool_call',
  tool_result: 'tool_result',
  tool: 'tool_result',
  system: 'system',
  summary: 'summary',
};

export function createGenericParser(builder: BatchBuilder, path: string): LineParser {
  const fileSession = stem(path, '.jsonl');
  return {
    line(text, lineNo) {
      const line = parseJsonLine(text, lineNo, builder);
      if (line === null) return;
      const roleName = str(line.role);
      const role = roleName !== null ? ROLES[roleName.toLowerCase()] : undefined;
      if (role === undefined) {
        builder.unknown(roleName !== null ? `role/${roleName}` : '(no role)');
        return;
      }
      const session = builder.session(str(line.session) ?? str(line.sessionId) ?? str(line.session_id) ?? fileSession);
      const cwd = str(line.cwd);
      if (cwd !== null && session.cwd === null) session.cwd = cwd;
      const at = toTime(line.ts ?? line.timestamp ?? line.time);
      const uuid = str(line.uuid) ?? str(line.id);
      const toolName = str(line.tool) ?? str(line.name) ?? str(line.tool_name);
      const toolUseId = str(line.tool_use_id) ?? str(line.call_id);
      const flags = Array.isArray(line.flags) ? line.flags.filter((f): f is string => typeof f === 'string') : [];
      if (role === 'tool_call') {
        const input = line.input ?? line.args ?? line.arguments ?? line.content;
        builder.turn(session, {
          role,
          text: describeToolCall(toolName ?? 'tool', input),
          toolName: toolName ?? 'tool',
          toolInput: compactJson(input),
          toolUseId,
          uuid,
          line: lineNo,
          at,
          flags,
        });
        return;
      }
      const content = contentText(line.content ?? line.text ?? line.output);
      if (role === 'assistant') builder.stats.assistantMessages++;
      const turn = builder.turn(session, {
        role,
        text: content,
        toolName: role === 'tool_result' ? toolName : null,
        toolInput: role === 'tool_result' ? content : null,
        toolUseId,
        isError: line.is_error === true || line.error === true,
        uuid,
        line: lineNo,
        at,
        flags,
      });
      if (turn !== null && role === 'user') builder.title(session, turn.text, false);
    },
    end() {
      return { state: null };
    },
  };
}
