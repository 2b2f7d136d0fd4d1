/**
 * Corrections → `correction` memories phrased as a rule with its context: what the user wants
 * (their words, the pushback cue taken off) and what the agent had done. Interrupts and tool
 * rejections carry no words of their own; the user's next message (or the rejection feedback)
 * says what they wanted instead, and without one nothing is kept.
 */
import { detectPushback } from '../../ingest/corrections.js';
import { classifyUserMessage } from '../../ingest/user-message.js';
import type { CorrectionRecord, TurnRecord } from '../../types.js';
import { commandOf, filePathOf, toolClass, type SessionView } from '../session.js';
import { code, gist, oneLine } from '../text.js';
import { preferenceSubject } from './statements.js';
import { candidate } from './common.js';
import type { Candidate } from '../types.js';

/** Longest rule kept, in characters (a correction is a rule, not the whole message). */
const MAX_RULE = 400;
/** How many turns after an interrupt or rejection the user's next words may come. */
const FOLLOW_UP_WINDOW = 8;

/** Cues at the start that say "this is pushback" but are not part of the rule. */
const LEADING_CUE =
  /^(?:no+|nope|nah|wrong|incorrect|not quite|wait|hold on|stop|actually|hmm+|нет|не так|неправильно|стоп|подожди|вообще-то|ні|стоп|зачекай|nein|falsch|moment|non|attends|en fait|no|espera|não|espere|不对|不是|错了|等等|違う|いいえ|待って)\s*[,.!:;—–-]+\s*/iu;

/** The user's words as a rule: the pushback cue off, bounded at a sentence, otherwise as written. */
export function phraseRule(text: string): string {
  let rule = text.trim().replace(/\s+/g, ' ');
  const cue = LEADING_CUE.exec(rule);
  if (cue && rule.length - cue[0].length >= 12) rule = rule.slice(cue[0].length);
  if (rule.length > MAX_RULE) {
    const cut = rule.slice(0, MAX_RULE);
    const end = Math.max(cut.lastIndexOf('. '), cut.lastIndexOf('? '), cut.lastIndexOf('! '));
    rule = end > MAX_RULE * 0.4 ? cut.slice(0, end + 1) : oneLine(rule, MAX_RULE);
  }
  return rule;
}

/**
 * What the agent had done, in a few words: ran a command, edited a file, or said something.
 * `participle` reads after "the agent had …", `infinitive` after "the agent's call to …".
 */
export function describeAgentTurn(turn: TurnRecord, view: SessionView, form: 'participle' | 'infinitive' = 'participle'): string | null {
  const p = form === 'participle';
  if (turn.role === 'tool_call') {
    const cls = toolClass(turn.toolName);
    if (cls === 'shell') {
      const command = commandOf(turn);
      return command ? `run ${code(oneLine(command, 100))}` : null;
    }
    const path = filePathOf(turn);
    if (cls === 'edit' && path) return `${p ? 'edited' : 'edit'} ${code(view.relative(path))}`;
    if (cls === 'read' && path) return `read ${code(view.relative(path))}`;
    return turn.toolName ? `${p ? 'called' : 'call'} ${turn.toolName}` : null;
  }
  if (turn.role === 'assistant' && p) {
    const said = gist(turn.text, 160, { keepIntent: true, preferProse: true });
    return said.length > 0 ? `said: “${said}”` : null;
  }
  return null;
}

function nextHumanTurn(view: SessionView, after: TurnRecord): TurnRecord | null {
  let seen = 0;
  for (const turn of view.turns) {
    if (turn.seq <= after.seq) continue;
    if (++seen > FOLLOW_UP_WINDOW) return null;
    if (view.isHumanTurn(turn) || (turn.role === 'user' && turn.flags.includes('rejection-feedback') && !view.isSubagent)) return turn;
  }
  return null;
}

/**
 * The agent's premise: its latest reply that says something (an acknowledgement does not),
 * among the last few agent turns before the correction; else its latest tool call.
 */
function premiseOf(view: SessionView, before: TurnRecord): TurnRecord | null {
  let call: TurnRecord | null = null;
  let looked = 0;
  for (let i = view.turns.length - 1; i >= 0 && looked < 12; i--) {
    const turn = view.turns[i] as TurnRecord;
    if (turn.seq >= before.seq) continue;
    if (turn.role === 'user' && view.isHumanTurn(turn)) break;
    if (turn.role === 'tool_call') {
      call ??= turn;
      looked++;
    } else if (turn.role === 'assistant') {
      looked++;
      if (gist(turn.text, 160, { keepIntent: true, preferProse: true }).length > 0) return turn;
    }
  }
  return call;
}

function withContext(rule: string, kind: CorrectionRecord['kind'], context: string | null): string {
  if (context === null) return rule;
  const end = context.endsWith('”') ? '' : '.';
  if (kind === 'rejection') return `${rule}\n(The user rejected the agent’s call to ${context}${end})`;
  if (kind === 'interrupt') return `${rule}\n(The user interrupted the agent, which had ${context}${end})`;
  return `${rule}\n(Correction of the agent, which had ${context}${end})`;
}

export function extractCorrections(view: SessionView): Candidate[] {
  if (view.isSubagent) return [];
  const out: Candidate[] = [];
  const pushbackTurns = new Set(view.corrections.filter((c) => c.kind === 'pushback').map((c) => c.correctionTurnId));
  const used = new Set<string>();
  // A pushback right after an interrupt or rejection is worded as one (“the user interrupted …”).
  const stoppedBy = new Map<string, CorrectionRecord['kind']>();
  for (const record of view.corrections) {
    if (record.kind === 'pushback') continue;
    const marker = view.byId.get(record.correctionTurnId);
    const next = marker ? nextHumanTurn(view, marker) : null;
    if (next && pushbackTurns.has(next.id)) stoppedBy.set(next.id, record.kind);
  }
  for (const record of view.corrections) {
    const marker = view.byId.get(record.correctionTurnId);
    if (!marker) continue;
    let ruleTurn: TurnRecord | null = marker;
    if (record.kind !== 'pushback') {
      ruleTurn = nextHumanTurn(view, marker);
      // The follow-up is a correction of its own: it is handled as one.
      if (ruleTurn !== null && pushbackTurns.has(ruleTurn.id)) continue;
      // A new request after an interrupt is not a correction unless it corrects or sets a rule.
      if (ruleTurn !== null && classifyUserMessage(ruleTurn.text, { ...view.messageContext(ruleTurn), after: 'interrupt' }).label === 'other') continue;
    } else if (!view.isHumanTurn(marker) || classifyUserMessage(marker.text, view.messageContext(marker)).label !== 'correction') {
      // Read again with the whole context (records of older versions were found more loosely).
      continue;
    }
    if (ruleTurn === null || !view.isNew(ruleTurn) || used.has(ruleTurn.id)) continue;
    used.add(ruleTurn.id);
    const rule = phraseRule(ruleTurn.text);
    const premise = premiseOf(view, marker);
    const kind = stoppedBy.get(ruleTurn.id) ?? record.kind;
    const text = withContext(rule, kind, premise ? describeAgentTurn(premise, view, kind === 'rejection' ? 'infinitive' : 'participle') : null);
    const lang = record.lang ?? detectPushback(ruleTurn.text)?.lang ?? null;
    const subject = preferenceSubject(ruleTurn.text);
    out.push(
      candidate(view, ruleTurn, {
        text,
        kind: 'correction',
        extractor: 'correction',
        importance: 0.8,
        tags: ['correction', record.kind, ...(lang ? [lang] : [])],
        subject: subject ? { ...subject, onConflict: 'supersede' } : null,
      }),
    );
  }
  return out;
}
