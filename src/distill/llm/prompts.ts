/**
 * What the LLM distiller asks: the observer (scoped facts from recent turns), the judge
 * (ADD / UPDATE / DELETE / NOOP against the most similar memories) and the reflector
 * (consolidation of overlapping memories). Every answer is JSON, checked by parse.ts.
 */
import type { TurnRecord } from '../../types.js';
import { commandOf, filePathOf, isInjected, toolClass, type SessionView } from '../session.js';
import { oneLine } from '../text.js';

export const OBSERVER_SYSTEM =
  'You distil a coding-agent session into durable, exact memories for the next session. ' +
  'Keep only what a careful engineer would write down: corrections and rules the user gave, decisions, preferences, ' +
  'exact signatures, file:line locations, invariants, commands that worked, error → fix pairs, configuration values. ' +
  'Never keep chatter, plans, or what is about to happen. Answer with JSON only.';

export function observerPrompt(transcript: string, max: number): string {
  return [
    `Read the session excerpt below and answer with {"facts": [...]} holding at most ${max} items, each`,
    '{"text": "...", "kind": "fact|decision|preference|procedure|correction", "scope": "user|project|session", "tags": ["..."]}.',
    'scope: "user" for the user\'s personal preferences, tools and style (true in every project); "project" for conventions,',
    'architecture and facts about this codebase; "session" for the state of the current task. A fact that fits no scope is left out.',
    'Write each text so it stands alone, with exact names, paths, lines and commands. Answer {"facts": []} when nothing is worth keeping.',
    '',
    '<session>',
    transcript,
    '</session>',
  ].join('\n');
}

export const JUDGE_SYSTEM =
  'You keep a memory store consistent. Given a new memory and the most similar stored ones, decide one action. Answer with JSON only.';

export function judgePrompt(candidate: string, similar: Array<{ id: string; text: string }>): string {
  return [
    'New memory:',
    candidate,
    '',
    'Most similar stored memories:',
    ...similar.map((m) => `- [${m.id}] ${oneLine(m.text, 400)}`),
    '',
    'Answer with one of:',
    '{"action": "ADD"} — it says something new;',
    '{"action": "UPDATE", "id": "<id>", "text": "<merged text>"} — it refines or replaces that stored memory (history is kept);',
    '{"action": "DELETE", "id": "<id>"} — that stored memory is now wrong, and the new one is added;',
    '{"action": "NOOP"} — it is already known, or not worth keeping.',
  ].join('\n');
}

export const REFLECTOR_SYSTEM =
  'You consolidate overlapping memories of a coding project into one dense, exact memory that loses no detail. Answer with JSON only.';

export function reflectorPrompt(memories: Array<{ id: string; text: string }>): string {
  return [
    'These stored memories overlap:',
    ...memories.map((m) => `- [${m.id}] ${oneLine(m.text, 400)}`),
    '',
    'Write one memory that keeps every exact name, path, line, command and rule they hold, and drops the repetition.',
    'Answer with {"text": "...", "kind": "fact|decision|preference|procedure|correction"}.',
  ].join('\n');
}

function renderTurn(view: SessionView, turn: TurnRecord): string | null {
  if (turn.flags.includes('meta') || isInjected(turn.text)) return null;
  switch (turn.role) {
    case 'user':
      return view.isHumanTurn(turn) || turn.flags.includes('interrupt') ? `[user] ${oneLine(turn.text, 1500)}` : null;
    case 'assistant':
      return view.isAgentText(turn) ? `[assistant] ${oneLine(turn.text, 1500)}` : null;
    case 'tool_call': {
      const cls = toolClass(turn.toolName);
      const what = cls === 'shell' ? commandOf(turn) : filePathOf(turn);
      return `[tool ${turn.toolName ?? '?'}] ${oneLine(what ?? turn.text, 300)}`;
    }
    case 'tool_result':
      return `[result${turn.isError ? ' error' : ''}] ${oneLine(turn.toolInput ?? turn.text, 300)}`;
    default:
      return null;
  }
}

/** The new turns of a session as a compact transcript, the most recent kept within `maxChars`. */
export function renderTranscript(view: SessionView, maxChars: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = view.turns.length - 1; i >= 0; i--) {
    const turn = view.turns[i] as TurnRecord;
    if (!view.isNew(turn)) break;
    const line = renderTurn(view, turn);
    if (line === null) continue;
    if (size + line.length + 1 > maxChars) break;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.reverse().join('\n');
}
