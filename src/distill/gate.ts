/**
 * The quality gate every candidate passes before it is stored: length bounds, something specific
 * (an identifier, path, number, command — or, for corrections and preferences, a rule), no filler
 * or transient chatter, and never text that a hook or cairn itself injected.
 */
import { isInjected } from './session.js';
import { hasSpecific, isRuleLike } from './text.js';
import type { Candidate, RejectReason } from './types.js';

export const GATE_LIMITS = {
  /** Shortest memory text, in characters. */
  minChars: 15,
  /** Longest memory text, in characters (continuation state may run longer). */
  maxChars: 1_200,
  maxContinuationChars: 2_400,
} as const;

/** Chatter: what the agent is about to do, acknowledgements, status noise. */
const FILLER =
  /^(?:let me|let's see|i'll now|i will now|i'm going to|i am going to|now i'll|now let me|okay|ok|great|perfect|excellent|awesome|sure|alright|got it|thanks|thank you|done|looks good|one moment|hmm+|i see|interesting|good|nice)\b[\s,.!:]*/i;
const TRANSIENT = /\b(?:right now|at the moment|i'm (?:currently )?working on|currently working|for now,? let me|in a moment|be right back)\b/i;

/** The rule part of a correction (its first line; the second says what the agent had done). */
function headline(text: string): string {
  const nl = text.indexOf('\n');
  return nl < 0 ? text : text.slice(0, nl);
}

/**
 * Why a candidate is turned away, or null when it passes.
 * @example gateReason({ text: "Let me check the tests", kind: 'fact', … }) // 'filler'
 */
export function gateReason(candidate: Pick<Candidate, 'text' | 'kind'> & { subject?: Candidate['subject'] }): RejectReason | null {
  const text = candidate.text.trim();
  if (isInjected(text)) return 'injected';
  if (text.length < GATE_LIMITS.minChars) return 'too-short';
  const max = candidate.kind === 'continuation' ? GATE_LIMITS.maxContinuationChars : GATE_LIMITS.maxChars;
  if (text.length > max) return 'too-long';
  if (candidate.kind === 'continuation') return null;
  const head = headline(text);
  if (candidate.kind !== 'correction') {
    if (FILLER.test(head) && head.replace(FILLER, '').trim().split(/\s+/).length < 6) return 'filler';
    if (/^(?:let me|i'll now|i will now|i'm going to|now let me)\b/i.test(head) || TRANSIENT.test(head)) return 'filler';
  }
  const rule = candidate.kind === 'correction' || candidate.kind === 'preference' || candidate.kind === 'procedure';
  // A claim about a known subject (a setting, a file's symbol, a preference target) is specific.
  if (hasSpecific(head) || (candidate.subject ?? null) !== null || (rule && isRuleLike(head))) return null;
  if (candidate.kind === 'correction' && head.split(/\s+/).length >= 5) return null;
  return 'not-specific';
}
