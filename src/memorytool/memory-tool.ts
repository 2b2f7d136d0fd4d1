import { posix } from 'node:path';
import { z } from 'zod';
import type { Cairn } from '../cairn.js';
import { CairnError, invalid, isCairnError } from '../errors.js';
import { describeZodError } from '../memory/transfer.js';
import type { Memory } from '../types.js';

/**
 * A backend for Anthropic's client-side memory tool (`memory_20250818`): the commands view,
 * create, str_replace, insert, delete and rename over a virtual `/memories` directory, stored as
 * cairn memories (one file = one memory; every change is a revision, so history and undo work).
 */
export const MEMORY_TOOL_TYPE = 'memory_20250818';
const TAG = 'memory-tool';
const PATH_KEY = 'memoryToolPath';

export const memoryToolCommand = z.discriminatedUnion('command', [
  z.object({ command: z.literal('view'), path: z.string(), view_range: z.tuple([z.number().int(), z.number().int()]).optional() }),
  z.object({ command: z.literal('create'), path: z.string(), file_text: z.string() }),
  z.object({ command: z.literal('str_replace'), path: z.string(), old_str: z.string(), new_str: z.string() }),
  z.object({ command: z.literal('insert'), path: z.string(), insert_line: z.number().int().min(0), insert_text: z.string() }),
  z.object({ command: z.literal('delete'), path: z.string() }),
  z.object({ command: z.literal('rename'), old_path: z.string(), new_path: z.string() }),
]);
export type MemoryToolCommand = z.infer<typeof memoryToolCommand>;

export interface MemoryToolOptions {
  /** The virtual root. @default '/memories' */
  root?: string;
}

/**
 * Resolve a tool path inside the root, refusing anything that could escape it: `..` segments,
 * percent-encoded traversal, backslashes, NUL bytes, paths outside the root.
 */
export function confinePath(raw: string, root = '/memories'): string {
  if (typeof raw !== 'string' || raw.length === 0) throw invalid('path is required', 'path');
  if (raw.includes('\0') || raw.includes('\\')) throw invalid(`path ${JSON.stringify(raw)} has forbidden characters`, 'path');
  let decoded = raw;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    throw invalid(`path ${JSON.stringify(raw)} is not a valid path`, 'path');
  }
  if (decoded.split('/').some((segment) => segment === '..')) throw invalid(`path ${raw} may not contain ..`, 'path');
  const normalized = posix.normalize(decoded).replace(/\/+$/, '') || '/';
  if (normalized !== root && !normalized.startsWith(`${root}/`)) throw invalid(`path ${raw} is outside ${root}`, 'path');
  return normalized;
}

function numbered(text: string, range?: [number, number]): string {
  const lines = text.split('\n');
  const start = range ? Math.max(1, range[0]) : 1;
  const end = range ? (range[1] === -1 ? lines.length : Math.min(lines.length, range[1])) : lines.length;
  const out: string[] = [];
  for (let i = start; i <= end; i++) out.push(`${String(i).padStart(6)}\t${lines[i - 1] ?? ''}`);
  return out.join('\n');
}

export interface MemoryTool {
  /** Run one command; returns the tool_result text, throws CairnError on bad input. */
  execute(input: unknown): Promise<string>;
  /** Run one command and shape the result for a `tool_result` block (errors as `is_error`). */
  handle(input: unknown): Promise<{ content: string; is_error: boolean }>;
}

export function createMemoryTool(cairn: Cairn, options: MemoryToolOptions = {}): MemoryTool {
  const root = options.root ?? '/memories';

  async function files(): Promise<Memory[]> {
    const all = await cairn.list({ anyTags: [TAG], limit: 100_000 });
    return all.filter((m) => typeof m.meta[PATH_KEY] === 'string');
  }

  async function fileAt(path: string): Promise<Memory | null> {
    return (await files()).find((m) => m.meta[PATH_KEY] === path) ?? null;
  }

  async function mustFile(path: string): Promise<Memory> {
    const file = await fileAt(path);
    if (!file) throw new CairnError('NOT_FOUND', `The path ${path} does not exist`, { field: 'path' });
    return file;
  }

  async function write(path: string, text: string, previous: Memory | null): Promise<void> {
    const body = text.length === 0 ? '\n' : text;
    if (previous) {
      if (previous.text === body && previous.meta[PATH_KEY] === path) return;
      await cairn.remember({
        text: body,
        kind: previous.kind,
        tags: previous.tags,
        importance: previous.importance,
        scope: previous.scope,
        project: previous.project,
        supersedes: previous.id,
        source: 'manual',
        meta: { ...previous.meta, [PATH_KEY]: path },
      });
      return;
    }
    await cairn.remember({ text: body, kind: 'note', tags: [TAG], meta: { [PATH_KEY]: path } });
  }

  async function execute(input: unknown): Promise<string> {
    const parsed = memoryToolCommand.safeParse(input);
    if (!parsed.success) throw invalid(`invalid memory tool command: ${describeZodError(parsed.error)}`, 'command');
    const cmd = parsed.data;
    switch (cmd.command) {
      case 'view': {
        const path = confinePath(cmd.path, root);
        const file = await fileAt(path);
        if (file) return `Here's the content of ${path} with line numbers:\n${numbered(file.text, cmd.view_range)}`;
        const inside = (await files()).filter((m) => (m.meta[PATH_KEY] as string).startsWith(path === '/' ? '/' : `${path}/`));
        if (inside.length === 0 && path !== root) throw new CairnError('NOT_FOUND', `The path ${path} does not exist`, { field: 'path' });
        const lines = inside
          .map((m) => `${Buffer.byteLength(m.text)}\t${m.meta[PATH_KEY] as string}`)
          .sort((a, b) => a.split('\t')[1]!.localeCompare(b.split('\t')[1]!));
        return `Here are the files and directories up to 2 levels deep in ${path}:\n${[`-\t${path}`, ...lines].join('\n')}`;
      }
      case 'create': {
        const path = confinePath(cmd.path, root);
        if (path === root) throw invalid(`cannot create a file at ${root}`, 'path');
        await write(path, cmd.file_text, await fileAt(path));
        return `File created successfully at: ${path}`;
      }
      case 'str_replace': {
        const path = confinePath(cmd.path, root);
        const file = await mustFile(path);
        const count = file.text.split(cmd.old_str).length - 1;
        if (cmd.old_str.length === 0 || count === 0) throw invalid(`No replacement was performed: old_str did not appear verbatim in ${path}.`, 'old_str');
        if (count > 1) throw invalid(`No replacement was performed: old_str appears ${count} times in ${path}; make it unique.`, 'old_str');
        await write(path, file.text.replace(cmd.old_str, () => cmd.new_str), file);
        return 'The memory file has been edited.';
      }
      case 'insert': {
        const path = confinePath(cmd.path, root);
        const file = await mustFile(path);
        const lines = file.text.split('\n');
        if (cmd.insert_line > lines.length) throw invalid(`insert_line ${cmd.insert_line} is past the end of ${path} (${lines.length} lines)`, 'insert_line');
        lines.splice(cmd.insert_line, 0, ...cmd.insert_text.replace(/\n$/, '').split('\n'));
        await write(path, lines.join('\n'), file);
        return `The file ${path} has been edited.`;
      }
      case 'delete': {
        const path = confinePath(cmd.path, root);
        if (path === root) throw invalid(`cannot delete ${root} itself`, 'path');
        const doomed = (await files()).filter((m) => m.meta[PATH_KEY] === path || (m.meta[PATH_KEY] as string).startsWith(`${path}/`));
        if (doomed.length === 0) throw new CairnError('NOT_FOUND', `The path ${path} does not exist`, { field: 'path' });
        await cairn.forget(doomed.map((m) => m.id), `memory tool: delete ${path}`);
        return `Successfully deleted ${path}`;
      }
      case 'rename': {
        const from = confinePath(cmd.old_path, root);
        const to = confinePath(cmd.new_path, root);
        const file = await mustFile(from);
        if (await fileAt(to)) throw new CairnError('CONFLICT', `The destination ${to} already exists`, { field: 'new_path' });
        await write(to, file.text, file);
        return `Successfully renamed ${from} to ${to}`;
      }
    }
  }

  return {
    execute,
    async handle(input) {
      try {
        return { content: await execute(input), is_error: false };
      } catch (error) {
        if (isCairnError(error)) return { content: `Error: ${error.message}`, is_error: true };
        throw error;
      }
    },
  };
}
