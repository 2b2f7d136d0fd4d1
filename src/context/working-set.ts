import type { TurnRecord } from '../types.js';

/**
 * The working set of one agent session, read from its transcript turns: the files it edited and
 * read, exactly as the agent wrote their paths, and the commands that ran without error, verbatim.
 * After /compact these are what the summary paraphrases away ("we ran the tests") and the agent
 * needs back word for word.
 */
export interface WorkingSet {
  edited: string[];
  read: string[];
  commands: string[];
  /** Functions and methods the session wrote or talked about as calls (`store.loadSession(`), most used first. */
  symbols: string[];
}

/** Call-shaped identifiers: `name(` or `obj.method(`, at least 4 characters. */
const CALL = /\b([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\(/g;
/** Calls too common to tell the agent anything. */
const COMMON_CALLS = new Set(['if', 'for', 'while', 'switch', 'catch', 'function', 'return', 'typeof', 'await', 'print', 'require', 'import', 'super', 'console.log', 'String', 'Number', 'Boolean', 'Array', 'Object', 'Error', 'Date', 'Promise', 'Map', 'Set', 'JSON.stringify', 'JSON.parse', 'Math.max', 'Math.min', 'Math.floor', 'Math.round', 'len', 'str', 'int', 'range', 'list', 'dict']);

function collectCalls(text: string, weight: number, counts: Map<string, number>): void {
  if (!text.includes('(')) return;
  for (const match of text.matchAll(CALL)) {
    const name = match[1] as string;
    if (name.length < 4 || COMMON_CALLS.has(name)) continue;
    counts.set(name, (counts.get(name) ?? 0) + weight);
  }
}

const EDIT_TOOLS = new Set(['Edit', 'Write', 'MultiEdit', 'NotebookEdit', 'apply_patch', 'write_file', 'replace', 'edit_file']);
const READ_TOOLS = new Set(['Read', 'read_file', 'NotebookRead', 'view']);
const SHELL_TOOLS = new Set(['Bash', 'shell', 'exec_command', 'run_shell_command', 'local_shell']);
const MAX_COMMAND_CHARS = 240;

function inputOf(turn: TurnRecord): Record<string, unknown> | null {
  const raw = turn.toolInput;
  if (!raw || !raw.trimStart().startsWith('{')) return null;
  try {
    const value: unknown = JSON.parse(raw);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function pathOf(input: Record<string, unknown> | null): string | null {
  if (!input) return null;
  for (const key of ['file_path', 'notebook_path', 'path', 'absolute_path', 'filename']) {
    const value = input[key];
    if (typeof value === 'string' && value.length > 0 && value.length < 400) return value;
  }
  return null;
}

function commandOf(turn: TurnRecord, input: Record<string, unknown> | null): string | null {
  const value = input?.command ?? input?.cmd;
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return (value as string[]).join(' ');
  // Readers store "Bash: <command>" as the turn text when the input was not JSON.
  const prefix = `${turn.toolName}: `;
  return turn.text.startsWith(prefix) ? turn.text.slice(prefix.length) : null;
}

/** Most recent first, each value once. */
function recentDistinct(values: Array<{ value: string; seq: number }>, limit: number): string[] {
  const latest = new Map<string, number>();
  for (const { value, seq } of values) latest.set(value, Math.max(seq, latest.get(value) ?? -1));
  return [...latest.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([value]) => value);
}

export function workingSetOf(turns: readonly TurnRecord[], limits = { files: 100, commands: 80, symbols: 200 }): WorkingSet {
  const failed = new Set<string>();
  for (const turn of turns) if (turn.role === 'tool_result' && turn.isError && turn.toolUseId) failed.add(turn.toolUseId);
  const calls = new Map<string, number>();
  const edited: Array<{ value: string; seq: number }> = [];
  const read: Array<{ value: string; seq: number }> = [];
  const commands: Array<{ value: string; seq: number }> = [];
  for (const turn of turns) {
    if (turn.role === 'assistant') collectCalls(turn.text, 1, calls);
    // Code the agent read counts a little: it is what the agent was working from.
    if (turn.role === 'tool_result' && turn.toolName && READ_TOOLS.has(turn.toolName) && !turn.isError) collectCalls(turn.text, 0.5, calls);
    if (turn.role !== 'tool_call' || !turn.toolName) continue;
    const input = inputOf(turn);
    if (EDIT_TOOLS.has(turn.toolName)) {
      // What the agent wrote counts most.
      for (const key of ['new_string', 'content', 'new_source']) {
        const value = input?.[key];
        if (typeof value === 'string') collectCalls(value, 2, calls);
      }
      const path = pathOf(input);
      if (path) edited.push({ value: path, seq: turn.seq });
    } else if (READ_TOOLS.has(turn.toolName)) {
      const path = pathOf(input);
      if (path) read.push({ value: path, seq: turn.seq });
    } else if (SHELL_TOOLS.has(turn.toolName)) {
      if (turn.toolUseId && failed.has(turn.toolUseId)) continue;
      const command = commandOf(turn, input)?.trim();
      if (command && command.length <= MAX_COMMAND_CHARS && !command.includes('\n')) commands.push({ value: command, seq: turn.seq });
    }
  }
  const editedList = recentDistinct(edited, limits.files);
  const editedSet = new Set(editedList);
  return {
    edited: editedList,
    read: recentDistinct(read, limits.files).filter((p) => !editedSet.has(p)),
    commands: recentDistinct(commands, limits.commands),
    symbols: [...calls.entries()]
      .sort((a, b) => b[1] - a[1] || (b[0].includes('.') ? 1 : 0) - (a[0].includes('.') ? 1 : 0))
      .slice(0, limits.symbols)
      .map(([name]) => `${name}(`),
  };
}

/**
 * The working set as Markdown lines, most useful first, packed into `budgetTokens` (estimated o200k tokens, src/tokens.ts):
 * edited files, commands that ran, read files, interleaved so a small budget gets some of each.
 * Symbols are not listed (bare identifier lists cost tokens and rarely help; a session's code
 * reaches the context as details with their signatures, see session-context.ts).
 */
export function workingSetLines(set: WorkingSet, budgetTokens: number): string[] {
  const groups = [set.edited.map((p) => `- edited \`${p}\``), set.commands.map((c) => `- ran \`${c}\``), set.read.map((p) => `- read \`${p}\``)];
  const total = groups.reduce((n, g) => n + g.length, 0);
  const ordered: string[] = [];
  for (let i = 0; ordered.length < total; i++) {
    for (const group of groups) if (i < group.length) ordered.push(group[i] as string);
  }
  const out: string[] = [];
  let used = 0;
  for (const line of ordered) {
    const cost = Math.ceil((line.length + 1) / 4);
    if (used + cost > budgetTokens) continue;
    out.push(line);
    used += cost;
  }
  return out;
}
