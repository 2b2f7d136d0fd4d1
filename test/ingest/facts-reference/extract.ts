// Reference copy of src/ingest/facts/extract.ts as of a63e38d, for facts-differential.test.ts: the extractor's
// output must stay identical to this one's. Never edited; removed once a change of output is intended.
/**
 * Which details a turn yields, by where they come from (see docs/ARCHITECTURE.md, "Session facts"):
 *
 * - a tool call's arguments (built-in and MCP tools alike): the command, whole, with the settings
 *   and paths in it; the file it reads or edits; the definitions and settings it writes; any
 *   path or URL in any other argument;
 * - a tool's output: for a shell, the exit status and first error line (the command's note), the
 *   error lines, test outcomes, `path:line`s, versions, URLs, and the calls and `--names` of any code
 *   it printed, and when the command prints part of one file (`cat`, `sed -n 'A,Bp'`, `nl -ba … |
 *   sed -n`, `head`: how Codex reads code, shell-read.ts) that file's definitions and lines; for a read, the definitions with their line numbers, the calls the code makes and
 *   where, its `--names` (CSS custom properties, options) and the file names it holds; for a search,
 *   the `path:line`s and the calls in the hits; for anything else, paths, URLs, errors, calls;
 * - code being written (edit and write content): its definitions, calls, error and exception
 *   names and its `--names` (not the paths it names: measured, docs/BENCHMARKS.md fidelity notes);
 * - the user's words: paths, URLs, the ids they typed, versions, code they named, the calls they
 *   typed (`pool.map(`; plain words only in backticks or a code block), the `--options` they
 *   named, errors and test names they pasted, `KEY=value` settings, `! command`s;
 * - the agent's words: paths, URLs, code it named, versions.
 *
 * Everything is read from the full text, before the turn's stored text is bounded; `<private>`
 * spans are removed first and every fact is redacted in its line's context (sink.ts).
 */
import { stripPrivate } from '../../../src/privacy/redact.js';
import { printedText, shellRead } from './shell-read.js';
import type { TurnRole } from '../../../src/types.js';
import {
  isConfigFile,
  scanAssignments,
  scanCodeSpans,
  scanConfigLines,
  scanDefinitions,
  scanErrors,
  scanGrepLines,
  scanIds,
  scanPaths,
  scanTests,
  scanUrls,
  scanVersions,
  type DefinitionSource,
} from './scan.js';
import { scanCalls, scanDashedNames, scanErrorNames } from './scan-code.js';
import { FactSink, type ExtractedFact } from './sink.js';

/** What the builder remembers of a tool call until its result arrives (structured-clone safe). */
export interface PendingCall {
  /** The call's turn. */
  turnId: string;
  seq: number;
  at: number | null;
  toolName: string;
  /** The command fact's text (as kept, redacted), when the call ran one. */
  command: string | null;
  /** The file the call reads or edits. */
  path: string | null;
  /** The first line a read asked for (`start_line`, or a 0-based `offset` + 1), when it asked for one. */
  firstLine?: number | null;
}

export interface TurnFactInput {
  role: TurnRole;
  /** The turn's full text (tool output for a result), not yet bounded. */
  text: string;
  toolName: string | null;
  /** A tool call's arguments (parsed), or its raw JSON. */
  toolArgs?: unknown;
  flags: readonly string[];
  isError: boolean;
  /** The call a tool result answers. */
  call?: PendingCall | null;
  /** `text` was sanitized whole already (secrets replaced, `<private>` spans gone): facts need no check of their own. */
  sanitized?: boolean;
}

export interface TurnFacts {
  facts: ExtractedFact[];
  /** Facts dropped because a secret overlapped them. */
  redacted: number;
  /** For a tool call: the command it ran and the file it touched. */
  command: string | null;
  path: string | null;
  /** For a read: the first line it asked for, when it asked for one. */
  firstLine: number | null;
  /** For a tool result that answers a command: `exit N: first error line`. */
  commandNote: string | null;
}

/** A tool name without an MCP prefix (`mcp__playwright__browser_navigate` → `browser_navigate`), lower-cased. */
function baseName(name: string): string {
  const mcp = name.lastIndexOf('__');
  return (mcp >= 0 ? name.slice(mcp + 2) : name).toLowerCase();
}

const SHELL = new Set(['bash', 'shell', 'exec_command', 'run_shell_command', 'local_shell', 'local_shell_call', 'run_terminal_cmd', 'execute_command', 'terminal', 'run_command', 'bashoutput', 'command']);
const READ = new Set(['read', 'read_file', 'notebookread', 'view', 'readfile', 'read_many_files', 'view_file', 'open_file', 'cat']);
const EDIT = new Set(['edit', 'write', 'multiedit', 'notebookedit', 'apply_patch', 'write_file', 'replace', 'edit_file', 'create_file', 'str_replace_editor', 'str_replace_based_edit_tool', 'search_replace', 'insert', 'writefile', 'update_file']);
const SEARCH = new Set(['grep', 'glob', 'search_file_content', 'rg', 'ripgrep', 'codebase_search', 'file_search', 'find', 'ls', 'list_directory', 'list_dir', 'search']);

type ToolClass = 'shell' | 'read' | 'edit' | 'search' | 'other';

export function toolClass(name: string | null): ToolClass {
  if (name === null) return 'other';
  const base = baseName(name);
  if (SHELL.has(base)) return 'shell';
  if (READ.has(base)) return 'read';
  if (EDIT.has(base)) return 'edit';
  if (SEARCH.has(base)) return 'search';
  return 'other';
}

/** Arguments that name the file a tool reads or edits. */
const PATH_KEYS = ['file_path', 'notebook_path', 'path', 'absolute_path', 'filename', 'file', 'target_file', 'filepath', 'dir_path', 'directory'];
/** Arguments that hold code being written. */
const CONTENT_KEYS = new Set(['new_string', 'content', 'new_source', 'new_str', 'file_text', 'code', 'replacement', 'new_content', 'text']);
/** Arguments never scanned (they repeat what was there, or are prose for the tool). */
const SKIPPED_KEYS = new Set(['old_string', 'old_str', 'description', 'prompt', 'justification']);
/**
 * Arguments whose value is secret by their name alone: never scanned (a fact is checked against the
 * secrets in its own line, and the name is not in the value's line).
 */
const SECRET_KEY = /pass|secret|token|api.?key|auth|credential|private|cookie|session.?id/i;
/** The longest command kept whole (longer ones are heredocs carrying files). */
const MAX_COMMAND = 16_000;
/** String leaves of one call's arguments looked at, at most. */
const MAX_LEAVES = 200;

/** `['bash', '-lc', 'npm test']` → `npm test`; other arrays are joined with spaces. */
function commandText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) return null;
  const parts = value as string[];
  if (parts.length === 3 && /^(?:\/\S*\/)?(?:ba|z|da)?sh$/.test(parts[0] as string) && /^-\w*c$/.test(parts[1] as string)) return parts[2] as string;
  return parts.join(' ');
}

function parseArgs(args: unknown): unknown {
  if (typeof args !== 'string') return args;
  const trimmed = args.trimStart();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return args;
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

/** Every string leaf with its key (depth-first, at most {@link MAX_LEAVES}). */
function leaves(value: unknown, key: string, out: Array<[string, string]>, depth: number): void {
  if (out.length >= MAX_LEAVES || depth > 5) return;
  if (typeof value === 'string') out.push([key, value]);
  else if (Array.isArray(value)) for (const item of value) leaves(item, key, out, depth + 1);
  else if (typeof value === 'object' && value !== null) for (const [k, v] of Object.entries(value)) leaves(v, k, out, depth + 1);
}

/** `*** Update File: path` / `*** Add File: path` headers of an apply_patch input. */
const PATCH_FILE = /^\*\*\* (?:Update|Add|Delete) File: (.+)$/gm;

/** The first line a read's arguments ask for: Gemini CLI's 1-based `start_line`, or a 0-based `offset`. */
function readStart(record: Record<string, unknown>): number | null {
  const start = record.start_line;
  if (typeof start === 'number' && Number.isInteger(start) && start >= 1) return start;
  const offset = record.offset;
  if (typeof offset === 'number' && Number.isInteger(offset) && offset >= 0) return offset + 1;
  return null;
}

function callFacts(sink: FactSink, name: string, rawArgs: unknown): { command: string | null; path: string | null; firstLine: number | null } {
  const args = parseArgs(rawArgs);
  const cls = toolClass(name);
  let command: string | null = null;
  let path: string | null = null;
  let firstLine: number | null = null;
  const record = typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : null;
  if (record !== null) {
    for (const key of PATH_KEYS) {
      const value = record[key];
      if (typeof value === 'string' && value.length > 0 && value.length <= 400 && !value.includes('\n')) {
        path = value;
        break;
      }
    }
    if (cls === 'read') firstLine = readStart(record);
    const run = commandText(record.command ?? record.cmd);
    if (run !== null && (cls === 'shell' || record.command !== undefined)) command = run.trim();
  } else if (cls === 'shell') {
    command = commandText(args)?.trim() ?? null;
  }
  if (command !== null && command.length > 0) {
    const text = command.length > MAX_COMMAND ? command.slice(0, MAX_COMMAND) : command;
    sink.source(text);
    command = sink.add('command', text, 0, text.length, {}, true)?.text ?? null;
    scanAssignments(text, sink);
    scanPaths(text, sink);
    scanUrls(text, sink);
  } else {
    command = null;
  }
  if (path !== null) {
    sink.source(path);
    path = sink.add('path', path, 0, path.length, { path }, true)?.text ?? null;
  }
  const found: Array<[string, string]> = [];
  leaves(args, '', found, 0);
  for (const [key, value] of found) {
    if (SKIPPED_KEYS.has(key) || SECRET_KEY.test(key) || key === 'command' || key === 'cmd' || PATH_KEYS.includes(key)) continue;
    const composite = value;
    sink.source(composite);
    if (cls === 'edit' && (CONTENT_KEYS.has(key) || key === 'input' || key === 'patch')) {
      if (key === 'input' || key === 'patch') {
        PATCH_FILE.lastIndex = 0;
        for (let m = PATCH_FILE.exec(composite); m !== null; m = PATCH_FILE.exec(composite)) {
          const file = (m[1] as string).trim();
          sink.add('path', file, m.index + m[0].indexOf(file), m.index + m[0].indexOf(file) + file.length, { path: file }, true);
        }
      }
      const firstLine = key === 'content' || key === 'file_text' ? 1 : null;
      scanDefinitions(composite, sink, { path, firstLine });
      scanCalls(composite, sink, { path, firstLine, written: true });
      scanErrorNames(composite, sink, { path, firstLine });
      scanDashedNames(composite, sink);
      if (isConfigFile(path)) {
        scanConfigLines(composite, sink);
        scanVersions(composite, sink);
      }
      continue;
    }
    if (key === 'url' || key === 'uri' || key === 'href') scanUrls(composite, sink);
    else if (cls === 'other' || cls === 'search') {
      scanPaths(composite, sink);
      scanUrls(composite, sink);
    }
  }
  return { command, path, firstLine };
}

/** A test runner's command, or the summary line a test run prints. */
const TEST_COMMAND = /\b(?:test|tests|spec|jest|vitest|pytest|mocha|ava|tap|rspec|phpunit|unittest|xcodebuild|ctest|nextest|playwright|cypress)\b/i;
const TEST_SUMMARY = /\b\d+ (?:passed|failed|passing|failing)\b|\bTest Files\b|\bTests:|\btest result:|^(?:ok|FAIL|---)\s|^=+ .*(?:passed|failed)/m;

function looksLikeTestRun(command: string | null, output: string): boolean {
  if (command !== null && TEST_COMMAND.test(command)) return true;
  const tail = output.length > 8_000 ? output.slice(-8_000) : output;
  return TEST_SUMMARY.test(tail);
}

/** `Exit code 1`, `Exit code: 1`, `exit status 2`, `exited with code 3`, `Exit Code: 4`. */
const EXIT = /\b(?:exit(?:ed with)? (?:code|status)|Process exited with code)[: ]{1,2}(-?\d{1,5})\b/i;

function exitStatus(output: string): number | null {
  const head = output.length > 4_000 ? `${output.slice(0, 2_000)}\n${output.slice(-2_000)}` : output;
  const m = EXIT.exec(head);
  return m === null ? null : Number(m[1]);
}

/** A read's output numbered line by line (`    12→code`, `12\tcode`): Claude Code's Read. */
const NUMBERED_LINE = /^[ \t]*\d{1,7}(?:→|\t)/;
/** Gemini CLI's header over a read it cut short: `Status: Showing lines 101-300 of 912 total lines.` … `--- FILE CONTENT (truncated) ---`. */
const SHOWING_LINES = /Showing lines (\d{1,7})-\d{1,7} of \d{1,7} total lines\.[^]{0,600}?\n--- FILE CONTENT \(truncated\) ---\n/;

/**
 * Where a read's lines get their numbers: from the output when it numbers them; else (Gemini CLI's
 * read_file prints the file's text bare) counted from the first line shown — the header's
 * `Showing lines A-B`, the range the call asked for, or line 1 — for a read of one file.
 */
function readSource(output: string, call: PendingCall | null): DefinitionSource {
  const path = call?.path ?? null;
  const head = output.slice(0, 2_000);
  const showing = SHOWING_LINES.exec(head);
  const body = showing === null ? 0 : showing.index + showing[0].length;
  const firstText = output.slice(body, body + 200).replace(/^\n+/, '');
  if (NUMBERED_LINE.test(firstText) || path === null || baseName(call?.toolName ?? '') === 'read_many_files') return { path, numbered: true };
  const first = showing !== null ? Number(showing[1]) : (call?.firstLine ?? 1);
  // Lines are counted from the output's start: the header's lines come before the first shown.
  let header = 0;
  for (let i = output.indexOf('\n'); i !== -1 && i < body; i = output.indexOf('\n', i + 1)) header++;
  return { path, firstLine: first - header };
}

function resultFacts(sink: FactSink, output: string, input: TurnFactInput): string | null {
  const call = input.call ?? null;
  const cls = toolClass(call?.toolName ?? input.toolName);
  sink.source(output);
  if (cls === 'read') {
    const path = call?.path ?? null;
    const source = readSource(output, call ?? null);
    scanDefinitions(output, sink, source);
    scanCalls(output, sink, source);
    scanDashedNames(output, sink);
    scanPaths(output, sink);
    return null;
  }
  if (cls === 'edit') {
    if (input.isError) scanErrors(output, sink);
    return null;
  }
  if (cls === 'search') {
    scanGrepLines(output, sink);
    scanPaths(output, sink);
    scanCalls(output, sink);
    scanDashedNames(output, sink);
    return null;
  }
  const firstError = input.isError || cls === 'shell' ? scanErrors(output, sink) : null;
  if (cls === 'shell') {
    if (looksLikeTestRun(call?.command ?? null, output)) scanTests(output, sink);
    scanGrepLines(output, sink);
    scanPaths(output, sink);
    scanVersions(output, sink);
    scanUrls(output, sink);
    // A shell prints code too (`cat`, `sed -n`, `git diff`: how some agents read files).
    scanCalls(output, sink);
    // A command that prints part of one file is a read: its definitions keep their path and line.
    const read = shellRead(call?.command);
    if (read !== null) scanDefinitions(printedText(output), sink, read);
    scanDashedNames(output, sink);
    if (call?.command == null) return null;
    const exit = exitStatus(output);
    const failed = input.isError || (exit !== null && exit !== 0);
    const status = exit !== null ? `exit ${exit}` : failed ? 'failed' : 'exit 0';
    return failed && firstError !== null ? `${status}: ${firstError.text}` : status;
  }
  if (firstError === null) scanErrors(output, sink);
  scanPaths(output, sink);
  scanUrls(output, sink);
  scanCalls(output, sink);
  return null;
}

/** Flags of user turns that are not the user's own words. */
const NOT_WORDS = new Set(['meta', 'slash-command', 'compact-summary', 'queued-meta', 'interrupt']);

/** The facts of one turn, from its full text. Pure; never throws on any input. */
export function extractTurnFacts(input: TurnFactInput): TurnFacts {
  const sink = new FactSink();
  if (input.sanitized === true && input.role !== 'tool_call') sink.presanitized();
  let command: string | null = null;
  let path: string | null = null;
  let firstLine: number | null = null;
  let commandNote: string | null = null;
  const text = stripPrivate(input.text);
  switch (input.role) {
    case 'tool_call': {
      const raw = input.toolArgs !== undefined ? input.toolArgs : input.text;
      const called = callFacts(sink, input.toolName ?? 'tool', typeof raw === 'string' ? stripPrivate(raw) : raw);
      command = called.command;
      path = called.path;
      firstLine = called.firstLine;
      break;
    }
    case 'tool_result':
      commandNote = resultFacts(sink, text, input);
      break;
    case 'user': {
      if (input.flags.some((f) => NOT_WORDS.has(f))) break;
      sink.source(text);
      if (input.flags.includes('bash') && text.startsWith('! ')) sink.add('command', text.slice(2).trim(), 2, text.length, {}, true);
      scanPaths(text, sink);
      scanUrls(text, sink);
      scanIds(text, sink);
      scanVersions(text, sink);
      scanCodeSpans(text, sink);
      scanCalls(text, sink, { prose: true });
      // The options they typed (`--from-main`, `--unsafe-fixes`), as the settings code holds are.
      scanDashedNames(text, sink);
      scanErrors(text, sink);
      if (TEST_SUMMARY.test(text)) scanTests(text, sink);
      scanAssignments(text, sink);
      break;
    }
    case 'assistant':
      sink.source(text);
      scanPaths(text, sink);
      scanUrls(text, sink);
      scanCodeSpans(text, sink);
      scanVersions(text, sink);
      break;
    case 'system':
      if (!input.flags.includes('command-output') && !input.flags.includes('error') && !input.flags.includes('api-error')) break;
      sink.source(text);
      scanErrors(text, sink);
      if (TEST_SUMMARY.test(text)) scanTests(text, sink);
      scanPaths(text, sink);
      break;
    default:
      // Summaries restate what the session said; their details are not a source of their own.
      break;
  }
  return { facts: sink.facts, redacted: sink.redacted, command, path, firstLine, commandNote };
}
