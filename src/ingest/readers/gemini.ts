/**
 * Gemini CLI chats: `~/.gemini/tmp/<project>/chats/session-*.json` (one JSON document rewritten
 * as the chat grows: `{sessionId, messages:[…]}`, or the older `{history:[{role, parts}]}`) and
 * the newer `session-*.jsonl` (a header line, then one message per line, `$set` updates).
 *
 * Messages: `user`, `gemini`/`model` (text, `toolCalls` with their results, `tokens`), `info`
 * ("Request cancelled." is an interrupt), `error`/`warning`. Turn ids come from message ids, so a
 * rewritten document re-read from the start adds nothing twice.
 *
 * Gemini CLI 0.61 also records each tool result again as a `user` message of `functionResponse`
 * parts (read once, from the call), wraps tool output in `<untrusted_context>` (unwrapped here:
 * the envelope is not the tool's output, and a command's printed lines keep their line numbers),
 * and records hook context (`<hook_context>`, e.g. cairn's own session-start context) inside the
 * user's message (left out: not the user's words).
 */
import type { BatchBuilder, SessionAcc } from '../builder.js';
import { compactJson, contentText, describeToolCall, isObject, num, obj, stem, str, toTime, type JsonObject } from '../text.js';
import { parseJsonLine, stateObject, type LineParser } from './shared.js';

const CANCELLED = /\b(?:request )?cancel+ed\b/i;
const EXIT_CODE = /Exit Code: (-?\d+)/;
const UNTRUSTED = /^<untrusted_context>\n([\s\S]*)\n<\/untrusted_context>$/;
const HOOK_CONTEXT = /<hook_context>[\s\S]*?<\/hook_context>\s*/g;

/** A tool's output without Gemini CLI's `<untrusted_context>` envelope (its escaped closing tag restored). */
function unwrapUntrusted(text: string): string {
  const m = UNTRUSTED.exec(text);
  return m === null ? text : m[1]!.replaceAll('&lt;/untrusted_context&gt;', '</untrusted_context>');
}

/** Tool-call ids whose results were read from the call (`toolCalls[].result`), so a later `functionResponse` repeating them is skipped. */
export type SeenCalls = Set<string>;
const MAX_SEEN_CALLS = 512;

function rememberCall(seen: SeenCalls, id: string): void {
  seen.add(id);
  if (seen.size > MAX_SEEN_CALLS) seen.delete(seen.values().next().value as string);
}

function toolResultText(call: JsonObject): string {
  const results = call.result;
  if (Array.isArray(results)) {
    const parts: string[] = [];
    for (const result of results) {
      const response = obj(obj(obj(result)?.functionResponse)?.response);
      if (response === null) continue;
      const text = str(response.output) ?? str(response.error) ?? compactJson(response);
      if (text.length > 0) parts.push(unwrapUntrusted(text));
    }
    if (parts.length > 0) return parts.join('\n');
  }
  return str(call.resultDisplay) ?? contentText(results);
}

function addTokens(session: SessionAcc, tokens: JsonObject | null): void {
  if (tokens === null) return;
  const cached = num(tokens.cached);
  session.inputTokens += Math.max(0, num(tokens.input) - cached);
  session.cacheReadTokens += cached;
  session.outputTokens += num(tokens.output) + num(tokens.thoughts);
}

/** Text parts, function calls and function responses of a `{role, parts}` history entry. */
function historyParts(parts: unknown): { text: string; calls: JsonObject[]; responses: JsonObject[] } {
  const texts: string[] = [];
  const calls: JsonObject[] = [];
  const responses: JsonObject[] = [];
  if (Array.isArray(parts)) {
    for (const part of parts) {
      const p = obj(part);
      if (p === null) continue;
      if (typeof p.text === 'string') texts.push(p.text);
      else if (isObject(p.functionCall)) calls.push(p.functionCall);
      else if (isObject(p.functionResponse)) responses.push(p.functionResponse);
      else if (isObject(p.inlineData)) texts.push('[image]');
    }
  } else {
    const text = contentText(parts);
    if (text.length > 0) texts.push(text);
  }
  return { text: texts.join('\n'), calls, responses };
}

/**
 * Gemini CLI's chat compression (`/compress`, or automatic near the context limit) replaces the
 * history with a `<state_snapshot>` summary sent as a user message; sessions that record the
 * compressed history hold that message. It is a compaction, like Claude Code's compact boundary.
 */
const SNAPSHOT = '<state_snapshot>';

function isCompressionSummary(text: string): boolean {
  return text.trimStart().startsWith(SNAPSHOT);
}

/** A boundary turn, the summary turn and the compaction, as the Claude Code reader records them. */
function compression(builder: BatchBuilder, session: SessionAcc, summary: string, id: string, line: number, at: number | null): void {
  const boundary = builder.turn(session, { role: 'system', text: 'Conversation compacted', uuid: id, line, at, flags: ['compact-boundary'] });
  if (boundary === null) return;
  const turn = builder.turn(session, { role: 'summary', text: summary.trim(), uuid: id, line, at, flags: ['compact-summary'] });
  builder.compaction({ id: boundary.id, sessionId: session.id, trigger: null, preTokens: null, summary: turn?.text ?? null, at, seq: boundary.seq, sourceLine: line });
}

/** Add one chat message (either layout) to the session. */
function addMessage(builder: BatchBuilder, session: SessionAcc, message: JsonObject, line: number, fallbackId: string, countTokens: boolean, seen: SeenCalls): void {
  const id = str(message.id) ?? fallbackId;
  const type = str(message.type) ?? str(message.role);
  const at = toTime(message.timestamp ?? message.ts);
  builder.time(session, at);
  const parts = historyParts(message.content ?? message.parts);
  switch (type) {
    case 'user': {
      if (isCompressionSummary(parts.text)) {
        compression(builder, session, parts.text, id, line, at);
        return;
      }
      const text = (str(message.displayContent) ?? parts.text).replace(HOOK_CONTEXT, '');
      if (text.trim().length > 0) {
        const turn = builder.turn(session, { role: 'user', text, uuid: id, line, at });
        if (turn !== null) builder.title(session, turn.text, false);
      }
      for (const response of parts.responses) {
        const callId = str(response.id);
        if (callId !== null && seen.has(callId)) continue;
        const text = compactJson(response.response);
        builder.turn(session, { role: 'tool_result', text, toolName: str(response.name), toolInput: text, uuid: id, line, at });
      }
      return;
    }
    case 'gemini':
    case 'model':
    case 'assistant': {
      builder.stats.assistantMessages++;
      if (countTokens) addTokens(session, obj(message.tokens));
      builder.turn(session, { role: 'assistant', text: parts.text, uuid: id, line, at });
      for (const call of parts.calls) {
        const name = str(call.name) ?? 'function';
        builder.turn(session, { role: 'tool_call', text: describeToolCall(name, call.args), toolName: name, toolInput: compactJson(call.args), uuid: id, line, at });
      }
      const toolCalls = message.toolCalls;
      if (!Array.isArray(toolCalls)) return;
      for (const value of toolCalls) {
        const call = obj(value);
        if (call === null) continue;
        const name = str(call.name) ?? 'tool';
        const callId = str(call.id);
        if (callId !== null && Array.isArray(call.result)) rememberCall(seen, callId);
        const callAt = toTime(call.timestamp) ?? at;
        builder.turn(session, { role: 'tool_call', text: describeToolCall(name, call.args), toolName: name, toolInput: compactJson(call.args), toolUseId: callId, uuid: id, line, at: callAt });
        const output = toolResultText(call);
        const status = str(call.status);
        const exit = EXIT_CODE.exec(output.slice(0, 4000));
        const isError = (status !== null && status !== 'success') || (exit !== null && exit[1] !== '0');
        builder.turn(session, {
          role: 'tool_result',
          text: output.length > 0 ? output : `(${status ?? 'no output'})`,
          toolName: name,
          toolInput: output,
          toolUseId: callId,
          isError,
          uuid: id,
          line,
          at: callAt,
          flags: status === 'cancelled' ? ['rejection'] : [],
        });
      }
      return;
    }
    case 'info': {
      const text = parts.text;
      const cancelled = CANCELLED.test(text);
      builder.turn(session, { role: cancelled ? 'user' : 'system', text, uuid: id, line, at, flags: cancelled ? ['interrupt'] : ['info'] });
      return;
    }
    case 'error':
    case 'warning':
      builder.turn(session, { role: 'system', text: parts.text, uuid: id, line, at, flags: [type] });
      return;
    default:
      builder.unknown(`message/${type ?? '(no type)'}`);
  }
}

/** The whole-document layout (`session-*.json`). */
export function parseGeminiDocument(builder: BatchBuilder, path: string, text: string): void {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    builder.bad(1, 'invalid or incomplete JSON document');
    return;
  }
  if (!isObject(doc)) {
    builder.bad(1, 'JSON document is not an object');
    return;
  }
  const session = builder.session(str(doc.sessionId) ?? stem(path, '.json'));
  builder.time(session, toTime(doc.startTime ?? doc.start_time));
  const summary = str(doc.summary);
  if (summary !== null) builder.title(session, summary, true);
  const messages = Array.isArray(doc.messages) ? doc.messages : Array.isArray(doc.history) ? doc.history : null;
  if (messages === null) {
    builder.bad(1, 'JSON document has no messages');
    return;
  }
  const seen: SeenCalls = new Set();
  messages.forEach((value, index) => {
    const message = obj(value);
    if (message === null) builder.bad(1, `message ${index} is not an object`);
    else addMessage(builder, session, message, index + 1, `m${index}`, true, seen);
  });
}

/** The JSONL layout (`session-*.jsonl`): a header line, then one message per line. */
export function createGeminiLineParser(builder: BatchBuilder, path: string, raw: unknown): LineParser {
  const state = stateObject(raw);
  let sessionId = str(state.session) ?? stem(path, '.jsonl');
  const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);
  const counted = new Set<string>(strings(state.counted));
  const seen: SeenCalls = new Set(strings(state.calls));
  return {
    line(text, lineNo) {
      const line = parseJsonLine(text, lineNo, builder);
      if (line === null) return;
      if ('$set' in line || '$unset' in line) {
        // A compressed history is written back whole (`$set: {messages}`): its snapshot message
        // is the compaction; the other messages were read from their own lines already.
        const messages = obj(line.$set)?.messages;
        if (Array.isArray(messages)) {
          messages.forEach((value, index) => {
            const message = obj(value);
            if (message === null || (str(message.type) ?? str(message.role)) !== 'user') return;
            const text = historyParts(message.content ?? message.parts).text;
            if (isCompressionSummary(text)) compression(builder, builder.session(sessionId), text, str(message.id) ?? `${lineNo}-${index}`, lineNo, toTime(message.timestamp));
          });
        }
        builder.pass('metadata update');
        return;
      }
      if (typeof line.sessionId === 'string' && !('type' in line)) {
        sessionId = line.sessionId;
        builder.time(builder.session(sessionId), toTime(line.startTime));
        builder.kept();
        return;
      }
      const id = str(line.id) ?? `${lineNo}`;
      // A message rewritten later (tool results arriving) repeats its id: tokens count once.
      const first = !counted.has(id);
      if (first) {
        counted.add(id);
        if (counted.size > 512) counted.delete(counted.values().next().value as string);
      }
      addMessage(builder, builder.session(sessionId), line, lineNo, id, first, seen);
    },
    end() {
      return { state: { session: sessionId, counted: [...counted], calls: [...seen] } };
    },
  };
}
