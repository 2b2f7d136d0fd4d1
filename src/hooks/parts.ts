/**
 * A session-start context in parts, for clients that cap one hook's text.
 *
 * Claude Code puts a hook's `additionalContext` before the model only up to 10,000 characters;
 * a longer one is saved to a file and the model reads a 2,000-character preview and the file's
 * path instead (measured with Claude Code 2.1.197; test/e2e/claude.test.ts). cairn's context after
 * /compact is ~15,000 characters at its 5,000-token budget, more on a long session. Several hooks
 * of one event are each capped on their own and all reach the model, in the order they finish.
 *
 * So `cairn install claude` and the plugin register {@link SESSION_START_PARTS} SessionStart
 * commands: the first (`session-start --parts N`) builds the context as always, keeps it within
 * N parts' room, prints its first part and leaves the rest in a small file for this session;
 * the others (`session-start --part K --parts N`) only wait for that file and print part K.
 * Each part is whole lines; parts after the first say they continue it.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { processAlive } from '../runtime.js';

/** The most characters one hook's text may hold in Claude Code (its cap is 10,000; a margin kept). */
export const HOOK_TEXT_MAX = 9_500;

/** How many SessionStart commands `cairn install claude` and the plugin register: up to ~38,000 characters of context. */
export const SESSION_START_PARTS = 4;

/** How long a later part waits for the first to leave the rest (the first's own work; the hook's timeout is 30 s). */
const PART_WAIT_MS = 10_000;
const PART_POLL_MS = 15;
/** A rest file written this long before a later part started is an earlier start's (another /compact, a resume). */
const STALE_MS = 3_000;

/** Where this hook command sits among the parts: `--parts N` (the first) or `--part K --parts N`. */
export interface PartArgs {
  parts: number;
  part: number;
}

/** `--parts N` and `--part K` among a hook's arguments; null when neither is there or they make no sense. */
export function parsePartArgs(args: readonly string[]): PartArgs | null {
  const value = (flag: string): number | null => {
    const at = args.indexOf(flag);
    if (at < 0) return null;
    const n = Number(args[at + 1]);
    return Number.isInteger(n) && n >= 1 && n <= 16 ? n : NaN;
  };
  const parts = value('--parts');
  const part = value('--part');
  if (parts === null && part === null) return null;
  if (parts === null || Number.isNaN(parts) || (part !== null && (Number.isNaN(part) || part > parts))) return null;
  return { parts, part: part ?? 1 };
}

const continuation = (part: number, of: number): string => `cairn memory, continued (part ${part} of ${of}):\n`;
/** Room every later part keeps for its first line. */
const HEADER_ROOM = continuation(16, 16).length;

/** The characters `parts` parts can carry (the later ones start with a line saying they continue). */
export function partsCapacity(parts: number, max = HOOK_TEXT_MAX): number {
  return parts * max - (parts - 1) * HEADER_ROOM;
}

/**
 * `text` cut at line ends into parts of at most `max` characters each, the later ones headed by a
 * line saying they continue it. A line longer than a part is cut. More parts than `parts` only
 * when the text is longer than {@link partsCapacity}: the caller keeps it within.
 */
export function splitParts(text: string, max = HOOK_TEXT_MAX): string[] {
  if (text.length <= max) return [text];
  const bodies: string[] = [];
  let current = '';
  let room = max;
  const flush = (): void => {
    bodies.push(current);
    current = '';
    room = max - HEADER_ROOM;
  };
  for (const line of text.split(/(?<=\n)/)) {
    let rest = line;
    while (current.length + rest.length > room) {
      if (current.length > 0) {
        flush();
        continue;
      }
      current = rest.slice(0, room);
      rest = rest.slice(room);
      flush();
    }
    current += rest;
  }
  if (current.length > 0) bodies.push(current);
  return bodies.map((body, i) => (i === 0 ? body : `${continuation(i + 1, bodies.length)}${body}`));
}

/** This session's file: its id as a file name (session ids are UUIDs; anything else is made safe and kept apart by its length). */
function restPath(home: string, session: string): string {
  const name = /^[\w-]{1,100}$/.test(session) ? session : `${session.replace(/[^\w-]/g, '_').slice(0, 80)}-${session.length}`;
  return join(home, 'cache', 'hook-parts', `${name}.json`);
}

/**
 * The first part's command says, as it starts, that it is building this session's parts: its pid,
 * so a later part stops waiting at once when that process is gone (killed outright, where no catch
 * runs to leave an empty rest) instead of waiting out {@link PART_WAIT_MS}. The same file
 * {@link writeRest} fills.
 */
export function claimRest(home: string, session: string, pid = process.pid): void {
  writeFile(restPath(home, session), JSON.stringify({ at: Date.now(), pid }), home);
}

function writeFile(path: string, text: string, home: string): void {
  try {
    writeFileSync(path, text);
  } catch {
    mkdirSync(join(home, 'cache', 'hook-parts'), { recursive: true });
    writeFileSync(path, text);
  }
}

/**
 * The first part's command leaves parts 2… for the others (an empty list: nothing more to print).
 * Written in place, not renamed into place (a rename cost the hook milliseconds here): a later part
 * that reads it half-written cannot parse it and reads it again ({@link awaitPart}).
 */
export function writeRest(home: string, session: string, rest: readonly string[]): void {
  writeFile(restPath(home, session), JSON.stringify({ at: Date.now(), rest }), home);
}

/**
 * Part `part` (2…) of this session's context, once the first part's command has left it: null when
 * it left fewer parts, or none within the wait (it failed, or the session has no context), or its
 * process is gone.
 */
export async function awaitPart(home: string, session: string, part: number, startedAt: number, waitMs = PART_WAIT_MS): Promise<string | null> {
  const path = restPath(home, session);
  for (const deadline = startedAt + waitMs; Date.now() < deadline; await new Promise((done) => setTimeout(done, PART_POLL_MS))) {
    let written: { at?: unknown; rest?: unknown; pid?: unknown };
    try {
      if (statSync(path).mtimeMs < startedAt - STALE_MS) continue;
      written = JSON.parse(readFileSync(path, 'utf8')) as typeof written;
    } catch {
      continue;
    }
    if (typeof written.at !== 'number' || written.at < startedAt - STALE_MS) continue;
    if (!Array.isArray(written.rest)) {
      // The first part's command is still building: stop when it is gone.
      if (typeof written.pid === 'number' && !processAlive(written.pid)) return null;
      continue;
    }
    const text: unknown = written.rest[part - 2];
    return typeof text === 'string' && text.length > 0 ? text : null;
  }
  return null;
}
