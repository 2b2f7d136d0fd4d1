/**
 * The correction finder: over a run of turns (in file order), the pairs of an agent turn and the
 * user's correction of it: interrupts, tool rejections, and user messages that
 * {@link classifyUserMessage} says push back (the patterns are ./corrections.ts).
 */
import type { CorrectionRecord, TurnRecord } from '../types.js';
import { LIMITS, bound } from './text.js';
import { classifyAwaitingReply, classifyUserMessage, concedes, type UserMessageClass } from './user-message.js';

/** The user message waiting for the agent's reply, carried across passes. */
export interface PendingUser {
  id: string;
  text: string;
  at: number | null;
  premise: string | null;
  /** Already recorded as a correction. */
  recorded: boolean;
}

/** What {@link findCorrections} carries from one pass to the next, per session. */
export interface CorrectionCarry {
  /** The latest agent turn (assistant text or tool call). */
  lastAgent: Map<string, string>;
  /** The latest user message, until the agent's next text reply. */
  pending: Map<string, PendingUser>;
  /**
   * Per pending message id, what a conceding reply makes of it (see `classifyAwaitingReply`):
   * known for messages classified in this pass, so the reply alone is tested. Not carried across
   * passes; a message pending from an earlier pass is classified again with its reply.
   */
  ifConceded?: Map<string, UserMessageClass | null>;
}

function correction(turn: Pick<TurnRecord, 'id' | 'sessionId' | 'text' | 'at'>, premise: string | null, kind: CorrectionRecord['kind'], lang: string | null): CorrectionRecord {
  return {
    id: `${turn.id}:correction`,
    sessionId: turn.sessionId,
    premiseTurnId: premise,
    correctionTurnId: turn.id,
    kind,
    lang,
    text: bound(turn.text, LIMITS.tool),
    at: turn.at,
  };
}

/**
 * Correction pairs in a run of turns (in file order): interrupts, rejections, user messages that
 * push back, and user messages the agent's next reply concedes. `carry` holds, per session, the
 * latest agent turn and the user message awaiting a reply; it is updated for the next pass.
 */
export function findCorrections(turns: readonly TurnRecord[], carry: CorrectionCarry): CorrectionRecord[] {
  const out: CorrectionRecord[] = [];
  for (const turn of turns) {
    const session = turn.sessionId;
    if (turn.role === 'assistant' || turn.role === 'tool_call') {
      if (turn.role === 'assistant') {
        const pending = carry.pending.get(session);
        if (pending !== undefined) {
          carry.pending.delete(session);
          const known = carry.ifConceded?.get(pending.id);
          carry.ifConceded?.delete(pending.id);
          const verdict = pending.recorded
            ? null
            : known !== undefined
              ? known !== null && concedes(turn.text)
                ? known
                : null
              : classifyUserMessage(pending.text, { after: 'agent', reply: turn.text });
          if (verdict?.label === 'correction') {
            out.push(correction({ id: pending.id, sessionId: session, text: pending.text, at: pending.at }, pending.premise, 'pushback', verdict.lang));
          }
        }
      }
      carry.lastAgent.set(session, turn.id);
      continue;
    }
    const premise = carry.lastAgent.get(session) ?? null;
    let kind: CorrectionRecord['kind'] | null = null;
    let lang: string | null = null;
    if (turn.flags.includes('interrupt')) kind = 'interrupt';
    else if (turn.flags.includes('rejection')) kind = 'rejection';
    else if (turn.role === 'user' && premise !== null) {
      const { verdict, ifConceded } = classifyAwaitingReply(turn.text, { after: 'agent', flags: turn.flags });
      if (verdict.label === 'correction') {
        kind = 'pushback';
        lang = verdict.lang;
      }
      if (verdict.reason !== 'not-user-words') {
        const text = bound(turn.text, LIMITS.tool);
        carry.pending.set(session, { id: turn.id, text, at: turn.at, premise, recorded: kind !== null });
        // The reply is then judged on the message as pending; a cut one is classified again with it.
        if (text === turn.text) carry.ifConceded?.set(turn.id, ifConceded);
      }
    }
    if (kind !== null) out.push(correction(turn, premise, kind, lang));
  }
  return out;
}
