/**
 * Candidate details for a session's post-compact context: its session facts (paths, `path:line`s,
 * symbols with signatures, commands with their outcome, errors, tests, settings, versions, URLs,
 * ids), the calls its edits and messages made, and memories — each with the features the value
 * model scores (value-model.ts) and the one line the context would spend on it, saying why it
 * matters. Pure functions over what the store returned.
 */
import type { FactSource, Memory, SessionFact, TurnRecord } from '../types.js';
import { FEATURES, type Feature } from './value-model.js';

/** What a candidate is, for features and sections. */
export type DetailKind =
  | 'path'
  | 'pathLine'
  | 'symbol'
  | 'call'
  | 'command'
  | 'error'
  | 'test'
  | 'config'
  | 'version'
  | 'url'
  | 'id'
  | 'rule'
  | 'decision'
  | 'fact'
  | 'continuation';

export interface Detail {
  /** Stable key within one build (fact id, `call:name`, memory id). */
  key: string;
  kind: DetailKind;
  /** The Markdown line, without its trailing newline. */
  line: string;
  features: Record<Feature, number>;
  /** Last turn (seq) it occurred in, when known (recency ranker). */
  lastSeq: number | null;
  memory: Memory | null;
  factId: string | null;
  /**
   * Its only reason is where it was seen (in a file read, in tool output, in a reply): a fact's line
   * is listed under a heading that says so, a call's line says where.
   */
  generic?: boolean;
  /**
   * A path fact that names no file: a dotted library or module name with no path separator
   * (`xterm.js`, `DateTime.diff`) the session never opened and the workspace does not hold. Listed
   * under other details, not under files.
   */
  notFile?: boolean;
  /**
   * A memory whose file references were not checked yet: its staleness note (line moved, file
   * changed) is added only if it comes near the budget (see `PackOptions.prepare`).
   */
  checkFiles?: boolean;
  /**
   * A call shares one line with the other calls of its file and reason (`- called in \`app.js\`:
   * \`LiveSocket(\`:366, …`): the line's head is paid once, each call adds only its item.
   * `line` stays the call's line on its own (what the ledger and the learning read).
   */
  group?: { key: string; head: string; item: string };
  /**
   * The detail as the matcher of learning from use reads it (a path, a command, `name(` for a
   * symbol or a call): what earlier sessions' needed details are compared with (learn.ts
   * `learnKey`, the `usedBefore` feature).
   */
  learn?: string;
}

const EDIT_TOOLS = new Set(['edit', 'write', 'multiedit', 'notebookedit', 'apply_patch', 'write_file', 'replace', 'edit_file', 'create_file', 'str_replace_editor', 'str_replace_based_edit_tool', 'search_replace', 'update_file']);
const READ_TOOLS = new Set(['read', 'read_file', 'notebookread', 'view', 'view_file', 'open_file']);
const toolBase = (name: string | null): string => {
  if (!name) return '';
  const mcp = name.lastIndexOf('__');
  return (mcp >= 0 ? name.slice(mcp + 2) : name).toLowerCase();
};

/** Call-shaped identifiers (`name(`, `obj.method(`), at least 4 characters; `this.`/`self.` dropped. */
const CALL = /\b([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\(/g;
const NOT_CALLS = new Set(['if', 'for', 'while', 'switch', 'catch', 'function', 'return', 'typeof', 'await', 'super', 'elif']);

/** Strip a receiver that carries no information (`this.save(` → `save(`). */
export function normaliseCall(name: string): string {
  return name.replace(/^(?:this|self)\./, '');
}

/** A call the session made or saw: weighted count, last seq, whether written, where it was seen (`file:line`, its file), how. */
export interface CallInfo {
  weight: number;
  lastSeq: number;
  inEdit: boolean;
  where?: string | null;
  path?: string | null;
  seen?: string;
}

/** What the session did with files and calls, from its turns. */
export interface SessionActivity {
  /** Last seq of the session (the compaction point). */
  endSeq: number;
  /** Path → last seq it was edited / read. */
  edited: Map<string, number>;
  read: Map<string, number>;
  /** Call name → weighted count (edits 2, assistant text 1, read output 0.5), last seq, and where it was seen (`file:line`). */
  calls: Map<string, CallInfo>;
  /** The text of the last user prompts (the task in progress). */
  task: string;
  /** Seqs of the tool results that were errors. */
  errors: Set<number>;
}

function pathOfInput(raw: string | null): string | null {
  if (!raw || !raw.trimStart().startsWith('{')) return null;
  try {
    const value = JSON.parse(raw) as Record<string, unknown>;
    for (const key of ['file_path', 'notebook_path', 'path', 'absolute_path', 'filename']) {
      const v = value[key];
      if (typeof v === 'string' && v.length > 0 && v.length < 400) return v;
    }
  } catch {
    // a bounded (cut) input: look for the path key in the text
    const m = /"(?:file_path|notebook_path|path)"\s*:\s*"([^"]{1,400})"/.exec(raw);
    if (m) return m[1] as string;
  }
  return null;
}

/** Where a call was seen, as its line's reason when it was not written or located. */
const SEEN_REPLY = 'in a reply';
const SEEN_READ = 'in code read';
const SEEN_OUTPUT = 'seen in output';

function addCalls(text: string, weight: number, seq: number, inEdit: boolean, calls: SessionActivity['calls'], seen = SEEN_OUTPUT): void {
  if (!text.includes('(')) return;
  for (const match of text.matchAll(CALL)) {
    const name = normaliseCall(match[1] as string);
    if (name.length < 4 || NOT_CALLS.has(name)) continue;
    const known = calls.get(name);
    if (known) {
      known.weight += weight;
      known.lastSeq = Math.max(known.lastSeq, seq);
      known.inEdit ||= inEdit;
      // The strongest source names it: a reply over a file read over other output.
      if (known.seen === SEEN_OUTPUT || (known.seen === SEEN_READ && seen === SEEN_REPLY)) known.seen = seen;
    } else calls.set(name, { weight, lastSeq: seq, inEdit, seen });
  }
}

/** Read a session's activity from its turns. */
export function activityOf(turns: readonly TurnRecord[]): SessionActivity {
  const edited = new Map<string, number>();
  const read = new Map<string, number>();
  const calls: SessionActivity['calls'] = new Map();
  const prompts: string[] = [];
  const errors = new Set<number>();
  let endSeq = 0;
  for (const turn of turns) {
    endSeq = Math.max(endSeq, turn.seq);
    const tool = toolBase(turn.toolName);
    if (turn.role === 'user' && !turn.flags.includes('meta') && !turn.flags.includes('compact-summary') && turn.text.trim().length > 0) prompts.push(turn.text);
    else if (turn.role === 'assistant') addCalls(turn.text, 1, turn.seq, false, calls, SEEN_REPLY);
    else if (turn.role === 'tool_call') {
      const path = pathOfInput(turn.toolInput);
      if (EDIT_TOOLS.has(tool)) {
        if (path) edited.set(path, turn.seq);
        addCalls(turn.toolInput ?? '', 2, turn.seq, true, calls);
      } else if (READ_TOOLS.has(tool) && path) read.set(path, turn.seq);
    } else if (turn.role === 'tool_result') {
      if (turn.isError) errors.add(turn.seq);
      else if (READ_TOOLS.has(tool)) addCalls(turn.text, 0.5, turn.seq, false, calls, SEEN_READ);
      else addCalls(turn.text, 0.25, turn.seq, false, calls, SEEN_OUTPUT);
    }
  }
  return { endSeq, edited, read, calls, task: prompts.slice(-3).join('\n').slice(-4000), errors };
}

const ZERO = Object.fromEntries(FEATURES.map((f) => [f, 0])) as Record<Feature, number>;
/** Every feature at 0 (a copy of one template: a session has thousands of candidates). */
const zero = (): Record<Feature, number> => ({ ...ZERO });
const recencyOf = (endSeq: number, seq: number): number => Math.exp(-Math.max(0, endSeq - seq) / 60);
const frequencyOf = (n: number): number => Math.min(1, Math.log2(1 + n) / 5);
const code = (text: string): string => `\`${text.replace(/`/g, 'ˋ').replace(/\s*\n\s*/g, ' ⏎ ')}\``;

function lastIn(map: Map<string, number>, path: string | null): number | null {
  if (!path) return null;
  const direct = map.get(path);
  if (direct !== undefined) return direct;
  // The same file written relative and absolute.
  for (const [known, seq] of map) if (known.endsWith(`/${path}`) || path.endsWith(`/${known}`)) return seq;
  return null;
}

function isFailing(fact: SessionFact): boolean {
  const note = fact.note ?? '';
  return fact.kind === 'error' || /exit [1-9]|fail|error/i.test(note);
}

const SEARCH_TOOLS = new Set(['grep', 'glob', 'search', 'find', 'codebase_search', 'grep_search', 'file_search', 'list_dir', 'ls']);
const SHELL_TOOLS = new Set(['bash', 'shell', 'exec_command', 'run_terminal_cmd', 'run_shell_command', 'local_shell', 'powershell']);

/**
 * Where a fact was seen, as a reason: `specific` when that alone says why it matters (in an error,
 * in code written or a command run this session), not when it only says where it was mentioned.
 */
function seenIn(at: FactSource, activity: SessionActivity): { why: string; specific: boolean } {
  const tool = toolBase(at.toolName);
  switch (at.role) {
    case 'user':
      return { why: 'named by the user', specific: true };
    case 'assistant':
      return { why: SEEN_REPLY, specific: false };
    case 'tool_call':
      if (EDIT_TOOLS.has(tool)) return { why: 'in edits', specific: true };
      if (READ_TOOLS.has(tool)) return { why: 'read', specific: true };
      if (SEARCH_TOOLS.has(tool)) return { why: 'searched for', specific: true };
      return { why: SHELL_TOOLS.has(tool) ? 'in a command' : `in a ${at.toolName ?? 'tool'} call`, specific: true };
    case 'tool_result':
      if (activity.errors.has(at.seq)) return { why: 'in an error', specific: true };
      return { why: READ_TOOLS.has(tool) ? SEEN_READ : SEARCH_TOOLS.has(tool) ? 'in search results' : SEEN_OUTPUT, specific: false };
    default:
      return { why: SEEN_OUTPUT, specific: false };
  }
}

/** The fact's most telling occurrence among its first and last: a specific one if either is. */
function bestSeen(fact: SessionFact, activity: SessionActivity): { why: string; specific: boolean } {
  const last = seenIn(fact.last, activity);
  if (last.specific || fact.first.turnId === fact.last.turnId) return last;
  const first = seenIn(fact.first, activity);
  return first.specific ? first : last;
}

function ago(endSeq: number, seq: number): string {
  const turns = Math.max(0, endSeq - seq);
  return turns <= 2 ? 'just before the compaction' : `${turns} turns ago`;
}

/** `path` relative to `root` when it lies under it (shorter lines, and the form agents write `path:line` in). */
export function underRoot(path: string, root: string | null): string {
  if (root === null || root.length < 2) return path;
  // A Windows folder (`C:\\repo`) is followed by a backslash in paths written under it.
  const separator = root.includes('\\') && !root.includes('/') ? '\\' : '/';
  const prefix = root.endsWith('/') || root.endsWith('\\') ? root : `${root}${separator}`;
  return path.startsWith(prefix) && path.length > prefix.length ? path.slice(prefix.length) : path;
}

/**
 * Whether a "path" cannot name a file: it holds a control character, or an escape sequence written
 * out (`file1.txt\nfile2.txt`, from a string literal or JSON) — after a file name's extension, or
 * among `/` separators. A Windows folder (`C:\new`) keeps its backslashes.
 */
export function garbledPath(text: string): boolean {
  if (/[\u0000-\u001f\u007f]/.test(text)) return true;
  if (!/\\[nrt]/.test(text)) return false;
  return text.includes('/') || /\.[A-Za-z0-9]{1,8}\\[nrt]/.test(text);
}

const hasSeparator = (path: string): boolean => path.includes('/') || path.includes('\\');

/**
 * One candidate per session fact; `root` (the project folder) shortens the paths symbol lines
 * point at, and `exists` says whether a bare name (`AGENTS.md`) is a file in it.
 */
export function factDetails(facts: readonly SessionFact[], activity: SessionActivity, root: string | null = null, exists: (name: string) => boolean = () => false): Detail[] {
  const out: Detail[] = [];
  const task = activity.task;
  // File names the session's paths end with: a bare `app.js` is that file, not a library's name.
  const fileNames = new Set<string>();
  for (const fact of facts) {
    if (fact.kind !== 'path') continue;
    const path = fact.path ?? fact.text;
    if (hasSeparator(path)) fileNames.add(baseName(path));
  }
  for (const fact of facts) {
    const features = zero();
    const path = fact.path ?? (fact.kind === 'path' ? fact.text : null);
    if (fact.kind === 'path' && (garbledPath(fact.text) || (path !== null && garbledPath(path)))) continue;
    const editedAt = lastIn(activity.edited, path);
    const readAt = lastIn(activity.read, path);
    const kind: DetailKind = fact.kind === 'path' && fact.line !== null ? 'pathLine' : fact.kind;
    features[`kind:${kind}` as Feature] = 1;
    features.recency = recencyOf(activity.endSeq, fact.last.seq);
    features.frequency = frequencyOf(fact.occurrences);
    features.byUser = fact.byUser ? 1 : 0;
    features.edited = editedAt !== null ? 1 : 0;
    features.editedRecently = editedAt !== null ? recencyOf(activity.endSeq, editedAt) : 0;
    features.read = readAt !== null ? 1 : 0;
    features.failing = isFailing(fact) ? 1 : 0;
    features.failingRecently = features.failing * features.recency;
    const needle = fact.kind === 'path' ? (fact.text.split('/').pop() ?? fact.text) : fact.text;
    features.inTask = needle.length >= 3 && task.includes(needle) ? 1 : 0;
    features.absolute = fact.kind === 'path' && fact.text.startsWith('/') ? 1 : 0;
    const why: string[] = [];
    if (editedAt !== null) why.push(`edited ${ago(activity.endSeq, editedAt)}`);
    else if (readAt !== null) why.push('read');
    if (fact.byUser) why.push('named by the user');
    if (fact.note && fact.kind !== 'symbol') why.push(fact.note.slice(0, 160));
    // A command, an error and a test say what they are in their label; the rest, where they were seen.
    const label = fact.kind === 'command' ? 'ran ' : fact.kind === 'error' ? 'error ' : fact.kind === 'test' ? 'test ' : '';
    let generic = false;
    if (why.length === 0 && label === '' && !(fact.kind === 'symbol' && (fact.path || fact.note))) {
      // Where it was seen, when that says why it matters; otherwise the line goes under a heading
      // that says it once for all of them (a few words on each of ~100 lines cost ~10% of the budget).
      const seen = bestSeen(fact, activity);
      if (seen.specific) why.push(seen.why);
      else generic = true;
    }
    if (fact.occurrences > 1) why.push(`${fact.occurrences}×`);
    let line: string;
    if (fact.kind === 'symbol' && (fact.path || fact.note)) {
      const at = fact.path ? ` at ${underRoot(fact.path, root)}${fact.line !== null ? `:${fact.line}` : ''}` : '';
      const signature = fact.note ? fact.note.slice(0, 200) : '';
      // A signature that holds the name says it once: `def f(x) do` at path:line.
      line = signature.includes(`${fact.text}(`) ? `- ${code(signature)}${at}` : `- ${code(`${fact.text}(`)}${at}${signature ? ` — ${code(signature)}` : ''}`;
    } else {
      const text = fact.kind === 'symbol' ? `${fact.text}(` : fact.text.slice(0, 400);
      line = `- ${label}${code(text)}${why.length > 0 ? ` — ${why.join(', ')}` : ''}`;
    }
    const detail: Detail = { key: fact.id, kind, line, features, lastSeq: fact.last.seq, memory: null, factId: fact.id, learn: fact.kind === 'symbol' ? `${fact.text}(` : fact.text };
    if (generic) detail.generic = true;
    if (fact.kind === 'path' && path !== null && !hasSeparator(path) && editedAt === null && readAt === null && !fileNames.has(path) && !exists(path)) detail.notFile = true;
    out.push(detail);
  }
  return out;
}

function baseName(path: string): string {
  return path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1);
}

/**
 * Add the calls ingest found in the full text of the code the session read and wrote (`call`
 * session facts) to what the bounded turn texts show, with the file and line each was first seen at.
 */
export function addCallFacts(activity: SessionActivity, facts: readonly SessionFact[]): void {
  for (const fact of facts) {
    if (fact.kind !== 'call') continue;
    const inEdit = fact.first.role === 'tool_call' || fact.last.role === 'tool_call';
    const weight = fact.occurrences * (inEdit ? 2 : 0.5);
    const where = fact.path ? `${baseName(fact.path)}${fact.line !== null ? `:${fact.line}` : ''}` : null;
    const known = activity.calls.get(fact.text);
    if (known) {
      known.weight = Math.max(known.weight, weight);
      known.lastSeq = Math.max(known.lastSeq, fact.last.seq);
      known.inEdit ||= inEdit;
      known.where ??= where;
      known.path ??= fact.path;
    } else activity.calls.set(fact.text, { weight, lastSeq: fact.last.seq, inEdit, where, path: fact.path });
  }
}

/**
 * The shared line a call is listed on: the file it was seen in (relative to `root`) and why —
 * written there in an edit, or called there in code read — else only why (`called in edits`,
 * `called in a reply`, `called in code read`, `seen in output`). Its item is the call, with the
 * line it was first seen at when it was not written this session.
 */
export function callGroup(name: string, info: Pick<CallInfo, 'inEdit' | 'where' | 'path' | 'seen'>, root: string | null): NonNullable<Detail['group']> {
  return groupOf(code(`${name}(`), info, root, new Map());
}

/** {@link callGroup} for a call's code span, with the heads of the groups seen so far (a session has up to 1,000 calls in a few dozen groups). */
function groupOf(span: string, info: Pick<CallInfo, 'inEdit' | 'where' | 'path' | 'seen'>, root: string | null, heads: Map<string, { key: string; head: string }>): NonNullable<Detail['group']> {
  const colon = !info.inEdit && info.where ? info.where.lastIndexOf(':') : -1;
  const at = colon >= 0 ? (info.where as string).slice(colon + 1) : '';
  const item = at.length > 0 && /^\d+$/.test(at) ? `${span}:${at}` : span;
  const seen = info.seen ?? SEEN_OUTPUT;
  const id = `${info.inEdit ? 'e' : 'r'}\0${info.path ?? ''}\0${info.path ? '' : seen}`;
  let group = heads.get(id);
  if (group === undefined) {
    const file = info.path ? underRoot(info.path, root) : null;
    if (info.inEdit) group = file ? { key: `edit\0${file}`, head: `- called in edits to ${code(file)}: ` } : { key: 'edit', head: '- called in edits: ' };
    else if (file) group = { key: `file\0${file}`, head: `- called in ${code(file)}: ` };
    else group = { key: `seen\0${seen}`, head: seen === SEEN_OUTPUT ? '- calls seen in output: ' : `- called ${seen}: ` };
    heads.set(id, group);
  }
  return { key: group.key, head: group.head, item };
}

/** One candidate per call the session made or talked about, unless a symbol fact names it; `root` shortens the files their lines name. */
export function callDetails(activity: SessionActivity, symbols: ReadonlySet<string>, limit = 1000, root: string | null = null): Detail[] {
  const ranked = [...activity.calls.entries()].sort((a, b) => b[1].weight - a[1].weight).slice(0, limit);
  const out: Detail[] = [];
  const heads = new Map<string, { key: string; head: string }>();
  for (const [name, info] of ranked) {
    if (symbols.has(name)) continue;
    const features = zero();
    features['kind:call'] = 1;
    features.recency = recencyOf(activity.endSeq, info.lastSeq);
    features.frequency = frequencyOf(info.weight);
    features.edited = info.inEdit ? 1 : 0;
    features.inTask = activity.task.includes(name) ? 1 : 0;
    features.dotted = name.includes('.') ? 1 : 0;
    features.read = lastIn(activity.read, info.path ?? null) !== null ? 1 : 0;
    const why = info.inEdit ? 'in edits' : info.where ? `called at ${info.where}` : (info.seen ?? SEEN_OUTPUT);
    const span = code(`${name}(`);
    const line = `- ${span} — ${why}`;
    const detail: Detail = { key: `call:${name}`, kind: 'call', line, features, lastSeq: info.lastSeq, memory: null, factId: null, group: groupOf(span, info, root, heads), learn: `${name}(` };
    if (!info.inEdit && !info.where) detail.generic = true;
    out.push(detail);
  }
  return out;
}

const MEMORY_KIND: Record<string, DetailKind> = {
  correction: 'rule',
  preference: 'rule',
  procedure: 'rule',
  decision: 'decision',
  continuation: 'continuation',
};

/** The line a memory takes in a session's context; `note` is a staleness remark to append, or ''. */
export function memoryLine(memory: Memory, note: string): string {
  return `- ${memory.text.replace(/\s*\n\s*/g, ' ⏎ ')}${note} [${memory.id}]`;
}

/** One candidate per memory; `note` is a staleness remark to append, or ''. */
export function memoryDetail(memory: Memory, session: string | null, task: string, note: string): Detail {
  const kind = MEMORY_KIND[memory.kind] ?? 'fact';
  const features = zero();
  features[`kind:${kind}` as Feature] = 1;
  features.thisSession = session !== null && memory.session === session ? 1 : 0;
  features.importance = memory.importance;
  features.pinned = memory.pinned ? 1 : 0;
  const words = memory.text.match(/[\w./-]{6,}/g) ?? [];
  features.inTask = words.some((w) => task.includes(w)) ? 1 : 0;
  const line = memoryLine(memory, note);
  return { key: memory.id, kind, line, features, lastSeq: null, memory, factId: null };
}

/**
 * Merge a relative path's candidate into the absolute one that ends with it (the absolute line
 * carries both spellings), keeping the stronger features.
 */
export function mergePathVariants(details: Detail[]): Detail[] {
  const absolute = details.filter((d) => d.kind === 'path' && d.features.absolute === 1);
  if (absolute.length === 0) return details;
  const out: Detail[] = [];
  for (const d of details) {
    if (d.kind === 'path' && d.features.absolute === 0) {
      const text = /^- `([^`]+)`/.exec(d.line)?.[1];
      const host = text ? absolute.find((a) => a.line.includes(`/${text}\``)) : undefined;
      if (host) {
        for (const f of FEATURES) host.features[f] = Math.max(host.features[f], d.features[f]);
        continue;
      }
    }
    out.push(d);
  }
  return out;
}
