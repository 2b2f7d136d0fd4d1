import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HookInput, HookOutput } from './events.js';

/**
 * Gemini CLI after a chat compression. Gemini (checked with @google/gemini-cli 0.61.0) fires no
 * SessionStart when it compresses: it replaces the history with a `<state_snapshot>` summary, sent
 * as a user message, and goes on. Its BeforeModel hook runs before every model call with the
 * request's text (`llm_request.messages`, text parts only) and may rewrite those messages for that
 * call. So cairn's `before-model` hook, once the request holds a snapshot, builds the post-compact
 * context (as SessionStart(compact) does for Claude Code and Codex) and appends it to the message
 * that carries the snapshot — on every later call too, from a small cache keyed by the snapshot, so
 * the window keeps the same text until the next compression. Without a snapshot it prints nothing.
 */

/** How Gemini CLI opens a compression summary (its compression prompt asks for this tag). */
export const SNAPSHOT_TAG = '<state_snapshot>';

interface LlmMessage {
  role: string;
  content: string;
}

/** The compression the request holds: the message index that carries the snapshot, and the snapshot's hash. */
export interface GeminiCompression {
  messages: LlmMessage[];
  index: number;
  hash: string;
}

function messagesOf(input: HookInput): LlmMessage[] {
  const request = input.llm_request;
  if (request === null || typeof request !== 'object') return [];
  const messages = (request as { messages?: unknown }).messages;
  if (!Array.isArray(messages)) return [];
  return messages.filter((m): m is LlmMessage => m !== null && typeof m === 'object' && typeof (m as LlmMessage).role === 'string' && typeof (m as LlmMessage).content === 'string');
}

/** The latest compression snapshot in a BeforeModel request (a user message), or null. */
export function findCompression(input: HookInput): GeminiCompression | null {
  const messages = messagesOf(input);
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role !== 'user') continue;
    const at = message.content.indexOf(SNAPSHOT_TAG);
    // Gemini's summary opens the message, or follows its environment context (the two are one content):
    // the tag anywhere else is the user's text (a pasted snapshot), not a compression.
    if (at === -1 || !/^(?:[\s\S]*<\/session_context>)?\s*$/.test(message.content.slice(0, at))) continue;
    const end = message.content.indexOf('</state_snapshot>', at);
    const snapshot = message.content.slice(at, end === -1 ? undefined : end);
    return { messages, index, hash: createHash('sha256').update(snapshot).digest('hex').slice(0, 32) };
  }
  return null;
}

/** Text as Gemini CLI puts hook context in a request: `<` and `>` escaped. */
function escapeTags(text: string): string {
  return text.replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * The post-compact context without the items the request already carries after the snapshot.
 * Gemini keeps the pending prompt through a compression, with the hook context given with it
 * (SessionStart's, BeforeAgent's): an item listed there is in the window already, so it is not
 * listed twice in one request. Headings left without items go too; null when nothing is left.
 */
export function withoutRepeats(context: string, compression: GeminiCompression): string | null {
  const later = compression.messages.slice(compression.index + 1).map((m) => m.content).join('\n');
  if (later.length === 0) return context;
  const lines = context.split('\n').filter((line) => !(line.startsWith('- ') && later.includes(escapeTags(line))));
  // A heading is kept only when an item follows it before the next heading.
  const kept = lines.filter((line, i) => {
    if (!line.startsWith('## ')) return true;
    for (const next of lines.slice(i + 1)) {
      if (next.startsWith('## ')) return false;
      if (next.startsWith('- ')) return true;
    }
    return false;
  });
  if (!kept.some((line) => line.startsWith('- '))) return null;
  return kept.join('\n').replace(/\n{3,}/g, '\n\n');
}

/**
 * The BeforeModel output that adds `context` to the snapshot's message. Only the messages up to it
 * are given: Gemini keeps every later content as it was (and replaces a content's text parts by one
 * message's text, keeping its other parts). The text goes in `<hook_context>` with `<` and `>`
 * escaped, as Gemini wraps its other hooks' additionalContext.
 */
export function injectionOutput(compression: GeminiCompression, context: string): Extract<HookOutput, { kind: 'json' }> {
  const escaped = escapeTags(context);
  const messages = compression.messages.slice(0, compression.index + 1).map((m, i) => (i === compression.index ? { ...m, content: `${m.content}\n\n<hook_context>${escaped}</hook_context>` } : m));
  return { kind: 'json', value: { hookSpecificOutput: { hookEventName: 'BeforeModel', llm_request: { messages } } } };
}

/** Entries of sessions that never ended (a killed client) are removed this long after their last write. */
const GIVEN_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;

function cacheDir(home: string): string {
  return join(home, 'cache', 'gemini-compress');
}

/** Where the post-compact context given for a session's latest snapshot is kept. */
function cachePath(home: string, session: string): string {
  return join(cacheDir(home), `${createHash('sha256').update(session).digest('hex').slice(0, 32)}.json`);
}

/**
 * The context already given after this snapshot: a string, null (built, nothing to give), or
 * undefined (not built yet for this snapshot).
 */
export function readGivenContext(home: string, session: string, hash: string): string | null | undefined {
  try {
    const entry = JSON.parse(readFileSync(cachePath(home, session), 'utf8')) as { snapshot?: unknown; context?: unknown };
    if (entry.snapshot !== hash) return undefined;
    return typeof entry.context === 'string' ? entry.context : null;
  } catch {
    return undefined;
  }
}

/**
 * Keep the context given after this snapshot (atomic: a reader sees the old entry or the new one),
 * and remove other sessions' entries older than a week (their session ended without a SessionEnd).
 */
export function writeGivenContext(home: string, session: string, hash: string, context: string | null, now = Date.now()): void {
  const path = cachePath(home, session);
  mkdirSync(cacheDir(home), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, JSON.stringify({ snapshot: hash, context }));
  renameSync(tmp, path);
  for (const name of readdirSync(cacheDir(home))) {
    const other = join(cacheDir(home), name);
    try {
      if (other !== path && now - statSync(other).mtimeMs > GIVEN_MAX_AGE_MS) rmSync(other, { force: true });
    } catch {
      // Removed by another hook meanwhile.
    }
  }
}

/** The session ended: its snapshot's context is not needed again (a resumed chat builds it anew). */
export function forgetGivenContext(home: string, session: string): void {
  rmSync(cachePath(home, session), { force: true });
}

/** The additionalContext of a SessionStart output, or null. */
export function additionalContextOf(output: HookOutput): string | null {
  if (output.kind !== 'json') return null;
  const specific = output.value.hookSpecificOutput as { additionalContext?: unknown } | undefined;
  return typeof specific?.additionalContext === 'string' && specific.additionalContext.length > 0 ? specific.additionalContext : null;
}
