/**
 * Continuation state: where a session stands when it is distilled (at pre-compact, at stop, at
 * session end) — the current task (the last substantive user request), the files being edited,
 * errors still open, the next steps (the agent's todo list, or the "next steps" it wrote), and
 * the agent's latest update. One `continuation` memory per session, replaced each time; none for
 * a headless run (`claude -p`, `codex exec`).
 */
import type { TurnRecord } from '../../types.js';
import { filePathOf, toolArgs, toolClass, commandOf, type SessionView } from '../session.js';
import { code, gist, oneLine, stripMarkdown } from '../text.js';
import type { Candidate } from '../types.js';
import { classifyCommand, shellOutcome } from './commands.js';
import { candidate } from './common.js';

/** Replies that keep the current task going rather than setting a new one. */
const TRIVIAL =
  /^(?:continue|go on|go ahead|proceed|carry on|keep going|resume|yes|yep|y|ok|okay|sure|thanks|thank you|do it|next|please continue|continue implementation|lgtm|продолжай|продолжи|далее|да|ок|продовжуй|так|weiter|ja|mach weiter|continúa|sí|continue|oui|vas-y|continua|sim|继续|好的|続けて|はい)[\s.!]*$/i;

const MAX_FILES = 8;
const MAX_STEPS = 6;

/** A short question after the work ("did you push?") follows the task up; it is not a new one. */
const FOLLOW_UP_QUESTION = /^[^\n]{1,60}\?\s*$/;

interface Request {
  turn: TurnRecord;
  /** A short follow-up after it ("continue", "did you push?"). */
  then: string | null;
  /** The user's latest correction after it. */
  correction: string | null;
}

/** The last substantive thing the user asked for, with the follow-ups and correction after it. */
function lastRequest(view: SessionView): Request | null {
  const corrections = new Set(view.corrections.map((c) => c.correctionTurnId));
  let then: TurnRecord | null = null;
  let correction: TurnRecord | null = null;
  let fallback: TurnRecord | null = null;
  for (let i = view.turns.length - 1; i >= 0; i--) {
    const turn = view.turns[i] as TurnRecord;
    if (!view.isHumanTurn(turn)) continue;
    const text = turn.text.trim();
    if (/^\/[\w:-]+$/.test(text)) continue;
    if (TRIVIAL.test(text) || text.length < 8 || FOLLOW_UP_QUESTION.test(text)) {
      then ??= turn;
      continue;
    }
    if (corrections.has(turn.id)) {
      correction ??= turn;
      fallback ??= turn;
      continue;
    }
    return { turn, then: then ? oneLine(then.text, 60) : null, correction: correction ? oneLine(correction.text, 200) : null };
  }
  if (fallback) return { turn: fallback, then: then ? oneLine(then.text, 60) : null, correction: null };
  return then ? { turn: then, then: null, correction: null } : null;
}

/** Open items of the latest todo list the agent wrote (TodoWrite, update_plan, write_todos). */
function todoSteps(view: SessionView): string[] | null {
  for (let i = view.turns.length - 1; i >= 0; i--) {
    const turn = view.turns[i] as TurnRecord;
    if (turn.role !== 'tool_call' || toolClass(turn.toolName) !== 'todo') continue;
    const raw = turn.toolInput ?? '';
    const args = toolArgs(turn);
    const items: Array<{ text: string; status: string }> = [];
    const list = args?.todos ?? args?.plan;
    if (Array.isArray(list)) {
      for (const item of list) {
        if (item === null || typeof item !== 'object') continue;
        const o = item as Record<string, unknown>;
        const text = o.content ?? o.step ?? o.description ?? o.title;
        if (typeof text === 'string') items.push({ text, status: typeof o.status === 'string' ? o.status : 'pending' });
      }
    } else {
      // A cut JSON summary: read the objects still whole.
      for (const chunk of raw.match(/\{[^{}]*\}/g) ?? []) {
        const text = /"(?:content|step|description|title)"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(chunk)?.[1];
        const status = /"status"\s*:\s*"(\w+)"/.exec(chunk)?.[1] ?? 'pending';
        if (text) items.push({ text: text.replace(/\\"/g, '"'), status });
      }
    }
    if (items.length === 0) continue;
    return items
      .filter((item) => !/^(?:completed|done|cancelled|canceled)$/i.test(item.status))
      .slice(0, MAX_STEPS)
      .map((item) => `${/progress/i.test(item.status) ? '[in progress] ' : ''}${oneLine(item.text, 120)}`);
  }
  return null;
}

/** "Next steps" the agent listed in its latest reply that has such a heading. */
function writtenSteps(text: string): string[] {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => /^\s*(?:#+\s*|\*\*)?(?:next steps?|next:|remaining|todo|to do|what's left)\b/i.test(l));
  if (at < 0) return [];
  const out: string[] = [];
  for (const line of lines.slice(at + 1)) {
    if (/^\s*#/.test(line) && out.length > 0) break;
    const item = /^\s*(?:[-*•]|\d+[.)])\s+(.+)$/.exec(line);
    if (item?.[1]) out.push(oneLine(stripMarkdown(item[1]), 120));
    else if (out.length > 0 && line.trim().length === 0) break;
    if (out.length >= MAX_STEPS) break;
  }
  return out;
}

/** The `/compact` command as ingest stores it (src/ingest/readers/claude-code.ts: a `slash-command` user turn). */
const isCompactCommand = (turn: TurnRecord | undefined): boolean => turn !== undefined && turn.role === 'user' && turn.flags.includes('slash-command') && /^\/compact\b/.test(turn.text);

/**
 * The session's last turn that is not part of a compaction — its boundary, its summary, the
 * `/compact` command and that command's output, which Claude Code writes after the summary — or
 * the last turn when every turn is. The note's minute comes from it, so a compaction written in a
 * later minute leaves the note as it was (test/hooks/compact-defer.test.ts).
 */
function lastWorkTurn(turns: readonly TurnRecord[]): TurnRecord {
  let i = turns.length - 1;
  while (i > 0) {
    const turn = turns[i] as TurnRecord;
    const compaction =
      turn.flags.includes('compact-boundary') || turn.flags.includes('compact-summary') || isCompactCommand(turn) || (turn.flags.includes('command-output') && isCompactCommand(turns[i - 1]));
    if (!compaction) break;
    i--;
  }
  return turns[i] as TurnRecord;
}

export function extractContinuation(view: SessionView): Candidate[] {
  // A headless run is a one-shot task for a script: nobody resumes it or compacts it, and a note
  // per run would pile up in recall ("Task: <the prompt> … Session: <uuid>" after every run).
  if (view.isSubagent || view.isHeadless || view.turns.length === 0) return [];
  const last = view.turns[view.turns.length - 1] as TurnRecord;
  if (!view.isNew(last)) return [];
  const request = lastRequest(view);
  if (request === null) return [];
  const since = request.turn.seq;

  const files: string[] = [];
  const failing = new Map<string, string>();
  let lastReply: TurnRecord | null = null;
  for (const turn of view.turns) {
    if (turn.seq < since) continue;
    if (view.isAgentText(turn)) lastReply = turn;
    if (turn.role !== 'tool_call') continue;
    const cls = toolClass(turn.toolName);
    if (cls === 'edit') {
      const path = filePathOf(turn);
      if (path) {
        const rel = view.relative(path);
        const i = files.indexOf(rel);
        if (i >= 0) files.splice(i, 1);
        files.push(rel);
      }
    } else if (cls === 'shell') {
      const command = commandOf(turn);
      const classified = command ? classifyCommand(command) : null;
      const result = view.resultOf(turn);
      if (!classified || !result || classified.cls === 'run') continue;
      const outcome = shellOutcome(result, classified.cls);
      if (outcome === 'failed') {
        const line = (result.toolInput ?? result.text).split('\n').find((l) => /error|fail|exception|cannot|not found/i.test(l)) ?? '';
        failing.set(classified.head, `${code(classified.command.length <= 80 ? classified.command : classified.head)} fails${line ? `: “${oneLine(line, 120)}”` : ''}`);
      } else if (outcome === 'ok') failing.delete(classified.head);
    }
  }

  const parts = [`Task: ${oneLine(request.turn.text, 300)}${request.then ? ` (then: “${request.then}”)` : ''}`];
  if (request.correction) parts.push(`Latest correction: ${request.correction}`);
  if (files.length > 0) parts.push(`Files being edited: ${files.slice(-MAX_FILES).join(', ')}`);
  if (failing.size > 0) parts.push(`Open errors: ${[...failing.values()].slice(0, 3).join('; ')}`);
  const steps = todoSteps(view) ?? (lastReply ? writtenSteps(lastReply.text) : []);
  if (steps.length > 0) parts.push(`Next steps: ${steps.join('; ')}`);
  if (lastReply) {
    const update = gist(lastReply.text, 240, { preferProse: true });
    if (update.length > 0) parts.push(`Latest update: ${update}`);
  }
  // Which session this is (two sessions may stand at the same task).
  const stamp = lastWorkTurn(view.turns).at;
  const day = stamp !== null ? ` · ${new Date(stamp).toISOString().slice(0, 16).replace('T', ' ')}` : '';
  parts.push(`Session: ${view.session.id}${view.session.branch ? ` on ${view.session.branch}` : ''}${day}`);
  return [
    candidate(view, last, {
      text: parts.join('\n'),
      kind: 'continuation',
      extractor: 'continuation',
      importance: 0.6,
      scope: 'session',
      tags: ['continuation'],
      files: files.slice(-MAX_FILES),
      subject: { key: `continuation:${view.session.id}`, value: parts.join('\n'), onConflict: 'supersede' },
    }),
  ];
}
