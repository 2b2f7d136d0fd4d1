// SpecStory's Markdown export of Cursor agent chats → Claude Code's JSONL, for
// scripts/fetch-external-sessions.mjs (issue #15's held-out fidelity set). SpecStory (a Cursor
// extension) saves each chat into the repository as `.specstory/history/<date>_<time>-<slug>.md`;
// some projects commit that folder and their sdists ship it. What the export keeps, and so what is
// real here: every user message, the assistant's text and thinking, and each tool call as Cursor
// showed it — `Read file: <path>` (the path, not the content), codebase / grep / file / directory
// searches with their result tables, edits as the applied diff (without the file name), and
// terminal commands with their output. What is rebuilt: the envelope (ids, parent chain, tool_use
// ids, one-second-apart timestamps from the start time in the title or file name, taken as UTC, and a cwd of
// `/repo/<package>`), the tool names of the three calls Claude Code has an equivalent for (`Read`
// for read_file, `Bash` for run_terminal_cmd, `Edit` for an applied diff; the others keep
// Cursor's own names), and the arguments: `file_path`, `command`, `query` (the search as SpecStory
// titled it), and an edit's `old_string` / `new_string` split from the applied diff SpecStory
// shows (not Cursor's own `code_edit` sketch, which the export drops; no `file_path`, which the
// export does not name).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * SpecStory's applied diff (each line `  ` context, `+ ` added or `- ` removed) as Claude Code's
 * Edit arguments: `old_string` the context and removed lines, `new_string` the context and added
 * lines, the two-character marks dropped. The export has no file name, so there is no `file_path`.
 */
export function editOf(diff) {
  const before = [];
  const after = [];
  for (const line of diff.split('\n')) {
    const mark = line.slice(0, 2);
    if (mark === '+ ' || line === '+') after.push(line.slice(2));
    else if (mark === '- ' || line === '-') before.push(line.slice(2));
    else {
      const context = line.startsWith('  ') ? line.slice(2) : line;
      before.push(context);
      after.push(context);
    }
  }
  return { old_string: before.join('\n'), new_string: after.join('\n') };
}

/** A stable uuid-shaped id from a seed (the export has no ids). */
function idOf(seed) {
  const h = createHash('sha1').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

const USER = '_**User**_';
const ASSISTANT = '_**Assistant**_';
const STEP = '_****_';
const FENCE_CLOSE = /^```\s*$/;
const SHELL_FENCE = /^```(bash|sh|shell|zsh|console)\s*$/;

/** Cursor's searches, by the words SpecStory's `<summary>` starts with: [prefix, tool name]. */
const SEARCHES = [
  ['Searched codebase', 'codebase_search'],
  ['Grep search for', 'grep_search'],
  ['Searched files', 'file_search'],
  ['Listed directory', 'list_dir'],
  ['Listed current directory', 'list_dir'],
  ['Searched web', 'web_search'],
];

/** The turns of one export: [{ role: 'user' | 'assistant', lines }]; the header before the first turn is dropped. */
function turnsOf(markdown) {
  const turns = [];
  for (const line of markdown.replace(/\r\n?/g, '\n').split('\n')) {
    const marker = line.trim();
    if (marker === USER || marker === ASSISTANT) turns.push({ role: marker === USER ? 'user' : 'assistant', lines: [] });
    else turns.at(-1)?.lines.push(line);
  }
  return turns;
}

/** Lines without the leading and trailing blank lines and `---` separators SpecStory puts around each part. */
function trimmed(lines) {
  let a = 0;
  let b = lines.length;
  while (a < b && /^\s*(---)?\s*$/.test(lines[a])) a++;
  while (b > a && /^\s*(---)?\s*$/.test(lines[b - 1])) b--;
  return lines.slice(a, b);
}

/** The fenced block opening at `lines[i]`: its body and the index after its closing fence (the end when unclosed). */
function fenced(lines, i) {
  let j = i + 1;
  while (j < lines.length && !FENCE_CLOSE.test(lines[j])) j++;
  return { body: lines.slice(i + 1, j).join('\n'), next: Math.min(j + 1, lines.length) };
}

/**
 * An assistant turn's steps. SpecStory separated them with `_****_` (early 2025) or with a bare
 * `---` line (later); a `---` inside a fenced block or a `<details>` block is content, not a break.
 */
function stepsOf(lines) {
  const steps = [[]];
  let fence = false;
  let details = false;
  for (const line of lines) {
    const marker = line.trim();
    // `_****_` is SpecStory's own marker and always a break (it also ends an unclosed fence).
    if (marker === STEP || (!fence && !details && marker === '---')) {
      steps.push([]);
      fence = false;
      details = false;
      continue;
    }
    if (/^```/.test(line)) fence = !fence;
    else if (!fence && marker === '<details>') details = true;
    else if (!fence && marker === '</details>') details = false;
    steps.at(-1).push(line);
  }
  return steps;
}

/**
 * One step of an assistant turn (the parts SpecStory separates with `_****_`) as items in order:
 * { kind: 'thinking' | 'text', text } or { kind: 'tool', name, input, result }. A fenced diff or
 * shell block is a tool call only where the step starts with it or follows another call (Cursor's
 * export puts each call in a step of its own); inside prose it stays text.
 */
export function stepItems(stepLines) {
  const lines = trimmed(stepLines);
  const items = [];
  let text = [];
  const flush = () => {
    const body = trimmed(text).join('\n');
    if (body) items.push({ kind: 'text', text: body });
    text = [];
  };
  const atCallPosition = () => trimmed(text).length === 0;
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const read = /^Read file: (.+?)\s*$/.exec(line);
    if (line.trimStart().startsWith('<think>')) {
      flush();
      const start = line.trimStart().slice('<think>'.length);
      const body = [];
      let rest = '';
      let j = i;
      for (let current = start; ; current = lines[++j] ?? '') {
        const close = current.indexOf('</think>');
        if (close >= 0) {
          body.push(current.slice(0, close));
          rest = current.slice(close + '</think>'.length);
          break;
        }
        body.push(current);
        if (j >= lines.length - 1) break;
      }
      // Later exports wrap the thought in `<details><summary>Thought Process</summary>…</details>`.
      const thought = body
        .join('\n')
        .trim()
        .replace(/^<details>\s*<summary>Thought Process<\/summary>/, '')
        .replace(/<\/details>$/, '')
        .trim();
      if (thought) items.push({ kind: 'thinking', text: thought });
      if (rest.trim()) text.push(rest);
      i = j + 1;
    } else if (read) {
      flush();
      items.push({ kind: 'tool', name: 'Read', input: { file_path: read[1] }, result: '' });
      i++;
    } else if (line.trim() === '<details>' && /<summary>/.test(lines[i + 1] ?? '')) {
      flush();
      let j = i + 1;
      while (j < lines.length && lines[j].trim() !== '</details>') j++;
      const summary = /<summary>([\s\S]*?)<\/summary>/.exec(lines[i + 1])?.[1].trim() ?? '';
      const query = summary.replace(/\s*•\s*\*\*\d+\*\*\s*(results?|files?)\s*$/, '');
      const name = SEARCHES.find(([prefix]) => query.startsWith(prefix))?.[1] ?? 'cursor_tool';
      items.push({ kind: 'tool', name, input: { query }, result: trimmed(lines.slice(i + 2, j)).join('\n') });
      i = Math.min(j + 1, lines.length);
    } else if (/^```diff\s*$/.test(line) && atCallPosition()) {
      flush();
      const { body, next } = fenced(lines, i);
      items.push({ kind: 'tool', name: 'Edit', input: editOf(body), result: '' });
      i = next;
    } else if (SHELL_FENCE.test(line) && atCallPosition()) {
      flush();
      const { body, next } = fenced(lines, i);
      let j = next;
      while (j < lines.length && lines[j].trim() === '') j++;
      let output = '';
      if (FENCE_CLOSE.test(lines[j] ?? '')) {
        const out = fenced(lines, j);
        output = out.body;
        j = out.next;
      } else j = next;
      items.push({ kind: 'tool', name: 'Bash', input: { command: body.trim() }, result: output });
      i = j;
    } else {
      text.push(line);
      i++;
    }
  }
  flush();
  return items;
}

/**
 * When the chat started, taken as UTC: from the title SpecStory writes (`## Title (27/02/2025,
 * 17:02:54)`), else from the file name (`2025-02-27_17-02-…`); null when neither has it.
 */
export function startOf(fileName, markdown) {
  const title = /^## .*\((\d{2})\/(\d{2})\/(\d{4}), (\d{2}):(\d{2}):(\d{2})\)\s*$/m.exec(markdown.slice(0, 2000));
  if (title) return new Date(Date.UTC(+title[3], +title[2] - 1, +title[1], +title[4], +title[5], +title[6])).toISOString();
  const name = /^(\d{4})-(\d{2})-(\d{2})_(\d{2})-(\d{2})/.exec(fileName);
  return name ? new Date(Date.UTC(+name[1], +name[2] - 1, +name[3], +name[4], +name[5])).toISOString() : null;
}

/**
 * One SpecStory export of a Cursor chat as Claude Code's JSONL lines: user messages as user lines,
 * thinking and text as assistant lines, and each tool call as an assistant `tool_use` line
 * followed by the user `tool_result` line that answers it.
 */
export function specstoryToClaude(markdown, { sessionId, cwd, startedAt }) {
  const lines = [];
  let parent = null;
  let n = 0;
  const t0 = Date.parse(startedAt);
  const push = (fields) => {
    const uuid = idOf(`${sessionId}/${n}`);
    const timestamp = new Date(t0 + n * 1000).toISOString();
    n++;
    lines.push(JSON.stringify({ parentUuid: parent, isSidechain: false, userType: 'external', cwd, sessionId, ...fields, uuid, timestamp }));
    parent = uuid;
  };
  for (const turn of turnsOf(markdown)) {
    if (turn.role === 'user') {
      const text = trimmed(turn.lines).join('\n');
      if (text) push({ type: 'user', message: { role: 'user', content: text } });
      continue;
    }
    for (const item of stepsOf(turn.lines).flatMap(stepItems)) {
      if (item.kind === 'text') push({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: item.text }] } });
      else if (item.kind === 'thinking') push({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'thinking', thinking: item.text }] } });
      else {
        const id = `toolu_${idOf(`${sessionId}/tool/${n}`).replaceAll('-', '').slice(0, 24)}`;
        push({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'tool_use', id, name: item.name, input: item.input }] } });
        push({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: item.result }] } });
      }
    }
  }
  return lines;
}

/** The chats in an unpacked `.specstory/history` folder, as transcript files: [{ agent, rel, lines, session, parent, source }]. */
export function specstorySessions(historyRoot, { package: name }) {
  const out = [];
  for (const file of readdirSync(historyRoot).sort()) {
    if (!file.endsWith('.md') || file.startsWith('.')) continue;
    const markdown = readFileSync(path.join(historyRoot, file), 'utf8');
    const startedAt = startOf(file, markdown);
    if (startedAt === null) continue;
    const sessionId = idOf(`specstory/${name}/${file}`);
    const lines = specstoryToClaude(markdown, { sessionId, cwd: `/repo/${name}`, startedAt });
    if (lines.length > 0) out.push({ agent: 'claude-code', rel: `${sessionId}.jsonl`, lines, session: sessionId, parent: null, source: file });
  }
  return out;
}
