/**
 * A session's turns as the extractors see them: tool calls paired with their results, tool
 * inputs parsed (tolerating the bounded, possibly cut JSON the readers keep), paths made relative
 * to the session's folder, and the turns that are not the user's own words (subagent prompts,
 * slash commands, hook-injected context, cairn's own output) told apart.
 */
import { NOT_USER_WORDS, isInjected, type UserMessageContext } from '../ingest/user-message.js';
import type { CorrectionRecord, Provenance, SessionRecord, TurnRecord } from '../types.js';

/** What a tool does, whatever the agent calls it. */
export type ToolClass = 'shell' | 'read' | 'edit' | 'search' | 'todo' | 'other';

const TOOL_CLASSES: Record<string, ToolClass> = {
  bash: 'shell',
  shell: 'shell',
  shell_command: 'shell',
  exec_command: 'shell',
  run_shell_command: 'shell',
  run_terminal_cmd: 'shell',
  execute_command: 'shell',
  local_shell: 'shell',
  terminal: 'shell',
  read: 'read',
  read_file: 'read',
  readfile: 'read',
  view: 'read',
  open_file: 'read',
  edit: 'edit',
  multiedit: 'edit',
  write: 'edit',
  write_file: 'edit',
  writefile: 'edit',
  replace: 'edit',
  apply_patch: 'edit',
  edit_file: 'edit',
  create_file: 'edit',
  str_replace_based_edit_tool: 'edit',
  str_replace_editor: 'edit',
  notebookedit: 'edit',
  grep: 'search',
  search_file_content: 'search',
  glob: 'search',
  codebase_search: 'search',
  todowrite: 'todo',
  write_todos: 'todo',
  update_plan: 'todo',
};

export function toolClass(name: string | null): ToolClass {
  if (name === null) return 'other';
  return TOOL_CLASSES[name.toLowerCase()] ?? 'other';
}

export { isInjected };

/** A tool input parsed from the bounded summary the reader kept. */
export type ToolArgs = Record<string, unknown>;

/** JSON string literal value of `key` in possibly cut JSON text (the cut loses the rest). */
function looseString(json: string, key: string): string | null {
  const at = json.indexOf(`"${key}"`);
  if (at < 0) return null;
  const colon = json.indexOf(':', at + key.length + 2);
  if (colon < 0) return null;
  let i = colon + 1;
  while (i < json.length && /\s/.test(json[i] as string)) i++;
  if (json[i] !== '"') return null;
  let out = '';
  for (i++; i < json.length; i++) {
    const ch = json[i] as string;
    if (ch === '"') return out;
    if (ch === '\\' && i + 1 < json.length) {
      const next = json[++i] as string;
      if (next === 'n') out += '\n';
      else if (next === 't') out += '\t';
      else if (next === 'r') out += '\r';
      else if (next === 'u') {
        out += String.fromCharCode(Number.parseInt(json.slice(i + 1, i + 5), 16) || 32);
        i += 4;
      } else out += next;
    } else out += ch;
  }
  return out;
}

const LOOSE_KEYS = ['command', 'cmd', 'file_path', 'path', 'absolute_path', 'target_file', 'pattern', 'old_string', 'new_string', 'content', 'new_str', 'old_str'];

/** The arguments of a tool call: parsed JSON, or the string fields still readable in cut JSON. */
export function toolArgs(turn: TurnRecord): ToolArgs | null {
  const raw = turn.toolInput;
  if (raw === null || raw.length === 0) return null;
  const trimmed = raw.trimStart();
  if (!trimmed.startsWith('{')) return { raw };
  try {
    const value: unknown = JSON.parse(trimmed);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as ToolArgs;
  } catch {
    // bounded summaries cut long inputs in the middle: read what is still there
  }
  const out: ToolArgs = {};
  for (const key of LOOSE_KEYS) {
    const value = looseString(trimmed, key);
    if (value !== null) out[key] = value;
  }
  return Object.keys(out).length > 0 ? out : null;
}

function stringArg(args: ToolArgs | null, ...keys: string[]): string | null {
  if (args === null) return null;
  for (const key of keys) {
    const value = args[key];
    if (typeof value === 'string' && value.length > 0) return value;
  }
  return null;
}

/** The shell command of a shell tool call (`bash -lc "…"` arrays unwrapped). */
export function commandOf(turn: TurnRecord): string | null {
  const args = toolArgs(turn);
  const value = args?.command ?? args?.cmd;
  if (Array.isArray(value)) {
    const parts = value.filter((v): v is string => typeof v === 'string');
    const dashC = parts.findIndex((p) => p === '-c' || p === '-lc');
    if (dashC >= 0 && parts[dashC + 1] !== undefined) return parts[dashC + 1] as string;
    return parts.join(' ') || null;
  }
  if (typeof value === 'string' && value.trim().length > 0) return value.trim();
  const raw = stringArg(args, 'raw');
  if (raw !== null) return raw.trim();
  // Fall back to the one-line description the reader wrote: `Bash: npm test`.
  const colon = turn.text.indexOf(': ');
  return colon > 0 ? turn.text.slice(colon + 2).trim() || null : null;
}

/** The file a read or edit tool call works on. */
export function filePathOf(turn: TurnRecord): string | null {
  const args = toolArgs(turn);
  const path = stringArg(args, 'file_path', 'path', 'absolute_path', 'target_file', 'notebook_path');
  if (path !== null) return path;
  const raw = stringArg(args, 'raw');
  if (raw !== null) {
    const patch = /\*\*\* (?:Add|Update) File: (.+)/.exec(raw);
    if (patch?.[1]) return patch[1].trim();
  }
  return null;
}

/** The new text an edit tool call writes (whole file, replacement, or the added lines of a patch). */
export function writtenTextOf(turn: TurnRecord): string | null {
  const args = toolArgs(turn);
  if (args === null) return null;
  const direct = stringArg(args, 'new_string', 'content', 'new_str', 'file_text', 'code_edit');
  if (direct !== null) return direct;
  const edits = args.edits;
  if (Array.isArray(edits)) {
    const parts = edits
      .map((e) => (e !== null && typeof e === 'object' ? (e as Record<string, unknown>).new_string : null))
      .filter((s): s is string => typeof s === 'string');
    if (parts.length > 0) return parts.join('\n');
  }
  const raw = stringArg(args, 'raw');
  if (raw !== null && raw.includes('*** Begin Patch')) {
    return raw
      .split('\n')
      .filter((line) => line.startsWith('+') && !line.startsWith('+++'))
      .map((line) => line.slice(1))
      .join('\n');
  }
  return null;
}

/** The turns of one session that distillation looks at, with lookups the extractors share. */
export class SessionView {
  readonly byId = new Map<string, TurnRecord>();
  private readonly position = new Map<string, number>();
  private readonly results = new Map<string, TurnRecord>();
  private readonly resultAfter = new Map<string, TurnRecord>();

  constructor(
    readonly session: SessionRecord,
    /** The turns in seq order: the new ones and some earlier ones for context. */
    readonly turns: readonly TurnRecord[],
    /** First seq not distilled yet; candidates anchored before it were emitted by an earlier run. */
    readonly fromSeq: number,
    readonly corrections: readonly CorrectionRecord[] = [],
    /** The run that wrote these turns was headless (known from outside the transcript). */
    private readonly headlessRun = false,
  ) {
    const openCalls: TurnRecord[] = [];
    for (const [i, turn] of turns.entries()) {
      this.byId.set(turn.id, turn);
      this.position.set(turn.id, i);
      if (turn.role === 'tool_call') openCalls.push(turn);
      if (turn.role !== 'tool_result') continue;
      if (turn.toolUseId !== null) {
        this.results.set(turn.toolUseId, turn);
        const call = openCalls.findIndex((c) => c.toolUseId === turn.toolUseId);
        if (call >= 0) openCalls.splice(call, 1);
      } else {
        // No id (some formats): the earliest open call of the same tool.
        const call = openCalls.findIndex((c) => c.toolName === turn.toolName);
        if (call >= 0) {
          this.resultAfter.set((openCalls[call] as TurnRecord).id, turn);
          openCalls.splice(call, 1);
        }
      }
    }
  }

  /** Subagent / sidechain sessions: their "user" turns are the parent agent's prompts. */
  get isSubagent(): boolean {
    return this.session.parentId !== null;
  }

  /**
   * A headless run (`claude -p`, `codex exec`, the Agent SDK): said from outside, or the latest
   * request in the transcript carries the reader's `headless` flag.
   */
  get isHeadless(): boolean {
    if (this.headlessRun) return true;
    for (let i = this.turns.length - 1; i >= 0; i--) {
      const turn = this.turns[i] as TurnRecord;
      if (this.isHumanTurn(turn)) return turn.flags.includes('headless');
    }
    return false;
  }

  /** Whether a turn is new in this run (not distilled before). */
  isNew(turn: TurnRecord): boolean {
    return turn.seq >= this.fromSeq;
  }

  /** The result of a tool call, when it is among the loaded turns. */
  resultOf(call: TurnRecord): TurnRecord | null {
    if (call.toolUseId !== null) return this.results.get(call.toolUseId) ?? null;
    return this.resultAfter.get(call.id) ?? null;
  }

  /** A user turn carrying the user's own words (not a subagent prompt, command, or injected text). */
  isHumanTurn(turn: TurnRecord): boolean {
    if (turn.role !== 'user' || this.isSubagent) return false;
    if (turn.flags.some((flag) => NOT_USER_WORDS.has(flag))) return false;
    return !isInjected(turn.text);
  }

  /**
   * Where a user turn stands, for the message classifier: whether an agent turn (or an interrupt
   * of the agent) came before it in this session, and how the agent's next reply opens.
   */
  messageContext(turn: TurnRecord): UserMessageContext {
    const at = this.position.get(turn.id) ?? -1;
    let after: UserMessageContext['after'] = (this.turns[0]?.seq ?? 0) > 0 ? 'agent' : 'none';
    for (let i = at - 1; i >= 0; i--) {
      const before = this.turns[i] as TurnRecord;
      if (before.role === 'assistant' || before.role === 'tool_call' || before.role === 'tool_result') {
        after = 'agent';
        break;
      }
      if (before.role === 'user' && before.flags.includes('interrupt')) {
        after = 'interrupt';
        break;
      }
    }
    let reply: string | null = null;
    for (let i = at + 1; at >= 0 && i < this.turns.length; i++) {
      const next = this.turns[i] as TurnRecord;
      if (this.isHumanTurn(next)) break;
      if (this.isAgentText(next) && next.text.trim().length > 0) {
        reply = next.text.trim().slice(0, 200);
        break;
      }
    }
    return { after, flags: turn.flags, reply };
  }

  /** An assistant turn whose text may be distilled (not injected context, not a compaction summary). */
  isAgentText(turn: TurnRecord): boolean {
    if (turn.role !== 'assistant') return false;
    if (turn.flags.includes('meta') || turn.flags.includes('compact-summary')) return false;
    return !isInjected(turn.text);
  }

  provenance(turn: TurnRecord): Provenance {
    return {
      transcript: this.session.sourcePath,
      line: turn.sourceLine,
      ...(turn.sourceUuid !== null ? { uuid: turn.sourceUuid } : {}),
      sessionId: turn.sessionId,
      turnId: turn.id,
    };
  }

  /** A path relative to the session's folder when it lies inside it. */
  relative(path: string): string {
    const cwd = this.session.cwd;
    if (cwd !== null && cwd.length > 1) {
      const base = cwd.endsWith('/') ? cwd : `${cwd}/`;
      if (path.startsWith(base)) return path.slice(base.length);
    }
    return path;
  }
}
