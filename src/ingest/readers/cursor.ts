/**
 * Cursor agent transcripts (`~/.cursor/projects/<project>/agent-transcripts/<id>.jsonl`, with
 * subagents in `<id>/subagents/<child>.jsonl`): `{role, message:{content:[blocks]}}` lines
 * without ids or timestamps, so turns are keyed by line number. The user's words are wrapped
 * in `<user_query>`.
 */
import type { BatchBuilder, SessionAcc } from '../builder.js';
import { compactJson, contentText, describeToolCall, obj, stem, str, tagContent } from '../text.js';
import { parseJsonLine, type LineParser } from './shared.js';

const PASSED_OVER = new Set(['turn_ended', 'turn_started', 'status']);

function sessionIds(path: string): { id: string; parent: string | null } {
  const parts = path.replaceAll('\\', '/').split('/');
  const name = stem(path, '.jsonl');
  const dir = parts.at(-2);
  const parentDir = parts.at(-3);
  if (dir === 'subagents' && parentDir !== undefined) return { id: `${parentDir}/subagent-${name}`, parent: parentDir };
  return { id: name, parent: null };
}

export function createCursorParser(builder: BatchBuilder, path: string): LineParser {
  const ids = sessionIds(path);
  function session(): SessionAcc {
    const s = builder.session(ids.id);
    if (ids.parent !== null) s.parentId = ids.parent;
    return s;
  }
  return {
    line(text, lineNo) {
      const line = parseJsonLine(text, lineNo, builder);
      if (line === null) return;
      const role = str(line.role);
      const message = obj(line.message);
      if (role === null || message === null) {
        const type = str(line.type);
        if (type !== null && PASSED_OVER.has(type)) return;
        builder.unknown(type ?? role ?? '(no role)');
        return;
      }
      const s = session();
      const flags = ids.parent !== null ? ['sidechain'] : [];
      const blocks = Array.isArray(message.content) ? message.content : [message.content];
      let words = '';
      const flush = (): void => {
        const trimmed = words.trim();
        words = '';
        if (trimmed.length === 0) return;
        if (role === 'user') {
          const query = (tagContent(trimmed, 'user_query') ?? trimmed).trim();
          const turn = builder.turn(s, { role: 'user', text: query, uuid: null, line: lineNo, at: null, flags });
          if (turn !== null && ids.parent === null) builder.title(s, turn.text, false);
        } else {
          builder.stats.assistantMessages++;
          builder.turn(s, { role: 'assistant', text: trimmed, uuid: null, line: lineNo, at: null, flags });
        }
      };
      for (const value of blocks) {
        const block = obj(value);
        const type = str(block?.type);
        if (block === null || type === 'text' || (type !== null && !type.includes('tool') && typeof block.text === 'string')) {
          const part = contentText(value);
          if (part.length > 0) words = words.length === 0 ? part : `${words}\n${part}`;
        } else if (type === 'tool_use' || type === 'tool_call') {
          flush();
          const name = str(block.name) ?? 'tool';
          builder.turn(s, { role: 'tool_call', text: describeToolCall(name, block.input), toolName: name, toolInput: compactJson(block.input), toolUseId: str(block.id), uuid: null, line: lineNo, at: null, flags });
        } else if (type === 'tool_result' || type === 'tool-result') {
          flush();
          const output = contentText(block.content);
          builder.turn(s, { role: 'tool_result', text: output.length > 0 ? output : '(no output)', toolName: str(block.name), toolInput: output, toolUseId: str(block.tool_use_id), isError: block.is_error === true, uuid: null, line: lineNo, at: null, flags });
        }
        // thinking: not kept.
      }
      flush();
    },
    end() {
      return { state: null };
    },
  };
}
